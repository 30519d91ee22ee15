package addrspan

import (
	"math/rand"
	"testing"
)

// TestFlattenMatchesBruteForce checks the overlap resolution against the
// rule applied address by address.
func TestFlattenMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for round := 0; round < 200; round++ {
		var in []Span
		for i := 0; i < 1+rng.Intn(8); i++ {
			start := uint64(rng.Intn(60))
			in = append(in, Span{Start: start, End: start + uint64(rng.Intn(20)), Prio: uint64(rng.Intn(4)), Order: i, Ref: i})
		}
		flat := Flatten(in)
		for addr := uint64(0); addr < 90; addr++ {
			want := -1
			for _, s := range in {
				if s.Start <= addr && addr < s.End {
					if want < 0 || s.Prio > in[want].Prio || (s.Prio == in[want].Prio && s.Order < in[want].Order) {
						want = s.Ref
					}
				}
			}
			got := -1
			if s, ok := Find(flat, addr); ok {
				got = s.Ref
			}
			if got != want {
				t.Fatalf("round %d: spans %+v: winner at %d = %d, want %d", round, in, addr, got, want)
			}
		}
	}
}

// TestImagesMatchesBruteForce checks Images against its rule applied
// address by address: of the images whose range holds the address (an
// image of unknown size reaching up to the next load address above it,
// at most MaxOpenRange), the one loaded highest, then the first given.
func TestImagesMatchesBruteForce(t *testing.T) {
	rng := rand.New(rand.NewSource(29))
	for round := 0; round < 300; round++ {
		n := 1 + rng.Intn(6)
		loads, sizes := make([]uint64, n), make([]uint64, n)
		for i := range n {
			loads[i] = uint64(rng.Intn(50)) * MaxOpenRange / 16
			if rng.Intn(3) > 0 {
				sizes[i] = uint64(1+rng.Intn(40)) * MaxOpenRange / 16
			}
		}
		spans := Images(n, func(i int) (uint64, uint64) { return loads[i], sizes[i] })
		for step := uint64(0); step < 100; step++ {
			addr := step*MaxOpenRange/16 + MaxOpenRange/32
			want := -1
			for i := range n {
				end := loads[i] + sizes[i]
				if sizes[i] == 0 {
					end = loads[i] + MaxOpenRange
					for _, l := range loads {
						if l > loads[i] && l < end {
							end = l
						}
					}
				}
				if loads[i] <= addr && addr < end && (want < 0 || loads[i] > loads[want]) {
					want = i
				}
			}
			if got := Index(spans, addr); got != want {
				t.Fatalf("round %d: loads %#x sizes %#x: image at %#x = %d, want %d", round, loads, sizes, addr, got, want)
			}
		}
	}
}
