package debuginfo

import "slices"

// A Step is where LookupLeaf's answer may change: at every address from
// Addr up to the next Step's, LookupLeaf answers Leaf, File, Line, Column
// and OK (OK false: nothing found, the other fields empty). Line and
// Column are as the line table holds them, 32 bits (LookupLeaf's ints
// hold the same values): a Step takes 48 bytes, not 64.
type Step struct {
	Addr         uint64
	Leaf         Leaf
	File         string
	Line, Column uint32
	OK           bool
}

// Steps hands over an Index's answers in address order, a Step at each
// address where LookupLeaf's answer changes (among those Boundaries
// lists), without a lookup per address. A persisted index's writer reads
// them so: each unit range is walked once, its function tree's segments
// merged with its line rows. Below the first Step nothing is found; from
// the last one up (a not-found Step) neither. Neighbouring Steps may give
// the same answer. A Steps is not safe for concurrent use; its Index
// stays so.
type Steps struct {
	ix    *Index
	next  int    // the next unit range of ix.byAddr to walk
	steps []Step // the batch Next returns, reused
	// The unit range being walked, when active: its unit, its end,
	// whether a not-found step ends it, and its pieces.
	active  bool
	u       int32
	ui      *unitIndex
	hi      uint64
	endStep bool
	pieces  []piece
	// Where the merge stands (sorted rows): the piece at the address
	// reached, the last row at or before it and the first row after it.
	p, cur, nextRow int
	// Where the search stands (rows not sorted): the addresses left.
	search bool
	addrs  []uint64
	at     int
}

// stepBatch is how many steps Next returns at most (one more when a unit
// range ends the batch): a batch stays in the processor's caches. A
// variable for the tests, which make it small.
var stepBatch = 512

// piece is where the innermost node at an address changes within a unit
// range: from lo up to the next piece's lo, node (-1 for none).
type piece struct {
	lo   uint64
	node int32
}

// Steps parses every compile unit (as Boundaries does: through the unit
// cache, up to GOMAXPROCS of them at a time, the warnings those of a
// parse in order) and returns the Steps over them.
func (ix *Index) Steps() *Steps {
	ix.eachUnit(ix.parseWorkers(), func(int, *unitIndex) {})
	return &Steps{ix: ix}
}

// Next returns the next steps (at least one, at most a few hundred) in
// address order; nil after the last. The slice is valid until the next
// call.
func (s *Steps) Next() []Step {
	s.steps = s.steps[:0]
	for len(s.steps) < stepBatch {
		if !s.active {
			if s.next == len(s.ix.byAddr) {
				break
			}
			s.start(s.next)
			s.next++
		}
		if s.search {
			s.searchSome()
		} else {
			s.mergeSome()
		}
	}
	if len(s.steps) == 0 {
		return nil
	}
	return s.steps
}

// start begins unit range k of ix.byAddr: its unit's answers from its
// start, and nothing found at its end unless the next range starts there.
// It adds the range's first step.
func (s *Steps) start(k int) {
	ix := s.ix
	r := ix.byAddr[k]
	s.active, s.u, s.hi = true, r.node, r.hi
	s.endStep = k+1 == len(ix.byAddr) || ix.byAddr[k+1].lo != r.hi
	s.ui = ix.unit(int(r.node))
	ui := s.ui
	s.pieces = ui.appendPieces(s.pieces[:0], ui.root, r.lo, r.hi, -1, 0)
	s.search = ui.lines != nil && !ui.lines.sorted
	if s.search {
		s.startSearch(r.lo, r.hi)
		return
	}
	s.p, s.cur = 0, -1
	var rows []row
	if lt := ui.lines; lt != nil {
		rows = lt.rows
		_, s.cur, _ = lt.rowFrom(-1, r.lo)
	}
	s.nextRow = s.cur + 1 // rows from nextRow on start above lo
	s.steps = append(s.steps, ui.step(s.u, r.lo, s.pieces[0].node, rows, s.cur))
}

// finishRange ends the unit range being walked, with its not-found step.
func (s *Steps) finishRange() {
	if s.endStep {
		s.steps = append(s.steps, Step{Addr: s.hi})
	}
	s.active, s.ui = false, nil
}

// mergeSome adds the steps of the unit range, whose line rows are sorted
// by address, until the batch is full or the range ends: the pieces and
// the rows merged in address order, a step where the innermost node or
// the row's position changes. The row at an address is the last at or
// before it, as rowFrom finds.
func (s *Steps) mergeSome() {
	ui, u, hi := s.ui, s.u, s.hi
	var rows []row
	if ui.lines != nil {
		rows = ui.lines.rows
	}
	pieces := s.pieces
	p, cur, next := s.p, s.cur, s.nextRow
	defer func() { s.p, s.cur, s.nextRow = p, cur, next }()
	for len(s.steps) < stepBatch {
		end := hi
		if p+1 < len(pieces) {
			end = pieces[p+1].lo
		}
		if next < len(rows) && rows[next].addr < end {
			end = rows[next].addr
		}
		if end >= hi {
			s.finishRange()
			return
		}
		changed := false
		if p+1 < len(pieces) && pieces[p+1].lo == end {
			p++
			changed = true
		}
		if next < len(rows) && rows[next].addr == end {
			was := cur
			for next < len(rows) && rows[next].addr == end {
				cur, next = next, next+1
			}
			changed = changed || !samePosition(rows, was, cur)
		}
		if changed {
			s.steps = append(s.steps, ui.step(u, end, pieces[p].node, rows, cur))
		}
	}
}

