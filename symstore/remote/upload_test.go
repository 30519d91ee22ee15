package remote

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"os"
	"testing"

	"github.com/stackimage/stackimage/symstore/objstore"
	"github.com/stackimage/stackimage/uuid"
)

// TestUpload: a zip of a binary, its dSYM and a Breakpad file is stored
// under each file's UUID at the layout's keys, each read back through the
// source; bytes that are no symbol file are ErrNotSymbols; a zip that
// inflates past its bound is ErrInflateBound.
func TestUpload(t *testing.T) {
	bin, err := os.ReadFile(fixtureBin)
	if err != nil {
		t.Fatal(err)
	}
	dsym, err := os.ReadFile(fixtureDSYM)
	if err != nil {
		t.Fatal(err)
	}
	sym := []byte("MODULE mac arm64 0102030405060708090A0B0C0D0E0F100 Lib\nFUNC 10 4 0 f\n")
	var zipped bytes.Buffer
	zw := zip.NewWriter(&zipped)
	for name, data := range map[string][]byte{"App.dSYM/Contents/Resources/DWARF/App": dsym, "App": bin, "Lib.sym": sym, "README": []byte("hello")} {
		w, _ := zw.Create(name)
		w.Write(data)
	}
	zw.Close()

	src := New(Config{Name: "store", Store: objstore.Dir{Root: t.TempDir()}, Layout: Layout{Type: "unified"}})
	var rebuilt []uuid.UUID
	up := &Upload{Dest: src, TempDir: t.TempDir(), MaxMember: 1 << 30, MaxInflateRatio: 100, MaxInflated: 1 << 30,
		Stored: func(_ context.Context, id uuid.UUID) string { rebuilt = append(rebuilt, id); return "built" }}
	ctx := context.Background()
	res, err := up.Store(ctx, bytes.NewReader(zipped.Bytes()), int64(zipped.Len()))
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, sf := range res.Stored {
		kinds[sf.Kind]++
		if sf.Index != "built" || sf.Location == "" {
			t.Errorf("stored %+v: want its location and index built", sf)
		}
	}
	if kinds["executable"] != 1 || kinds["debuginfo"] != 1 || kinds["breakpad"] != 1 || len(rebuilt) != 3 {
		t.Fatalf("stored %+v (%d rebuilt); want a binary, a dSYM and a .sym, each rebuilt", res.Stored, len(rebuilt))
	}
	for _, sf := range res.Stored {
		id, err := uuid.Parse(sf.UUID)
		if err != nil {
			t.Fatal(err)
		}
		kind := map[string]Kind{"executable": KindCode, "debuginfo": KindDebug, "breakpad": KindBreakpad}[sf.Kind]
		f, err := src.Open(ctx, id, kind, sf.Name)
		if err != nil {
			t.Errorf("Open(%s, %s) after the upload: %v", id, sf.Kind, err)
			continue
		}
		f.Close()
	}

	if _, err := up.Store(ctx, bytes.NewReader([]byte("hello")), 5); !errors.Is(err, ErrNotSymbols) {
		t.Errorf("Store(text) = %v, want ErrNotSymbols", err)
	}
	up.MaxInflateRatio = 1 // the binary inflates past the zip's own size
	if _, err := up.Store(ctx, bytes.NewReader(zipped.Bytes()), int64(zipped.Len())); !errors.Is(err, ErrInflateBound) {
		t.Errorf("Store(zip) under a 1:1 bound = %v, want ErrInflateBound", err)
	}
}
