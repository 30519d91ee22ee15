package symbolize

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stackimage/stackimage/crashreport"
	"github.com/stackimage/stackimage/symstore"
)

// TestCrashingTestReports symbolicates MacSymbolicator's CrashingTest crash,
// in its .ips and its .crash form, against the stripped fat binary and its
// dSYM: the crashed thread must read -[MyClass crashingMethod] at main.m:21,
// then main at main.m:28, with frame 0 looked up at its exact address and
// callers at the return address minus one instruction (call-site lookup,
// the default) or at the return address itself (ExactAddresses, Apple's
// convention).
func TestCrashingTestReports(t *testing.T) {
	root := filepath.Join(corpusDir(t), "macsymbolicator", "MacSymbolicatorTests")
	syms := symstore.NewSymbols()
	for _, dir := range []string{"Binaries", filepath.Join("Resources", "dSYMs")} {
		if err := syms.AddDir(context.Background(), filepath.Join(root, dir)); err != nil {
			t.Fatal(err)
		}
	}
	type frame struct {
		Symbol, File string
		Line         int
		Lookup       uint64
		Source       string
	}
	callSite := []frame{
		{"-[MyClass crashingMethod]", "main.m", 21, 0x10e311e45, "symtab"},
		{"main", "main.m", 28, 0x10e311e80 - 1, "symtab"},
	}
	// atos and MacSymbolicator name the same lines at the exact address
	// (single-target-crash_symbolicated.crash).
	exact := []frame{
		{"-[MyClass crashingMethod]", "main.m", 21, 0x10e311e45, "symtab"},
		{"main", "main.m", 28, 0x10e311e80, "symtab"},
	}
	for _, tc := range []struct {
		name  string
		exact bool
		want  []frame
	}{
		{"single-target-crash.ips", false, callSite},
		{"single-target-crash.crash", false, callSite},
		{"single-target-crash.ips", true, exact},
		{"single-target-crash.crash", true, exact},
	} {
		name, want := tc.name, tc.want
		z := &Symbolizer{Symbols: syms, ExactAddresses: tc.exact}
		t.Run(fmt.Sprintf("%s/exact=%v", name, tc.exact), func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(root, "Resources", "Crashes", name))
			if err != nil {
				t.Fatal(err)
			}
			cr, err := crashreport.Parse(data)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			rep, err := z.Symbolicate(cr.Dump())
			if err != nil {
				t.Fatalf("CrashReport: %v", err)
			}
			var crashed *Thread
			for i := range rep.Threads {
				if rep.Threads[i].Crashed {
					crashed = &rep.Threads[i]
				}
			}
			if crashed == nil {
				t.Fatal("no crashed thread")
			}
			if len(crashed.Frames) < len(want) {
				t.Fatalf("crashed thread has %d frames, want at least %d", len(crashed.Frames), len(want))
			}
			var got []frame
			for _, f := range crashed.Frames[:len(want)] {
				got = append(got, frame{f.Symbol, filepath.Base(f.File), f.Line, f.LookupAddress, f.SymbolSource.String()})
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("crashed thread (-want +got):\n%s", diff)
			}
			// dyld has no symbol file here: its frame keeps the report's
			// image name and address rather than being dropped.
			last := crashed.Frames[len(crashed.Frames)-1]
			if last.Image != "dyld" || last.Address != 0x11beb451e {
				t.Errorf("last frame = %s %#x, want dyld 0x11beb451e", last.Image, last.Address)
			}
		})
	}
}
