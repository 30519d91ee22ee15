package symindex

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"hash/maphash"
	"io"
	"maps"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/klauspost/compress/flate"

	"github.com/stackimage/stackimage/debuginfo"
	"github.com/stackimage/stackimage/demangle"
	"github.com/stackimage/stackimage/symtab"
	"github.com/stackimage/stackimage/uuid"
)

// Segment is one segment of the image, as a symbolizer needs it to place
// addresses: name, unslid range and protection.
type Segment struct {
	Name       string
	Addr, Size uint64
	Prot       uint32 // VM_PROT_* bits; VM_PROT_EXECUTE (4) marks code
}

// Input is what Write stores for one image.
type Input struct {
	UUID       uuid.UUID
	CPUType    uint32
	CPUSubtype uint32
	FileType   uint32 // Mach-O filetype (MH_EXECUTE is 2); 0 when unknown
	// Name is the file the index was made from, kept for messages.
	Name     string
	Segments []Segment
	// Symbols are the image's symbol tables in order of preference (the
	// binary's before its dSYM's). A lookup answers as
	// symstore.Entry.Symbol does: a symbol table name beats an export,
	// which beats a bare function start; among equals the closest wins.
	Symbols []*symtab.Table
	// Debug are the DWARF indexes in order: a lookup answers from the
	// first that knows the address.
	Debug []*debuginfo.Index
}

// Write writes the index file for one image to w. The work is linear in
// the number of symbols and DWARF ranges (plus sorts of each unit's
// function ranges and of the strings); it walks each unit range of Debug
// once (debuginfo.Index.Steps).
func Write(w io.Writer, in Input) error {
	if w == nil {
		return errors.New("symindex: nil writer")
	}
	if len(in.Symbols) > maxTables {
		return fmt.Errorf("symindex: %d symbol tables, at most %d fit a file", len(in.Symbols), maxTables)
	}
	b := newBuilder()
	return b.write(w, in, b.lines)
}

func newBuilder() *builder {
	return &builder{strs: map[string]uint32{}, fileIDs: map[string]uint32{}, langIDs: map[demangle.Lang]uint8{},
		demangled: map[uint32]string{}}
}

// write writes the file with the source answers made by lines.
func (b *builder) write(w io.Writer, in Input, lines func([]*debuginfo.Index) *lineWriter) error {
	nameRef := b.str(in.Name)
	segRefs := make([]uint32, len(in.Segments))
	for i, s := range in.Segments {
		segRefs[i] = b.str(s.Name)
	}
	lw := lines(in.Debug)
	// Every string is known: sort them and give each its final id.
	blob, strIndex := b.finishStrings()
	if uint64(len(blob)) >= math.MaxUint32 {
		return fmt.Errorf("symindex: string table of %d bytes is too large", len(blob))
	}

	var secs []section
	add := func(kind, table uint32, data []byte) {
		secs = append(secs, section{kind: kind, table: table, data: data})
	}
	add(kindImageName, 0, le.AppendUint32(nil, b.id(nameRef)))
	var segs []byte
	for i, s := range in.Segments {
		segs = le.AppendUint32(segs, b.id(segRefs[i]))
		segs = le.AppendUint32(segs, s.Prot)
		segs = le.AppendUint64(segs, s.Addr)
		segs = le.AppendUint64(segs, s.Size)
	}
	add(kindSegments, 0, segs)
	code := func(addr uint64) bool {
		for _, s := range in.Segments {
			if s.Prot&vmProtExecute != 0 && addr-s.Addr < s.Size {
				return true
			}
		}
		return false
	}
	for ti, t := range in.Symbols {
		var sranges []byte
		for _, r := range t.Sections() {
			sranges = le.AppendUint64(sranges, r.Start)
			sranges = le.AppendUint64(sranges, r.End)
			var flags byte
			if r.Data {
				flags |= rangeData
			}
			sranges = append(sranges, r.Index, flags, 0, 0, 0, 0, 0, 0)
		}
		blocks, stream, err := symbolBlocks(t, code)
		if err != nil {
			return fmt.Errorf("symindex: compressing symbols: %w", err)
		}
		add(kindSymRanges, uint32(ti), sranges)
		add(kindSymBlocks, uint32(ti), blocks)
		add(kindSymStream, uint32(ti), stream)
	}
	nodes, offsets := b.encodeNodes()
	add(kindNodes, 0, nodes)
	var files []byte
	for _, ref := range b.files {
		files = le.AppendUint32(files, b.id(ref))
	}
	add(kindFiles, 0, files)
	var langs []byte
	for _, ref := range b.langs {
		langs = le.AppendUint32(langs, b.id(ref))
	}
	add(kindLangs, 0, langs)
	blocks, stream := lw.relink(offsets)
	add(kindLineBlocks, 0, blocks)
	add(kindLineStream, 0, stream)
	demIndex, demStream, err := b.demangledNames()
	if err != nil {
		return fmt.Errorf("symindex: compressing demangled names: %w", err)
	}
	add(kindDemIndex, 0, demIndex)
	add(kindDemangled, 0, demStream)
	add(kindStringIndex, 0, strIndex)
	add(kindStrings, 0, blob)
	return writeFile(w, in, secs)
}

// deflateLevel is the DEFLATE level of compressed symbol blocks and
// demangled-name chunks. The writer is klauspost/compress's: at level 6 it
// compresses the big dSYM's data-symbol blocks to the bytes the standard
// library's best level gives, and its demangled names within 6 %, in half
// the time (any DEFLATE reader reads them).
const deflateLevel = 6

