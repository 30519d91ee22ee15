package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// sourceFrame is what a frame says about the code: the part an index
// must reproduce. How a frame was found (unwind tables, frame pointer)
// depends on the binary's code and unwind tables, which an index does not
// hold.
type sourceFrame struct {
	Index   int    `json:"index"`
	Address string `json:"address"`
	Image   string `json:"image"`
	Symbol  string `json:"symbol"`
	Offset  string `json:"symbol_offset"`
	File    string `json:"file"`
	Line    int    `json:"line"`
	Column  int    `json:"column"`
	Inlined bool   `json:"inlined"`
}

// TestIndexStore writes an index store of the fixture binaries and dSYMs
// and checks that every committed snapshot symbolicates with --symbols
// STORE alone to the same frames as with the binaries and dSYMs, and that
// atos -o FILE.symindex answers as atos -o BINARY.
func TestIndexStore(t *testing.T) {
	store := t.TempDir()
	var out, errs bytes.Buffer
	if code := run([]string{"index", "--symbols", symbolsDir, "--out", store}, nil, &out, &errs); code != 0 {
		t.Fatalf("index exited %d: %s", code, errs.String())
	}
	files, _ := filepath.Glob(filepath.Join(store, "*", "*.symindex"))
	if len(files) < 20 {
		t.Fatalf("index wrote %d files, want one per fixture slice (20 or more):\n%s", len(files), out.String())
	}
	snaps, _ := filepath.Glob(filepath.Join(snapshotsDir, "*.json"))
	if len(snaps) == 0 {
		t.Fatal("no snapshots")
	}
	for _, snap := range snaps {
		if strings.Contains(snap, "-i386-") {
			// The i386 fixture is an object file without LC_UUID: such
			// files are matched by name, and a store is keyed by UUID.
			continue
		}
		t.Run(strings.TrimSuffix(filepath.Base(snap), ".json"), func(t *testing.T) {
			want := symbolicateFrames(t, snap, symbolsDir)
			got := symbolicateFrames(t, snap, store)
			if strings.Contains(snap, "-nofp-") {
				// Code without frame pointers walks by its unwind tables,
				// which a store does not hold: by scans checked by the
				// index's symbols, it may miss frames, never take others.
				machine := func(fs []sourceFrame) []string {
					var out []string
					for _, f := range fs {
						if !f.Inlined {
							out = append(out, f.Address)
						}
					}
					return out
				}
				if !isSubsequence(machine(got), machine(want)) {
					t.Errorf("frames with --symbols STORE %q are not a subsequence of the binaries' %q", machine(got), machine(want))
				}
			} else if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("frames with --symbols STORE differ (-binaries +store):\n%s", diff)
			}
			if len(want) < 3 || want[0].Symbol == "" {
				t.Errorf("too few or unnamed frames: %+v", want)
			}
		})
	}

	// atos on one index file, with inlines and file:line.
	bin := filepath.Join(symbolsDir, "chain-arm64-O1.dSYM")
	var uuidOut bytes.Buffer
	if code := run([]string{"images", filepath.Join(symbolsDir, "chain-arm64-O1")}, nil, &uuidOut, &errs); code != 0 {
		t.Fatalf("images exited %d", code)
	}
	var index string
	for _, f := range files {
		if strings.Contains(uuidOut.String(), filepath.Base(filepath.Dir(f))) {
			index = f
		}
	}
	if index == "" {
		t.Fatalf("no index file for chain-arm64-O1 among %v", files)
	}
	addrs := "0x1000002f0 0x100000340 0x1000003c8 0x1000005bc 0x1000005dc 0x100000000 0x100003ff0\n"
	atos := func(o string) string {
		var out, errs bytes.Buffer
		if code := run([]string{"atos", "-i", "-o", o}, strings.NewReader(addrs), &out, &errs); code != 0 {
			t.Fatalf("atos -o %s exited %d: %s", o, code, errs.String())
		}
		return out.String()
	}
	want, got := atos(bin), atos(index)
	if got != want {
		t.Errorf("atos -o %s:\n%s\nwant (atos -o the dSYM):\n%s", index, got, want)
	}
	if !strings.Contains(want, "chain.c:") {
		t.Errorf("atos -o the dSYM printed no file:line:\n%s", want)
	}
}

