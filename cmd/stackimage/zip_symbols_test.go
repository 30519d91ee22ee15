package main

import (
	"archive/zip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSymbolicateZipSymbols checks that --symbols takes a zip of a binary
// and its dSYM and answers as the same files on disk do.
func TestSymbolicateZipSymbols(t *testing.T) {
	dir := t.TempDir()
	archive := filepath.Join(dir, "symbols.zip")
	out, err := os.Create(archive)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(out)
	dwarf := filepath.Join("Contents", "Resources", "DWARF", "chain-arm64-O1")
	for name, src := range map[string]string{
		"MyApp.app/chain-arm64-O1": chainBinary,
		"dSYMs/chain-arm64-O1.dSYM/Contents/Resources/DWARF/chain-arm64-O1": filepath.Join(chainDSYM, dwarf),
	} {
		data, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		w, err := zw.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	snapshot := filepath.Join(snapshotsDir, "chain-arm64-O1-deepest.json")
	symbolicate := func(symbols ...string) string {
		args := []string{"symbolicate", snapshot}
		for _, s := range symbols {
			args = append(args, "--symbols", s)
		}
		var stdout, stderr strings.Builder
		if status := run(args, strings.NewReader(""), &stdout, &stderr); status != 0 {
			t.Fatalf("%q: status %d: %s", args, status, stderr.String())
		}
		return stdout.String()
	}
	want := symbolicate(chainBinary, filepath.Join(chainDSYM, dwarf))
	if !strings.Contains(want, "chain.c:") {
		t.Fatalf("the files on disk gave no source positions:\n%s", want)
	}
	if got := symbolicate(archive); got != want {
		t.Errorf("--symbols %s:\n%s\nwant, as from the files on disk:\n%s", archive, got, want)
	}
}
