package symindex

import (
	"encoding/binary"
	"math/bits"
	"strings"
	"sync/atomic"
	"unsafe"

	"github.com/stackimage/stackimage/demangle"
)

// demangledSlot returns where the demangled form of the linkage name with
// string id is cached, nil when id is outside the string table.
func (ix *Index) demangledSlot(id uint32) *atomic.Pointer[string] {
	ix.makeCaches()
	c := ix.demCache
	blk := uint64(id / strBlock)
	if blk >= uint64(len(c)) {
		return nil
	}
	b := c[blk].Load()
	if b == nil {
		c[blk].CompareAndSwap(nil, new(cacheBlock))
		b = c[blk].Load()
	}
	return &b[id%strBlock]
}

// demangled returns the demangled form of the linkage name with id,
// which is name: from the file's demangled names, else (a file that lacks
// it) by demangling name, kept after the first time. It returns "" when
// the chunk holding it is damaged (Err then says where).
func (ix *Index) demangled(id uint32, name string) string {
	if uint64(id/strBlock) >= uint64(len(ix.strIndex.b)/4) {
		s, _ := demangle.Demangle(name) // not a string of the file
		return s
	}
	d, ok := ix.demChunk(id)
	if !ok {
		return ""
	}
	if s, ok := d.name(id); ok {
		return s
	}
	// Not in the file: demangled once and kept.
	slot := ix.demangledSlot(id)
	if slot != nil {
		if p := slot.Load(); p != nil {
			return *p
		}
	}
	s, _ := demangle.Demangle(name)
	if slot != nil {
		slot.Store(&s)
	}
	return s
}

// demChunkNames holds the demangled names of one chunk of demChunk
// string ids: the names of the ids whose bit is set in present, in the
// order of their ids. A lookup reads a name in one step from the chunk,
// which stays in the caches while its neighbours are looked up.
type demChunkNames struct {
	base    uint32 // the chunk's first string id
	present [demChunk / 64]uint64
	names   []string
}

// name returns the demangled name of string id, which is in the chunk,
// and whether the file holds one.
func (d *demChunkNames) name(id uint32) (string, bool) {
	k := (id - d.base) % demChunk
	word, bit := k/64, uint64(1)<<(k%64)
	if d.present[word]&bit == 0 {
		return "", false
	}
	i := bits.OnesCount64(d.present[word] & (bit - 1))
	for _, w := range d.present[:word] {
		i += bits.OnesCount64(w)
	}
	if i >= len(d.names) {
		return "", false
	}
	return d.names[i], true
}

// noDemNames is the chunk of a string id beyond the chunks, or of a
// chunk without names or that is inconsistent.
var noDemNames = new(demChunkNames)

// demChunk returns the decoded chunk of demangled names holding string
// id, decoding it on first use; ok is false when the chunk is damaged
// (and recorded for Err).
func (ix *Index) demChunk(id uint32) (d *demChunkNames, ok bool) {
	c := uint64(id / demChunk)
	if c >= uint64(len(ix.demChunks)) {
		return noDemNames, true
	}
	if d := ix.demChunks[c].Load(); d != nil {
		return d, true
	}
	if !ix.verifyRange(ix.demIndex.off+4*c, ix.demIndex.off+4*c+8) {
		return nil, false
	}
	off, end := uint64(le.Uint32(ix.demIndex.b[4*c:])), uint64(len(ix.demNames.b))
	if c+1 < uint64(len(ix.demChunks)) {
		end = uint64(le.Uint32(ix.demIndex.b[4*c+4:]))
	}
	d = noDemNames // inconsistent: no names from it
	if off <= end && end <= uint64(len(ix.demNames.b)) {
		if !ix.verifyRange(ix.demNames.off+off, ix.demNames.off+end) {
			return nil, false
		}
		d = decodeDemChunk(uint32(c)*demChunk, ix.demNames.b[off:end])
	}
	ix.demChunks[c].CompareAndSwap(nil, d)
	return ix.demChunks[c].Load(), true
}