// symbolicateFrames runs symbolicate --json on snap with one --symbols
// directory and returns the frames of every thread.
func symbolicateFrames(t *testing.T, snap, symbols string) []sourceFrame {
	t.Helper()
	var out, errs bytes.Buffer
	if code := run([]string{"symbolicate", snap, "--symbols", symbols, "--json"}, nil, &out, &errs); code != 0 {
		t.Fatalf("symbolicate --symbols %s exited %d: %s", symbols, code, errs.String())
	}
	var rep struct {
		Threads []struct {
			Frames []sourceFrame `json:"frames"`
		} `json:"threads"`
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	var frames []sourceFrame
	for _, th := range rep.Threads {
		frames = append(frames, th.Frames...)
	}
	return frames
}

// TestIndexSkipsBreakpadSym runs index over a directory holding a Breakpad
// .sym file beside a binary: the binary is indexed, and the .sym file,
// which has no Mach-O image to index, is skipped with a warning naming it
// and saying why (it used to panic). A directory of .sym files alone
// fails with status 1, never a panic.
func TestIndexSkipsBreakpadSym(t *testing.T) {
	dir := t.TempDir()
	sym := writeFile(t, filepath.Join(dir, "lib.sym"),
		[]byte("MODULE mac arm64 0123456789ABCDEF0123456789ABCDEF0 lib\nFUNC 1000 10 0 lib_main\n1000 10 7 0\nFILE 0 lib.c\n"))
	bin, err := os.ReadFile(filepath.Join(symbolsDir, "chain-arm64-O1"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "chain-arm64-O1"), bin)
	store := t.TempDir()
	status, out, errOut := runCmd(nil, "index", "--symbols", dir, "--out", store)
	if status != 0 {
		t.Fatalf("index: status %d, stderr %q", status, errOut)
	}
	if !strings.Contains(out, "4C4C444C-5555-3144-A117-3E15AF6B6CFF") {
		t.Errorf("index did not write the binary's index: %q", out)
	}
	if !strings.Contains(errOut, "skipped "+sym) || !strings.Contains(errOut, "Breakpad .sym file") {
		t.Errorf("stderr %q: want a warning naming %s as a skipped Breakpad .sym file", errOut, sym)
	}

	only := t.TempDir()
	writeFile(t, filepath.Join(only, "lib.sym"), []byte("MODULE mac arm64 0123456789ABCDEF0123456789ABCDEF0 lib\n"))
	status, _, errOut = runCmd(nil, "index", "--symbols", only, "--out", t.TempDir())
	if status != 1 || !strings.Contains(errOut, "lib.sym") {
		t.Errorf("index of .sym files alone: status %d, stderr %q; want 1 and the file named", status, errOut)
	}
}

// TestIndexSetsGCPercent: index runs the collector at indexGCPercent
// unless the environment's GOGC chose a pace, which it then keeps.
func TestIndexSetsGCPercent(t *testing.T) {
	prev := debug.SetGCPercent(100)
	defer debug.SetGCPercent(prev)
	index := func() {
		t.Helper()
		var errs bytes.Buffer
		bin := filepath.Join(symbolsDir, "async-arm64-O0")
		if code := run([]string{"index", "--symbols", bin, "--out", t.TempDir(), "--quiet"}, nil, io.Discard, &errs); code != 0 {
			t.Fatalf("index exited %d: %s", code, errs.String())
		}
	}
	t.Setenv("GOGC", "")
	index()
	if got := debug.SetGCPercent(100); got != indexGCPercent {
		t.Errorf("with GOGC unset, index left the collector at %d%%, want %d%%", got, indexGCPercent)
	}
	t.Setenv("GOGC", "150")
	index()
	if got := debug.SetGCPercent(100); got != 100 {
		t.Errorf("with GOGC set, index changed the collector's pace to %d%%", got)
	}
}
