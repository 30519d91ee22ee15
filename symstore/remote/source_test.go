package remote

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/stackimage/stackimage/lookup"
	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/symstore/objstore"
	"github.com/stackimage/stackimage/uuid"
)

const (
	fixtureBin  = "../../fixtures/bin/chain-arm64-O1"
	fixtureDSYM = "../../fixtures/bin/chain-arm64-O1.dSYM/Contents/Resources/DWARF/chain-arm64-O1"
)

// unifiedDir lays the fixture's binary and dSYM out in a directory in
// the unified layout and returns it with the UUID.
func unifiedDir(t *testing.T) (string, uuid.UUID) {
	t.Helper()
	var m symstore.MemorySource
	bin, err := os.ReadFile(fixtureBin)
	if err != nil {
		t.Fatal(err)
	}
	ids, err := m.Add("bin", bin)
	if err != nil {
		t.Fatal(err)
	}
	u := ids[0]
	dsym, err := os.ReadFile(fixtureDSYM)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for kind, data := range map[Kind][]byte{KindCode: bin, KindDebug: dsym} {
		p := filepath.Join(dir, filepath.FromSlash(LayoutPaths(Layout{Type: "unified"}, u, kind, "")[0]))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, u
}

// TestSourceNamesFrames: a store in the unified layout, read through a
// directory and over HTTP, is a symstore.Source that names a frame; a UUID
// it lacks is lookup.ErrNotFound.
func TestSourceNamesFrames(t *testing.T) {
	dir, u := unifiedDir(t)
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()
	web, err := objstore.NewHTTP(objstore.HTTPConfig{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	for _, store := range []objstore.Store{objstore.Dir{Root: dir}, web} {
		src := New(Config{Name: "test", Store: store, Layout: Layout{Type: "unified"}, TempDir: t.TempDir()})
		syms := symstore.NewSymbols()
		syms.AddSource(src)
		e, err := syms.LookupContext(context.Background(), u)
		if err != nil {
			t.Fatalf("%s: Lookup(%s): %v", store.Describe(""), u, err)
		}
		if !e.HasDebugInfo() {
			t.Errorf("%s: the entry has no debug information: the dSYM was not read", store.Describe(""))
		}
		text, _ := e.Image().TextSegment()
		if sym, ok := e.Symbol(text.Addr + 0x400); !ok || sym.Name == "" {
			t.Errorf("%s: Symbol(%#x) = %q, %v; want a name", store.Describe(""), text.Addr+0x400, sym.Name, ok)
		}
		e.Release()
		syms.Close()
		if _, err := src.OpenSymbols(context.Background(), symstore.Want{UUID: uuid.UUID{0xde, 0xad}}); !errors.Is(err, lookup.ErrNotFound) {
			t.Errorf("%s: OpenSymbols of a UUID it lacks: %v, want lookup.ErrNotFound", store.Describe(""), err)
		}
	}
}

// TestDownloadLimit: a file larger than MaxDownload is refused, and
// nothing is left in the temporary directory.
func TestDownloadLimit(t *testing.T) {
	dir, u := unifiedDir(t)
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()
	web, err := objstore.NewHTTP(objstore.HTTPConfig{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	src := New(Config{Name: "small", Store: web, Layout: Layout{Type: "unified"}, MaxDownload: 100, TempDir: tmp})
	if f, err := src.Open(context.Background(), u, KindCode, ""); err == nil {
		f.Close()
		t.Fatalf("Open of a file above the 100-byte limit succeeded")
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Errorf("%d files left in the temporary directory", len(left))
	}
}
