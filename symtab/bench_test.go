package symtab

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stackimage/stackimage/image"
)

// lookupsPerOp is how many addresses each benchmark operation looks up.
const lookupsPerOp = 100_000

// syntheticImage returns a 64-bit symbol table of n functions spread over a
// __text section, with names shaped like real ones, and its sections.
func syntheticImage(n int) (image.RawSymtab, []image.Section) {
	rng := rand.New(rand.NewPCG(1, 2))
	syms := make([]nl, n)
	addr := uint64(0x100004000)
	for i := range syms {
		typ := uint8(tSect)
		if i%3 == 0 {
			typ = tSectExt
		}
		syms[i] = nl{fmt.Sprintf("_pkg%d.(*Type%d).Method%d", i%97, i%1013, i), typ, 1, addr}
		addr += 4 * (1 + rng.Uint64N(64))
	}
	// The linker writes symbols grouped, not sorted by address: shuffle.
	rng.Shuffle(len(syms), func(i, j int) { syms[i], syms[j] = syms[j], syms[i] })
	sections := []image.Section{{Index: 1, Segment: "__TEXT", Name: "__text", Addr: 0x100004000, Size: addr - 0x100004000}}
	return rawSymtab(true, binary.LittleEndian, syms), sections
}

// addressesIn returns n random addresses in the section.
func addressesIn(sec image.Section, n int) []uint64 {
	rng := rand.New(rand.NewPCG(3, 4))
	addrs := make([]uint64, n)
	for i := range addrs {
		addrs[i] = sec.Addr + rng.Uint64N(sec.Size)
	}
	return addrs
}

// reportTable reports the table's size per entry: its own arrays, and the
// string table it keeps.
func reportTable(b *testing.B, t *Table) {
	b.ReportMetric(float64(t.Bytes())/float64(t.Len()), "table-B/sym")
	b.ReportMetric(float64(t.Bytes()+t.StringBytes())/float64(t.Len()), "B/sym")
}

// lookupAll looks up every address and returns how many were found, so
// that the compiler cannot drop the work.
func lookupAll(t *Table, addrs []uint64) int {
	n := 0
	for _, a := range addrs {
		if s, err := t.Lookup(a); err == nil && s.Name != "" {
			n++
		}
	}
	return n
}

func BenchmarkSynthetic(b *testing.B) {
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		raw, sections := syntheticImage(n)
		addrs := addressesIn(sections[0], lookupsPerOp)
		b.Run(fmt.Sprintf("index/%d", n), func(b *testing.B) {
			var t *Table
			for b.Loop() {
				var err error
				if t, err = NewFromParts(raw, sections, nil, nil); err != nil {
					b.Fatal(err)
				}
			}
			reportTable(b, t)
			b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "syms/s")
		})
		b.Run(fmt.Sprintf("lookup/%d", n), func(b *testing.B) {
			t, err := NewFromParts(raw, sections, nil, nil)
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if lookupAll(t, addrs) != len(addrs) {
					b.Fatal("an address in __text was not found")
				}
			}
			b.ReportMetric(float64(len(addrs))*float64(b.N)/b.Elapsed().Seconds(), "lookups/s")
		})
		b.Run(fmt.Sprintf("batch/%d", n), func(b *testing.B) {
			t, err := NewFromParts(raw, sections, nil, nil)
			if err != nil {
				b.Fatal(err)
			}
			syms := make([]Symbol, len(addrs))
			found := make([]bool, len(addrs))
			for b.Loop() {
				t.LookupBatch(addrs, syms, found)
			}
			for k := range addrs {
				if !found[k] || syms[k].Name == "" {
					b.Fatal("an address in __text was not found")
				}
			}
			b.ReportMetric(float64(len(addrs))*float64(b.N)/b.Elapsed().Seconds(), "lookups/s")
		})
	}
}

// BenchmarkGoBinary opens and indexes a GOOS=darwin build of cmd/go (about
// 20k symbols) and looks up 100k addresses in its __text, per operation.
func BenchmarkGoBinary(b *testing.B) {
	path := goDarwinBinary(b)
	f, err := image.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	text, ok := findSection(f.Images[0], "__TEXT", "__text")
	f.Close()
	if !ok {
		b.Fatalf("%s has no __TEXT,__text", path)
	}
	addrs := addressesIn(text, lookupsPerOp)
	var t *Table
	for b.Loop() {
		f, err := image.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		if t, err = New(f.Images[0]); err != nil {
			b.Fatal(err)
		}
		if lookupAll(t, addrs) != len(addrs) {
			b.Fatal("an address in __text was not found")
		}
		f.Close()
	}
	reportTable(b, t)
	b.ReportMetric(float64(t.Len()), "syms")
	b.ReportMetric(float64(len(addrs))*float64(b.N)/b.Elapsed().Seconds(), "lookups/s")
}

// findSection returns the named section of the image.
func findSection(im *image.Image, seg, name string) (image.Section, bool) {
	for _, s := range im.Sections {
		if s.Segment == seg && s.Name == name {
			return s, true
		}
	}
	return image.Section{}, false
}

// BenchmarkDependentLoad measures the machine, not the package: the time
// of a load whose address depends on the previous one, at random places in
// 1 MB (within the CPU's caches) and in 16 MB (the entries of a million
// symbols). A lookup at a million symbols waits for one such load after
// its bucket's; docs/bench.md explains the 1M-symbol figure with it.
func BenchmarkDependentLoad(b *testing.B) {
	for _, mb := range []int{1, 16} {
		next := make([]uint32, mb<<20/4)
		// One random cycle through every slot.
		perm := rand.New(rand.NewPCG(5, 6)).Perm(len(next))
		for i, p := range perm {
			next[p] = uint32(perm[(i+1)%len(perm)])
		}
		b.Run(fmt.Sprintf("%dMB", mb), func(b *testing.B) {
			p := uint32(0)
			for b.Loop() {
				p = next[p]
			}
			if p == uint32(len(next)) {
				b.Fatal("impossible") // keeps p live
			}
		})
	}
}
