package symindex

import (
	"fmt"
	"hash/crc32"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/stackimage/stackimage/internal/mmapfile"
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
