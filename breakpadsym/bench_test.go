package breakpadsym

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
)

// lookupsPerOp is how many addresses each lookup benchmark operation
// looks up.
const lookupsPerOp = 100_000

var generated struct {
	once sync.Once
	data []byte
	end  uint64 // the end of the last function
}

// generatedSym returns a symbol file of about 50 MB shaped like one
// Mozilla's dump_syms writes for a large C++ module: FILE and
// INLINE_ORIGIN records, then FUNC records with line records and INLINE
// records, PUBLIC records, and STACK CFI for every function. It is made
// from a seeded generator, so every run sees the same file.
func generatedSym() ([]byte, uint64) {
	generated.once.Do(func() {
		const target = 50 << 20
		rng := rand.New(rand.NewPCG(7, 11))
		var b bytes.Buffer
		b.Grow(target + 1<<20)
		b.WriteString("MODULE mac arm64 0123456789ABCDEF0123456789ABCDEF0 Generated\n")
		b.WriteString("INFO CODE_ID 0123456789ABCDEF0123456789ABCDEF\n")
		const files, origins = 2000, 20000
		for i := range files {
			fmt.Fprintf(&b, "FILE %d /build/src/module%d/sub%d/file%d.cpp\n", i, i%37, i%11, i)
		}
		for i := range origins {
			fmt.Fprintf(&b, "INLINE_ORIGIN %d ns%d::Class%d::inlined%d(int, char const*) const\n", i, i%53, i%997, i)
		}
		addr := uint64(0x4000)
		var cfi bytes.Buffer
		for i := 0; b.Len()+cfi.Len() < target; i++ {
			size := 16 + 4*rng.Uint64N(200)
			fmt.Fprintf(&b, "FUNC %x %x 0 ns%d::Class%d::method%d(unsigned long, std::string const&)\n", addr, size, i%53, i%997, i)
			file := rng.IntN(files)
			if rng.IntN(4) == 0 {
				fmt.Fprintf(&b, "INLINE 0 %d %d %d %x %x\n", 1+rng.IntN(3000), file, rng.IntN(origins), addr+8, size/2)
				fmt.Fprintf(&b, "INLINE 1 %d %d %d %x %x\n", 1+rng.IntN(3000), file, rng.IntN(origins), addr+12, size/4)
			}
			line := 1 + rng.IntN(5000)
			for a := addr; a < addr+size; {
				n := min(4*(1+rng.Uint64N(6)), addr+size-a)
				fmt.Fprintf(&b, "%x %x %d %d\n", a, n, line, file)
				line += rng.IntN(5) - 1
				a += n
			}
			fmt.Fprintf(&cfi, "STACK CFI INIT %x %x .cfa: sp 0 + .ra: x30\n", addr, size)
			fmt.Fprintf(&cfi, "STACK CFI %x .cfa: sp 16 + x29: .cfa -16 + ^ .ra: .cfa -8 + ^\n", addr+4)
			fmt.Fprintf(&cfi, "STACK CFI %x .cfa: x29 16 +\n", addr+8)
			if rng.IntN(8) == 0 {
				fmt.Fprintf(&b, "PUBLIC %x 0 _ZN2ns5Class6methodEv%d\n", addr, i)
			}
			addr += size + 4*rng.Uint64N(4)
		}
		b.Write(cfi.Bytes())
		generated.data, generated.end = b.Bytes(), addr
	})
	return generated.data, generated.end
}

func BenchmarkLoad(b *testing.B) {
	data, _ := generatedSym()
	retained := retainedBytes(data)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		f, err := Parse(data)
		if err != nil || len(f.Warnings) != 0 {
			b.Fatalf("Parse: %v, %v", err, f.Warnings)
		}
	}
	b.ReportMetric(float64(retained)/float64(len(data)), "retained/input")
}

// retainedBytes returns the heap a parsed File keeps.
func retainedBytes(data []byte) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f, _ := Parse(data)
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(f)
	return after.HeapAlloc - before.HeapAlloc
}

func loadedGenerated(b *testing.B) (*File, []uint64) {
	data, end := generatedSym()
	f, err := Parse(data)
	if err != nil {
		b.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	addrs := make([]uint64, lookupsPerOp)
	for i := range addrs {
		addrs[i] = 0x4000 + rng.Uint64N(end-0x4000)
	}
	return f, addrs
}

func BenchmarkLookup(b *testing.B) {
	f, addrs := loadedGenerated(b)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for _, a := range addrs {
			f.Lookup(a)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*lookupsPerOp), "ns/lookup")
}

func BenchmarkCFIEval(b *testing.B) {
	f, addrs := loadedGenerated(b)
	regs := MapRegisters(map[string]uint64{"sp": 0x16fdff000, "x29": 0x16fdff100, "x30": 0x100004000})
	mem := func(addr uint64, size int) (uint64, error) { return addr ^ 0x5a5a, nil }
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		for _, a := range addrs {
			if r, ok := f.CFIRules(a); ok {
				r.Eval(regs, mem, 8)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*lookupsPerOp), "ns/lookup")
}
