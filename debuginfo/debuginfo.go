// Package debuginfo answers "which function, file and line is this address,
// and what was inlined there" from an image's DWARF (a dSYM's or a Mach-O
// file's __DWARF sections). Its frames are named by package demangle.
//
// An Index is lazy: New reads only the unit headers, the abbreviation
// tables and each compile unit's address ranges (from debug_aranges, or
// else from the compile unit's own DIE, not its children). The first lookup
// in a compile unit parses that unit's line program and function tree into
// address-sorted arrays of disjoint intervals; parsed units are kept in a
// cache bounded in bytes and evicted least recently used first. The DWARF
// itself is decoded from the section bytes the image package hands over,
// by the standard library's debug/dwarf after checks that bound what
// hostile input can make it allocate, and for a unit's DIEs and line
// program by a decoder of the package's own (fastdie.go, fastline.go),
// which leaves any unit it does not read exactly as debug/dwarf does to
// debug/dwarf.
package debuginfo

import (
	"debug/dwarf"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/stackimage/stackimage/demangle"
	"github.com/stackimage/stackimage/lookup"
)

// Frame is one source-level frame at an address: the function the code
// belongs to and the source position. Several frames share one address when
// code was inlined. A Frame is a plain value that shares nothing with the
// Index.
type Frame struct {
	// Function is the readable name: the demangled linkage name for C++,
	// Rust and Swift (Swift as Apple's crash reports print it), else the
	// DWARF name (C functions, ObjC methods such as
	// "-[MyClass crashingMethod]").
	Function string
	// LinkageName is the mangled name as the DWARF records it (no Mach-O
	// leading underscore); empty when the compiler recorded none.
	LinkageName string
	// Lang says how Function was derived from the names.
	Lang demangle.Lang
	// File is the source file's path as the DWARF records it (joined with
	// the include and compilation directories). Empty when unknown.
	File string
	// Line and Column are 1-based; 0 means unknown (line 0 is also what
	// compilers emit for code with no source line).
	Line, Column int
	// Inlined is true when this frame's function was inlined into the next
	// frame's function: the frame has no machine frame of its own.
	Inlined bool
}

// Index answers address lookups for one image's DWARF. Addresses are unslid
// (the image's vmaddr space). Compile units are parsed on first use and
// cached (see the package documentation). An Index is safe for concurrent
// use: the cache is guarded by a mutex, and a parsed unit is immutable.
type Index struct {
	d      *dwarf.Data
	secs   map[string][]byte
	units  []unitSpan
	byAddr []seg // every unit's address ranges, disjoint; node is the unit's index in units

	mu       sync.Mutex
	cache    unitCache
	reported []bool                  // per unit: its parse warnings are already in warn
	abbrevs  map[uint64]*abbrevTable // the skipper's tables by debug_abbrev offset, see abbrevTable
	plans    map[planKey]*planTable  // fastWalk's tables, see planTable
	strEnds  *strEnds                // fastWalk's string section bounds, see Index.strEnds
	// scratch holds the growing arrays of the unit being parsed, kept from
	// one parse to the next: each unit's arrays are then allocated once,
	// at their final size, rather than grown by appending.
	scratch scratch
	warn    warnings // what could not be read, see Warnings
	// walkTypes makes parses decode type descriptions' children instead
	// of skipping them (skip.go), for the tests that compare the two.
	walkTypes bool
	// referenceOnly makes parses decode every DIE with debug/dwarf, never
	// with fastWalk, for the tests that compare the two; fastUnits counts
	// the parses fastWalk did.
	referenceOnly bool
	fastUnits     atomic.Int64
	// fastLineTables and slowLineTables count the line programs
	// fastLines decoded and those it left to debug/dwarf.
	fastLineTables, slowLineTables atomic.Int64

	// calls holds the call sites of the units CallReturn read, by unit,
	// apart from the lookups' cache: few units are asked for them.
	callMu sync.Mutex
	calls  map[int]*unitCallSites
}

// unitIndex is one parsed compile unit: its line table and the tree of its
// subprograms and inlined subroutines. It is immutable once built, but for
// the demangled names lookups fill in.
type unitIndex struct {
	lines *lineTable // nil when the unit has no readable line program
	nodes []node
	segs  []seg // grouped by parent; each group disjoint and sorted by lo
	root  group // the segments of the top-level subprograms
	size  int64 // estimated bytes, for the cache budget (lines excluded)
	// demangled holds, per node whose name is mangled, its readable form
	// once a lookup needed it: demangling every function of a unit when
	// it is parsed cost more than the parse, and a lookup names a few.
	demangled []atomic.Pointer[string]
}

