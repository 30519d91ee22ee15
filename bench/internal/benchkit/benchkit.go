package benchkit

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
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

// BuildStackimage builds cmd/stackimage into out as `make build` does:
// without cgo, so that a whole-process figure does not count the dynamic
// loader, which `make build`'s programs do not run.
func BuildStackimage(out string) error {
	cmd := exec.Command("go", "build", "-o", out, "./cmd/stackimage")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./cmd/stackimage: %v\n%s", err, b)
	}
	return nil
}
