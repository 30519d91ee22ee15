package symindex

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/stackimage/stackimage/debuginfo"
	"github.com/stackimage/stackimage/internal/mmapfile"
	"github.com/stackimage/stackimage/lookup"
	"github.com/stackimage/stackimage/symtab"
	"github.com/stackimage/stackimage/uuid"
)

// Index is an opened index file. It answers lookups from the file's bytes
// (mapped or read), decoding only what a lookup touches, and checks each
// chunk of the file against its checksum the first time a lookup reads
// it. It is safe for concurrent use until Close; strings it returns are
// copies and stay valid after Close.
type Index struct {
	data []byte
	m    *mmapfile.File // nil when the bytes were handed to Parse

	uuid       uuid.UUID
	cpuType    uint32
	cpuSubtype uint32
	fileType   uint32
	name       string

	strings  span
	strIndex span
	segments []Segment
	tables   []table
	nodes    span
	files    span
	langs    span
	blocks   span
	stream   span
	// lineSearch narrows the search of the line blocks (made on first
	// use).
	lineSearch blockSearch
	// langNames holds the language table's names (made on first use).
	langNames atomic.Pointer[[]string]
	demIndex  span // u32 offset per demChunk string ids
	demNames  span
	// demChunks holds, per chunk of demangled names, its names decoded
	// (on first use).
	demChunks []atomic.Pointer[demChunkNames]

	// Lazy integrity: chunk c covers [chunkBase+c<<chunkShift, ...) up to
	// chunkEnd; checks holds their CRC-32Cs and state what is known of
	// each (chunkUnknown, chunkGood, chunkBad).
	chunkBase, chunkEnd uint64
	checks              []byte
	state               []atomic.Uint32
	damage              atomic.Pointer[FormatError]
	// checked counts the chunks found good; once it reaches
	// sweepAfter, the rest are checked at once, and allGood is set when
	// every chunk is good: lookups then check nothing more.
	checked    atomic.Int64
	sweepAfter int64
	allGood    atomic.Bool

	// The strings lookups decoded, by block of strBlock strings
	// (strCache), and the demangled forms of linkage names, by string id
	// in blocks of strBlock (demCache): the blocks made when first used,
	// so that opening a big index does not allocate and clear a pointer
	// per string.
	cacheOnce sync.Once
	strCache  []atomic.Pointer[strBlockStrings]
	demCache  []atomic.Pointer[cacheBlock]
}

// strBlockStrings holds the strings of one block of strBlock, decoded
// together: a block is front-coded, so decoding its last string decodes
// the others on the way.
type strBlockStrings [strBlock]string

// cacheBlock holds the cached demangled names of one block of strBlock
// string ids.
type cacheBlock [strBlock]atomic.Pointer[string]

// makeCaches makes the string caches, once.
func (ix *Index) makeCaches() {
	ix.cacheOnce.Do(func() {
		n := len(ix.strIndex.b) / 4
		ix.strCache = make([]atomic.Pointer[strBlockStrings], n)
		ix.demCache = make([]atomic.Pointer[cacheBlock], n)
	})
}

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

// span is a section: its bytes and their offset in the file.
type span struct {
	b   []byte
	off uint64
}

// Chunk states.
const (
	chunkUnknown = iota
	chunkGood
	chunkBad
)

// table is one symbol table's sections.
type table struct {
	ranges span // rangeSize records
	blocks span // symBlockSize records
	stream span
	// cache holds the blocks in code decoded so far, by block.
	cache []atomic.Pointer[symBlock]
	// search narrows the search of the blocks (made on first use).
	search *blockSearch
	// rangesSorted says the section ranges are in order of their
	// starts, as the writer puts them: the one holding an address is
	// then binary-searched.
	rangesSorted bool
}

