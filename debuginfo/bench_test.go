package debuginfo

import (
	"debug/macho"
	"math/rand/v2"
	"testing"
)

const benchDSYM = "symbolic/symbolic-testutils/fixtures/macos/crash.dSYM/Contents/Resources/DWARF/crash"

// BenchmarkNew measures indexing symbolic's crash.dSYM (16 CUs, 1861
// functions with code, 1668 inlined subroutines).
func BenchmarkNew(b *testing.B) {
	secs := dwarfSections(b, corpusFile(b, benchDSYM), macho.CpuAmd64)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := New(secs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLookup100k measures 100,000 file:line + inline lookups at
// addresses spread over crash.dSYM's code. bench/dwarf compares the same
// work with llvm-symbolizer.
func BenchmarkLookup100k(b *testing.B) {
	ix, err := New(dwarfSections(b, corpusFile(b, benchDSYM), macho.CpuAmd64))
	if err != nil {
		b.Fatal(err)
	}
	lo, hi, ok := ix.Bounds()
	if !ok {
		b.Fatal("no line rows")
	}
	r := rand.New(rand.NewPCG(1, 2))
	addrs := make([]uint64, 100_000)
	for i := range addrs {
		addrs[i] = lo + r.Uint64N(hi-lo)
	}
	b.ReportAllocs()
	for b.Loop() {
		for _, a := range addrs {
			ix.Lookup(a)
		}
	}
}