// symbolBlocks encodes a symbol table: blocks of at least blockSize
// entries, dataBlockSize for entries outside code (equal addresses are
// kept in one block). A block record holds its first address, its offset
// in the stream and its entry count, with blockDeflated set when the
// block is compressed and the block's address shift (the trailing zero
// bits all its address steps share) in the count's top byte. Each entry
// is a uvarint of its address step from the previous entry >> shift (the
// first steps 0 from the block's address), a uvarint of (bytes dropped
// from the end of the previous entry's name << 3 | section changed << 2 |
// source), the section byte when it changed (the block starts from
// section 0), and the rest of the name as a uvarint length and bytes. A
// bare function start has an empty name. A block outside code is
// compressed when that pays: a uvarint of its size, then its bytes
// compressed with DEFLATE (lookups in code never pay for it).
func symbolBlocks(t *symtab.Table, code func(addr uint64) bool) (blocks, stream []byte, err error) {
	n := t.Len()
	var raw bytes.Buffer
	var zw *flate.Writer
	// The entries of the block being made, each read from the table
	// once (Entry finds its name's end in the string table), and the
	// entry after the block, read to find where the block ends.
	var ents []symtab.Entry
	var next symtab.Entry
	haveNext := false
	for i := 0; i < n; {
		if !haveNext {
			next = t.Entry(i)
		}
		ents = append(ents[:0], next)
		haveNext = false
		first := ents[0]
		inCode := code(first.Addr)
		limit := blockSize
		if !inCode {
			limit = dataBlockSize
		}
		start := i
		end := i + 1
		for ; end < n; end++ {
			next = t.Entry(end)
			a := next.Addr
			if end-start >= maxBlockEntries || (a != ents[len(ents)-1].Addr && (end-start >= limit || (!inCode && code(a)))) {
				haveNext = true
				break
			}
			ents = append(ents, next)
		}
		shift := 7
		for j := 1; j < len(ents) && shift > 0; j++ {
			if step := ents[j].Addr - ents[j-1].Addr; step != 0 {
				shift = min(shift, bits.TrailingZeros64(step))
			}
		}
		var blk []byte
		prevAddr, prevName, prevSect := first.Addr, "", uint8(0)
		for ; i < end; i++ {
			e := ents[i-start]
			name := e.RawName
			if e.Source == symtab.SourceFunctionStarts {
				name = ""
			}
			shared := commonPrefix(prevName, name)
			head := uint64(len(prevName)-shared)<<3 | uint64(e.Source&3)
			if e.Section != prevSect {
				head |= 4
			}
			blk = binary.AppendUvarint(blk, (e.Addr-prevAddr)>>shift)
			blk = binary.AppendUvarint(blk, head)
			if e.Section != prevSect {
				blk = append(blk, e.Section)
			}
			blk = binary.AppendUvarint(blk, uint64(len(name)-shared))
			blk = append(blk, name[shared:]...)
			prevAddr, prevName, prevSect = e.Addr, name, e.Section
		}
		count := uint32(end-start) | uint32(shift)<<24
		if !inCode && len(blk) <= maxInflated {
			raw.Reset()
			raw.Write(binary.AppendUvarint(nil, uint64(len(blk))))
			if zw == nil {
				if zw, err = flate.NewWriter(&raw, deflateLevel); err != nil {
					return nil, nil, err
				}
			} else {
				zw.Reset(&raw)
			}
			zw.Write(blk)
			if err := zw.Close(); err != nil {
				return nil, nil, err
			}
			if raw.Len() < len(blk)*7/8 && len(blk) <= maxInflateRatio*(raw.Len()-uvarintLen(len(blk))) {
				blk = raw.Bytes()
				count |= blockDeflated
			}
		}
		blocks = le.AppendUint64(blocks, first.Addr)
		blocks = le.AppendUint32(blocks, uint32(len(stream)))
		blocks = le.AppendUint32(blocks, count)
		stream = append(stream, blk...)
	}
	return blocks, stream, nil
}

// uvarintLen returns the length of v as a uvarint.
func uvarintLen(v int) int { return len(binary.AppendUvarint(nil, uint64(v))) }

// commonPrefix returns the length of the longest common prefix of a and b.
// It compares eight bytes at a time: front coding calls it for every
// symbol, string and demangled name, whose shared prefixes run to tens of
// bytes.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for ; i+8 <= n; i += 8 {
		x := le.Uint64([]byte(a[i : i+8]))
		y := le.Uint64([]byte(b[i : i+8]))
		if x != y {
			return i + bits.TrailingZeros64(x^y)/8
		}
	}
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// section is one section before it is laid out.
type section struct {
	kind, table uint32
	data        []byte
}