// Parse checks data as an index file and returns the Index reading from
// it. data must not change while the Index is used. Parse checks the
// header, the directory and the chunk checksums against the header's
// checksum; the sections are checked chunk by chunk as lookups read them.
func Parse(data []byte) (*Index, error) {
	if len(data) < headerSize {
		return nil, &FormatError{Off: 0, Msg: fmt.Sprintf("file of %d bytes is shorter than the %d-byte header", len(data), headerSize)}
	}
	if string(data[offMagic:offMagic+len(Magic)]) != Magic {
		return nil, &FormatError{Off: offMagic, Msg: fmt.Sprintf("bad magic %q, want %q", data[offMagic:offMagic+len(Magic)], Magic)}
	}
	if v := le.Uint32(data[offVersion:]); v != Version {
		return nil, fmt.Errorf("%w: file has version %d, this reader reads %d", ErrVersion, v, Version)
	}
	if size := le.Uint64(data[offFileSize:]); size != uint64(len(data)) {
		return nil, &FormatError{Off: offFileSize, Msg: fmt.Sprintf("header says the file has %d bytes, it has %d (truncated or extended)", size, len(data))}
	}
	ix := &Index{data: data, cpuType: le.Uint32(data[offCPUType:]), cpuSubtype: le.Uint32(data[offCPUSubtype:]),
		fileType: le.Uint32(data[offFileType:])}
	copy(ix.uuid[:], data[offUUID:])
	count := uint64(le.Uint32(data[offSections:]))
	if count == 0 || count > (uint64(len(data))-headerSize)/dirEntrySize {
		return nil, &FormatError{Off: offSections, Msg: fmt.Sprintf("%d sections do not fit the file", count)}
	}
	dirEnd := headerSize + count*dirEntrySize
	// The checksums are the last section and end the file; the header's
	// checksum covers them and the directory.
	last := data[dirEnd-dirEntrySize : dirEnd]
	checksOff, checksSize := le.Uint64(last[8:]), le.Uint64(last[16:])
	if le.Uint32(last) != kindChecks || checksOff < dirEnd || checksOff > uint64(len(data)) || checksSize != uint64(len(data))-checksOff ||
		checksSize != 4*((checksOff-dirEnd+1<<chunkShift-1)>>chunkShift) {
		return nil, &FormatError{Off: int64(dirEnd - dirEntrySize), Msg: "the last section is not the chunk checksums ending the file"}
	}
	sum := crc32.Update(crc32.Checksum(data[headerSize:dirEnd], castagnoli()), castagnoli(), data[checksOff:])
	if want := le.Uint32(data[offChecksum:]); sum != want {
		return nil, &FormatError{Off: offChecksum, Msg: fmt.Sprintf("checksum %#08x does not match the directory and chunk checksums (%#08x)", want, sum)}
	}
	ix.chunkBase, ix.chunkEnd, ix.checks = dirEnd, checksOff, data[checksOff:]
	ix.state = make([]atomic.Uint32, checksSize/4)
	ix.sweepAfter = max(1, int64(len(ix.state))/sweepFraction)

	var tables [maxTables]table
	ntables := 0
	var nameRef, segs span
	for i := uint64(0); i < count-1; i++ {
		at := headerSize + i*dirEntrySize
		e := data[at : at+dirEntrySize]
		kind, tab := le.Uint32(e[0:]), le.Uint32(e[4:])
		off, size := le.Uint64(e[8:]), le.Uint64(e[16:])
		if off < dirEnd || off > checksOff || size > checksOff-off {
			return nil, &FormatError{Off: int64(at), Msg: fmt.Sprintf("section %d (kind %d) [%#x, +%#x) is outside the file's %d data bytes", i, kind, off, size, checksOff)}
		}
		b := span{b: data[off : off+size], off: off}
		if kind >= kindSymRanges && kind <= kindSymStream {
			if tab >= maxTables {
				return nil, &FormatError{Off: int64(at), Msg: fmt.Sprintf("symbol table number %d, at most %d", tab, maxTables)}
			}
			ntables = max(ntables, int(tab)+1)
		}
		t := &tables[min(tab, maxTables-1)]
		switch kind {
		case kindStrings:
			ix.strings = b
		case kindStringIndex:
			if size%4 != 0 {
				return nil, sizeError(at, "string index", size, 4)
			}
			ix.strIndex = b
		case kindSegments:
			if size%segmentSize != 0 {
				return nil, sizeError(at, "segments", size, segmentSize)
			}
			segs = b
		case kindSymRanges:
			if size%rangeSize != 0 {
				return nil, sizeError(at, "section ranges", size, rangeSize)
			}
			t.ranges = b
		case kindSymBlocks:
			if size%symBlockSize != 0 {
				return nil, sizeError(at, "symbol blocks", size, symBlockSize)
			}
			t.blocks = b
		case kindSymStream:
			t.stream = b
		case kindNodes:
			ix.nodes = b
		case kindFiles:
			if size%4 != 0 {
				return nil, sizeError(at, "file table", size, 4)
			}
			ix.files = b
		case kindLangs:
			if size%4 != 0 {
				return nil, sizeError(at, "language table", size, 4)
			}
			ix.langs = b
		case kindLineBlocks:
			if size%lineBlockSize != 0 {
				return nil, sizeError(at, "line blocks", size, lineBlockSize)
			}
			ix.blocks = b
		case kindLineStream:
			ix.stream = b
		case kindImageName:
			nameRef = b
		case kindDemIndex:
			if size%4 != 0 {
				return nil, sizeError(at, "demangled name index", size, 4)
			}
			ix.demIndex = b
		case kindDemangled:
			ix.demNames = b
		}
	}
	// The segments and the image's name are read now: their chunks are
	// checked now.
	if !ix.verify(segs) || !ix.verify(nameRef) {
		return nil, ix.Err()
	}
	// The count is bounded by the section's size, which the file bounds.
	ix.segments = make([]Segment, 0, len(segs.b)/segmentSize)
	for r := segs.b; len(r) >= segmentSize; r = r[segmentSize:] {
		ix.segments = append(ix.segments, Segment{Name: ix.str(le.Uint32(r)), Prot: le.Uint32(r[4:]),
			Addr: le.Uint64(r[8:]), Size: le.Uint64(r[16:])})
	}
	if len(nameRef.b) >= 4 {
		ix.name = ix.str(le.Uint32(nameRef.b))
	}
	if err := ix.Err(); err != nil {
		return nil, err
	}
	ix.tables = append(ix.tables, tables[:ntables]...)
	for i := range ix.tables {
		t := &ix.tables[i]
		// A pointer per 16-byte block record: bounded by the file.
		t.cache = make([]atomic.Pointer[symBlock], len(t.blocks.b)/symBlockSize)
		t.search = new(blockSearch)
		t.rangesSorted = true
		for r := t.ranges.b; len(r) >= 2*rangeSize; r = r[rangeSize:] {
			if le.Uint64(r) > le.Uint64(r[rangeSize:]) {
				t.rangesSorted = false
			}
		}
	}
	ix.demChunks = make([]atomic.Pointer[demChunkNames], len(ix.demIndex.b)/4)
	return ix, nil
}

// verify checks the chunks holding s against their checksums, those not
// checked before, and reports whether they all match. A mismatch is
// recorded for Err.
func (ix *Index) verify(s span) bool { return ix.verifyRange(s.off, s.off+uint64(len(s.b))) }

// verifyRange is verify for the file's bytes [lo, hi). Its test, small
// enough to be inlined, answers every call once all the chunks are known
// good (see sweep).
func (ix *Index) verifyRange(lo, hi uint64) bool {
	if ix.allGood.Load() {
		return true
	}
	return ix.verifyChunks(lo, hi)
}

// verifyChunks is verifyRange checking every chunk in the range.
func (ix *Index) verifyChunks(lo, hi uint64) bool {
	// Most calls: bytes within one chunk checked before (lo below the
	// chunks makes c too big; an empty range is checked).
	c := (lo - ix.chunkBase) >> chunkShift
	if c == (hi-1-ix.chunkBase)>>chunkShift && c < uint64(len(ix.state)) && ix.state[c].Load() == chunkGood {
		return true
	}
	lo, hi = max(lo, ix.chunkBase), min(hi, ix.chunkEnd)
	if lo >= hi {
		return true // the header, directory and checksums were checked at open
	}
	for c := (lo - ix.chunkBase) >> chunkShift; c <= (hi-1-ix.chunkBase)>>chunkShift; c++ {
		switch ix.state[c].Load() {
		case chunkGood:
			continue
		case chunkBad:
			return false
		}
		start := ix.chunkBase + c<<chunkShift
		end := min(start+1<<chunkShift, ix.chunkEnd)
		if crc32.Checksum(ix.data[start:end], castagnoli()) != le.Uint32(ix.checks[4*c:]) {
			ix.state[c].Store(chunkBad)
			ix.damage.CompareAndSwap(nil, &FormatError{Off: int64(start), Msg: fmt.Sprintf("chunk %d [%#x, %#x) does not match its checksum", c, start, end)})
			return false
		}
		ix.state[c].Store(chunkGood)
		if ix.checked.Add(1) == ix.sweepAfter {
			ix.sweep()
		}
	}
	return true
}

// sweepFraction: once lookups have checked this fraction of the chunks
// (one over it), the rest are checked at once. A first answer checks a
// quarter of the big generated dSYM's chunks (17 of 68: finding a
// demangled name searches the string table); a batch of lookups soon
// reaches most of them, and checking a chunk once costs less than
// testing, at every read of every lookup, whether it was. Sweeping at
// half costs at most what the lookups had checked already.
const sweepFraction = 2

