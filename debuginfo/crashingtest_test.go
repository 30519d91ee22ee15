package debuginfo

import (
	"bytes"
	"debug/macho"
	"encoding/json"
	"os"
	"path"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const crashingTestDSYM = "macsymbolicator/MacSymbolicatorTests/Resources/dSYMs/CrashingTest.dSYM/Contents/Resources/DWARF/CrashingTest"

// crashedFrames reads the .ips report's crashed thread and returns, for the
// frames in CrashingTest, the unslid address to look up: the image offset
// plus __TEXT's vmaddr (0x100000000), exact for frame 0 and minus one for
// callers, whose address is a return address (as atos does).
func crashedFrames(t *testing.T) []uint64 {
	t.Helper()
	data, err := os.ReadFile(corpusFile(t, "macsymbolicator/MacSymbolicatorTests/Resources/Crashes/single-target-crash.ips"))
	if err != nil {
		t.Fatal(err)
	}
	// An .ips file is a one-line JSON header, then the JSON payload.
	_, body, ok := bytes.Cut(data, []byte("\n"))
	if !ok {
		t.Fatal("single-target-crash.ips: no payload after the header line")
	}
	var ips struct {
		FaultingThread int `json:"faultingThread"`
		UsedImages     []struct {
			Name string `json:"name"`
		} `json:"usedImages"`
		Threads []struct {
			Frames []struct {
				ImageIndex  int    `json:"imageIndex"`
				ImageOffset uint64 `json:"imageOffset"`
			} `json:"frames"`
		} `json:"threads"`
	}
	if err := json.Unmarshal(body, &ips); err != nil {
		t.Fatalf("single-target-crash.ips: %v", err)
	}
	if ips.FaultingThread >= len(ips.Threads) {
		t.Fatalf("single-target-crash.ips: faultingThread %d of %d threads", ips.FaultingThread, len(ips.Threads))
	}
	var addrs []uint64
	for i, f := range ips.Threads[ips.FaultingThread].Frames {
		if f.ImageIndex >= len(ips.UsedImages) || ips.UsedImages[f.ImageIndex].Name != "CrashingTest" {
			continue
		}
		a := 0x100000000 + f.ImageOffset
		if i > 0 {
			a--
		}
		addrs = append(addrs, a)
	}
	return addrs
}

// TestCrashingTest resolves the crash of MacSymbolicator's test app: the
// faulting store in -[MyClass crashingMethod] at main.m:21, called from
// main at main.m:28 (start's call was a tail call, so it has no frame).
func TestCrashingTest(t *testing.T) {
	type frame struct {
		Function, File string
		Line           int
	}
	want := [][]frame{
		{{"-[MyClass crashingMethod]", "main.m", 21}},
		{{"main", "main.m", 28}},
	}
	tests := []struct {
		name  string
		cpu   macho.Cpu
		addrs func(t *testing.T) []uint64
	}{
		// The report was written on x86_64: its frames give the addresses.
		{"x86_64 from .ips", macho.CpuAmd64, crashedFrames},
		// No arm64 report exists; the addresses come from
		// llvm-objdump --macho --arch=arm64 -d Binaries/CrashingTest: the
		// faulting "str wzr, [x8]" at 0x100003dc8, and main's
		// "bl objc_msgSend(start)" at 0x100003dfc, return address
		// 0x100003e00, minus one.
		{"arm64 from disassembly", macho.CpuArm64, func(*testing.T) []uint64 { return []uint64{0x100003dc8, 0x100003dff} }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ix, err := New(dwarfSections(t, corpusFile(t, crashingTestDSYM), tt.cpu))
			if err != nil {
				t.Fatal(err)
			}
			addrs := tt.addrs(t)
			if len(addrs) != len(want) {
				t.Fatalf("%d CrashingTest frames, want %d", len(addrs), len(want))
			}
			for i, a := range addrs {
				frames, err := ix.Lookup(a)
				if err != nil {
					t.Fatalf("Lookup(%#x) found nothing", a)
				}
				var got []frame
				for _, f := range frames {
					got = append(got, frame{f.Function, path.Base(f.File), f.Line})
				}
				if diff := cmp.Diff(want[i], got); diff != "" {
					t.Errorf("Lookup(%#x) (-want +got):\n%s", a, diff)
				}
			}
		})
	}
}
