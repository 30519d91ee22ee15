package compactunwind

import (
	"testing"
)

// BenchmarkLookup looks up random addresses in a synthetic __unwind_info
// of 100,000 functions in compressed pages of 1,000 (ld64 fills a 4 KiB
// page with about that many), and reports lookups per second.
func BenchmarkLookup(b *testing.B) {
	const n = 100000
	funcs := make([]Entry, n)
	encodings := []uint32{0x01010005, 0x02020000, 0x04000123, 0x01020105, 0x02030400}
	for i := range funcs {
		funcs[i] = Entry{FuncStart: 0x1000 + uint32(i)*0x40, Encoding: encodings[i%len(encodings)]}
	}
	data := (&tableBuilder{funcs: funcs, end: 0x1000 + n*0x40, common: encodings[:3], perPage: 1000, compressed: true}).build()
	table, err := Parse(data)
	if err != nil {
		b.Fatal(err)
	}
	// A fixed pseudo-random sequence of addresses inside the table.
	pcs := make([]uint32, 4096)
	x := uint32(2463534242)
	for i := range pcs {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		pcs[i] = 0x1000 + x%(n*0x40)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		pc := pcs[i%len(pcs)]
		e, err := table.Lookup(pc)
		if err != nil || pc < e.FuncStart || pc >= e.FuncEnd {
			b.Fatalf("Lookup(%#x) = %+v, %v", pc, e, err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "lookups/s")
}