// sweep checks every chunk not checked yet and sets allGood when all of
// them are good. A damaged one is left unchecked and not reported: the
// lookup that reads it reports it, as it would without the sweep.
func (ix *Index) sweep() {
	for c := range ix.state {
		if ix.state[c].Load() == chunkGood {
			continue
		}
		start := ix.chunkBase + uint64(c)<<chunkShift
		end := min(start+1<<chunkShift, ix.chunkEnd)
		if crc32.Checksum(ix.data[start:end], castagnoli()) != le.Uint32(ix.checks[4*c:]) {
			return
		}
		ix.state[c].Store(chunkGood)
	}
	ix.allGood.Store(true)
}

// Err returns the error for the first damaged chunk a lookup met, nil
// while none was met. Lookups give no answer from a damaged chunk: a
// caller that gets none may check Err and fall back to the symbol files.
func (ix *Index) Err() error {
	if e := ix.damage.Load(); e != nil {
		return e
	}
	return nil
}

// Verify checks every chunk of the file (what Parse does lazily) and
// returns the error for the first damaged one.
func (ix *Index) Verify() error {
	ix.verifyRange(ix.chunkBase, ix.chunkEnd)
	return ix.Err()
}

func sizeError(at uint64, what string, size uint64, rec int) error {
	return &FormatError{Off: int64(at), Msg: fmt.Sprintf("%s section of %d bytes is not a whole number of %d-byte records", what, size, rec)}
}

// Open opens an index file, mapping it into memory where the system
// supports it, else reading it.
func Open(path string) (*Index, error) {
	m, err := mmapfile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("symindex: %w", err)
	}
	ix, err := Parse(m.Bytes())
	if err != nil {
		m.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	ix.m = m
	// An Index dropped without Close still releases its mapping.
	runtime.AddCleanup(ix, func(m *mmapfile.File) { m.Close() }, m)
	return ix, nil
}

// OpenUUID opens an index file and checks that it is for the image with
// UUID u; a file for another image is an error wrapping ErrUUID.
func OpenUUID(path string, u uuid.UUID) (*Index, error) {
	ix, err := Open(path)
	if err != nil {
		return nil, err
	}
	if ix.uuid != u {
		ix.Close()
		return nil, fmt.Errorf("%s: %w: file is for %s, want %s", path, ErrUUID, ix.uuid, u)
	}
	return ix, nil
}

// Close releases the file's mapping. The Index must not be used after.
func (ix *Index) Close() error {
	if ix.m == nil {
		return nil
	}
	m := ix.m
	ix.m, ix.data = nil, nil
	return m.Close()
}

// UUID returns the image's UUID.
func (ix *Index) UUID() uuid.UUID { return ix.uuid }

// CPU returns the image's CPU type and subtype.
func (ix *Index) CPU() (cpuType, cpuSubtype uint32) { return ix.cpuType, ix.cpuSubtype }

// FileType returns the image's Mach-O file type, 0 when unknown.
func (ix *Index) FileType() uint32 { return ix.fileType }

// Name returns the path of the file the index was made from.
func (ix *Index) Name() string { return ix.name }

// Segments returns the image's segments; the slice is the caller's.
func (ix *Index) Segments() []Segment { return append([]Segment(nil), ix.segments...) }

// HasDebugInfo reports whether the index holds DWARF answers (file:line
// and inlined functions).
func (ix *Index) HasDebugInfo() bool { return len(ix.blocks.b) > 0 }

// Symbols returns the number of symbols of each table.
func (ix *Index) Symbols() []int {
	out := make([]int, len(ix.tables))
	for i, t := range ix.tables {
		if !ix.verify(t.blocks) {
			continue
		}
		for r := t.blocks.b; len(r) >= symBlockSize; r = r[symBlockSize:] {
			out[i] += int(le.Uint32(r[12:]))
		}
	}
	return out
}

// maxStringLen bounds a string a lookup copies out of a hostile file.
const maxStringLen = 1 << 20

// str returns the string with id, or "" when id is absent, outside the
// string table or in a damaged chunk: the string's block is decoded and
// kept on first use.
func (ix *Index) str(id uint32) string {
	ix.makeCaches()
	blk := uint64(id / strBlock)
	if blk >= uint64(len(ix.strCache)) {
		return "" // noString among them
	}
	if b := ix.strCache[blk].Load(); b != nil {
		return b[id%strBlock]
	}
	b, ok := ix.decodeStrBlock(blk)
	if !ok {
		return ""
	}
	ix.strCache[blk].CompareAndSwap(nil, b)
	return b[id%strBlock]
}

// decodeStrBlock decodes string block blk, which exists; ok is false when
// its bytes are damaged (Err says where). Strings from one that cannot be
// decoded on are "". The strings share one allocation.
func (ix *Index) decodeStrBlock(blk uint64) (strs *strBlockStrings, ok bool) {
	nblk := uint64(len(ix.strIndex.b) / 4)
	if !ix.verifyRange(ix.strIndex.off+4*blk, ix.strIndex.off+4*blk+8) {
		return nil, false
	}
	strs = new(strBlockStrings)
	lo, hi := uint64(le.Uint32(ix.strIndex.b[4*blk:])), uint64(len(ix.strings.b))
	if blk+1 < nblk {
		hi = uint64(le.Uint32(ix.strIndex.b[4*blk+4:]))
	}
	if lo > hi || hi > uint64(len(ix.strings.b)) {
		return strs, true
	}
	if !ix.verifyRange(ix.strings.off+lo, ix.strings.off+hi) {
		return nil, false
	}
	b := ix.strings.b[lo:hi]
	var ends [strBlock]int // where each string ends in all
	all := make([]byte, 0, strBlockSize(b))
	prev, n := 0, 0 // where the previous string starts in all; strings decoded
	for ; n < strBlock; n++ {
		shared := uint64(0)
		if n > 0 {
			v, k := binary.Uvarint(b)
			if k <= 0 || v > uint64(len(all)-prev) {
				break
			}
			shared, b = v, b[k:]
		}
		size, k := binary.Uvarint(b)
		if k <= 0 || size > uint64(len(b)-k) || shared+size > maxStringLen {
			break
		}
		start := len(all)
		all = append(all, all[prev:prev+int(shared)]...)
		all = append(all, b[k:k+int(size)]...)
		b = b[k+int(size):]
		prev, ends[n] = start, len(all)
	}
	// all is never written again: the strings share its bytes.
	text := unsafeString(all)
	start := 0
	for i := range n {
		strs[i] = text[start:ends[i]]
		start = ends[i]
	}
	return strs, true
}