// display returns node n's readable name, demangling it on first use.
// Concurrent first uses may both demangle; they store the same string.
func (ui *unitIndex) display(n int32) string {
	nd := &ui.nodes[n]
	if !nd.mangled {
		return nd.display
	}
	if p := ui.demangled[n].Load(); p != nil {
		return *p
	}
	s, _ := demangle.Demangle(nd.linkage)
	ui.demangled[n].Store(&s)
	return s
}

// lineTable is one decoded line program, shared by the units naming it.
type lineTable struct {
	rows   []row    // whole sequences, sorted by start address
	sorted bool     // every row's address is at or above the one before (sequences do not overlap)
	names  []string // file paths rows refer to
	files  []string // the program's file table by DWARF file number, for DW_AT_call_file
	size   int64
	refs   int // cached units using it
}

// row is one line-table row. It covers [addr, next row's addr) unless it
// ends a sequence, in which case it covers nothing.
type row struct {
	addr   uint64
	file   int32 // index into lineTable.names, -1 when unknown
	line   uint32
	col    uint32
	endSeq bool
}

// node is one DW_TAG_subprogram or DW_TAG_inlined_subroutine with code.
type node struct {
	display, linkage string // readable and mangled names, "" when absent
	lang             demangle.Lang
	mangled          bool // display is the demangled linkage name, made by unitIndex.display
	// callFile/callLine/callCol are where an inlined subroutine was called
	// from (DW_AT_call_*): the source position of the caller's frame.
	callFile          string
	callLine, callCol uint32
	inlined           bool
	// parent is the node this one is nested in (always a lower index),
	// -1 for a top-level one: a lookup's path read from its innermost node.
	parent   int32
	children group
}

// group is a [lo, hi) range of unitIndex.segs.
type group struct{ lo, hi int32 }

// seg is a disjoint address interval [lo, hi) owned by one node (or unit).
type seg struct {
	lo, hi uint64
	node   int32
}

// maxDepth bounds the inline nesting a lookup follows: real code nests a
// few dozen levels at most, and a bound keeps hostile DWARF from building
// frame lists as long as the file.
const maxDepth = 256

// SectionNames lists the DWARF sections New uses, keyed as New expects.
// An image reader need not read or decompress any other.
var SectionNames = []string{
	"debug_info", "debug_abbrev", "debug_line", "debug_str", "debug_ranges", "debug_aranges",
	"debug_addr", "debug_line_str", "debug_rnglists", "debug_str_offsets",
}

// New builds an Index from DWARF section contents keyed by name without
// the leading underscores or dot: "debug_info", "debug_abbrev",
// "debug_line", "debug_str", "debug_ranges", "debug_aranges", and for
// DWARF 5 "debug_addr", "debug_line_str", "debug_rnglists",
// "debug_str_offsets" (Mach-O truncates it to "debug_str_offs"). Keys
// spelled "__debug_info" or ".debug_info" are also accepted; other
// sections are ignored. The Index keeps the section slices (it does not
// copy them): the caller must not modify them afterwards.
//
// New reads only what it needs to find an address's compile unit; units
// are parsed by the lookups that need them. A compile unit whose line table
// or DIEs cannot be read is indexed as far as it can be and reported by
// Warnings; the other units are unaffected. New fails when the sections
// are unusable as a whole (no debug_info, or debug/dwarf rejects them, for
// instance an unreadable first abbreviation table or a bad first unit
// header) or when no unit has an address range and none of those parsed
// yielded a line or a function.
func New(sections map[string][]byte) (*Index, error) {
	secs := normalize(sections)
	if len(secs["debug_info"]) == 0 {
		return nil, errors.New("debuginfo: no debug_info section")
	}
	return build(secs, false)
}

// SectionSource is what NewFromImage needs of an image: *image.Image
// satisfies it. An interface rather than the concrete type keeps this
// package free of the Mach-O reader. NewFromImage calls DWARFSections once,
// in the caller's goroutine; an implementation need not be safe for
// concurrent use unless the caller shares it.
type SectionSource interface {
	// DWARFSections returns the DWARF sections keyed as New expects.
	DWARFSections() (map[string][]byte, error)
}

// namedSectionSource is implemented by sources that can read only some
// sections (*image.Image does); NewFromImage then reads SectionNames alone.
type namedSectionSource interface {
	DWARFSectionsNamed(names ...string) (map[string][]byte, error)
}

