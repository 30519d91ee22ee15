package symbolize

import (
	"strings"
	"testing"

	"github.com/stackimage/stackimage/crashreport"
)

// missingImageCrash is shaped like getsentry/symbolicator's
// apple_crash_report.txt: its frames name images that its Binary Images
// section does not list.
const missingImageCrash = `Process:         YetAnotherMac [49028]
Code Type:       X86-64
Crashed Thread:  0

Thread 0 Crashed:
0   libsystem_kernel.dylib              0x00007fff61bc6c2a 0x7fff61bc6000 + 3114
1   CoreFoundation                      0x00007fff349f505e 0x7fff349b9000 + 245854
2   YetAnotherMac                       0x0000000108b7092b 0x10864e000 + 5384491

Binary Images:
0x10864e000 - 0x10ebfffff +YetAnotherMac (0) <9c1b2bd6-bf1b-3a6e-8cf4-a0e4f6eee7a2> /Users/bruno/YetAnotherMac
`

// TestMissingImageKeepsReportText: a frame whose image the report's Binary
// Images lack has no symbols, but the report said where it was; the
// symbolicated frame must say it too, not "0x0 + 0".
func TestMissingImageKeepsReportText(t *testing.T) {
	cr, err := crashreport.Parse([]byte(missingImageCrash))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	rep, err := (&Symbolizer{}).Symbolicate(cr.Dump())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"libsystem_kernel.dylib         0x00007fff61bc6c2a 0x7fff61bc6000 + 3114",
		"CoreFoundation                 0x00007fff349f505e 0x7fff349b9000 + 245854",
		"YetAnotherMac                  0x0000000108b7092b 0x10864e000 + 5384491",
	}
	frames := rep.Threads[0].Frames
	if len(frames) != len(want) {
		t.Fatalf("%d frames, want %d", len(frames), len(want))
	}
	for i, f := range frames {
		if got := f.Format(8); !strings.HasSuffix(got, want[i]) {
			t.Errorf("frame %d: Format = %q, want it to end in %q", i, got, want[i])
		}
	}
}