// strBlockSize returns the bytes of the strings of block b, as far as
// decodeStrBlock decodes them: it sizes their one allocation.
func strBlockSize(b []byte) int {
	total, prev := uint64(0), uint64(0)
	for n := 0; n < strBlock; n++ {
		shared := uint64(0)
		if n > 0 {
			v, k := binary.Uvarint(b)
			if k <= 0 || v > prev {
				break
			}
			shared, b = v, b[k:]
		}
		size, k := binary.Uvarint(b)
		if k <= 0 || size > uint64(len(b)-k) || shared+size > maxStringLen {
			break
		}
		b = b[k+int(size):]
		prev = shared + size
		total += prev
	}
	return int(total)
}

// Answer is everything an index knows at one address.
type Answer struct {
	Symbol    symtab.Symbol
	HasSymbol bool
	// Frames are the source-level frames, innermost first, as
	// debuginfo.Index.Lookup returns them; nil when the DWARF did not
	// cover the address.
	Frames []debuginfo.Frame
}

// Lookup returns the symbol and the source-level frames at the unslid
// address. The error is ErrNotFound when the index has neither.
func (ix *Index) Lookup(addr uint64) (Answer, error) {
	var a Answer
	a.Symbol, a.HasSymbol = ix.Symbol(addr)
	a.Frames, _ = ix.Source(addr)
	if !a.HasSymbol && len(a.Frames) == 0 {
		return a, ErrNotFound
	}
	return a, nil
}

// ErrNotFound is Lookup's error for an address the index knows nothing
// of: lookup.ErrNotFound, the one "not found" of every Lookup and Resolve.
var ErrNotFound = lookup.ErrNotFound

// Symbol returns the best answer among the index's symbol tables, as
// symstore.Entry.Symbol chooses it: a symbol table name beats an export,
// which beats a bare function start; among equals the closest wins.
func (ix *Index) Symbol(addr uint64) (symtab.Symbol, bool) {
	return ix.symbol(addr, true)
}

// symbol is Symbol, with cached false reading every block entry by entry
// (the way compressed blocks are read) for tests to compare.
func (ix *Index) symbol(addr uint64, cached bool) (symtab.Symbol, bool) {
	var best symtab.Symbol
	found := false
	for i := range ix.tables {
		e, ok := ix.find(&ix.tables[i], addr, cached)
		if !ok {
			continue
		}
		sym := symtab.SymbolAt(e, addr)
		if !found || sym.Source < best.Source || (sym.Source == best.Source && sym.Addr > best.Addr) {
			best, found = sym, true
		}
	}
	return best, found
}

// symEntry is one decoded entry of a symbol block, its name aside.
type symEntry struct {
	addr    uint64
	section uint8
	source  symtab.Source
	shared  uint64 // name bytes shared with the previous entry's
	suffix  []byte // the rest of the name
}

// symDecoder reads the entries of one symbol block.
type symDecoder struct {
	b       []byte
	shift   uint
	prev    symEntry
	nameLen uint64 // the previous entry's name length
}

// next decodes the next entry; shared tells how many bytes of the
// previous entry's name it keeps.
func (d *symDecoder) next() (symEntry, bool) {
	step, n := binary.Uvarint(d.b)
	if n <= 0 || step > math.MaxUint64>>d.shift {
		return symEntry{}, false
	}
	d.b = d.b[n:]
	e := symEntry{addr: d.prev.addr + step<<d.shift, section: d.prev.section}
	head, n := binary.Uvarint(d.b)
	if n <= 0 || head>>3 > d.nameLen {
		return symEntry{}, false
	}
	d.b = d.b[n:]
	e.shared, e.source = d.nameLen-head>>3, symtab.Source(head&3)
	if head&4 != 0 {
		if len(d.b) == 0 {
			return symEntry{}, false
		}
		e.section, d.b = d.b[0], d.b[1:]
	}
	size, n := binary.Uvarint(d.b)
	if n <= 0 || size > uint64(len(d.b)-n) {
		return symEntry{}, false
	}
	e.suffix = d.b[n : n+int(size)]
	d.b = d.b[n+int(size):]
	d.prev, d.nameLen = e, e.shared+size
	return e, true
}

// inflate returns a compressed symbol block's bytes, nil when they are
// damaged or larger than maxInflated or than maxInflateRatio times the
// compressed bytes (what the writer compresses): what is allocated is
// bounded by the file's bytes, not by a size it declares.
func inflate(b []byte) []byte {
	size, n := binary.Uvarint(b)
	if n <= 0 || size > maxInflated || size > maxInflateRatio*uint64(len(b)-n) {
		return nil
	}
	return inflateTo(b[n:], size)
}

// inflateTo returns the size bytes DEFLATE-compressed in b, nil when b
// holds fewer; the caller bounds size.
func inflateTo(b []byte, size uint64) []byte {
	out := make([]byte, size)
	zr := inflaters.Get().(io.ReadCloser)
	defer inflaters.Put(zr)
	if err := zr.(flate.Resetter).Reset(bytes.NewReader(b), nil); err != nil {
		return nil
	}
	if _, err := io.ReadFull(zr, out); err != nil {
		return nil
	}
	return out
}

// inflaters keeps DEFLATE readers for reuse: making one costs more than
// inflating a block.
var inflaters = sync.Pool{New: func() any { return flate.NewReader(bytes.NewReader(nil)) }}

