package debuginfo

import (
	"runtime"
	"slices"
)

// maxParseWorkers bounds the goroutines Boundaries parses units with.
const maxParseWorkers = 4

// Boundaries returns, sorted and without repeats, every address at which
// Lookup's answer may change: the addresses of the line-table rows and the
// starts and ends of the function and inlined-subroutine ranges. Lookup
// gives the same answer at every address from one boundary up to the next,
// so looking up each boundary extracts everything the Index knows (a
// persisted index is built that way). Below the first boundary Lookup
// finds nothing; from the last one up it answers as at the last one.
//
// It parses every compile unit through the unit cache, so its cost is that
// of reading all of the DWARF once; up to GOMAXPROCS (at most 4) units are
// parsed at a time, the answers and warnings being those of a parse in
// order.
func (ix *Index) Boundaries() []uint64 {
	return ix.boundaries(ix.parseWorkers())
}

// parseWorkers returns how many goroutines parse units when all are
// parsed at once: GOMAXPROCS, at most maxParseWorkers.
func (ix *Index) parseWorkers() int { return min(runtime.GOMAXPROCS(0), maxParseWorkers) }

// boundaries is Boundaries with units parsed by that many workers.
func (ix *Index) boundaries(workers int) []uint64 {
	unitBounds := make([][]uint64, len(ix.units)) // the bounds of each unit's ranges
	for _, s := range ix.byAddr {
		unitBounds[s.node] = append(unitBounds[s.node], s.lo, s.hi)
	}
	// A line-table row takes at least a byte of its program, and most
	// take one or two: half of debug_line's size is about the rows'
	// number, the most of the boundaries. Sized once, out is not copied
	// as it grows to a million addresses.
	out := make([]uint64, 0, len(ix.secs["debug_line"])/2+2*len(ix.byAddr))
	var unit []uint64
	runs := make([]run, len(ix.units)) // where each unit's addresses are in out
	ix.eachUnit(workers, func(u int, ui *unitIndex) {
		start := len(out)
		// The function ranges and unit ranges, sorted, merged with the
		// rows, which come sorted unless their sequences overlap.
		unit = append(unit[:0], unitBounds[u]...)
		for _, s := range ui.segs {
			unit = append(unit, s.lo, s.hi)
		}
		var rows []row
		if ui.lines != nil {
			rows = ui.lines.rows
			if !ui.lines.sorted {
				for _, r := range rows {
					unit = append(unit, r.addr)
				}
				rows = nil
			}
		}
		slices.Sort(unit)
		unit = slices.Compact(unit)
		for len(rows) > 0 || len(unit) > 0 {
			var a uint64
			if len(unit) == 0 || len(rows) > 0 && rows[0].addr <= unit[0] {
				a, rows = rows[0].addr, rows[1:]
			} else {
				a, unit = unit[0], unit[1:]
			}
			if n := len(out); n == start || out[n-1] != a {
				out = append(out, a)
			}
		}
		runs[u] = run{start, len(out)}
	})
	// Each unit's addresses are sorted, and units mostly follow each
	// other in address order: then so are all of them, and sorting them
	// again (a million on cmd/go) is not needed.
	if !slices.IsSorted(out) {
		out = ix.mergeRuns(out, runs)
	}
	return slices.Compact(out)
}

// run is a [start, end) range of a slice.
type run struct{ start, end int }

// mergeRuns returns the addresses of out, each unit's sorted in its run,
// sorted. Units whose ranges interleave (a Go package's generic
// instantiations, say, sit apart from its other code) make the runs
// overlap; but each unit's addresses lie within its own ranges (ix.byAddr,
// disjoint and sorted), so taking each range's addresses from its unit's
// run, range after range, sorts them without comparing runs. When some
// address lies outside its unit's ranges (rows of code its ranges leave
// out), that fails, and out is sorted as a whole.
func (ix *Index) mergeRuns(out []uint64, runs []run) []uint64 {
	merged := make([]uint64, 0, len(out))
	for _, s := range ix.byAddr {
		r := runs[s.node]
		vals := out[r.start:r.end]
		i, _ := slices.BinarySearch(vals, s.lo)
		j, found := slices.BinarySearch(vals, s.hi)
		if found {
			j++ // the range's end is a boundary too
		}
		merged = append(merged, vals[i:j]...)
	}
	if len(merged) != len(out) || !slices.IsSorted(merged) {
		slices.Sort(out)
		return out
	}
	return merged
}

// Leaf names the chain of functions Lookup finds at an address: its
// innermost function, as a node of its compile unit. Lookups with the same
// Leaf give the same frames but for the innermost frame's position (the
// line table's), so a caller that looks up many addresses (a persisted
// index is built from every boundary) can handle each chain once. The zero
// Leaf is no function: the address has a line but no function. A Leaf is
// meaningful only to the Index that returned it.
type Leaf struct {
	unit int32
	node int32 // the node's index plus one; 0 for none
}

