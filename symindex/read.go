package symindex

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"runtime"

	"github.com/stackimage/stackimage/debuginfo"
	"github.com/stackimage/stackimage/internal/mmapfile"
	"github.com/stackimage/stackimage/lookup"
	"github.com/stackimage/stackimage/symtab"
	"github.com/stackimage/stackimage/uuid"
)

// Index is an opened index file. It answers lookups from the file's bytes
// (mapped or read), decoding only what a lookup touches. It is safe for
// concurrent use until Close; strings it returns are copies and stay valid
// after Close.
type Index struct {
	data []byte
	m    *mmapfile.File // nil when the bytes were handed to Parse

	uuid       uuid.UUID
	cpuType    uint32
	cpuSubtype uint32
	fileType   uint32
	name       string

	strings  []byte
	segments []Segment
	tables   []table
	nodes    []byte
	files    []byte
	langs    []byte
	blocks   []byte
	stream   []byte
}

// table is one symbol table's sections.
type table struct {
	ranges []byte // rangeSize records
	addrs  []byte // u64 per entry
	top    []byte // u64 per blockSize entries
	names  []byte // u32 per entry
	info   []byte // 2 bytes per entry
	n      int
}

// Parse checks data as an index file and returns the Index reading from
// it. data must not change while the Index is used.
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
	if sum, want := crc32.Checksum(data[headerSize:], castagnoli()), le.Uint32(data[offChecksum:]); sum != want {
		return nil, &FormatError{Off: offChecksum, Msg: fmt.Sprintf("checksum %#08x does not match the contents (%#08x)", want, sum)}
	}
	ix := &Index{data: data, cpuType: le.Uint32(data[offCPUType:]), cpuSubtype: le.Uint32(data[offCPUSubtype:]),
		fileType: le.Uint32(data[offFileType:])}
	copy(ix.uuid[:], data[offUUID:])
	count := uint64(le.Uint32(data[offSections:]))
	if count > (uint64(len(data))-headerSize)/dirEntrySize {
		return nil, &FormatError{Off: offSections, Msg: fmt.Sprintf("%d sections do not fit the file", count)}
	}
	dirEnd := headerSize + count*dirEntrySize
	var tables [maxTables]table
	ntables := 0
	var nameRef, segs []byte
	for i := uint64(0); i < count; i++ {
		at := headerSize + i*dirEntrySize
		e := data[at : at+dirEntrySize]
		kind, tab := le.Uint32(e[0:]), le.Uint32(e[4:])
		off, size := le.Uint64(e[8:]), le.Uint64(e[16:])
		if off < dirEnd || off > uint64(len(data)) || size > uint64(len(data))-off {
			return nil, &FormatError{Off: int64(at), Msg: fmt.Sprintf("section %d (kind %d) [%#x, +%#x) is outside the file's %d data bytes", i, kind, off, size, len(data))}
		}
		b := data[off : off+size]
		if kind >= kindSymRanges && kind <= kindSymInfo {
			if tab >= maxTables {
				return nil, &FormatError{Off: int64(at), Msg: fmt.Sprintf("symbol table number %d, at most %d", tab, maxTables)}
			}
			ntables = max(ntables, int(tab)+1)
		}
		t := &tables[min(tab, maxTables-1)]
		switch kind {
		case kindStrings:
			ix.strings = b
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
		case kindSymAddrs:
			if size%8 != 0 {
				return nil, sizeError(at, "symbol addresses", size, 8)
			}
			t.addrs, t.n = b, int(size/8)
		case kindSymTop:
			t.top = b
		case kindSymNames:
			t.names = b
		case kindSymInfo:
			t.info = b
		case kindNodes:
			if size%nodeSize != 0 {
				return nil, sizeError(at, "inline tree", size, nodeSize)
			}
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
		}
	}
	// The count is bounded by the section's size, which the file bounds.
	ix.segments = make([]Segment, 0, len(segs)/segmentSize)
	for r := segs; len(r) >= segmentSize; r = r[segmentSize:] {
		ix.segments = append(ix.segments, Segment{Name: ix.str(le.Uint32(r)), Prot: le.Uint32(r[4:]),
			Addr: le.Uint64(r[8:]), Size: le.Uint64(r[16:])})
	}
	if len(nameRef) >= 4 {
		ix.name = ix.str(le.Uint32(nameRef))
	}
	for i := 0; i < ntables; i++ {
		t := tables[i]
		want := (t.n + blockSize - 1) / blockSize
		if len(t.top) != 8*want || len(t.names) != 4*t.n || len(t.info) != 2*t.n {
			return nil, &FormatError{Off: headerSize, Msg: fmt.Sprintf("symbol table %d: top level, names or section info do not match its %d addresses", i, t.n)}
		}
		ix.tables = append(ix.tables, t)
	}
	return ix, nil
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
func (ix *Index) HasDebugInfo() bool { return len(ix.blocks) > 0 }