// find returns the entry answering for addr in t: the last at or below
// it, in addr's section when the table has sections (symtab.Table's rule;
// entries of one address share a block).
func (ix *Index) find(t *table, addr uint64, cached bool) (symtab.Entry, bool) {
	if !ix.verify(t.blocks) || !ix.verify(t.ranges) {
		return symtab.Entry{}, false
	}
	nb := len(t.blocks.b) / symBlockSize
	lo := t.search.count(t.blocks.b, symBlockSize, nb, addr, ix.allGood.Load())
	if lo == 0 {
		return symtab.Entry{}, false
	}
	if c := t.cache[lo-1].Load(); c != nil && cached {
		return c.find(t, addr)
	}
	blk := t.blocks.b[symBlockSize*(lo-1):]
	first, off, count := le.Uint64(blk), uint64(le.Uint32(blk[8:])), le.Uint32(blk[12:])
	shift := uint(min(count>>24, 63))
	deflated := count&blockDeflated != 0
	count &= maxBlockEntries
	end := uint64(len(t.stream.b))
	if lo < nb {
		end = uint64(le.Uint32(t.blocks.b[symBlockSize*lo+8:]))
	}
	if off > end || end > uint64(len(t.stream.b)) || !ix.verifyRange(t.stream.off+off, t.stream.off+end) {
		return symtab.Entry{}, false
	}
	block := t.stream.b[off:end]
	if deflated {
		if block = inflate(block); block == nil {
			return symtab.Entry{}, false
		}
	} else if cached {
		// A block in code is decoded whole once and kept; its chunks
		// were checked before, and checked chunks stay good.
		if c := decodeSymBlock(block, first, shift, count); c != nil {
			t.cache[lo-1].Store(c)
			return c.find(t, addr)
		}
	}

	// A compressed block, or one beyond the cache's bounds, is read
	// entry by entry up to addr. The answer's position in the block: in
	// the last run of entries at or below addr that share an address,
	// the last in addr's section answers (without sections, the last
	// entry). The names are rebuilt on the way (front-coded from the
	// block's first entry); the answer is nearly always the last entry
	// read, whose name is then at hand.
	start, sect, sectioned, ok := t.section(addr)
	if !ok {
		return symtab.Entry{}, false
	}
	d := symDecoder{b: block, shift: shift, prev: symEntry{addr: first}}
	pick, runAddr := -1, uint64(0)
	var buf [256]byte
	name := buf[:0]
	var e, last symEntry
	read, badName := 0, int(count) // entries read; the first whose name is damaged
	for i := uint32(0); i < count; i++ {
		next, ok := d.next()
		if !ok || next.addr > addr {
			break
		}
		e, read = next, int(i)+1
		if badName == int(count) {
			if e.shared > uint64(len(name)) || e.shared+uint64(len(e.suffix)) > maxStringLen {
				badName = int(i)
			} else {
				name = append(name[:e.shared], e.suffix...)
			}
		}
		if i == 0 || e.addr != runAddr {
			pick, runAddr = -1, e.addr
		}
		if !sectioned || (e.section == sect && e.addr >= start) {
			pick, last = int(i), e
		}
	}
	if pick < 0 || pick >= badName {
		return symtab.Entry{}, false
	}
	e = last
	if pick != read-1 {
		// An entry of another section followed at the same address:
		// decode the names again up to the answer.
		d = symDecoder{b: block, shift: shift, prev: symEntry{addr: first}}
		name = name[:0]
		for i := 0; i <= pick; i++ {
			next, _ := d.next() // read before without error
			name = append(name[:next.shared], next.suffix...)
		}
	}
	out := symtab.Entry{Addr: e.addr, Section: e.section, Source: e.source}
	if e.source != symtab.SourceFunctionStarts {
		out.RawName = string(name)
	}
	return out, true
}

// section returns the section holding addr (the last starting at or
// below it) and its start; sectioned is false when the table has no
// sections, and ok false when addr lies in none of them.
func (t *table) section(addr uint64) (start uint64, sect uint8, sectioned, ok bool) {
	n := len(t.ranges.b) / rangeSize
	if n == 0 {
		return 0, 0, false, true
	}
	k := n - 1
	if t.rangesSorted {
		// The first starting above addr, less one.
		lo, hi := 0, n
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if le.Uint64(t.ranges.b[rangeSize*m:]) > addr {
				hi = m
			} else {
				lo = m + 1
			}
		}
		k = lo - 1
	} else {
		for k >= 0 && le.Uint64(t.ranges.b[rangeSize*k:]) > addr {
			k--
		}
	}
	if k < 0 {
		return 0, 0, true, false
	}
	r := t.ranges.b[rangeSize*k:]
	if addr >= le.Uint64(r[8:]) {
		return 0, 0, true, false
	}
	return le.Uint64(r), r[16], true, true
}

// symBlock is a symbol block in code decoded once and kept (table.cache):
// lookups in code meet the same few thousand blocks again and again, and
// decoding one, its names rebuilt, costs more than the rest of a symbol
// lookup. Compressed blocks (outside code) are decoded per lookup.
type symBlock struct {
	entries []blockSymbol // as decoded, up to the first that could not be
	badName int           // the first entry whose name is damaged; len(entries) when none
}

// blockSymbol is one entry of a symBlock; its name is part of one string
// holding the block's names.
type blockSymbol struct {
	addr    uint64
	name    string
	section uint8
	source  symtab.Source
}

// Bounds of what a symBlock may hold: blocks in code hold about blockSize
// entries with their names front-coded, which rebuilt take a few times
// the block's bytes. A block beyond them (only a hostile file makes one)
// is decoded per lookup instead, as compressed blocks are.
const (
	maxCachedEntries   = 256
	cachedNamesPerByte = 16
	cachedNamesSlack   = 4096
)

// decodeSymBlock decodes a symbol block as find reads it, nil when it is
// beyond the bounds above.
func decodeSymBlock(block []byte, first uint64, shift uint, count uint32) *symBlock {
	if count > maxCachedEntries {
		return nil
	}
	limit := cachedNamesPerByte*len(block) + cachedNamesSlack
	c := &symBlock{entries: make([]blockSymbol, 0, count), badName: -1}
	type span struct{ lo, hi int }
	spans := make([]span, 0, count)
	var names []byte
	prev := span{}
	d := symDecoder{b: block, shift: shift, prev: symEntry{addr: first}}
	for i := uint32(0); i < count; i++ {
		e, ok := d.next()
		if !ok {
			break
		}
		c.entries = append(c.entries, blockSymbol{addr: e.addr, section: e.section, source: e.source})
		if c.badName >= 0 {
			spans = append(spans, span{})
			continue
		}
		if e.shared > uint64(prev.hi-prev.lo) || e.shared+uint64(len(e.suffix)) > maxStringLen {
			c.badName = int(i)
			spans = append(spans, span{})
			continue
		}
		if len(names)+int(e.shared)+len(e.suffix) > limit {
			return nil
		}
		lo := len(names)
		names = append(names, names[prev.lo:prev.lo+int(e.shared)]...)
		names = append(names, e.suffix...)
		prev = span{lo, len(names)}
		spans = append(spans, prev)
	}
	if c.badName < 0 {
		c.badName = len(c.entries)
	}
	all := unsafeString(names) // never written again: the names share its bytes
	for i, sp := range spans {
		c.entries[i].name = all[sp.lo:sp.hi]
	}
	return c
}

// find is Index.find in a decoded block of t.
func (c *symBlock) find(t *table, addr uint64) (symtab.Entry, bool) {
	start, sect, sectioned, ok := t.section(addr)
	if !ok {
		return symtab.Entry{}, false
	}
	// As in Index.find: the last entry in addr's section of the last run
	// of entries at or below addr that share an address.
	pick, runAddr := -1, uint64(0)
	for i := range c.entries {
		e := &c.entries[i]
		if e.addr > addr {
			break
		}
		if i == 0 || e.addr != runAddr {
			pick, runAddr = -1, e.addr
		}
		if !sectioned || (e.section == sect && e.addr >= start) {
			pick = i
		}
	}
	if pick < 0 || pick >= c.badName {
		return symtab.Entry{}, false
	}
	e := &c.entries[pick]
	out := symtab.Entry{Addr: e.addr, Section: e.section, Source: e.source}
	if e.source != symtab.SourceFunctionStarts {
		out.RawName = e.name
	}
	return out, true
}

