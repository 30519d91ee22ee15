package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stackimage/stackimage/internal/testcorpus"
)

// TestSymbolicateMinidump reads symbolicator's macOS minidump: the header
// names the OS, CPU and crash as symbolicator's own answer for the dump
// does (minidump/symbolicator-macos.expected.snap), and the crashed thread
// starts at its PC.
func TestSymbolicateMinidump(t *testing.T) {
	dmp := filepath.Join(testcorpus.Dir(t), "minidump", "symbolicator-macos.dmp")
	out := runOK(t, "symbolicate", dmp)
	for _, want := range []string{
		"Format: minidump\n",
		"OS:         macOS 10.12.6 (16G29)\n",
		"Exception:  EXC_BAD_ACCESS\n",
		"Codes:      KERN_INVALID_ADDRESS\n",
		"Address:    0x45\n",
		"Thread 775 Crashed:\n",
		"0   crash                          0x0000000109ba8c15 ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("symbolicate %s: output lacks %q:\n%s", dmp, want, out)
		}
	}
	var rep jsonReport
	if err := json.Unmarshal([]byte(runOK(t, "symbolicate", dmp, "--json")), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Format != "minidump" || len(rep.Threads) != 1 || !rep.Threads[0].Crashed {
		t.Errorf("--json: format %q, %d threads; want minidump with its one crashed thread", rep.Format, len(rep.Threads))
	}
}