// Symbols returns the number of symbols of each table.
func (ix *Index) Symbols() []int {
	out := make([]int, len(ix.tables))
	for i, t := range ix.tables {
		out[i] = t.n
	}
	return out
}

// maxStringLen bounds a string a lookup copies out of a hostile file.
const maxStringLen = 1 << 20

// str returns the string at ref, or "" when ref is absent or points
// outside the string table.
func (ix *Index) str(ref uint32) string {
	if ref == noString || uint64(ref) >= uint64(len(ix.strings)) {
		return ""
	}
	b := ix.strings[ref:]
	n, k := binary.Uvarint(b)
	if k <= 0 || n > uint64(len(b)-k) || n > maxStringLen {
		return ""
	}
	return string(b[k : k+int(n)])
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
// symbolize.Entry.Symbol chooses it: a symbol table name beats an export,
// which beats a bare function start; among equals the closest wins.
func (ix *Index) Symbol(addr uint64) (symtab.Symbol, bool) {
	var best symtab.Symbol
	found := false
	for i := range ix.tables {
		e, ok := ix.tables[i].find(addr)
		if !ok {
			continue
		}
		if e.Source == symtab.SourceFunctionStarts {
			e.RawName = ""
		} else {
			e.RawName = ix.str(le.Uint32(ix.tables[i].names[4*e.index:]))
		}
		sym := symtab.SymbolAt(e.Entry, addr)
		if !found || sym.Source < best.Source || (sym.Source == best.Source && sym.Addr > best.Addr) {
			best, found = sym, true
		}
	}
	return best, found
}

// foundEntry is a symbol table entry and its index.
type foundEntry struct {
	symtab.Entry
	index int
}

func (t *table) addr(i int) uint64 { return le.Uint64(t.addrs[8*i:]) }

// upper returns the index of the first address above x: a search of the
// top level, then of one block, as symtab does it.
func (t *table) upper(x uint64) int {
	lo, hi := 0, len(t.top)/8
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if le.Uint64(t.top[8*m:]) > x {
			hi = m
		} else {
			lo = m + 1
		}
	}
	if lo == 0 {
		return 0
	}
	lo = (lo - 1) * blockSize
	hi = min(lo+blockSize, t.n)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if t.addr(m) > x {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

// find returns the entry answering for addr: the last at or below it, in
// addr's section when the table has sections (symtab.Table's rule).
func (t *table) find(addr uint64) (foundEntry, bool) {
	i := t.upper(addr) - 1
	if i < 0 {
		return foundEntry{}, false
	}
	entry := func(j int) foundEntry {
		return foundEntry{Entry: symtab.Entry{Addr: t.addr(j), Section: t.info[2*j], Source: symtab.Source(t.info[2*j+1])}, index: j}
	}
	nr := len(t.ranges) / rangeSize
	if nr == 0 {
		return entry(i), true
	}
	// The section holding addr: the last starting at or below it.
	k := nr - 1
	for k >= 0 && le.Uint64(t.ranges[rangeSize*k:]) > addr {
		k--
	}
	if k < 0 {
		return foundEntry{}, false
	}
	r := t.ranges[rangeSize*k:]
	start, end, sect := le.Uint64(r), le.Uint64(r[8:]), r[16]
	if addr >= end {
		return foundEntry{}, false
	}
	at := t.addr(i)
	for j := i; j >= 0 && t.addr(j) == at; j-- {
		if t.info[2*j] == sect && at >= start {
			return entry(j), true
		}
	}
	return foundEntry{}, false
}

// maxDepth bounds the inline chain a lookup follows, as debuginfo does.
const maxDepth = 256

// Source returns the source-level frames at the unslid address, innermost
// first, as the DWARF indexes the file was made from answer; ok is false
// when they did not cover the address.
func (ix *Index) Source(addr uint64) (frames []debuginfo.Frame, ok bool) {
	r, ok := ix.lineRange(addr)
	if !ok || !r.ok {
		return nil, false
	}
	if r.leaf == 0 {
		return []debuginfo.Frame{{File: ix.file(r.file), Line: int(r.line), Column: int(r.col)}}, true
	}
	file, line, col := ix.file(r.file), int(r.line), int(r.col)
	n := int64(r.leaf) - 1
	for depth := 0; depth < maxDepth; depth++ {
		if n < 0 || n >= int64(len(ix.nodes)/nodeSize) {
			break
		}
		b := ix.nodes[nodeSize*n:]
		frames = append(frames, debuginfo.Frame{
			Function:    ix.str(le.Uint32(b[4:])),
			LinkageName: ix.str(le.Uint32(b[8:])),
			Lang:        debuginfo.Lang(ix.lang(b[22])),
			Inlined:     b[23]&1 != 0,
			File:        file, Line: line, Column: col,
		})
		file, line, col = ix.file(le.Uint32(b[12:])), int(le.Uint32(b[16:])), int(le.Uint16(b[20:]))
		parent := int64(int32(le.Uint32(b)))
		if parent >= n {
			break // parents come first: anything else is a loop
		}
		n = parent
	}
	return frames, true
}

// file returns the path of file table entry id-1; "" for 0 or a bad id.
func (ix *Index) file(id uint32) string {
	if id == 0 || uint64(id) > uint64(len(ix.files)/4) {
		return ""
	}
	return ix.str(le.Uint32(ix.files[4*(id-1):]))
}

// lang returns the name of language table entry id-1; "" for 0 or a bad
// id.
func (ix *Index) lang(id uint8) string {
	if id == 0 || int(id) > len(ix.langs)/4 {
		return ""
	}
	return ix.str(le.Uint32(ix.langs[4*(int(id)-1):]))
}

// errStream marks a damaged line stream.
var errStream = errors.New("damaged line stream")

// lineRange returns the range holding addr.
func (ix *Index) lineRange(addr uint64) (lineRange, bool) {
	nb := len(ix.blocks) / lineBlockSize
	lo, hi := 0, nb
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if le.Uint64(ix.blocks[lineBlockSize*m:]) > addr {
			hi = m
		} else {
			lo = m + 1
		}
	}
	if lo == 0 {
		return lineRange{}, false
	}
	blk := ix.blocks[lineBlockSize*(lo-1):]
	first, off, count := le.Uint64(blk), le.Uint32(blk[8:]), le.Uint32(blk[12:])
	if uint64(off) > uint64(len(ix.stream)) || count == 0 || count > blockSize {
		return lineRange{}, false
	}
	d := decoder{b: ix.stream[off:]}
	prev := lineRange{addr: first}
	var last lineRange
	found := false
	for i := uint32(0); i < count; i++ {
		r, err := d.next(prev)
		if err != nil || r.addr > addr {
			break
		}
		last, prev, found = r, r, true
	}
	return last, found
}

// decoder reads ranges written by encodeRange.
type decoder struct{ b []byte }

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
	r.addr = prev.addr + head>>lineFlagBits
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
