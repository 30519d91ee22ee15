package symtab

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSortEntries checks the radix sort against slices.SortFunc with the
// same comparison, on tables whose addresses repeat, span a few bytes or
// all 64 bits, and on tables too small for the radix passes.
func TestSortEntries(t *testing.T) {
	for _, tt := range []struct {
		n       int
		span    uint64 // addresses are base + [0, span)
		base    uint64
		repeats bool
	}{
		{n: 10, span: 1 << 12, base: 0x100000000},
		{n: 255, span: 1 << 20, base: 0x100000000, repeats: true},
		{n: 5000, span: 1 << 26, base: 0x100004000, repeats: true},
		{n: 5000, span: 1 << 26, base: 0x100004000},
		{n: 5000, span: 16, base: 0x100004000, repeats: true},
		{n: 5000, span: 1, base: 0x100004000, repeats: true},
		{n: 20000, span: 1<<64 - 1, base: 0},
		{n: 20000, span: 1<<64 - 1, base: 1, repeats: true},
	} {
		t.Run(fmt.Sprintf("n=%d span=%#x repeats=%v", tt.n, tt.span, tt.repeats), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(tt.n), tt.span))
			entries := make([]entry, tt.n)
			for i := range entries {
				e := entry{addr: tt.base + rng.Uint64N(tt.span), name: rng.Uint32(), sect: uint8(rng.IntN(3)), kind: kind(rng.IntN(3))}
				if tt.repeats && i > 0 && rng.IntN(3) == 0 {
					e.addr = entries[rng.IntN(i)].addr
				}
				entries[i] = e
			}
			want := slices.Clone(entries)
			slices.SortFunc(want, compareEntries)
			sortEntries(entries, compareEntries)
			if diff := cmp.Diff(want, entries, cmp.AllowUnexported(entry{})); diff != "" {
				t.Errorf("sortEntries differs from slices.SortFunc (-want +got):\n%s", diff)
			}
		})
	}
}
