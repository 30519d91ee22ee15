package dwarfcfi

import (
	"testing"

	"github.com/stackimage/stackimage/archregs"
)

// benchSection builds an __eh_frame of n FDEs with clang's usual x86_64
// prologue CFI (push rbp; mov rbp, rsp; three pushes), each covering 0x40
// bytes.
func benchSection(n int) []byte {
	var s section
	c := s.cie(simpleCIE(x86CIEInstrs...))
	for i := 0; i < n; i++ {
		s.fde(c, absFDE(0x100000000+uint64(i)*0x40, 0x40,
			cfaAdvanceLoc|1, cfaDefCFAOffset, 16, cfaOffset|6, 2,
			cfaAdvanceLoc|3, cfaDefCFARegister, 6,
			cfaAdvanceLoc|7, cfaOffset|3, 5, cfaOffset|12, 4, cfaOffset|14, 3))
	}
	return s.buf
}

// BenchmarkRowAt looks rows up in a warm table of 10,000 FDEs, at
// addresses spread over all of them and over each function's body.
func BenchmarkRowAt(b *testing.B) {
	const n = 10000
	tab, err := NewEHFrame(benchSection(n), 0, archregs.X86_64)
	if err != nil {
		b.Fatal(err)
	}
	tab.Errors() // build the index
	b.ReportAllocs()
	b.ResetTimer()
	pc := uint64(0)
	for i := 0; i < b.N; i++ {
		pc = (pc + 7919*0x40 + 13) % (n * 0x40)
		if _, _, err := tab.RowAt(0x100000000 + pc); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkIndex measures the first lookup's cost: indexing 10,000 FDEs.
func BenchmarkIndex(b *testing.B) {
	data := benchSection(10000)
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for i := 0; i < b.N; i++ {
		tab, _ := NewEHFrame(data, 0, archregs.X86_64)
		if fdes, _, _ := tab.Stats(); fdes != 10000 {
			b.Fatalf("%d FDEs, want 10000", fdes)
		}
	}
}