// writeFile lays the sections out after the header and directory, each
// 8-byte aligned, and the chunk checksums last: one CRC-32C per chunk of
// 1<<chunkShift bytes from the end of the directory to the checksums. The
// header's checksum covers the directory and the chunk checksums.
func writeFile(w io.Writer, in Input, secs []section) error {
	count := len(secs) + 1 // and the checksums
	dirEnd := uint64(headerSize + dirEntrySize*count)
	off := dirEnd
	offs := make([]uint64, len(secs))
	for i, s := range secs {
		off = (off + 7) &^ 7
		offs[i] = off
		off += uint64(len(s.data))
	}
	checksOff := (off + 7) &^ 7
	nchunks := (checksOff - dirEnd + 1<<chunkShift - 1) >> chunkShift
	size := checksOff + 4*nchunks

	file := make([]byte, size)
	for i, s := range secs {
		copy(file[offs[i]:], s.data)
	}
	dir := file[headerSize:dirEnd]
	for i, s := range secs {
		e := dir[dirEntrySize*i:]
		le.PutUint32(e, s.kind)
		le.PutUint32(e[4:], s.table)
		le.PutUint64(e[8:], offs[i])
		le.PutUint64(e[16:], uint64(len(s.data)))
	}
	e := dir[dirEntrySize*len(secs):]
	le.PutUint32(e, kindChecks)
	le.PutUint64(e[8:], checksOff)
	le.PutUint64(e[16:], 4*nchunks)
	for c := uint64(0); c < nchunks; c++ {
		lo := dirEnd + c<<chunkShift
		hi := min(lo+1<<chunkShift, checksOff)
		le.PutUint32(file[checksOff+4*c:], crc32.Checksum(file[lo:hi], castagnoli()))
	}
	crc := crc32.Update(0, castagnoli(), dir)
	crc = crc32.Update(crc, castagnoli(), file[checksOff:])

	hdr := file[:headerSize]
	copy(hdr[offMagic:], Magic)
	le.PutUint32(hdr[offVersion:], Version)
	le.PutUint32(hdr[offSections:], uint32(count))
	copy(hdr[offUUID:], in.UUID[:])
	le.PutUint32(hdr[offCPUType:], in.CPUType)
	le.PutUint32(hdr[offCPUSubtype:], in.CPUSubtype)
	le.PutUint64(hdr[offFileSize:], size)
	le.PutUint32(hdr[offChecksum:], crc)
	le.PutUint32(hdr[offFileType:], in.FileType)
	if _, err := w.Write(file); err != nil {
		return fmt.Errorf("symindex: writing: %w", err)
	}
	return nil
}

// builder collects the strings, nodes and files while the sections are
// made. Strings are referred to by the order they were added until
// finishStrings sorts them; id then maps such a reference to the final
// id.
type builder struct {
	strList []string
	strs    map[string]uint32
	final   []uint32 // by reference: the sorted id

	nodes   []node
	nodeIDs nodeTable
	// langKeys are the languages met, numbered for nodeRef.
	langKeys []demangle.Lang
	files    []uint32 // string refs
	fileIDs  map[string]uint32
	langs    []uint32 // string refs
	langIDs  map[demangle.Lang]uint8
	// demangled holds, by the string ref of a linkage name, the name
	// debuginfo gave its function by demangling it.
	demangled map[uint32]string

	// The node of each function met by its debuginfo.Leaf (see link), and
	// the last chain met.
	leafIDs       leafIDs
	lastLeafKey   leafKey
	lastLeaf      uint32
	lastLeafKnown bool
	// dem demangles linkage names on other goroutines while lines runs;
	// nil when there is one processor (node demangles them then).
	dem *demangler
	// The last file met and its table index plus one: neighbouring
	// ranges mostly share a file.
	lastFile   string
	lastFileID uint32
	// The string references and file table indexes plus one of the
	// strings and files met lately.
	recentStrs, recentFiles recentRefs
}

// node is one node of the inline tree before it is encoded.
type node struct {
	parent                      int32 // -1 for none
	flags                       uint64
	function, linkage           uint32 // string refs
	callFile, callLine, callCol uint32
}

// lang returns the language table index of l plus one; 0 for none, and
// for languages beyond the first maxLangs (there are six).
func (b *builder) lang(l demangle.Lang) uint8 {
	if l == "" {
		return 0
	}
	if id, ok := b.langIDs[l]; ok {
		return id
	}
	if len(b.langs) >= maxLangs {
		return 0
	}
	b.langs = append(b.langs, b.str(string(l)))
	id := uint8(len(b.langs))
	b.langIDs[l] = id
	return id
}

// str returns the reference of s, adding it once.
func (b *builder) str(s string) uint32 {
	e := b.recentStrs.entry(s)
	if e.s == s && e.known {
		return e.ref
	}
	ref, ok := b.strs[s]
	if !ok {
		ref = uint32(len(b.strList))
		b.strList = append(b.strList, s)
		b.strs[s] = ref
	}
	e.s, e.ref, e.known = s, ref, true
	return ref
}

// recentRefs remembers the references of strings met lately, by where
// their bytes lie: debuginfo hands the same string (the same bytes) to
// every function of a unit with the same name, and every row of a line
// table with the same file, so that most lookups find their string here,
// a comparison of two equal pointers, instead of hashing it and missing
// the caches in a map of tens of thousands. A cache: an entry answers
// only for a string equal to its own.
type recentRefs [1 << 12]recentRef

type recentRef struct {
	s     string
	ref   uint32
	known bool
}

// entry returns the entry s may be in, or is to be kept in.
func (c *recentRefs) entry(s string) *recentRef {
	p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	return &c[(p>>3^p>>15^uintptr(len(s)))&uintptr(len(c)-1)]
}

// id returns the final id of the string reference ref.
func (b *builder) id(ref uint32) uint32 { return b.final[ref] }

