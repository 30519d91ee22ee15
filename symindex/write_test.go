package symindex

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestCommonPrefix holds the eight-bytes-at-a-time commonPrefix to a byte
// loop on strings differing at every position of the first 40 bytes, of
// every length split around the eight-byte steps.
func TestCommonPrefix(t *testing.T) {
	byteLoop := func(a, b string) int {
		n := 0
		for n < len(a) && n < len(b) && a[n] == b[n] {
			n++
		}
		return n
	}
	rng := rand.New(rand.NewPCG(1, 2))
	base := make([]byte, 40)
	for i := range base {
		base[i] = byte('a' + rng.IntN(26))
	}
	for la := 0; la <= len(base); la++ {
		for diff := 0; diff <= la; diff++ {
			b := []byte(string(base))
			if diff < len(b) {
				b[diff] ^= 1 << uint(diff%8)
			}
			for lb := 0; lb <= len(b); lb++ {
				x, y := string(base[:la]), string(b[:lb])
				if got, want := commonPrefix(x, y), byteLoop(x, y); got != want {
					t.Fatalf("commonPrefix(%q, %q) = %d, want %d", x, y, got, want)
				}
				if got, want := commonPrefix(y, x), byteLoop(y, x); got != want {
					t.Fatalf("commonPrefix(%q, %q) = %d, want %d", y, x, got, want)
				}
			}
		}
	}
}

// TestDemChunkAcrossWords writes one chunk of demangled names with names at
// ids on both sides of each 64-id word of the chunk's bitmap and reads
// every id back: present ids give their names, the others none.
func TestDemChunkAcrossWords(t *testing.T) {
	const base = 3 * demChunk
	var names [demChunk]*string
	for _, k := range []int{0, 1, 63, 64, 65, 127, 128, 200, demChunk - 2, demChunk - 1} {
		s := fmt.Sprintf("ns::f%d(int)", k)
		names[k] = &s
	}
	chunk, _, err := (&demWriter{}).encode(names[:])
	if err != nil {
		t.Fatal(err)
	}
	d := decodeDemChunk(base, chunk)
	for k := range demChunk {
		got, ok := d.name(uint32(base + k))
		switch {
		case names[k] == nil && ok:
			t.Errorf("id %d: name %q, want none", base+k, got)
		case names[k] != nil && (!ok || got != *names[k]):
			t.Errorf("id %d: %q, %v, want %q", base+k, got, ok, *names[k])
		}
	}
}