// normalize rekeys sections as "debug_xxx", whatever the prefix, keeping
// only those New uses.
func normalize(sections map[string][]byte) map[string][]byte {
	secs := make(map[string][]byte, len(SectionNames))
	for k, v := range sections {
		k = strings.TrimLeft(k, "._")
		if k == "debug_str_offs" {
			k = "debug_str_offsets" // Mach-O section names stop at 16 bytes
		}
		if slices.Contains(SectionNames, k) {
			secs[k] = v
		}
	}
	return secs
}

// NewFromImage builds an Index from an image's DWARF sections, for
// instance a dSYM's *image.Image. When the source can read sections by name
// it reads SectionNames only.
func NewFromImage(im SectionSource) (*Index, error) {
	if im == nil {
		return nil, errors.New("debuginfo: nil section source")
	}
	var secs map[string][]byte
	var err error
	if n, ok := im.(namedSectionSource); ok {
		secs, err = n.DWARFSectionsNamed(SectionNames...)
	} else {
		secs, err = im.DWARFSections()
	}
	if err != nil {
		return nil, fmt.Errorf("debuginfo: reading DWARF sections: %w", err)
	}
	return New(secs)
}

// Lookup returns the frames at the unslid address addr, innermost first and
// the outermost (the function that owns the machine frame) last, as
// llvm-symbolizer --inlines orders them. For a caller's frame pass the
// return address minus one, so that the call instruction is looked up. The
// error is ErrNotFound when the DWARF covers the address with neither a
// function nor a line. The first lookup in a compile unit parses it.
func (ix *Index) Lookup(addr uint64) ([]Frame, error) {
	return ix.AppendLookup(nil, addr)
}

// AppendLookup is Lookup appending the frames to dst, for callers that
// look up many addresses and reuse one slice (a persisted index is built
// by looking up every boundary). On ErrNotFound it returns dst unchanged.
func (ix *Index) AppendLookup(dst []Frame, addr uint64) ([]Frame, error) {
	u := findSeg(ix.byAddr, addr)
	if u < 0 {
		return dst, ErrNotFound
	}
	if frames, ok := ix.unit(int(u)).lookup(dst, addr); ok {
		return frames, nil
	}
	return dst, ErrNotFound
}

// ErrNotFound is Lookup's error for an address the DWARF does not
// describe: lookup.ErrNotFound, the one "not found" of every Lookup and
// Resolve.
var ErrNotFound = lookup.ErrNotFound

// lookup appends the frames at addr to dst; with a nil dst it allocates
// them at their number.
func (ui *unitIndex) lookup(dst []Frame, addr uint64) (frames []Frame, ok bool) {
	leaf, depth := ui.leaf(addr)
	r, haveRow := ui.lines.row(addr)
	if leaf < 0 {
		if !haveRow {
			return nil, false
		}
		return append(dst, Frame{File: ui.lines.name(r.file), Line: int(r.line), Column: int(r.col)}), true
	}
	frames = dst
	if frames == nil {
		frames = make([]Frame, 0, depth)
	}
	var inner *node
	for k := 0; leaf >= 0 && k < depth; k++ {
		nd := &ui.nodes[leaf]
		f := Frame{Function: ui.display(leaf), LinkageName: nd.linkage, Lang: nd.lang, Inlined: nd.inlined}
		if inner == nil {
			// The innermost frame's position is the line table's.
			if haveRow {
				f.File, f.Line, f.Column = ui.lines.name(r.file), int(r.line), int(r.col)
			}
		} else {
			// An outer frame is where the frame inside it was called from.
			f.File, f.Line, f.Column = inner.callFile, int(inner.callLine), int(inner.callCol)
		}
		frames = append(frames, f)
		inner, leaf = nd, nd.parent
	}
	return frames, true
}

// leaf returns the innermost node whose segments hold addr and its depth
// (1 for a top-level node), or -1 and 0 when no node holds it.
func (ui *unitIndex) leaf(addr uint64) (n int32, depth int) {
	n = -1
	g := ui.root
	for depth < maxDepth {
		in := findSeg(ui.segs[g.lo:g.hi], addr)
		if in < 0 {
			break
		}
		n, depth = in, depth+1
		g = ui.nodes[in].children
	}
	return n, depth
}

// findSegIndex returns the index of the segment holding addr, or -1: a
// binary search, segments being disjoint and sorted.
func findSegIndex(segs []seg, addr uint64) int {
	lo := segsAfter(segs, addr)
	if lo == 0 || segs[lo-1].hi <= addr {
		return -1
	}
	return lo - 1
}