// finishStrings sorts the strings and front-codes them in blocks of
// strBlock: the first string of a block is a uvarint length and its
// bytes, each next one a uvarint of the bytes it shares with the one
// before, a uvarint length of the rest and the rest. The index holds each
// block's offset in the blob (u32).
func (b *builder) finishStrings() (blob, index []byte) {
	order := make([]uint32, len(b.strList))
	for i := range order {
		order[i] = uint32(i)
	}
	slices.SortFunc(order, func(x, y uint32) int { return strings.Compare(b.strList[x], b.strList[y]) })
	b.final = make([]uint32, len(b.strList))
	prev := ""
	for id, ref := range order {
		b.final[ref] = uint32(id)
		s := b.strList[ref]
		if id%strBlock == 0 {
			index = le.AppendUint32(index, uint32(len(blob)))
			blob = binary.AppendUvarint(blob, uint64(len(s)))
			blob = append(blob, s...)
		} else {
			shared := commonPrefix(prev, s)
			blob = binary.AppendUvarint(blob, uint64(shared))
			blob = binary.AppendUvarint(blob, uint64(len(s)-shared))
			blob = append(blob, s[shared:]...)
		}
		prev = s
	}
	b.strList, b.strs = nil, nil
	return blob, index
}

// demangledNames encodes the demangled names by the string id of their
// linkage names, in chunks of demChunk ids. The index holds each chunk's
// offset in the stream (u32); a chunk without names is empty, else a
// uvarint of (its size << 1 | compressed) and its bytes, DEFLATE-compressed
// when that saves an eighth within demInflateRatio. Its bytes hold, per
// id, a uvarint of (the bytes the name shares with the chunk's last name
// before it << 1 | present), and for a present name a uvarint length and
// the rest of it. Names of neighbouring ids (sorted linkage names) share
// most of their bytes, which front coding and DEFLATE remove.
func (b *builder) demangledNames() (index, stream []byte, err error) {
	if len(b.demangled) == 0 {
		return nil, nil, nil
	}
	// The names by string id: one slice over every id costs less than
	// a map lookup per id.
	byID := make([]*string, len(b.final))
	for ref, name := range b.demangled {
		byID[b.id(ref)] = &name
	}
	b.demangled = nil
	z := &demWriter{}
	var names [demChunk]*string
	for lo := uint32(0); lo < uint32(len(b.final)); lo += demChunk {
		index = le.AppendUint32(index, uint32(len(stream)))
		found := false
		for k := range names {
			names[k] = nil
			if id := lo + uint32(k); id < uint32(len(byID)) && byID[id] != nil {
				names[k], found = byID[id], true
			}
		}
		if !found {
			continue
		}
		// Names a reader would not decode (past demExpandRatio times the
		// chunk's bytes) are left out: it demangles them.
		keep := demChunk
		for {
			chunk, total, err := z.encode(names[:keep])
			if err != nil {
				return nil, nil, err
			}
			if fits := total <= demExpandRatio*uint64(len(chunk)); fits || keep == 1 {
				if fits {
					stream = append(stream, chunk...)
				}
				break
			}
			keep /= 2
		}
	}
	if uint64(len(stream)) >= math.MaxUint32 {
		return nil, nil, fmt.Errorf("%d bytes of demangled names, too many", len(stream))
	}
	return index, stream, nil
}

// demWriter encodes chunks of demangled names, reusing its buffers.
type demWriter struct {
	zw     *flate.Writer
	packed bytes.Buffer
	raw    []byte
}

// encode returns one chunk holding names (nil for an absent one) and the
// length of its names added up.
func (z *demWriter) encode(names []*string) (chunk []byte, total uint64, err error) {
	z.raw = z.raw[:0]
	prev := ""
	for _, p := range names {
		if p == nil {
			z.raw = append(z.raw, 0)
			continue
		}
		name := *p
		shared := commonPrefix(prev, name)
		z.raw = binary.AppendUvarint(z.raw, uint64(shared)<<1|1)
		z.raw = binary.AppendUvarint(z.raw, uint64(len(name)-shared))
		z.raw = append(z.raw, name[shared:]...)
		prev = name
		total += uint64(len(name))
	}
	if len(z.raw) > maxInflated {
		return nil, 0, fmt.Errorf("%d bytes of demangled names in one chunk, at most %d", len(z.raw), maxInflated)
	}
	z.packed.Reset()
	if z.zw == nil {
		if z.zw, err = flate.NewWriter(&z.packed, deflateLevel); err != nil {
			return nil, 0, err
		}
	} else {
		z.zw.Reset(&z.packed)
	}
	z.zw.Write(z.raw)
	if err := z.zw.Close(); err != nil {
		return nil, 0, err
	}
	if z.packed.Len() < len(z.raw)*7/8 && len(z.raw) <= demInflateRatio*z.packed.Len() {
		chunk = binary.AppendUvarint(nil, uint64(len(z.raw))<<1|1)
		return append(chunk, z.packed.Bytes()...), total, nil
	}
	chunk = binary.AppendUvarint(nil, uint64(len(z.raw))<<1)
	return append(chunk, z.raw...), total, nil
}

// file returns the file table index of path plus one; 0 for no file.
func (b *builder) file(path string) uint32 {
	if path == "" {
		return 0
	}
	if path == b.lastFile && b.lastFileID != 0 {
		return b.lastFileID
	}
	e := b.recentFiles.entry(path)
	if e.s != path || !e.known {
		id, ok := b.fileIDs[path]
		if !ok {
			b.files = append(b.files, b.str(path))
			id = uint32(len(b.files))
			b.fileIDs[path] = id
		}
		e.s, e.ref, e.known = path, id, true
	}
	b.lastFile, b.lastFileID = path, e.ref
	return e.ref
}