// Numbers returns the leaf's compile unit, numbered from 0, and its
// function within the unit, numbered from 1 (0 for the zero Leaf): dense
// numbers, for callers that keep what they learn of each function in
// arrays rather than maps.
func (l Leaf) Numbers() (unit, function int) { return int(l.unit), int(l.node) }

// LookupLeaf answers as Lookup does without making the frames: the Leaf
// of the chain at addr and the innermost frame's position. ok is false
// where Lookup's error is ErrNotFound. Link gives the frames.
func (ix *Index) LookupLeaf(addr uint64) (leaf Leaf, file string, line, column int, ok bool) {
	return ix.NewCursor().LookupLeaf(addr)
}

// A Cursor answers as Index.LookupLeaf does, faster for increasing
// addresses (a persisted index's writer visits every boundary in order):
// it keeps the compile unit and line-table row of the address before. A
// Cursor is not safe for concurrent use; its Index stays so.
type Cursor struct {
	ix  *Index
	seg int        // the index in ix.byAddr of the last address's unit range, -1 for none
	ui  *unitIndex // that unit, parsed
	row int        // the last row index its line table gave, -1 for none
}

// NewCursor returns a Cursor over the Index.
func (ix *Index) NewCursor() *Cursor { return &Cursor{ix: ix, seg: -1, row: -1} }

// LookupLeaf is Index.LookupLeaf.
func (c *Cursor) LookupLeaf(addr uint64) (leaf Leaf, file string, line, column int, ok bool) {
	ix := c.ix
	if c.seg < 0 || addr < ix.byAddr[c.seg].lo || addr >= ix.byAddr[c.seg].hi {
		// The unit ranges are disjoint and sorted: the range holding the
		// last address, when it holds this one, is the one a search finds.
		i := findSegIndex(ix.byAddr, addr)
		if i < 0 {
			return Leaf{}, "", 0, 0, false
		}
		if c.seg < 0 || ix.byAddr[i].node != ix.byAddr[c.seg].node {
			// A parsed unit is immutable: kept here, it stays valid even
			// when the Index's cache drops it.
			c.ui, c.row = ix.unit(int(ix.byAddr[i].node)), -1
		}
		c.seg = i
	}
	u, ui := ix.byAddr[c.seg].node, c.ui
	n, _ := ui.leaf(addr)
	r, ri, haveRow := ui.lines.rowFrom(c.row, addr)
	c.row = ri
	if n < 0 && !haveRow {
		return Leaf{}, "", 0, 0, false
	}
	if n >= 0 {
		leaf = Leaf{unit: u, node: n + 1}
	}
	if haveRow {
		file, line, column = ui.lines.name(r.file), int(r.line), int(r.col)
	}
	return leaf, file, line, column, true
}

// Link is one function of a chain: its frame as Lookup gives it, but for
// the position, and the chain outside it.
type Link struct {
	// Frame is the function's frame. Its File, Line and Column say where
	// it was called from (the position of the frame outside it; empty for
	// the outermost function): its own position is the frame inside's
	// call site, or the line table's for the innermost.
	Frame
	// Outer is the chain outside the function, the zero Leaf when the
	// function is the outermost.
	Outer Leaf
}

// Link returns the innermost function of leaf's chain; ok is false for
// the zero Leaf. Following Outer up to the zero Leaf gives Lookup's frames
// in order, so that a caller meeting many chains (a persisted index's
// writer) handles each function once. With demangle false, a function
// that Lookup names by demangling its linkage name (C++, Rust, Swift) gets
// an empty Function: demangle.Demangle(LinkageName) is its name, for a caller that
// demangles each name once however many functions share it.
func (ix *Index) Link(leaf Leaf, demangle bool) (l Link, ok bool) {
	if leaf.node <= 0 || leaf.unit < 0 || int(leaf.unit) >= len(ix.units) {
		return Link{}, false
	}
	ui := ix.unit(int(leaf.unit))
	if int(leaf.node) > len(ui.nodes) {
		return Link{}, false
	}
	n := leaf.node - 1
	nd := &ui.nodes[n]
	l.Frame = Frame{LinkageName: nd.linkage, Lang: nd.lang, Inlined: nd.inlined}
	if demangle || !nd.mangled {
		l.Function = ui.display(n)
	}
	if nd.parent >= 0 {
		l.File, l.Line, l.Column = nd.callFile, int(nd.callLine), int(nd.callCol)
		l.Outer = Leaf{unit: leaf.unit, node: nd.parent + 1}
	}
	return l, true
}
