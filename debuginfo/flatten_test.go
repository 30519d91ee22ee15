package debuginfo

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestFlatten(t *testing.T) {
	tests := []struct {
		name  string
		links []link
		want  []seg
	}{
		{"nested", []link{{lo: 0, hi: 100, node: 0}, {lo: 10, hi: 20, node: 1}, {lo: 30, hi: 40, node: 2}},
			[]seg{{0, 10, 0}, {10, 20, 1}, {20, 30, 0}, {30, 40, 2}, {40, 100, 0}}},
		{"same start, enclosing first", []link{{lo: 0, hi: 100, node: 0}, {lo: 0, hi: 10, node: 1}},
			[]seg{{0, 10, 1}, {10, 100, 0}}},
		{"partial overlap: the later start wins", []link{{lo: 0, hi: 10, node: 0}, {lo: 5, hi: 15, node: 1}},
			[]seg{{0, 5, 0}, {5, 15, 1}}},
		{"gap", []link{{lo: 0, hi: 10, node: 0}, {lo: 20, hi: 30, node: 1}},
			[]seg{{0, 10, 0}, {20, 30, 1}}},
		{"deep nesting ends together", []link{{lo: 0, hi: 50, node: 0}, {lo: 10, hi: 50, node: 1}, {lo: 20, hi: 30, node: 2}},
			[]seg{{0, 10, 0}, {10, 20, 1}, {20, 30, 2}, {30, 50, 1}}},
		{"adjacent pieces of one node merge", []link{{lo: 0, hi: 10, node: 0}, {lo: 10, hi: 20, node: 0}},
			[]seg{{0, 20, 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sortLinks(tt.links)
			if diff := cmp.Diff(tt.want, flatten(nil, tt.links), cmp.AllowUnexported(seg{})); diff != "" {
				t.Errorf("flatten differs (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFlattenMatchesScan checks flatten against the definition on random
// ranges: each address belongs to the covering range that sorts last.
func TestFlattenMatchesScan(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 200 {
		links := make([]link, 1+r.IntN(20))
		for i := range links {
			lo := r.Uint64N(200)
			links[i] = link{lo: lo, hi: lo + 1 + r.Uint64N(60), node: int32(i)}
		}
		sortLinks(links)
		segs := flatten(nil, links)
		for k := 1; k < len(segs); k++ {
			if segs[k].lo < segs[k-1].hi || segs[k].lo >= segs[k].hi {
				t.Fatalf("trial %d: segments %v and %v not disjoint and sorted", trial, segs[k-1], segs[k])
			}
		}
		if len(segs) > 2*len(links) {
			t.Fatalf("trial %d: %d segments for %d ranges", trial, len(segs), len(links))
		}
		for a := uint64(0); a < 300; a++ {
			want := int32(-1)
			for _, l := range links {
				if l.lo <= a && a < l.hi {
					want = l.node
				}
			}
			if got := findSeg(segs, a); got != want {
				t.Fatalf("trial %d: findSeg(%d) = %d, want %d (links %v)", trial, a, got, want, links)
			}
		}
	}
}

// TestGroupLinks checks groupLinks against sortLinks on random links,
// in order within each parent and not, with shared bounds and without:
// when it finds an order, it is sortLinks'; it gives up only on links of
// a parent sharing their bounds.
func TestGroupLinks(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	found := 0
	for trial := range 500 {
		nodes := 1 + r.IntN(8)
		var links []link
		next := make([]uint64, nodes+1) // per parent, where its next range may start
		for i := range 1 + r.IntN(30) {
			parent := int32(r.IntN(nodes+1)) - 1
			lo := next[parent+1] + r.Uint64N(3)
			if r.IntN(10) == 0 {
				lo = r.Uint64N(50) // out of order, most likely
			}
			hi := lo + 1 + r.Uint64N(5)
			next[parent+1] = lo + 1
			links = append(links, link{parent: parent, lo: lo, hi: hi, node: int32(i)})
		}
		want := slices.Clone(links)
		sortLinks(want)
		got, ok := groupLinks(links, nil, nodes)
		strict := true
		for i := 1; i < len(want); i++ {
			a, c := want[i-1], want[i]
			if a.parent == c.parent && a.lo == c.lo && a.hi == c.hi {
				strict = false // ties: sortLinks' order is its own
			}
		}
		if !ok {
			if strict {
				t.Fatalf("trial %d: groupLinks gave up on links without shared bounds: %v", trial, links)
			}
			continue
		}
		found++
		if !slices.Equal(want, got) {
			t.Fatalf("trial %d: groupLinks = %v, sortLinks %v", trial, got, want)
		}
	}
	if found < 300 {
		t.Errorf("groupLinks found an order in %d of 500 trials: the test checks little", found)
	}
}

// TestSortSequences checks sortSequences on random sequences, in address
// order and not, some starting at the same address: whole sequences
// ordered by their start, those starting together in their order, each
// one's rows in order.
func TestSortSequences(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	for trial := range 300 {
		var seqs [][]row
		addr := uint64(0)
		for range r.IntN(6) {
			if r.IntN(4) == 0 {
				addr = r.Uint64N(100) // out of order, or a start shared
			}
			var seq []row
			for k := range 1 + r.IntN(3) {
				seq = append(seq, row{addr: addr + uint64(k), line: uint32(len(seqs))})
			}
			seq = append(seq, row{addr: addr + 5, endSeq: true, line: uint32(len(seqs))})
			seqs = append(seqs, seq)
			addr += 10
		}
		want := slices.Clone(seqs)
		slices.SortStableFunc(want, func(a, c []row) int { return cmpAddr(a[0].addr, c[0].addr) })
		got := sortSequences(slices.Concat(seqs...))
		if w := slices.Concat(want...); !slices.Equal(w, got) {
			t.Fatalf("trial %d: sortSequences = %v, want %v", trial, got, w)
		}
	}
}
