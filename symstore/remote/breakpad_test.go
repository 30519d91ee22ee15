package remote

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/symstore/objstore"
	"github.com/stackimage/stackimage/uuid"
)

// breakpadStore writes a .sym file for a module named name in the
// Breakpad layout, <name>/<ID>/<name>.sym, as minidump-stackwalk's symbol
// servers keep it, and returns the directory.
func breakpadStore(t *testing.T, u uuid.UUID, name string) string {
	t.Helper()
	keys := LayoutPaths(Layout{Type: "breakpad"}, u, KindBreakpad, name)
	if len(keys) != 1 {
		t.Fatalf("LayoutPaths(breakpad, %q) = %q, want one path", name, keys)
	}
	sym := "MODULE mac arm64 " + strings.ToUpper(u.Hex()) + "0 " + name + "\n" +
		"FUNC 1000 20 0 breakpad_function\n"
	dir := t.TempDir()
	p := filepath.Join(dir, filepath.FromSlash(keys[0]))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(sym), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestBreakpadLayoutByName: a Breakpad-layout store, read through a
// directory and over HTTP, gives the .sym file when OpenSymbols is told the
// image's name, and says plainly that it found nothing, and why, when it
// is not; through Symbols, LookupImage finds the file after a lookup
// without the name missed it.
func TestBreakpadLayoutByName(t *testing.T) {
	u := uuid.UUID{0x4c, 0x4c, 0x44, 0x4c, 0x55, 0x55, 0x31, 0x44, 0xa1, 0x17, 0x3e, 0x15, 0xaf, 0x6b, 0x6c, 0xff}
	const name = "libbreakpad.dylib"
	dir := breakpadStore(t, u, name)
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()
	web, err := objstore.NewHTTP(objstore.HTTPConfig{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, store := range []objstore.Store{objstore.Dir{Root: dir}, web} {
		where := store.Describe("")
		src := New(Config{Name: "bp", Store: store, Layout: Layout{Type: "breakpad"}, TempDir: t.TempDir()})

		files, err := src.OpenSymbols(ctx, symstore.Want{UUID: u, Name: name})
		if err != nil || len(files) != 1 {
			t.Fatalf("%s: OpenSymbols(%s, %q) = %d files, %v; want the .sym file", where, u, name, len(files), err)
		}
		head := make([]byte, len("MODULE mac"))
		if _, err := files[0].ReaderAt.ReadAt(head, 0); err != nil && err != io.EOF || string(head) != "MODULE mac" {
			t.Errorf("%s: file %s begins %q, %v; want the .sym file's MODULE line", where, files[0].Name, head, err)
		}
		for _, f := range files {
			f.Closer.Close()
		}

		_, err = src.OpenSymbols(ctx, symstore.Want{UUID: u})
		if !errors.Is(err, symstore.ErrNeedName) || !errors.Is(err, symstore.ErrNoSymbols) || !strings.Contains(err.Error(), "breakpad layout") {
			t.Errorf("%s: OpenSymbols(%s) without a name = %v; want symstore.ErrNeedName saying the breakpad layout needs the name", where, u, err)
		}
		for _, bad := range []string{"other.dylib", "../" + name + "/../x", "%2e%2e"} {
			if files, err := src.OpenSymbols(ctx, symstore.Want{UUID: u, Name: bad}); !errors.Is(err, symstore.ErrNoSymbols) || errors.Is(err, symstore.ErrNeedName) {
				t.Errorf("%s: OpenSymbols(%s, %q) = %d files, %v; want symstore.ErrNoSymbols", where, u, bad, len(files), err)
			}
		}

		syms := symstore.NewSymbols()
		syms.AddSource(src)
		if e, err := syms.LookupContext(ctx, u); e != nil || err == nil {
			t.Errorf("%s: LookupContext(%s) without a name = %v, %v; want a miss", where, u, e, err)
		}
		// A path on the device, as a dump names the image.
		e, err := syms.LookupImage(ctx, u, "/usr/lib/"+name)
		if err != nil {
			t.Fatalf("%s: LookupImage(%s, %q) after a miss without it: %v", where, u, name, err)
		}
		if got := e.BreakpadFiles(); len(got) != 1 || !e.KnowsFunctions() {
			t.Errorf("%s: entry's Breakpad files = %q (knows functions: %v), want the .sym file", where, got, e.KnowsFunctions())
		}
		e.Release()
		syms.Close()
	}
}
