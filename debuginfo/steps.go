package debuginfo

import "slices"

// A Step is where LookupLeaf's answer may change: at every address from
// Addr up to the next Step's, LookupLeaf answers Leaf, File, Line, Column
// and OK (OK false: nothing found, the other fields empty).
type Step struct {
	Addr         uint64
	Leaf         Leaf
	File         string
	Line, Column int
	OK           bool
}

// Steps hands over an Index's answers in address order, a Step at each
// address where LookupLeaf's answer changes (among those Boundaries
// lists), without a lookup per address. A persisted
// index's writer reads them so: each unit range is walked once, its
// function tree's segments merged with its line rows. Below the first
// Step nothing is found; from the last one up (a not-found Step) neither.
// Neighbouring Steps may give the same answer. A Steps is not safe for
// concurrent use; its Index stays so.
type Steps struct {
	ix     *Index
	next   int    // the next unit range of ix.byAddr to walk
	steps  []Step // the steps of the unit range walked last
	pieces []piece
	addrs  []uint64
}

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

// Next returns the next steps, those of one unit range (at least one
// step), in address order; nil after the last. The slice is valid until
// the next call.
func (s *Steps) Next() []Step {
	for s.next < len(s.ix.byAddr) {
		s.steps = s.steps[:0]
		s.walk(s.next)
		s.next++
		if len(s.steps) > 0 {
			return s.steps
		}
	}
	return nil
}

// walk sets s.steps to the steps of unit range k of ix.byAddr: its
// unit's answers from its start, and nothing found at its end unless the
// next range starts there.
func (s *Steps) walk(k int) {
	ix := s.ix
	r := ix.byAddr[k]
	u := r.node
	ui := ix.unit(int(u))
	s.pieces = ui.appendPieces(s.pieces[:0], ui.root, r.lo, r.hi, -1, 0)
	if lt := ui.lines; lt == nil || lt.sorted {
		s.merge(u, ui, r.lo, r.hi)
	} else {
		s.search(u, ui, r.lo, r.hi)
	}
	if k+1 == len(ix.byAddr) || ix.byAddr[k+1].lo != r.hi {
		s.steps = append(s.steps, Step{Addr: r.hi})
	}
}

// merge appends the steps of [lo, hi) of unit u, whose line rows are
// sorted by address: the pieces and the rows, merged in address order,
// where the innermost node or the row's position changes. The row at an
// address is the last at or before it, as rowFrom finds.
func (s *Steps) merge(u int32, ui *unitIndex, lo, hi uint64) {
	var rows []row
	cur := -1 // the last row at or before the address
	if lt := ui.lines; lt != nil {
		rows = lt.rows
		_, cur, _ = lt.rowFrom(-1, lo)
	}
	next := cur + 1 // rows from next on start above the address
	pieces := s.pieces
	p := 0
	s.steps = append(s.steps, ui.step(u, lo, pieces[0].node, rows, cur))
	for {
		end := hi
		if p+1 < len(pieces) {
			end = pieces[p+1].lo
		}
		if next < len(rows) && rows[next].addr < end {
			end = rows[next].addr
		}
		if end >= hi {
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

// search appends the steps of [lo, hi) of unit u whose line rows are not
// sorted (overlapping sequences, in damaged files): each row address and
// piece start in the range, sorted, its row found by rowFrom's search as
// LookupLeaf finds it.
func (s *Steps) search(u int32, ui *unitIndex, lo, hi uint64) {
	addrs := s.addrs[:0]
	for _, pc := range s.pieces {
		addrs = append(addrs, pc.lo)
	}
	for _, r := range ui.lines.rows {
		if r.addr > lo && r.addr < hi {
			addrs = append(addrs, r.addr)
		}
	}
	addrs = sortUnique(addrs)
	p := 0
	for _, addr := range addrs {
		for p+1 < len(s.pieces) && s.pieces[p+1].lo <= addr {
			p++
		}
		_, cur, _ := ui.lines.rowFrom(-1, addr)
		s.steps = append(s.steps, ui.step(u, addr, s.pieces[p].node, ui.lines.rows, cur))
	}
	s.addrs = addrs[:0]
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
		st.File, st.Line, st.Column = ui.lines.name(r.file), int(r.line), int(r.col)
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
		// The first segment ending above lo: ends are sorted too.
		i, j := 0, len(segs)
		for i < j {
			m := int(uint(i+j) >> 1)
			if segs[m].hi <= lo {
				i = m + 1
			} else {
				j = m
			}
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