// decodeDemChunk decodes one chunk of demangled names, whose first id is
// base. The names are parts of one string: a first pass sizes it,
// bounded by demExpandRatio times the chunk's bytes (what the writer
// keeps to), a second fills it. Names past a damaged entry or the bound
// are left out: they are then demangled.
func decodeDemChunk(base uint32, chunk []byte) *demChunkNames {
	raw := demangledChunk(chunk)
	limit := demExpandRatio * uint64(len(chunk))
	total, prevLen, n, present := uint64(0), uint64(0), 0, 0
	for r := raw; n < demChunk; n++ {
		e, ok := demEntry(r, prevLen)
		if !ok || total+e.shared+uint64(len(e.suffix)) > limit {
			break
		}
		if e.present {
			prevLen = e.shared + uint64(len(e.suffix))
			total += prevLen
			present++
		}
		r = e.rest
	}
	if present == 0 {
		return noDemNames
	}
	d := &demChunkNames{base: base, names: make([]string, 0, present)}
	all := make([]byte, 0, total)
	prev := 0 // where the last name starts in all
	r := raw
	for k := 0; k < n; k++ {
		e, _ := demEntry(r, uint64(len(all)-prev)) // read before without error
		r = e.rest
		if !e.present {
			continue
		}
		lo := len(all)
		all = append(all, all[prev:prev+int(e.shared)]...)
		all = append(all, e.suffix...)
		prev = lo
		// all is never written again where a name lies: the string may
		// share its bytes.
		s := ""
		if len(all) > lo {
			s = unsafe.String(&all[lo], len(all)-lo)
		}
		d.present[k/64] |= 1 << (k % 64)
		d.names = append(d.names, s)
	}
	return d
}

// demName is one entry of a chunk of demangled names.
type demName struct {
	present bool
	shared  uint64 // bytes of the previous name it starts with
	suffix  []byte // the rest
	rest    []byte // the entries after it
}

// demEntry decodes the entry at the start of b, the previous name being
// prevLen bytes long.
func demEntry(b []byte, prevLen uint64) (demName, bool) {
	head, n := binary.Uvarint(b)
	if n <= 0 {
		return demName{}, false
	}
	e := demName{present: head&1 != 0, rest: b[n:]}
	if !e.present {
		return e, head == 0
	}
	e.shared = head >> 1
	size, n := binary.Uvarint(e.rest)
	if n <= 0 || e.shared > prevLen || size > uint64(len(e.rest)-n) {
		return demName{}, false
	}
	e.suffix, e.rest = e.rest[n:n+int(size)], e.rest[n+int(size):]
	return e, true
}

// demangledChunk returns the bytes of one chunk of demangled names, nil
// when they are damaged, compressed beyond demInflateRatio or inflate to
// more than maxInflated bytes: what a reader allocates is bounded by the
// file's bytes.
func demangledChunk(b []byte) []byte {
	head, n := binary.Uvarint(b)
	if n <= 0 {
		return nil
	}
	size, b := head>>1, b[n:]
	if head&1 == 0 {
		if size != uint64(len(b)) {
			return nil
		}
		return b
	}
	if size > maxInflated || size > demInflateRatio*uint64(len(b)) {
		return nil
	}
	return inflateTo(b, size)
}

// Demangle returns what demangle.Demangle returns for name, taking it
// from the file's demangled names when they hold name (a linkage name of
// the DWARF), or name without the leading underscore Mach-O symbol tables
// add to C++ and Rust names ("__Z..."): symbolize asks it for the symbol
// names it prints, and demangling costs far more than finding the name.
func (ix *Index) Demangle(name string) (string, demangle.Lang) {
	lang := demangle.Language(name)
	if lang == demangle.LangCPP || lang == demangle.LangRust || lang == demangle.LangSwift {
		m := name
		if strings.HasPrefix(m, "__Z") || strings.HasPrefix(m, "__R") {
			// demangle.Demangle drops that underscore itself: the
			// answer for m is the answer for name.
			m = m[1:]
		}
		if id, ok := ix.stringID(m); ok {
			if d, ok := ix.demChunk(id); ok {
				if s, ok := d.name(id); ok {
					return s, lang
				}
			}
		}
	}
	return demangle.Demangle(name)
}
