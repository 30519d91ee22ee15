package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stackimage/stackimage/symstore/remote"
	"github.com/stackimage/stackimage/uuid"
)

// symbolServer serves the chain-arm64-O1 fixture's binary and dSYM in
// symbolicator's unified layout, and returns its URL and the UUID.
func symbolServer(t *testing.T) (string, uuid.UUID) {
	t.Helper()
	u, err := uuid.Parse("4C4C444C-5555-3144-A117-3E15AF6B6CFF")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for kind, path := range map[remote.Kind]string{
		remote.KindCode:  filepath.Join(symbolsDir, "chain-arm64-O1"),
		remote.KindDebug: filepath.Join(symbolsDir, "chain-arm64-O1.dSYM/Contents/Resources/DWARF/chain-arm64-O1"),
	} {
		files[remote.LayoutPaths(remote.Layout{Type: "unified"}, u, kind, "")[0]] = path
	}
	return serveFiles(t, files), u
}

// serveFiles serves, over HTTP on loopback, a copy of each file at the
// slash-separated path it is keyed by, and returns the server's URL.
func serveFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for rel, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestSymbolsURL: symbolicate, aggregate, atos and index fetch the
// symbol files by UUID from a symbol server and answer as they do with
// the files on disk.
func TestSymbolsURL(t *testing.T) {
	url, u := symbolServer(t)
	dump := filepath.Join(snapshotsDir, "chain-arm64-O1-deepest.json")

	if got, want := runOK(t, "symbolicate", dump, "--symbols-url", url), runOK(t, "symbolicate", dump, "--symbols", symbolsDir); got != want {
		t.Errorf("symbolicate --symbols-url:\n%s\nwant, as with --symbols:\n%s", got, want)
	}
	if !strings.Contains(runOK(t, "symbolicate", dump, "--symbols-url", url), "chain-arm64-O1") {
		t.Errorf("symbolicate --symbols-url names no frame in the fixture's image")
	}
	aggregate := func(flags ...string) string {
		return runOK(t, append([]string{"aggregate", dump, "--format", "folded", "--quiet"}, flags...)...)
	}
	if got, want := aggregate("--symbols-url", url), aggregate("--symbols", symbolsDir); got != want {
		t.Errorf("aggregate --symbols-url:\n%s\nwant, as with --symbols:\n%s", got, want)
	}

	got := runOK(t, "atos", "--uuid", u.String(), "--name", "chain-arm64-O1", "--symbols-url", url, "-l", "0x100000000", "0x100000400", "0x100000484")
	want := runOK(t, "atos", "-o", filepath.Join(symbolsDir, "chain-arm64-O1.dSYM"), "-l", "0x100000000", "0x100000400", "0x100000484")
	if got != want || strings.Contains(got, "0x100000400\n") {
		t.Errorf("atos --uuid --symbols-url:\n%s\nwant, as with -o:\n%s", got, want)
	}

	out := t.TempDir()
	runOK(t, "index", "--symbols-url", url, "--uuid", u.String(), "--out", out)
	if files, _ := filepath.Glob(filepath.Join(out, u.String(), "*.symindex")); len(files) != 1 {
		t.Errorf("index --symbols-url wrote %q, want one index of %s", files, u)
	}
}

// TestSymbolsURLRefused: a URL other than http(s), an unknown layout and
// --uuid without a server are usage errors.
func TestSymbolsURLRefused(t *testing.T) {
	dump := filepath.Join(snapshotsDir, "chain-arm64-O1-deepest.json")
	for _, args := range [][]string{
		{"symbolicate", dump, "--symbols-url", "ftp://example.com/"},
		{"symbolicate", dump, "--symbols-url", "http://127.0.0.1:1/", "--symbols-layout", "flat"},
		{"atos", "--uuid", "4C4C444C-5555-3144-A117-3E15AF6B6CFF", "0x1"},
		{"index", "--symbols-url", "http://127.0.0.1:1/", "--out", t.TempDir()},
	} {
		status, _, stderr := runCmd(nil, args...)
		if status != 2 {
			t.Errorf("stackimage %s: exit status %d, want 2 (usage): %s", strings.Join(args, " "), status, stderr)
		}
	}
}