// maxDepth bounds the inline chain a lookup follows, as debuginfo does.
const maxDepth = 256

// Source returns the source-level frames at the unslid address, innermost
// first, as the DWARF indexes the file was made from answer; ok is false
// when they did not cover the address (or the bytes that would answer
// are damaged: see Err).
func (ix *Index) Source(addr uint64) (frames []debuginfo.Frame, ok bool) {
	return ix.source(addr, false)
}

// SourceMangled is Source for callers that print linkage names (atos
// --no-demangle): a frame whose Function is the demangled linkage name
// (C++, Rust, Swift) gets the linkage name as its Function instead, and
// no demangled name is read.
func (ix *Index) SourceMangled(addr uint64) (frames []debuginfo.Frame, ok bool) {
	return ix.source(addr, true)
}

func (ix *Index) source(addr uint64, mangled bool) ([]debuginfo.Frame, bool) {
	// The chain is built on the stack and copied out at its length: one
	// allocation per lookup.
	var buf [8]debuginfo.Frame
	frames, ok := ix.appendSource(buf[:0], addr, mangled)
	if !ok || len(frames) == 0 {
		return nil, ok
	}
	return slices.Clone(frames), true
}

// AppendSource is Source appending the frames to dst and returning the
// extended slice: a caller answering many addresses reuses one slice
// instead of allocating one per lookup. dst is returned unchanged when ok
// is false.
func (ix *Index) AppendSource(dst []debuginfo.Frame, addr uint64) (frames []debuginfo.Frame, ok bool) {
	return ix.appendSource(dst, addr, false)
}

// AppendSourceMangled is SourceMangled appending to dst, as AppendSource.
func (ix *Index) AppendSourceMangled(dst []debuginfo.Frame, addr uint64) (frames []debuginfo.Frame, ok bool) {
	return ix.appendSource(dst, addr, true)
}

func (ix *Index) appendSource(dst []debuginfo.Frame, addr uint64, mangled bool) ([]debuginfo.Frame, bool) {
	r, ok := ix.lineRange(addr)
	if !ok || !r.ok {
		return dst, false
	}
	if r.leaf == 0 {
		return append(dst, debuginfo.Frame{File: ix.file(r.file), Line: int(r.line), Column: int(r.col)}), true
	}
	start := len(dst)
	file, line, col := ix.file(r.file), int(r.line), int(r.col)
	// Each node is decoded from the tree's bytes, not kept: a chain's
	// nodes lie side by side in the tree, so that decoding them again
	// costs less than finding them in a cache of decoded nodes, whose
	// slots and nodes lie all over memory (on the big generated dSYM,
	// 100,000 random addresses reach 97,000 distinct nodes: a cache
	// mostly missed, and an allocation per node).
	off := uint64(r.leaf) - 1
	for depth := 0; depth < maxDepth; depth++ {
		n, ok := ix.node(off)
		if !ok {
			break
		}
		f := debuginfo.Frame{
			LinkageName: ix.str(n.linkage),
			Lang:        debuginfo.Lang(ix.lang(n.lang)),
			Inlined:     n.flags&nodeInlined != 0,
			File:        file, Line: line, Column: col,
		}
		switch {
		case n.flags&nodeDemangled != 0 && mangled:
			f.Function = f.LinkageName
		case n.flags&nodeDemangled != 0:
			f.Function = ix.demangled(n.linkage, f.LinkageName)
		default:
			f.Function = ix.str(n.function)
		}
		dst = append(dst, f)
		file, line, col = ix.file(n.callFile), int(n.callLine), int(n.callCol)
		if n.parentDelta == 0 || n.parentDelta > off {
			break // parents come first: anything else is a loop
		}
		off -= n.parentDelta
	}
	if ix.Err() != nil {
		return dst[:start], false // no answer from damaged bytes
	}
	return dst, true
}