// nodeKey identifies one node of the inline tree: a function under its
// parent, called from a given position of the parent (for the outermost
// function, no position).
type nodeKey struct {
	parent            int32
	function, linkage string
	lang              demangle.Lang
	inlined           bool
	callFile          string
	callLine, callCol int
}

// nodeRef is a nodeKey with its strings replaced by their references, a
// small key to hash: the function's name is none when it is made by
// demangling the linkage name (the linkage name says it all).
type nodeRef struct {
	parent            int32
	function, linkage uint32 // string refs, noString for none
	callFile          uint32 // file table index plus one, 0 for none
	callLine, callCol uint32 // as stored (debuginfo's are 32 bits)
	lang              uint16 // langKey's: no string in the key to hash
	inlined           bool
}

// nodeTable finds a node by its nodeRef: an open-addressing hash table,
// probed linearly, where one probe sequence finds a node or the free slot
// for a new one (a map took a lookup and then an insertion, each missing
// the processor's caches, for each of cmd/go's 52,260 functions). A slot
// holds the top half of the key's hash and the node's id plus one (0: a
// free slot), so that a probe reads a key only when those bits match. At
// most three slots in four are used.
type nodeTable struct {
	slots []uint64
	refs  []nodeRef // by node id
	seed  maphash.Seed
}

// grow makes room for n more nodes without rehashing.
func (t *nodeTable) grow(n int) {
	t.refs = slices.Grow(t.refs, n)
	if need := len(t.refs) + n; 4*need > 3*len(t.slots) {
		t.rehash(need + need/2)
	}
}

// rehash makes the table at least size slots (a power of two), placing
// the nodes again.
func (t *nodeTable) rehash(size int) {
	if t.slots == nil {
		t.seed = maphash.MakeSeed()
	}
	n := 64
	for n < size {
		n *= 2
	}
	t.slots = make([]uint64, n)
	for id := range t.refs {
		t.place(t.hash(&t.refs[id]), int32(id))
	}
}

func (t *nodeTable) hash(r *nodeRef) uint64 { return maphash.Comparable(t.seed, *r) }

// place puts node id, whose key hashes to h, in the first free slot of
// its probe sequence.
func (t *nodeTable) place(h uint64, id int32) {
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		if t.slots[i] == 0 {
			t.slots[i] = h&^0xffffffff | uint64(id+1)
			return
		}
	}
}

// findOrAdd returns the node of r and true, or, when there is none, adds
// r as the next node (the nodes are numbered in the order they are added)
// and returns its id and false.
func (t *nodeTable) findOrAdd(r nodeRef) (int32, bool) {
	if 4*(len(t.refs)+1) > 3*len(t.slots) {
		t.rehash(2 * len(t.slots))
	}
	h := t.hash(&r)
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			id := int32(len(t.refs))
			t.slots[i] = h&^0xffffffff | uint64(id+1)
			t.refs = append(t.refs, r)
			return id, false
		}
		if s&^0xffffffff == h&^0xffffffff {
			if found := int32(uint32(s)) - 1; t.refs[found] == r {
				return found, true
			}
		}
	}
}

// langKey returns a number for l, the same for the same language: the
// languages are a handful, looked through in order.
func (b *builder) langKey(l demangle.Lang) uint16 {
	for i, k := range b.langKeys {
		if k == l {
			return uint16(i)
		}
	}
	b.langKeys = append(b.langKeys, l)
	return uint16(len(b.langKeys) - 1)
}

// node returns the node for k, adding it once.
func (b *builder) node(k nodeKey) int32 {
	// Every string of an existing node is known already: taking the
	// references adds nothing then, and for a new node adds what it
	// would add anyway (the file table in the same order).
	demangled := k.linkage != "" && demangledFrom(k.linkage, k.lang)
	r := nodeRef{parent: k.parent, function: noString, linkage: noString, lang: b.langKey(k.lang), inlined: k.inlined,
		callFile: b.file(k.callFile), callLine: clampU32(k.callLine), callCol: clampU32(k.callCol)}
	if k.linkage != "" {
		r.linkage = b.str(k.linkage)
	}
	if !demangled && k.function != "" {
		r.function = b.str(k.function)
	}
	id, found := b.nodeIDs.findOrAdd(r)
	if found {
		return id
	}
	n := node{parent: k.parent, function: r.function, linkage: r.linkage}
	if k.inlined {
		n.flags |= nodeInlined
	}
	if k.linkage != "" {
		n.flags |= nodeLinkage
	}
	switch {
	case demangled:
		// debuginfo names such a function by demangling its linkage
		// name: the name is stored once per linkage name, with the
		// demangled names (compressed, they cost a tenth of their
		// bytes), so that readers need not demangle it again.
		n.flags |= nodeDemangled
		if _, ok := b.demangled[n.linkage]; !ok {
			switch {
			case k.function != "":
				b.demangled[n.linkage] = k.function
			case b.dem != nil:
				b.demangled[n.linkage] = "" // until lines collects the name
				b.dem.todo <- demangleJob{ref: n.linkage, linkage: k.linkage}
			default:
				b.demangled[n.linkage], _ = demangle.Demangle(k.linkage)
			}
		}
	case k.function != "":
		n.flags |= nodeFunction
	}
	if k.callFile != "" || k.callLine != 0 || k.callCol != 0 {
		n.flags |= nodeCall
		n.callFile, n.callLine, n.callCol = r.callFile, clampU32(k.callLine), clampU32(k.callCol)
	}
	n.flags |= uint64(b.lang(k.lang)) << nodeLangShift
	b.nodes = append(b.nodes, n)
	return id
}

