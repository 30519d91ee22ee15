package symtab

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
)

// flatUpperBound is the search the table used before it had a top level:
// a plain binary search over every address. It is the reference the
// two-level search is checked and benchmarked against.
func flatUpperBound(a []uint64, x uint64) int {
	lo, hi := 0, len(a)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if a[m] > x {
			hi = m
		} else {
			lo = m + 1
		}
	}
	return lo
}

func TestUpperBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for n := 0; n < 300; n++ {
		a := make([]uint64, n)
		for i := range a {
			a[i] = rng.Uint64N(uint64(n) + 1) // duplicates on purpose
		}
		slices.Sort(a)
		for x := uint64(0); x <= uint64(n)+1; x++ {
			want := sort.Search(len(a), func(i int) bool { return a[i] > x })
			if got := upperBound(a, x); got != want {
				t.Fatalf("upperBound(%v, %d) = %d, want %d", a, x, got, want)
			}
		}
	}
}

func TestTwoLevelSearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{0, 1, blockSize - 1, blockSize, blockSize + 1, 3*blockSize + 5, 10_000} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			tab := &Table{addrs: make([]uint64, n)}
			for i := range tab.addrs {
				tab.addrs[i] = 16 + 4*rng.Uint64N(uint64(2*n+1))
			}
			slices.Sort(tab.addrs)
			tab.top = makeTop(tab.addrs)
			probe := []uint64{0, 15, 16, 17, ^uint64(0)}
			for _, a := range tab.addrs {
				probe = append(probe, a-1, a, a+1)
			}
			for _, x := range probe {
				if got, want := tab.upper(x), flatUpperBound(tab.addrs, x); got != want {
					t.Fatalf("upper(%#x) = %d, want %d", x, got, want)
				}
			}
		})
	}
}

// BenchmarkSearch times the address search alone, the two-level search
// against the flat binary search it replaced, on the same addresses.
func BenchmarkSearch(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		raw, sections := syntheticImage(n)
		addrs := addressesIn(sections[0], lookupsPerOp)
		tab, err := NewFromParts(raw, sections, nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("flat/%d", n), func(b *testing.B) {
			sum := 0
			for b.Loop() {
				for _, a := range addrs {
					sum += flatUpperBound(tab.addrs, a)
				}
			}
			b.ReportMetric(float64(len(addrs))*float64(b.N)/b.Elapsed().Seconds(), "lookups/s")
		})
		b.Run(fmt.Sprintf("two-level/%d", n), func(b *testing.B) {
			sum := 0
			for b.Loop() {
				for _, a := range addrs {
					sum += tab.upper(a)
				}
			}
			b.ReportMetric(float64(len(addrs))*float64(b.N)/b.Elapsed().Seconds(), "lookups/s")
		})
	}
}
