package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// snapshotCopies copies the fixture snapshots (.json) into a new
// directory, so that every file of it is a report, and returns it and the
// file names.
func snapshotCopies(t *testing.T) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	paths, _ := filepath.Glob(filepath.Join(snapshotsDir, "*.json"))
	if len(paths) < 2 {
		t.Fatalf("%d snapshots in %s, want several", len(paths), snapshotsDir)
	}
	var names []string
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, filepath.Base(p)), data)
		names = append(names, filepath.Base(p))
	}
	return dir, names
}

// TestSymbolicateDirectory symbolicates a directory of reports with --out:
// one report per input, each what symbolicate prints for that input alone,
// and nothing on stderr when it is not a terminal (no progress bar).
func TestSymbolicateDirectory(t *testing.T) {
	dir, names := snapshotCopies(t)
	writeFile(t, filepath.Join(dir, "notes.txt"), []byte("not a report\n"))
	out := filepath.Join(t.TempDir(), "out")
	status, stdout, stderr := runCmd(nil, "symbolicate", dir, "--symbols", symbolsDir, "--out", out)
	if status != 0 {
		t.Fatalf("status %d, stderr %q", status, stderr)
	}
	if stdout != "" {
		t.Errorf("stdout %q, want nothing: the reports go to --out", stdout)
	}
	if want := "stackimage symbolicate: skipped " + filepath.Join(dir, "notes.txt") + ": in no format symbolicate reads\n"; stderr != want {
		t.Errorf("stderr %q, want only %q (no progress bar: stderr is no terminal)", stderr, want)
	}
	written, _ := filepath.Glob(filepath.Join(out, "*"))
	if len(written) != len(names) {
		t.Errorf("wrote %d files, want %d (one per snapshot): %v", len(written), len(names), written)
	}
	for _, name := range names {
		_, alone, _ := runCmd(nil, "symbolicate", filepath.Join(dir, name), "--symbols", symbolsDir)
		got, err := os.ReadFile(filepath.Join(out, name+".txt"))
		if err != nil {
			t.Error(err)
			continue
		}
		if diff := cmp.Diff(alone, string(got)); diff != "" {
			t.Errorf("%s.txt differs from symbolicate %s (-alone +written):\n%s", name, name, diff)
		}
	}
}

// TestSymbolicateManyNeedsOut checks that several inputs, or a directory,
// without --out are a usage error, as are two inputs whose reports would
// have one name.
func TestSymbolicateManyNeedsOut(t *testing.T) {
	dir, names := snapshotCopies(t)
	a := filepath.Join(dir, names[0])
	other := t.TempDir()
	b := writeFile(t, filepath.Join(other, names[0]), []byte("{}"))
	for _, args := range [][]string{
		{"symbolicate", a, filepath.Join(dir, names[1])},
		{"symbolicate", dir},
		{"symbolicate", a, b, "--out", t.TempDir()},
	} {
		if status, _, stderr := runCmd(nil, args...); status != 2 {
			t.Errorf("%q: status %d, want 2; stderr %q", args, status, stderr)
		}
	}
}

// TestIndexSilentWithoutTerminal checks that index over many files draws
// no progress bar when stderr is not a terminal: its stderr holds lines
// only, without a carriage return.
func TestIndexSilentWithoutTerminal(t *testing.T) {
	status, stdout, stderr := runCmd(nil, "index", "--symbols", symbolsDir, "--out", t.TempDir())
	if status != 0 {
		t.Fatalf("status %d, stderr %q", status, stderr)
	}
	if strings.Count(stdout, "\n") < 2 {
		t.Fatalf("index wrote %q, want a line per file of many", stdout)
	}
	if strings.ContainsAny(stderr, "\r%") || strings.Contains(stderr, "indexing") {
		t.Errorf("stderr %q: a progress bar on a stderr that is no terminal", stderr)
	}
}