// demangledFrom reports whether debuginfo gives a function with this
// linkage name and language the demangled linkage name as its name: when
// the linkage name is mangled in a language it demangles (its display
// rule).
func demangledFrom(linkage string, lang demangle.Lang) bool {
	switch lang {
	case demangle.LangCPP, demangle.LangRust, demangle.LangSwift:
		return demangle.Language(linkage) == lang
	}
	return false
}

// encodeNodes encodes the inline tree and returns it with each node's
// offset. A node is a uvarint of flags (node* bits, the language table
// index plus one above nodeLangShift), a uvarint of its offset minus its
// parent's (0 for none: parents come first), the function and linkage name
// ids when their flags are set, and the call site (file table index plus
// one, line, column) when nodeCall is set, all uvarints.
func (b *builder) encodeNodes() ([]byte, []uint32) {
	var out []byte
	offsets := make([]uint32, len(b.nodes))
	for i, n := range b.nodes {
		off := uint32(len(out))
		offsets[i] = off
		out = binary.AppendUvarint(out, n.flags)
		delta := uint64(0)
		if n.parent >= 0 {
			delta = uint64(off - offsets[n.parent])
		}
		out = binary.AppendUvarint(out, delta)
		if n.flags&nodeFunction != 0 {
			out = binary.AppendUvarint(out, uint64(b.id(n.function)))
		}
		if n.flags&nodeLinkage != 0 {
			out = binary.AppendUvarint(out, uint64(b.id(n.linkage)))
		}
		if n.flags&nodeCall != 0 {
			out = binary.AppendUvarint(out, uint64(n.callFile))
			out = binary.AppendUvarint(out, uint64(n.callLine))
			out = binary.AppendUvarint(out, uint64(n.callCol))
		}
	}
	b.nodes, b.nodeIDs = nil, nodeTable{}
	return out, offsets
}

func clampU32(v int) uint32 {
	return uint32(max(0, min(v, math.MaxUint32)))
}

// lineRange is the answer of the DWARF indexes from addr up to the next
// range: found or not, the innermost node (plus one; 0 for none) and the
// innermost frame's position.
type lineRange struct {
	addr      uint64
	ok        bool
	leaf      uint32
	file      uint32
	line, col uint32
}

// lines encodes the answers of the DWARF indexes, read in address order
// (debuginfo.Steps: each unit range walked once), as ranges, leaves as
// node indexes plus one until encode. Consecutive ranges with the same
// answer are merged. An address's answer is the first index's that finds
// something there, so the indexes' steps are merged and the answer taken
// at each. Each chain of functions is interned once, by its
// debuginfo.Leaf, however many ranges fall in it (on cmd/go, 327,575
// ranges, 47,066 chains).
func (b *builder) lines(debug []*debuginfo.Index) *lineWriter {
	w := &lineWriter{}
	steps := make([]*debuginfo.Steps, len(debug))
	for i, ix := range debug {
		steps[i] = ix.Steps() // every unit parsed: Stats counts them all
	}
	// The nodes and their strings are about one per function, and as
	// many names: sized once, not grown.
	functions, rows := 0, 0
	for _, ix := range debug {
		st := ix.Stats()
		functions, rows = functions+st.Functions, rows+st.Rows
	}
	// Most ranges start at a line row, and a range takes three to six
	// bytes: the stream is sized once, not copied as it grows.
	w.stream = make([]byte, 0, 4*rows)
	w.blocks = make([]byte, 0, rows/lineBlockRanges*lineBlockSize)
	b.nodeIDs.grow(functions)
	b.nodes = slices.Grow(b.nodes, functions)
	if len(b.strs) < functions {
		strs := make(map[string]uint32, functions)
		maps.Copy(strs, b.strs)
		b.strs = strs
	}
	if procs := runtime.GOMAXPROCS(0); procs > 1 {
		b.dem = newDemangler(procs)
		defer func() {
			for _, names := range b.dem.wait() {
				for _, j := range names {
					b.demangled[j.ref] = j.name
				}
			}
			b.dem = nil
		}()
	}
	if len(debug) == 1 {
		// The common case: the one index's steps are the answers.
		for batch := steps[0].Next(); batch != nil; batch = steps[0].Next() {
			for i := range batch {
				w.add(b.lineRange(0, debug[0], &batch[i]))
			}
		}
		return w
	}
	// Per index: its answer at the address reached (the zero Step, found
	// nothing, before its first) and its steps to come.
	cur := make([]debuginfo.Step, len(debug))
	readers := make([]stepReader, len(debug))
	for i := range debug {
		readers[i].steps = steps[i]
	}
	for {
		var addr uint64
		found := false
		for i := range readers {
			if st := readers[i].peek(); st != nil && (!found || st.Addr < addr) {
				addr, found = st.Addr, true
			}
		}
		if !found {
			break
		}
		for i := range readers {
			for st := readers[i].peek(); st != nil && st.Addr == addr; st = readers[i].peek() {
				cur[i] = *st
				readers[i].at++
			}
		}
		r := lineRange{addr: addr}
		for di, ix := range debug {
			if cur[di].OK {
				r = b.lineRange(di, ix, &cur[di])
				r.addr = addr
				break
			}
		}
		w.add(r)
	}
	return w
}

