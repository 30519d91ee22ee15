package demangle

import (
	"os"
	"testing"

	"github.com/stackimage/stackimage/internal/testcorpus"
)

// BenchmarkDemangleItanium demangles the corpus's C++ names and, with
// STACKIMAGE_BIGDSYM naming the DWARF file `go run ./bench/bigdsym` prints,
// the generated dSYM's function names, with the fast path (falling back to
// the library for what it declines, as Demangle does) and with the library
// alone, side by side; ns/op is per name.
func BenchmarkDemangleItanium(b *testing.B) {
	sets := []struct {
		name  string
		names []string
	}{}
	if dir, err := testcorpus.Find(); err == nil {
		var names []string
		for _, n := range treeCPPNames(b, dir) {
			if Language(n) == LangCPP {
				names = append(names, n)
			}
		}
		sets = append(sets, struct {
			name  string
			names []string
		}{"corpus", names})
	}
	if path := os.Getenv("STACKIMAGE_BIGDSYM"); path != "" {
		_, functions := cppNames(path)
		seen := make(map[string]bool)
		var names []string
		for _, n := range functions {
			if !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
		sets = append(sets, struct {
			name  string
			names []string
		}{"bigdsym", names})
	}
	if len(sets) == 0 {
		b.Skip("neither the corpus nor STACKIMAGE_BIGDSYM")
	}
	for _, set := range sets {
		b.Run(set.name+"/fast", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				m := set.names[i%len(set.names)]
				if _, ok := demangleItanium(m); !ok {
					libraryDemangle(m)
				}
			}
		})
		b.Run(set.name+"/library", func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				libraryDemangle(set.names[i%len(set.names)])
			}
		})
	}
}