// demangled returns the demangled form of the linkage name with id,
// which is name: from the file's demangled names, else (a file that lacks
// it) by demangling name, kept after the first time. It returns "" when
// the chunk holding it is damaged (Err then says where).
func (ix *Index) demangled(id uint32, name string) string {
	if uint64(id/strBlock) >= uint64(len(ix.strIndex.b)/4) {
		s, _ := debuginfo.Demangle(name) // not a string of the file
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
	s, _ := debuginfo.Demangle(name)
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

// Demangle returns what debuginfo.Demangle returns for name, taking it
// from the file's demangled names when they hold name (a linkage name of
// the DWARF), or name without the leading underscore Mach-O symbol tables
// add to C++ and Rust names ("__Z..."): symbolize asks it for the symbol
// names it prints, and demangling costs far more than finding the name.
func (ix *Index) Demangle(name string) (string, debuginfo.Lang) {
	lang := debuginfo.Language(name)
	if lang == debuginfo.LangCPP || lang == debuginfo.LangRust || lang == debuginfo.LangSwift {
		m := name
		if strings.HasPrefix(m, "__Z") || strings.HasPrefix(m, "__R") {
			// debuginfo.Demangle drops that underscore itself: the
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
	return debuginfo.Demangle(name)
}

// stringID returns the id of s in the string table: a binary search of
// the blocks by their first string (stored whole), then a walk of one
// block.
func (ix *Index) stringID(s string) (uint32, bool) {
	nblk := len(ix.strIndex.b) / 4
	if nblk == 0 || !ix.verify(ix.strIndex) {
		return 0, false
	}
	// The first block whose first string sorts after s.
	lo, hi := 0, nblk
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		first, ok := ix.firstString(m)
		if !ok {
			return 0, false
		}
		if first > s {
			hi = m
		} else {
			lo = m + 1
		}
	}
	if lo == 0 {
		return 0, false
	}
	blk := uint32(lo - 1)
	for k := uint32(0); k < strBlock; k++ {
		id := blk*strBlock + k
		got := ix.str(id)
		if got == s && (s != "" || ix.Err() == nil) {
			return id, true
		}
		if got > s {
			break
		}
	}
	return 0, false
}

// firstString returns the first string of string block blk, which is
// stored whole, without copying it.
func (ix *Index) firstString(blk int) (string, bool) {
	lo, hi := uint64(le.Uint32(ix.strIndex.b[4*blk:])), uint64(len(ix.strings.b))
	if blk+1 < len(ix.strIndex.b)/4 {
		hi = uint64(le.Uint32(ix.strIndex.b[4*blk+4:]))
	}
	if lo > hi || hi > uint64(len(ix.strings.b)) || !ix.verifyRange(ix.strings.off+lo, ix.strings.off+hi) {
		return "", false
	}
	b := ix.strings.b[lo:hi]
	size, n := binary.Uvarint(b)
	if n <= 0 || size > uint64(len(b)-n) {
		return "", false
	}
	return unsafeString(b[n : n+int(size)]), true
}

// decodedNode is one node of the inline tree.
type decodedNode struct {
	flags                       uint64
	parentDelta                 uint64
	function, linkage           uint32
	lang                        uint8
	callFile, callLine, callCol uint32
}

// maxNodeSize bounds the bytes of one node: eight uvarints.
const maxNodeSize = 8 * binary.MaxVarintLen64

// node decodes the node at off in the inline tree; ok is false when off
// is outside the tree, the node's bytes are damaged (Err then says where)
// or it cannot be decoded.
func (ix *Index) node(off uint64) (n decodedNode, ok bool) {
	if off >= uint64(len(ix.nodes.b)) {
		return decodedNode{}, false
	}
	end := min(off+maxNodeSize, uint64(len(ix.nodes.b)))
	if !ix.verifyRange(ix.nodes.off+off, ix.nodes.off+end) {
		return decodedNode{}, false
	}
	b := ix.nodes.b[off:end]
	i := 0
	if n.flags, i = uvarintAt(b, i); i < 0 {
		return decodedNode{}, false
	}
	if n.parentDelta, i = uvarintAt(b, i); i < 0 {
		return decodedNode{}, false
	}
	var v uint64
	n.function, n.linkage = noString, noString
	if n.flags&nodeFunction != 0 {
		if v, i = uvarintAt(b, i); i < 0 {
			return decodedNode{}, false
		}
		n.function = sat32(v)
	}
	if n.flags&nodeLinkage != 0 {
		if v, i = uvarintAt(b, i); i < 0 {
			return decodedNode{}, false
		}
		n.linkage = sat32(v)
	}
	if n.flags&nodeCall != 0 {
		if v, i = uvarintAt(b, i); i < 0 {
			return decodedNode{}, false
		}
		n.callFile = sat32(v)
		if v, i = uvarintAt(b, i); i < 0 {
			return decodedNode{}, false
		}
		n.callLine = sat32(v)
		if v, i = uvarintAt(b, i); i < 0 {
			return decodedNode{}, false
		}
		n.callCol = sat32(v)
	}
	n.lang = uint8(min(n.flags>>nodeLangShift, 255))
	return n, true
}

// sat32 is v, or math.MaxUint32 when v is larger.
func sat32(v uint64) uint32 { return uint32(min(v, math.MaxUint32)) }

// file returns the path of file table entry id-1; "" for 0 or a bad id.
func (ix *Index) file(id uint32) string {
	if id == 0 || uint64(id) > uint64(len(ix.files.b)/4) || !ix.verifyRange(ix.files.off+4*uint64(id-1), ix.files.off+4*uint64(id)) {
		return ""
	}
	return ix.str(le.Uint32(ix.files.b[4*(id-1):]))
}

// lang returns the name of language table entry id-1; "" for 0 or a bad
// id.
func (ix *Index) lang(id uint8) string {
	if id == 0 {
		return ""
	}
	names := ix.langNames.Load()
	if names == nil {
		if names = ix.loadLangs(); names == nil {
			return ""
		}
	}
	if int(id) > len(*names) {
		return ""
	}
	return (*names)[id-1]
}

// loadLangs looks up the names of the language table, which every frame
// asks for, and keeps them; nil when the table is damaged. Names read
// while a damaged chunk is known are not kept (one of them may read "").
func (ix *Index) loadLangs() *[]string {
	if !ix.verify(ix.langs) {
		return nil
	}
	names := make([]string, min(len(ix.langs.b)/4, 255)) // ids are bytes
	for i := range names {
		names[i] = ix.str(le.Uint32(ix.langs.b[4*i:]))
	}
	if ix.Err() != nil {
		return &names
	}
	ix.langNames.CompareAndSwap(nil, &names)
	return ix.langNames.Load()
}

// errStream marks a damaged line stream.
var errStream = errors.New("damaged line stream")

// lineRange returns the range holding addr.
func (ix *Index) lineRange(addr uint64) (lineRange, bool) {
	if !ix.verify(ix.blocks) {
		return lineRange{}, false
	}
	blocks := ix.blocks.b
	nb := len(blocks) / lineBlockSize
	lo := ix.lineSearch.count(blocks, lineBlockSize, nb, addr, ix.allGood.Load())
	if lo == 0 {
		return lineRange{}, false
	}
	blk := blocks[lineBlockSize*(lo-1):]
	first, off, count := le.Uint64(blk), uint64(le.Uint32(blk[8:])), le.Uint32(blk[12:])
	shift := uint(min(count>>24, 63))
	count &= maxBlockEntries
	end := uint64(len(ix.stream.b))
	if lo < nb {
		end = uint64(le.Uint32(blocks[lineBlockSize*lo+8:]))
	}
	if off > end || end > uint64(len(ix.stream.b)) || count == 0 || count > lineBlockRanges ||
		!ix.verifyRange(ix.stream.off+off, ix.stream.off+end) {
		return lineRange{}, false
	}
	return rangeAt(ix.stream.b[off:end], first, shift, count, addr)
}

// rangeAt returns the last range of a line block starting at or below
// addr: the block's count ranges from first are decoded from b as
// decoder.next decodes them, in one loop with a call per field only for
// values of more than one byte (it is every lookup's inner loop),
// stopping at the first range past addr.
func rangeAt(b []byte, first uint64, shift uint, count uint32, addr uint64) (lineRange, bool) {
	// The range is kept in scalars, which stay in registers: a range is
	// committed to them once all of its fields are decoded, so that a
	// damaged one leaves the range before it.
	curAddr, ok, leaf, file, line, col := first, false, uint32(0), uint32(0), uint32(0), uint32(0)
	found := false
	i := 0
	for k := uint32(0); k < count; k++ {
		var head, v uint64
		if uint(i) < uint(len(b)) && b[i] < 0x80 {
			head, i = uint64(b[i]), i+1
		} else if head, i = uvarintLong(b, i); i < 0 {
			break
		}
		a := curAddr + head>>lineFlagBits<<shift
		if a > addr {
			break
		}
		nleaf, nfile, ncol := leaf, file, uint32(0)
		if head&flagLeaf != 0 {
			if uint(i) < uint(len(b)) && b[i] < 0x80 {
				v, i = uint64(b[i]), i+1
			} else if v, i = uvarintLong(b, i); i < 0 {
				break
			}
			nleaf = uint32(int64(leaf) + unzigzag(v))
		}
		if head&flagFile != 0 {
			if uint(i) < uint(len(b)) && b[i] < 0x80 {
				v, i = uint64(b[i]), i+1
			} else if v, i = uvarintLong(b, i); i < 0 {
				break
			}
			nfile = uint32(int64(file) + unzigzag(v))
		}
		if uint(i) < uint(len(b)) && b[i] < 0x80 {
			v, i = uint64(b[i]), i+1
		} else if v, i = uvarintLong(b, i); i < 0 {
			break
		}
		nline := uint32(int64(line) + unzigzag(v))
		if head&flagColumn != 0 {
			if uint(i) < uint(len(b)) && b[i] < 0x80 {
				v, i = uint64(b[i]), i+1
			} else if v, i = uvarintLong(b, i); i < 0 {
				break
			}
			ncol = uint32(v)
		}
		curAddr, ok, leaf, file, line, col, found = a, head&flagFound != 0, nleaf, nfile, nline, ncol, true
	}
	if !found {
		return lineRange{}, false
	}
	return lineRange{addr: curAddr, ok: ok, leaf: leaf, file: file, line: line, col: col}, true
}

// uvarintAt decodes the uvarint at b[i:] and returns it with the index
// after it, or -1 when b holds none there (as binary.Uvarint fails: b
// ends, or the value overflows 64 bits). It is small enough to be
// inlined: it decodes every field of the lookups' inner loops. The
// innermost loop, rangeAt's, tests for a one-byte value itself and calls
// uvarintLong for the others.
func uvarintAt(b []byte, i int) (uint64, int) {
	var v uint64
	for s := uint(0); uint(i) < uint(len(b)); s += 7 {
		c := b[i]
		i++
		if c < 0x80 {
			if s == 63 && c > 1 {
				break // overflow
			}
			return v | uint64(c)<<s, i
		}
		if s == 63 {
			break // overflow
		}
		v |= uint64(c&0x7f) << s
	}
	return 0, -1
}

// uvarintLong is uvarintAt, not inlined: for the values of more than one
// byte, which are fewer.
//
//go:noinline
func uvarintLong(b []byte, i int) (uint64, int) { return uvarintAt(b, i) }

// unzigzag turns a uvarint as binary.AppendVarint writes it back into
// the signed value.
func unzigzag(u uint64) int64 {
	x := int64(u >> 1)
	if u&1 != 0 {
		x = ^x
	}
	return x
}

// decoder reads ranges written by encodeRange.
type decoder struct {
	b     []byte
	shift uint // of the address steps
}

func (d *decoder) uvarint() (uint64, error) {
	v, k := binary.Uvarint(d.b)
	if k <= 0 {
		return 0, errStream
	}
	d.b = d.b[k:]
	return v, nil
}

func (d *decoder) varint() (int64, error) {
	v, k := binary.Varint(d.b)
	if k <= 0 {
		return 0, errStream
	}
	d.b = d.b[k:]
	return v, nil
}

func (d *decoder) next(prev lineRange) (lineRange, error) {
	head, err := d.uvarint()
	if err != nil {
		return lineRange{}, err
	}
	r := prev
	r.addr = prev.addr + head>>lineFlagBits<<d.shift
	r.ok = head&flagFound != 0
	r.col = 0
	if head&flagLeaf != 0 {
		v, err := d.varint()
		if err != nil {
			return r, err
		}
		r.leaf = uint32(int64(prev.leaf) + v)
	}
	if head&flagFile != 0 {
		v, err := d.varint()
		if err != nil {
			return r, err
		}
		r.file = uint32(int64(prev.file) + v)
	}
	v, err := d.varint()
	if err != nil {
		return r, err
	}
	r.line = uint32(int64(prev.line) + v)
	if head&flagColumn != 0 {
		col, err := d.uvarint()
		if err != nil {
			return r, err
		}
		r.col = uint32(col)
	}
	return r, nil
}

// unsafeString returns b as a string without copying it: for comparisons
// of the file's bytes, never kept.
func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }

// searchRecords returns how many of the n records of size bytes at the
// start of b begin with an address (u64) at or below addr, the records
// being sorted by it. The loop has no branch on the comparison, which
// random addresses would mispredict half the time.
func searchRecords(b []byte, size, n int, addr uint64) int {
	if n == 0 || len(b) < size*n {
		return 0
	}
	base := 0 // records [0, base) are at or below addr
	for n > 1 {
		half := n >> 1
		// borrow is 1 when the record starts above addr.
		_, borrow := bits.Sub64(addr, le.Uint64(b[size*(base+half-1):]), 0)
		base += half &^ -int(borrow)
		n -= half
	}
	if le.Uint64(b[size*base:]) <= addr {
		base++
	}
	return base
}

// blockSearch finds the block holding an address among block records
// sorted by their first address (u64), as searchRecords does, through an
// index of buckets made on first use: a binary search of thousands of
// records is a dozen dependent loads, most of them cache misses when
// lookups are interleaved with other work (a service's requests), where
// a bucket gives the one or two records to test.
type blockSearch struct {
	once sync.Once
	// Bucket k covers the addresses [base + k<<shift, base + (k+1)<<shift);
	// first[k] counts the records starting below it, first[len-1] all of
	// them. nil when the records are too few or not sorted.
	base  uint64
	shift uint
	first []uint32
}

// minBucketed is the fewest records given buckets.
const minBucketed = 64

// count returns how many of the n records of size bytes in b start at or
// below addr. b is the whole section: its chunks are checked. The buckets
// are made once the index is warm (every chunk checked good, see sweep):
// a first answer costs no more than a binary search.
func (s *blockSearch) count(b []byte, size, n int, addr uint64, warm bool) int {
	if !warm {
		return searchRecords(b, size, n, addr)
	}
	s.once.Do(func() { s.build(b, size, n) })
	if s.first == nil {
		return searchRecords(b, size, n, addr)
	}
	if addr < s.base {
		return 0
	}
	k := (addr - s.base) >> s.shift
	if k >= uint64(len(s.first)-1) {
		return n // above every record's bucket
	}
	lo, hi := int(s.first[k]), int(s.first[k+1])
	return lo + searchRecords(b[size*lo:], size, hi-lo, addr)
}

// build makes the buckets: as many as the records (a power of two), a
// u32 each, so at most a quarter of the records' bytes.
func (s *blockSearch) build(b []byte, size, n int) {
	if n < minBucketed || len(b) < size*n {
		return
	}
	base, last := le.Uint64(b), le.Uint64(b[size*(n-1):])
	buckets := 1 << bits.Len(uint(n-1))
	shift := uint(0)
	for (last-base)>>shift >= uint64(buckets) {
		shift++
	}
	first := make([]uint32, buckets+1)
	k, prev := 0, base
	for r := 0; r < n; r++ {
		a := le.Uint64(b[size*r:])
		if a < prev || a > last {
			return // not sorted (a damaged file): the plain search answers
		}
		prev = a
		for bucket := int((a - base) >> shift); k <= bucket; k++ {
			first[k] = uint32(r)
		}
	}
	for ; k <= buckets; k++ {
		first[k] = uint32(n)
	}
	s.base, s.shift, s.first = base, shift, first
}
