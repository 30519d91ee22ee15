package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stackimage/stackimage/breakpadsym"
	"github.com/stackimage/stackimage/internal/testcorpus"
)

// breakpadServer serves .sym files as a Breakpad symbol server keeps them
// (what symupload writes and minidump-stackwalk reads):
// <name>/<debug id>/<name>.sym, the name and debug id from each file's
// MODULE line. It returns the server's URL.
func breakpadServer(t *testing.T, syms ...string) string {
	t.Helper()
	files := map[string]string{}
	for _, sym := range syms {
		f, err := os.Open(sym)
		if err != nil {
			t.Fatal(err)
		}
		m, err := breakpadsym.ReadModuleLine(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", sym, err)
		}
		files[m.Name+"/"+m.DebugID+"/"+m.Name+".sym"] = sym
	}
	return serveFiles(t, files)
}

// TestSymbolsURLBreakpad: symbolicate, aggregate and atos find a .sym file
// on a Breakpad symbol server (--symbols-layout breakpad), whose paths
// hold the image's name, and name the frames as with the file given to
// --symbols.
func TestSymbolsURLBreakpad(t *testing.T) {
	binary := filepath.Join(symbolsDir, "chain-arm64-O1")
	symDir := t.TempDir()
	sym := writeCFISym(t, binary, "", symDir)
	url := breakpadServer(t, sym)
	dump := filepath.Join(snapshotsDir, "chain-arm64-O1-deepest.json")
	server := []string{"--symbols-url", url, "--symbols-layout", "breakpad"}

	// A crash report's frames are named without a walk: by the report's
	// loading of the images and, in aggregate, by its own lookups. The
	// image's path is the binary's on the device.
	crash := filepath.Join(t.TempDir(), "chain.crash")
	if err := os.WriteFile(crash, []byte(`Incident Identifier: 11111111-2222-3333-4444-555555555555
Process:             chain-arm64-O1 [42]
Code Type:           ARM-64 (Native)

Thread 0 Crashed:
0   chain-arm64-O1                	       0x100000400 0x100000000 + 1024
1   chain-arm64-O1                	       0x100000488 0x100000000 + 1160

Binary Images:
       0x100000000 -        0x100003fff chain-arm64-O1 arm64  <4c4c444c55553144a1173e15af6b6cff> /usr/local/bin/chain-arm64-O1
`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, input := range []string{dump, crash} {
		want := runOK(t, "symbolicate", input, "--symbols", symDir)
		if !strings.Contains(want, "chain-arm64-O1") || !strings.Contains(want, " + ") {
			t.Fatalf("symbolicate %s --symbols with the .sym names no frame in the fixture's image:\n%s", input, want)
		}
		if got := runOK(t, append([]string{"symbolicate", input}, server...)...); got != want {
			t.Errorf("symbolicate %s --symbols-url (breakpad layout):\n%s\nwant, as with --symbols:\n%s", input, got, want)
		}
		aggregate := func(flags ...string) string {
			return runOK(t, append([]string{"aggregate", input, "--format", "folded", "--quiet"}, flags...)...)
		}
		want = aggregate("--symbols", symDir)
		if strings.Contains(want, "0x1000004") {
			t.Errorf("aggregate %s --symbols with the .sym left addresses unnamed:\n%s", input, want)
		}
		if got := aggregate(server...); got != want {
			t.Errorf("aggregate %s --symbols-url (breakpad layout):\n%s\nwant, as with --symbols:\n%s", input, got, want)
		}
	}

	// atos is told the name with --name.
	got := runOK(t, append([]string{"atos", "--uuid", "4C4C444C-5555-3144-A117-3E15AF6B6CFF", "--name", "chain-arm64-O1", "-l", "0x100000000", "0x100000400", "0x100000484"}, server...)...)
	want := runOK(t, "atos", "-o", sym, "-l", "0x100000000", "0x100000400", "0x100000484")
	if got != want || strings.Contains(got, "0x100000400\n") {
		t.Errorf("atos --uuid --name --symbols-url (breakpad layout):\n%s\nwant, as with -o:\n%s", got, want)
	}
}

// TestSymbolsURLBreakpadMinidump: symbolicator's macOS minidump, with
// crash.sym on a Breakpad symbol server, is named as with the file in a
// --symbols directory. The module's name in the dump is a path on the
// device; the server's path holds its base name.
func TestSymbolsURLBreakpadMinidump(t *testing.T) {
	dmp := testcorpus.File(t, "minidump/symbolicator-macos.dmp")
	sym := testcorpus.File(t, "symbolic/symbolic-testutils/fixtures/macos/crash.sym")
	url := breakpadServer(t, sym)
	dir := t.TempDir()
	if err := os.Symlink(sym, filepath.Join(dir, "crash.sym")); err != nil {
		t.Fatal(err)
	}
	want := runOK(t, "symbolicate", dmp, "--symbols", dir)
	if line := "0   crash                          0x0000000109ba8c15 main + 117 (main.cpp:21)\n"; !strings.Contains(want, line) {
		t.Fatalf("symbolicate --symbols: output lacks %q:\n%s", line, want)
	}
	if got := runOK(t, "symbolicate", dmp, "--symbols-url", url, "--symbols-layout", "breakpad"); got != want {
		t.Errorf("symbolicate --symbols-url (breakpad layout):\n%s\nwant, as with --symbols:\n%s", got, want)
	}
}