// lineRange returns the range of step st of debug index ix (the di-th).
func (b *builder) lineRange(di int, ix *debuginfo.Index, st *debuginfo.Step) lineRange {
	r := lineRange{addr: st.Addr}
	if !st.OK {
		return r
	}
	r.ok = true
	r.leaf = b.leaf(di, ix, st.Leaf)
	r.file = b.file(st.File)
	r.line, r.col = st.Line, st.Column
	return r
}

// stepReader reads one index's steps a step at a time.
type stepReader struct {
	steps *debuginfo.Steps
	batch []debuginfo.Step
	at    int
}

// peek returns the next step, nil after the last.
func (r *stepReader) peek() *debuginfo.Step {
	for r.at == len(r.batch) {
		if r.batch, r.at = r.steps.Next(), 0; r.batch == nil {
			return nil
		}
	}
	return &r.batch[r.at]
}

// leafKey is a chain of functions of one of the DWARF indexes.
type leafKey struct {
	debug int
	leaf  debuginfo.Leaf
}

// leafIDs holds the node plus one of each function met, by DWARF index,
// compile unit and function number (debuginfo.Leaf.Numbers): an array
// lookup, in the order the ranges meet them, where a map of a
// hundred thousand functions missed the processor's caches.
type leafIDs [][][]uint32

func (t *leafIDs) slot(k leafKey) *uint32 {
	unit, fn := k.leaf.Numbers()
	for len(*t) <= k.debug {
		*t = append(*t, nil)
	}
	units := &(*t)[k.debug]
	if len(*units) <= unit {
		*units = slices.Grow(*units, unit+1-len(*units))[:unit+1]
	}
	fns := &(*units)[unit]
	if len(*fns) <= fn {
		*fns = slices.Grow(*fns, fn+1-len(*fns))[:fn+1]
	}
	return &(*fns)[fn]
}

// leaf returns the innermost node plus one of the chain leaf names in
// debug index ix (the di-th), adding its nodes the first time; 0 for the
// zero Leaf (a line without a function).
func (b *builder) leaf(di int, ix *debuginfo.Index, leaf debuginfo.Leaf) uint32 {
	k := leafKey{debug: di, leaf: leaf}
	if b.lastLeafKnown && k == b.lastLeafKey {
		return b.lastLeaf // neighbouring ranges mostly share a chain
	}
	id := b.link(k, ix)
	b.lastLeafKey, b.lastLeaf, b.lastLeafKnown = k, id, true
	return id
}

// link returns the node plus one of the innermost function of chain k,
// adding it (after the chain outside it) the first time. Each function
// of the DWARF is thus interned once, its chain outside it by its id.
func (b *builder) link(k leafKey, ix *debuginfo.Index) uint32 {
	slot := b.leafIDs.slot(k)
	if *slot != 0 {
		return *slot
	}
	l, ok := ix.Link(k.leaf, false)
	if !ok {
		return 0 // the zero Leaf: a line without a function
	}
	parent := int32(-1)
	if l.Outer != (debuginfo.Leaf{}) {
		// Chains are at most 256 functions deep (debuginfo's bound).
		parent = int32(b.link(leafKey{debug: k.debug, leaf: l.Outer}, ix)) - 1
	}
	// A function named by demangling its linkage name has no Function
	// here: node demangles each linkage name once.
	key := nodeKey{parent: parent, function: l.Function, linkage: l.LinkageName, lang: l.Lang, inlined: l.Inlined}
	if parent >= 0 {
		key.callFile, key.callLine, key.callCol = l.File, l.Line, l.Column
	}
	id := uint32(b.node(key)) + 1
	*b.leafIDs.slot(k) = id // slot's array may have grown since
	return id
}

// demangler demangles linkage names on other goroutines while the writer
// goes on: their names are needed only when the file is written (the
// nodes know their functions by linkage name).
type demangler struct {
	todo    chan demangleJob
	wg      sync.WaitGroup
	results [][]demangleJob // per worker
}

// demangleJob is a linkage name (its string ref) to demangle, and then
// its name.
type demangleJob struct {
	ref           uint32
	linkage, name string
}

func newDemangler(workers int) *demangler {
	d := &demangler{todo: make(chan demangleJob, 1024), results: make([][]demangleJob, workers)}
	for w := range workers {
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			for j := range d.todo {
				j.name, _ = demangle.Demangle(j.linkage)
				d.results[w] = append(d.results[w], j)
			}
		}()
	}
	return d
}

// wait returns every name, once all are demangled.
func (d *demangler) wait() [][]demangleJob {
	close(d.todo)
	d.wg.Wait()
	return d.results
}

// lineWriter encodes the ranges, merged and with wide gaps bridged, a
// block at a time as they come, so that the writer holds a few bytes a
// range rather than the ranges. The leaves are node indexes until the
// nodes' offsets are known: the stream holds each changed leaf as its
// index plus one (a uvarint), which relink turns into the offset delta
// the file holds, copying the rest of each range's bytes as they are.
type lineWriter struct {
	pending        [lineBlockRanges]lineRange // the block being made
	n              int                        // ranges in pending
	last           lineRange
	started        bool
	scratch        []lineRange
	blocks, stream []byte
}

// add adds the range r after those added before.
func (w *lineWriter) add(r lineRange) {
	if !w.started {
		if !r.ok {
			return // nothing below the first range is found either
		}
		w.started, w.last = true, r
		w.push(r)
		return
	}
	if sameAnswer(w.last, r) {
		return
	}
	if r.addr-w.last.addr <= maxAddrDelta {
		w.push(r) // no gap to bridge: the common case
		w.last = r
		return
	}
	w.scratch = appendRange(append(w.scratch[:0], w.last), r)
	for _, x := range w.scratch[1:] {
		w.push(x)
	}
	w.last = r
}

