package debuginfo

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// stepsAnswer is LookupLeaf's answer, comparable.
type stepsAnswer struct {
	Leaf      Leaf
	File      string
	Line, Col int
	OK        bool
}

func leafAnswer(ix *Index, addr uint64) stepsAnswer {
	var a stepsAnswer
	a.Leaf, a.File, a.Line, a.Col, a.OK = ix.LookupLeaf(addr)
	return a
}

func stepAnswer(st Step) stepsAnswer {
	return stepsAnswer{Leaf: st.Leaf, File: st.File, Line: int(st.Line), Col: int(st.Column), OK: st.OK}
}

// allSteps returns every step of ix, failing the test unless their
// addresses increase.
func allSteps(t *testing.T, ix *Index) []Step {
	t.Helper()
	var all []Step
	s := ix.Steps()
	for batch := s.Next(); batch != nil; batch = s.Next() {
		if len(batch) == 0 {
			t.Fatal("Next returned an empty batch")
		}
		all = append(all, batch...)
	}
	for i := 1; i < len(all); i++ {
		if all[i].Addr <= all[i-1].Addr {
			t.Fatalf("step %d at %#x follows one at %#x", i, all[i].Addr, all[i-1].Addr)
		}
	}
	return all
}

// checkSteps checks that at each address of addrs LookupLeaf answers as
// the last step at or before it (nothing found below the first), and
// that every place where LookupLeaf's answer changes between two
// neighbouring addresses of addrs has a step between them.
func checkSteps(t *testing.T, ix *Index, steps []Step, addrs []uint64) {
	t.Helper()
	slices.Sort(addrs)
	addrs = slices.Compact(addrs)
	k := -1 // the last step at or before the address
	for _, a := range addrs {
		for k+1 < len(steps) && steps[k+1].Addr <= a {
			k++
		}
		var got stepsAnswer
		if k >= 0 {
			got = stepAnswer(steps[k])
		}
		if want := leafAnswer(ix, a); got != want {
			t.Fatalf("at %#x: the steps answer %+v, LookupLeaf %+v", a, got, want)
		}
	}
}

// TestStepsMatchLookupLeaf checks Index.Steps against LookupLeaf on the
// fixtures and the corpus's dSYMs (skipped without the corpus): at every
// step, every boundary and one byte either side, the last step at or
// before the address gives LookupLeaf's answer. Boundaries holds every
// address where the answer may change, so the steps miss none.
func TestStepsMatchLookupLeaf(t *testing.T) {
	for _, d := range dsyms {
		t.Run(d.name, func(t *testing.T) {
			path := d.path
			if !slices.Contains([]string{"inl-dwarf2", "inl-dwarf4", "inl-dwarf5", "rnglist-dwarf5"}, d.name) {
				path = corpusFile(t, path)
			}
			ix, err := New(dwarfSections(t, path, d.cpu))
			if err != nil {
				t.Fatal(err)
			}
			steps := allSteps(t, ix)
			var addrs []uint64
			for _, b := range ix.Boundaries() {
				addrs = append(addrs, b-1, b, b+1)
			}
			for _, st := range steps {
				addrs = append(addrs, st.Addr)
			}
			checkSteps(t, ix, steps, addrs)
			if len(steps) == 0 {
				t.Error("no steps")
			}
		})
	}
}

// TestStepsRandomUnits checks Index.Steps against LookupLeaf at every
// address of random units: nested, overlapping and deep function
// ranges, line rows sorted and in overlapping sequences (where LookupLeaf
// searches), unit ranges apart, adjacent and interleaved between units;
// with Next's batches as large as the build has them, and small enough
// that walks of unit ranges stop and resume.
func TestStepsRandomUnits(t *testing.T) {
	for _, batch := range []int{stepBatch, 1, 3} {
		t.Run(fmt.Sprintf("batches of %d", batch), func(t *testing.T) {
			defer func(was int) { stepBatch = was }(stepBatch)
			stepBatch = batch
			testStepsRandomUnits(t)
		})
	}
}

func testStepsRandomUnits(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const space = 400
	unsorted := 0
	for range 300 {
		nunits := 1 + r.IntN(3)
		ix := &Index{units: make([]unitSpan, nunits), reported: make([]bool, nunits), cache: unitCache{budget: cacheBudget}}
		// Unit ranges: random cuts of the space, each piece given to a
		// unit or to none.
		cuts := []uint64{0, space}
		for range r.IntN(8) {
			cuts = append(cuts, r.Uint64N(space))
		}
		slices.Sort(cuts)
		cuts = slices.Compact(cuts)
		for i := 0; i+1 < len(cuts); i++ {
			if u := r.IntN(nunits + 1); u < nunits {
				ix.byAddr = append(ix.byAddr, seg{lo: cuts[i], hi: cuts[i+1], node: int32(u)})
			}
		}
		for u := range nunits {
			ui := randomUnit(r, space)
			if ui.lines != nil && !ui.lines.sorted {
				unsorted++
			}
			ix.cache.put(u, -1, ui)
		}
		var addrs []uint64
		for a := range uint64(space + 2) {
			addrs = append(addrs, a)
		}
		checkSteps(t, ix, allSteps(t, ix), addrs)
	}
	if unsorted == 0 {
		t.Error("no unit with unsorted rows: search is not tested")
	}
}

// randomUnit returns a unit of random functions (up to four deep, with
// several ranges each) and line rows within [0, space).
func randomUnit(r *rand.Rand, space uint64) *unitIndex {
	ui := &unitIndex{}
	var links []link
	nnodes := r.IntN(12)
	for n := range nnodes {
		parent := int32(-1)
		if n > 0 && r.IntN(3) > 0 {
			parent = int32(r.IntN(n))
		}
		ui.nodes = append(ui.nodes, node{parent: parent})
		for range 1 + r.IntN(3) {
			lo := r.Uint64N(space)
			links = append(links, link{parent: parent, lo: lo, hi: lo + 1 + r.Uint64N(space/4), node: int32(n)})
		}
	}
	// As unitBuilder.finish groups them.
	sortLinks(links)
	ui.addSegments(links)
	if r.IntN(5) == 0 {
		return ui // no line table
	}
	lt := &lineTable{names: []string{"a.c", "b.c"}}
	var rows []row
	for range 1 + r.IntN(4) {
		addr := r.Uint64N(space)
		for range 1 + r.IntN(6) {
			rows = append(rows, row{addr: addr, file: int32(r.IntN(3)) - 1, line: uint32(r.IntN(4)), col: uint32(r.IntN(2))})
			addr += uint64(r.IntN(20)) // repeated addresses too
		}
		rows = append(rows, row{addr: addr + 1, endSeq: true})
	}
	lt.rows = sortSequences(rows)
	lt.sorted = slices.IsSortedFunc(lt.rows, func(a, c row) int { return cmpAddr(a.addr, c.addr) })
	ui.lines = lt
	return ui
}
