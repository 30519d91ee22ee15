package symbolize

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/snapshot"
	"github.com/stackimage/stackimage/symstore"
)

// BenchmarkSymbolicate100Threads symbolicates a dump of 100 threads with
// warm symbols: the thread of the committed snapshot chain-arm64-O1-deepest
// (12 frames walked, named from chain-arm64-O1's symbol table and its
// dSYM's DWARF, inlined functions included) repeated 100 times over its
// captured stack. In "identical" the threads are the same, so they share
// one walk; in "distinct" each has its own x0, so each is walked, as the
// threads of a real process are, and only the naming of addresses is
// shared.
func BenchmarkSymbolicate100Threads(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("..", "fixtures", "snapshots", "chain-arm64-O1-deepest.json"))
	if err != nil {
		b.Fatal(err)
	}
	snap, err := snapshot.Parse(data)
	if err != nil {
		b.Fatal(err)
	}
	syms := symstore.NewSymbols()
	defer syms.Close()
	bin := filepath.Join("..", "fixtures", "bin")
	if err := syms.AddFile(context.Background(), filepath.Join(bin, "chain-arm64-O1")); err != nil {
		b.Fatal(err)
	}
	if err := syms.AddDir(context.Background(), filepath.Join(bin, "chain-arm64-O1.dSYM")); err != nil {
		b.Fatal(err)
	}
	z := &Symbolizer{Symbols: syms}
	for _, distinct := range []bool{false, true} {
		name := "identical"
		if distinct {
			name = "distinct"
		}
		b.Run(name, func(b *testing.B) {
			d := hundredThreads(b, snap.Dump(), distinct)
			rep, err := z.Symbolicate(d) // warms the symbols
			if err != nil {
				b.Fatal(err)
			}
			frames := 0
			for _, th := range rep.Threads {
				frames += len(th.Frames)
			}
			if len(rep.Missing) > 0 || len(rep.Threads) != 100 || rep.Threads[99].Frames[0].File == "" {
				b.Fatalf("symbols not found: %d threads, missing %v", len(rep.Threads), rep.Missing)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if _, err := z.Symbolicate(d); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(frames), "frames/dump")
		})
	}
}

// hundredThreads returns d with its one thread made 100 threads, with
// their own IDs and, when distinct, their own x0.
func hundredThreads(tb testing.TB, d *dump.Dump, distinct bool) *dump.Dump {
	tb.Helper()
	if len(d.Threads) != 1 {
		tb.Fatalf("the snapshot has %d threads, want 1", len(d.Threads))
	}
	th := d.Threads[0]
	out := *d
	out.Threads = nil
	for i := 0; i < 100; i++ {
		t := th
		t.ID = uint64(i + 1)
		if distinct {
			regs := archregs.NewRegisters(th.Registers.Arch)
			for name, v := range th.Registers.Values() {
				if err := regs.Set(name, v); err != nil {
					tb.Fatal(err)
				}
			}
			if err := regs.Set("x0", uint64(i)); err != nil {
				tb.Fatal(err)
			}
			t.Registers = regs
		}
		out.Threads = append(out.Threads, t)
	}
	return &out
}
