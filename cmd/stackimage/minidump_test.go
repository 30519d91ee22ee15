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

// TestSymbolicateCrashpadAnnotations reads a Crashpad minidump: its
// annotations (the values rust-minidump's own tests assert for this dump)
// appear in the text header and the JSON header, and the JSON lists the
// dump's modules, each with whether symbols were found.
func TestSymbolicateCrashpadAnnotations(t *testing.T) {
	dmp := filepath.Join(testcorpus.Dir(t), "minidump", "simple-crashpad.dmp")
	out := runOK(t, "symbolicate", dmp)
	for _, want := range []string{"Annotations:\n", "  hello = world\n", "  libsystem_c.dylib = abort() called\n",
		"Exception:  EXC_CRASH\n", "Codes:      SIGABRT\n"} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
	var rep jsonReport
	if err := json.Unmarshal([]byte(runOK(t, "symbolicate", dmp, "--json")), &rep); err != nil {
		t.Fatal(err)
	}
	h := rep.Header
	if h == nil || h.OS == "" || h.Crash == nil || h.Crash.Type != "EXC_CRASH" || h.Crash.Address == "" {
		t.Fatalf("JSON header = %+v, want the OS and the crash with its address", h)
	}
	found := false
	for _, a := range h.Annotations {
		found = found || a.Key == "hello" && a.Value == "world"
	}
	if !found {
		t.Errorf("JSON annotations %+v lack hello = world", h.Annotations)
	}
	if len(rep.Modules) == 0 {
		t.Fatal("JSON lists no modules")
	}
	for _, m := range rep.Modules {
		if m.Symbols != "missing" || m.LoadAddress == "" {
			t.Errorf("module %+v: want its load address and symbols missing (no --symbols given)", m)
		}
	}
}