func (w *lineWriter) push(r lineRange) {
	w.pending[w.n] = r
	if w.n++; w.n == lineBlockRanges {
		w.flush()
	}
}

// flush encodes the pending ranges as one block: its record is the first
// address, the stream offset and the count with the block's address shift
// (the trailing zero bits all its steps share) in the top byte.
func (w *lineWriter) flush() {
	blk := w.pending[:w.n]
	if len(blk) == 0 {
		return
	}
	shift := 7
	for j := 1; j < len(blk) && shift > 0; j++ {
		shift = min(shift, bits.TrailingZeros64(blk[j].addr-blk[j-1].addr))
	}
	w.blocks = le.AppendUint64(w.blocks, blk[0].addr)
	w.blocks = le.AppendUint32(w.blocks, uint32(len(w.stream)))
	w.blocks = le.AppendUint32(w.blocks, uint32(len(blk))|uint32(shift)<<24)
	prev := lineRange{addr: blk[0].addr}
	for _, r := range blk {
		w.stream = encodeRangeLeaf(w.stream, prev, r, shift, uint64(r.leaf))
		prev = r
	}
	w.n = 0
}

// relink returns the line blocks and stream with each leaf, a node index
// plus one, turned into its node's offset plus one (offsets, by node
// index); the stream's other bytes are copied as they are.
func (w *lineWriter) relink(offsets []uint32) (blocks, stream []byte) {
	w.flush()
	blocks, in := w.blocks, w.stream
	stream = make([]byte, 0, len(in)+len(in)/4)
	for i := 0; i+lineBlockSize <= len(blocks); i += lineBlockSize {
		rec := blocks[i:]
		pos, count := int(le.Uint32(rec[8:])), le.Uint32(rec[12:])&maxBlockEntries
		le.PutUint32(rec[8:], uint32(len(stream)))
		prevLeaf := uint32(0) // a block starts from no leaf
		for range count {
			flags := in[pos] & (1<<lineFlagBits - 1)
			stream, pos = copyVarint(stream, in, pos) // the step and flags
			if flags&flagLeaf != 0 {
				var v uint64
				v, pos = uvarintAt(in, pos)
				leaf := uint32(0)
				if v > 0 {
					leaf = offsets[v-1] + 1
				}
				stream = binary.AppendVarint(stream, int64(leaf)-int64(prevLeaf))
				prevLeaf = leaf
			}
			if flags&flagFile != 0 {
				stream, pos = copyVarint(stream, in, pos)
			}
			stream, pos = copyVarint(stream, in, pos) // the line
			if flags&flagColumn != 0 {
				stream, pos = copyVarint(stream, in, pos)
			}
		}
	}
	w.blocks, w.stream = nil, nil
	return blocks, stream
}

// copyVarint appends the varint at in[pos:] to out and returns where it
// ends. The stream is the writer's own: every varint in it is complete.
func copyVarint(out, in []byte, pos int) ([]byte, int) {
	end := pos
	for in[end] >= 0x80 {
		end++
	}
	return append(out, in[pos:end+1]...), end + 1
}

// appendRange appends r to ranges. A gap too wide for the stream's
// address step is bridged by repeating the answer before it.
func appendRange(ranges []lineRange, r lineRange) []lineRange {
	for n := len(ranges); n > 0 && r.addr-ranges[n-1].addr > maxAddrDelta; n++ {
		bridge := ranges[n-1]
		bridge.addr += maxAddrDelta
		ranges = append(ranges, bridge)
	}
	return append(ranges, r)
}

// encodeRangeLeaf appends one range as the line writer holds it before
// relink: a uvarint holding the address step from the previous range and
// the flag bits, then the changed leaf as a uvarint node index plus one
// (relink turns it into the file's zigzag delta of node offsets), the file
// as a zigzag delta when it changed, the line as a zigzag delta, and the
// column when it is not 0.
func encodeRangeLeaf(out []byte, prev, r lineRange, shift int, leaf uint64) []byte {
	flags := rangeFlags(prev, r)
	out = binary.AppendUvarint(out, (r.addr-prev.addr)>>shift<<lineFlagBits|flags)
	if flags&flagLeaf != 0 {
		out = binary.AppendUvarint(out, leaf)
	}
	return appendRangeRest(out, flags, prev, r)
}

// rangeFlags returns the flag bits of range r after prev.
func rangeFlags(prev, r lineRange) uint64 {
	flags := uint64(0)
	if r.ok {
		flags |= flagFound
	}
	if r.leaf != prev.leaf {
		flags |= flagLeaf
	}
	if r.file != prev.file {
		flags |= flagFile
	}
	if r.col != 0 {
		flags |= flagColumn
	}
	return flags
}

// appendRangeRest appends what follows a range's leaf: the file, line and
// column.
func appendRangeRest(out []byte, flags uint64, prev, r lineRange) []byte {
	if flags&flagFile != 0 {
		out = binary.AppendVarint(out, int64(r.file)-int64(prev.file))
	}
	out = binary.AppendVarint(out, int64(r.line)-int64(prev.line))
	if flags&flagColumn != 0 {
		out = binary.AppendUvarint(out, uint64(r.col))
	}
	return out
}

func sameAnswer(a, b lineRange) bool {
	a.addr = b.addr
	return a == b
}
