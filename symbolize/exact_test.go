package symbolize

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stackimage/stackimage/crashreport"
	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/walker"
)

// TestExactAddresses checks where frames are looked up, in a reporter's
// backtrace and in our own walk of the same thread (KSCrash's Abort.json
// has the crashed thread's registers and stack): by default callers are
// looked up one instruction back, with ExactAddresses at the address
// itself, as Apple's tools do; frame 0 is the PC either way.
func TestExactAddresses(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(corpusDir(t), "kscrash", "Example-Reports", "Abort.json"))
	if err != nil {
		t.Fatal(err)
	}
	cr, err := crashreport.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, exact := range []bool{false, true} {
		rep, err := (&Symbolizer{Symbols: symstore.NewSymbols(), ExactAddresses: exact}).Symbolicate(cr.Dump())
		if err != nil {
			t.Fatal(err)
		}
		th := rep.Threads[cr.CrashedThread]
		if th.Walk == nil || len(th.Walk.Frames) < 2 || len(th.Frames) < 2 {
			t.Fatalf("exact=%v: crashed thread has %d frames and walk %v; want a walk and callers", exact, len(th.Frames), th.Walk)
		}
		check := func(what string, frames []symstore.Frame) {
			for _, f := range frames {
				want := f.Address
				if f.Index > 0 && !exact {
					want = walker.CallerLookupAddress(rep.Arch, f.Address)
				}
				if f.LookupAddress != want {
					t.Errorf("exact=%v: %s frame %d at %#x looked up at %#x, want %#x", exact, what, f.Index, f.Address, f.LookupAddress, want)
				}
			}
		}
		// Abort.json's callers are KSCrash 2.x rounded addresses on a
		// 32-bit target: looked up one instruction back by default.
		check("reported", th.Frames)
		check("walked", th.Walk.Frames)
	}
}
