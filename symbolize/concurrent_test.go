package symbolize

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/snapshot"
	"github.com/stackimage/stackimage/symstore"
)

// fixtureDumps reads every committed snapshot as a dump, keyed by file name.
func fixtureDumps(t *testing.T) map[string]*dump.Dump {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("..", "fixtures", "snapshots", "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixture snapshots: %v", err)
	}
	out := map[string]*dump.Dump{}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		snap, err := snapshot.Parse(data)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out[filepath.Base(p)] = snap.Dump()
	}
	return out
}

// withOtherImages returns d with the images of every other dump appended,
// placed far above d's own: the process then holds entries whose DWARF it
// never reads, while another process on the same Symbols reads it.
func withOtherImages(d *dump.Dump, all map[string]*dump.Dump) *dump.Dump {
	out := *d
	out.Images = append([]dump.Image(nil), d.Images...)
	base := uint64(0x7000_0000)
	if d.Arch.PtrSize == 8 {
		base = 0x7000_0000_0000
	}
	for _, other := range all {
		if other == d {
			continue
		}
		for _, im := range other.Images {
			im.LoadAddress = base
			base += 0x100_0000
			out.Images = append(out.Images, im)
		}
	}
	return &out
}

// reportResult is what a Report says, without the input it points back to.
type reportResult struct {
	Threads  []Thread
	Missing  []MissingImage
	Warnings []string
}

func resultOf(rep *Report) reportResult {
	return reportResult{Threads: rep.Threads, Missing: rep.Missing, Warnings: rep.Warnings}
}

// TestConcurrentSymbolicate symbolicates every fixture snapshot twice at
// once on one shared Symbols, each dump also listing the other fixtures'
// images, and checks every report against one made alone on a fresh
// Symbols. Under -race it catches unsynchronized reads of what an entry
// builds lazily (DWARF indexes and their errors, unwind tables, code
// pages, demangled names).
func TestConcurrentSymbolicate(t *testing.T) {
	dumps := fixtureDumps(t)
	inputs := map[string]*dump.Dump{}
	for name, d := range dumps {
		inputs[name] = withOtherImages(d, dumps)
	}
	newSymbolizer := func() *Symbolizer {
		syms := symstore.NewSymbols()
		if err := syms.AddDir(context.Background(), filepath.Join("..", "fixtures", "bin")); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { syms.Close() })
		return &Symbolizer{Symbols: syms}
	}

	want := map[string]reportResult{}
	for name, d := range inputs {
		rep, err := newSymbolizer().Symbolicate(d)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want[name] = resultOf(rep)
	}

	shared := newSymbolizer()
	type result struct {
		name string
		rep  *Report
		err  error
	}
	results := make(chan result, 2*len(inputs))
	var wg sync.WaitGroup
	for name, d := range inputs {
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rep, err := shared.Symbolicate(d)
				results <- result{name, rep, err}
			}()
		}
	}
	wg.Wait()
	close(results)
	for r := range results {
		if r.err != nil {
			t.Errorf("%s: Symbolicate: %v", r.name, r.err)
			continue
		}
		if diff := cmp.Diff(want[r.name], resultOf(r.rep)); diff != "" {
			t.Errorf("%s: concurrent report differs from one made alone (-alone +concurrent):\n%s", r.name, diff)
		}
	}
}

// TestCloseDuringSymbolicate closes the shared Symbols over and over while
// dumps are symbolicated against it: each report must still be the one
// made alone, with no file read failing under it.
func TestCloseDuringSymbolicate(t *testing.T) {
	dumps := fixtureDumps(t)
	syms := symstore.NewSymbols()
	if err := syms.AddDir(context.Background(), filepath.Join("..", "fixtures", "bin")); err != nil {
		t.Fatal(err)
	}
	defer syms.Close()
	z := &Symbolizer{Symbols: syms}
	want := map[string]reportResult{}
	for name, d := range dumps {
		rep, err := z.Symbolicate(d)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want[name] = resultOf(rep)
	}
	if err := syms.Close(); err != nil {
		t.Fatal(err)
	}

	stop := make(chan struct{})
	closed := make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-stop:
				closed <- n
				return
			default:
				if err := syms.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
				n++
			}
		}
	}()
	var wg sync.WaitGroup
	for name, d := range dumps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 3 {
				rep, err := z.Symbolicate(d)
				if err != nil {
					t.Errorf("%s: Symbolicate: %v", name, err)
					return
				}
				if diff := cmp.Diff(want[name], resultOf(rep)); diff != "" {
					t.Errorf("%s: report with Close running differs (-alone +with Close):\n%s", name, diff)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	if n := <-closed; n == 0 {
		t.Error("Close never ran while the dumps were symbolicated")
	}
}
