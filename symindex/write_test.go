package symindex

import (
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