// samePosition reports whether rows i and j (-1 for none) give the same
// position: both none (or ending a sequence), or the same file, line and
// column.
func samePosition(rows []row, i, j int) bool {
	ri, rj := row{endSeq: true}, row{endSeq: true}
	if i >= 0 {
		ri = rows[i]
	}
	if j >= 0 {
		rj = rows[j]
	}
	if ri.endSeq || rj.endSeq {
		return ri.endSeq == rj.endSeq
	}
	return ri.file == rj.file && ri.line == rj.line && ri.col == rj.col
}

// startSearch begins a unit range [lo, hi) whose line rows are not sorted
// (overlapping sequences, in damaged files): its steps are at each row
// address and piece start in the range, sorted, each row found by
// rowFrom's search as LookupLeaf finds it.
func (s *Steps) startSearch(lo, hi uint64) {
	addrs := s.addrs[:0]
	for _, pc := range s.pieces {
		addrs = append(addrs, pc.lo)
	}
	for _, r := range s.ui.lines.rows {
		if r.addr > lo && r.addr < hi {
			addrs = append(addrs, r.addr)
		}
	}
	s.addrs, s.at, s.p = sortUnique(addrs), 0, 0
}

// searchSome adds the steps of a unit range startSearch began until the
// batch is full or the range ends.
func (s *Steps) searchSome() {
	ui := s.ui
	for ; s.at < len(s.addrs) && len(s.steps) < stepBatch; s.at++ {
		addr := s.addrs[s.at]
		for s.p+1 < len(s.pieces) && s.pieces[s.p+1].lo <= addr {
			s.p++
		}
		_, cur, _ := ui.lines.rowFrom(-1, addr)
		s.steps = append(s.steps, ui.step(s.u, addr, s.pieces[s.p].node, ui.lines.rows, cur))
	}
	if s.at == len(s.addrs) {
		s.finishRange()
	}
}

// step is LookupLeaf's answer at addr in unit u, where the innermost node
// is n (-1 for none) and rows[cur] the last row at or before addr (cur -1
// for none).
func (ui *unitIndex) step(u int32, addr uint64, n int32, rows []row, cur int) Step {
	st := Step{Addr: addr}
	haveRow := cur >= 0 && !rows[cur].endSeq
	if n < 0 && !haveRow {
		return st
	}
	st.OK = true
	if n >= 0 {
		st.Leaf = Leaf{unit: u, node: n + 1}
	}
	if haveRow {
		r := rows[cur]
		st.File, st.Line, st.Column = ui.lines.name(r.file), r.line, r.col
	}
	return st
}

// appendPieces appends to out the pieces of [lo, hi) as ui.leaf finds
// them below group g: def (the node g's segments are the children of, -1
// for the root) where none of g's segments holds the address, else what
// the segment's node's children give. depth counts the nodes found
// outside g; like leaf, it looks no deeper than maxDepth. The segments
// of a group are disjoint and sorted, so that each is visited once per
// range of its parent's that holds it.
func (ui *unitIndex) appendPieces(out []piece, g group, lo, hi uint64, def int32, depth int) []piece {
	pos := lo
	if depth < maxDepth {
		segs := ui.segs[g.lo:g.hi]
		// The first segment ending above lo: the one holding lo, if
		// any, else the first starting above it (segments are disjoint).
		i := segsAfter(segs, lo)
		if i > 0 && segs[i-1].hi > lo {
			i--
		}
		for ; i < len(segs) && segs[i].lo < hi; i++ {
			sg := segs[i]
			a, b := max(sg.lo, lo), min(sg.hi, hi)
			if a > pos {
				out = addPiece(out, pos, def)
			}
			out = ui.appendPieces(out, ui.nodes[sg.node].children, a, b, sg.node, depth+1)
			pos = b
		}
	}
	if pos < hi {
		out = addPiece(out, pos, def)
	}
	return out
}

// addPiece appends the piece from lo of node n, unless the last piece is
// n's already.
func addPiece(out []piece, lo uint64, n int32) []piece {
	if k := len(out); k > 0 && out[k-1].node == n {
		return out
	}
	return append(out, piece{lo: lo, node: n})
}

// sortUnique sorts a and drops repeats.
func sortUnique(a []uint64) []uint64 {
	slices.Sort(a)
	return slices.Compact(a)
}