// segsAfter returns the index of the first of the sorted segments that
// starts above addr (len(segs) for none).
func segsAfter(segs []seg, addr uint64) int {
	lo, hi := 0, len(segs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if segs[m].lo <= addr {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// findSeg returns the node of the segment holding addr, or -1.
func findSeg(segs []seg, addr uint64) int32 {
	if i := findSegIndex(segs, addr); i >= 0 {
		return segs[i].node
	}
	return -1
}

// row returns the line-table row covering addr: the last row at or before
// it, unless that row ends its sequence.
func (lt *lineTable) row(addr uint64) (row, bool) {
	r, _, ok := lt.rowFrom(-1, addr)
	return r, ok
}

// rowFrom is row, also returning the index of the last row at or before
// addr (-1 for none), for a caller looking up increasing addresses: given
// such an index for an address at or below addr as hint, it steps forward
// from it when the rows are sorted by address, as they are but in hostile
// files, instead of searching them all. The answer is the search's.
func (lt *lineTable) rowFrom(hint int, addr uint64) (row, int, bool) {
	if lt == nil {
		return row{}, -1, false
	}
	rows := lt.rows
	i := -1
	if lt.sorted && hint >= 0 && hint < len(rows) && rows[hint].addr <= addr {
		// The next few rows, then the search: a hint far behind is no
		// better than none.
		for k := 0; k < 8 && hint+1 < len(rows) && rows[hint+1].addr <= addr; k++ {
			hint++
		}
		if hint+1 == len(rows) || rows[hint+1].addr > addr {
			i = hint
		}
	}
	if i < 0 {
		lo, hi := 0, len(rows)
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if rows[m].addr <= addr {
				lo = m + 1
			} else {
				hi = m
			}
		}
		i = lo - 1
	}
	if i < 0 || rows[i].endSeq {
		return row{}, i, false
	}
	return rows[i], i, true
}

func (lt *lineTable) name(i int32) string {
	if i < 0 {
		return ""
	}
	return lt.names[i]
}

// Warnings describes what could not be read: one line per failure, naming
// the compile unit (its DIE offset in debug_info and its name when known)
// and the error, such as a line table with a bad header or a DIE with an
// unknown abbreviation. Units are parsed lazily, so the list holds what New
// found and what the units parsed so far reported (each unit once). Lookups
// in the other compile units are unaffected; in a unit whose line table
// failed, functions resolve without file and line; in one whose DIEs failed
// part way, the DIEs read before the failure are kept. At most 100 warnings
// are kept; a last line then counts the rest. Nil when everything was read.
// The slice is the caller's to modify.
func (ix *Index) Warnings() []string {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	return ix.warn.list()
}

// Bounds returns the lowest and highest address the compile units cover,
// for callers that sample addresses (benchmarks); ok is false when no unit
// covers any address.
func (ix *Index) Bounds() (lo, hi uint64, ok bool) {
	if len(ix.byAddr) == 0 {
		return 0, 0, false
	}
	return ix.byAddr[0].lo, ix.byAddr[len(ix.byAddr)-1].hi, true
}

// Stats describes the size of an Index, for logs and benchmarks: a
// snapshot, a plain value.
type Stats struct {
	Units     int   // compile units (and other units) in debug_info
	Parsed    int   // units parsed and in the cache now
	Rows      int   // line-table rows of the cached units
	Functions int   // subprograms and inlined subroutines with code, of the cached units
	Spans     int   // their disjoint address intervals
	Bytes     int64 // estimated size of the cache
}

// Stats returns the Index's size now.
func (ix *Index) Stats() Stats {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	st := Stats{Units: len(ix.units), Parsed: len(ix.cache.entries), Bytes: ix.cache.bytes}
	for _, lt := range ix.cache.lines {
		st.Rows += len(lt.rows)
	}
	for _, e := range ix.cache.entries {
		st.Functions += len(e.ui.nodes)
		st.Spans += len(e.ui.segs)
	}
	return st
}

// newData builds the debug/dwarf reader over the sections.
func newData(secs map[string][]byte) (*dwarf.Data, error) {
	d, err := dwarf.New(secs["debug_abbrev"], secs["debug_aranges"], nil,
		secs["debug_info"], secs["debug_line"], nil,
		secs["debug_ranges"], secs["debug_str"])
	if err != nil {
		return nil, err
	}
	for _, name := range []string{"debug_addr", "debug_line_str", "debug_rnglists", "debug_str_offsets"} {
		if b, ok := secs[name]; ok {
			if err := d.AddSection("."+name, b); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
		}
	}
	return d, nil
}
