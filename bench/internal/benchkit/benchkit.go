package benchkit

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/stackimage/stackimage/image"
)

// TextAddresses returns n random addresses in the thin Mach-O file's
// __TEXT,__text, the same n for the same file on every run (a fixed seed),
// so that two drivers ask the same addresses.
func TextAddresses(bin string, n int) ([]uint64, error) {
	f, err := image.Open(bin)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if len(f.Images) != 1 {
		return nil, fmt.Errorf("%s is a fat file: give a thin one", bin)
	}
	for _, s := range f.Images[0].Sections {
		if s.Segment == "__TEXT" && s.Name == "__text" && s.Size > 0 {
			rng := rand.New(rand.NewPCG(1, 2))
			addrs := make([]uint64, n)
			for i := range addrs {
				addrs[i] = s.Addr + rng.Uint64N(s.Size)
			}
			return addrs, nil
		}
	}
	return nil, fmt.Errorf("%s has no __TEXT,__text", bin)
}

// Ratio is a / b, or 0 when b is 0 (nothing was measured).
func Ratio(a, b time.Duration) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}
