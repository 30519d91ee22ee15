package symbolize

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/lookup"
	"github.com/stackimage/stackimage/snapshot"
	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/uuid"
)

// captureFrames symbolicates the fixture capture chain-arm64-O1-deepest
// against syms and returns its first thread's frames.
func captureFrames(t *testing.T, syms *symstore.Symbols) []symstore.Frame {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "fixtures", "snapshots", "chain-arm64-O1-deepest.json"))
	if err != nil {
		t.Fatal(err)
	}
	snap, err := snapshot.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := (&Symbolizer{Symbols: syms}).Symbolicate(snap.Dump())
	if err != nil {
		t.Fatal(err)
	}
	return rep.Threads[0].Frames
}

// frameNames returns the capture's frames' names with their source lines.
func frameNames(t *testing.T, syms *symstore.Symbols) []string {
	t.Helper()
	var names []string
	for _, f := range captureFrames(t, syms) {
		names = append(names, f.Symbol+" "+f.SourceLocation())
	}
	return names
}

// TestMemorySource symbolicates a capture with its binary and dSYM held in
// memory, supplied through a Source: the frames are named as from the
// files on disk, and the source is asked once per UUID, a UUID it lacks
// included.
func TestMemorySource(t *testing.T) {
	dir := filepath.Join("..", "fixtures", "bin")
	onDisk := symstore.NewSymbols()
	defer onDisk.Close()
	if err := onDisk.AddDir(context.Background(), filepath.Join(dir, "chain-arm64-O1")); err != nil {
		t.Fatal(err)
	}
	if err := onDisk.AddDir(context.Background(), filepath.Join(dir, "chain-arm64-O1.dSYM")); err != nil {
		t.Fatal(err)
	}
	want := frameNames(t, onDisk)

	mem := &symstore.MemorySource{}
	for _, path := range []string{filepath.Join(dir, "chain-arm64-O1"), filepath.Join(dir, "chain-arm64-O1.dSYM", "Contents", "Resources", "DWARF", "chain-arm64-O1")} {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := mem.Add(filepath.Base(path), data); err != nil {
			t.Fatal(err)
		}
	}
	var asked atomic.Int32
	counting := symstore.SourceFunc(func(ctx context.Context, id uuid.UUID, arch *archregs.Arch) ([]symstore.SymbolFile, error) {
		asked.Add(1)
		return mem.OpenSymbols(ctx, symstore.Want{UUID: id, Arch: arch})
	})
	syms := symstore.NewSymbols()
	defer syms.Close()
	syms.AddSource(counting)
	if diff := cmp.Diff(want, frameNames(t, syms)); diff != "" {
		t.Errorf("frames from memory differ from the files on disk (-want +got):\n%s", diff)
	}
	if want[0] == " " || len(want) < 5 {
		t.Fatalf("the fixture's walk names nothing: %q", want)
	}
	n := asked.Load()
	frameNames(t, syms)
	if e, _ := syms.Lookup(uuid.UUID{1, 2, 3}); e != nil {
		t.Errorf("Lookup of a UUID no source has = an entry")
	}
	syms.Lookup(uuid.UUID{1, 2, 3})
	if got := asked.Load(); got != n+1 {
		t.Errorf("the source was asked %d times more for one new UUID and one repeated walk, want 1", got-n)
	}
}

// TestSymbolsIsASource: the directory index serves another index as a
// Source, as a service's cache in front of a store would.
func TestSymbolsIsASource(t *testing.T) {
	dir := symstore.NewSymbols()
	defer dir.Close()
	if err := dir.AddDir(context.Background(), filepath.Join("..", "fixtures", "bin")); err != nil {
		t.Fatal(err)
	}
	want := frameNames(t, dir)
	front := symstore.NewSymbols()
	defer front.Close()
	front.AddSource(dir)
	if diff := cmp.Diff(want, frameNames(t, front)); diff != "" {
		t.Errorf("frames through the source differ (-want +got):\n%s", diff)
	}
	if _, err := dir.OpenSymbols(context.Background(), symstore.Want{UUID: uuid.UUID{9}}); err == nil {
		t.Errorf("OpenSymbols of an unknown UUID did not fail")
	}
}

// TestSourceNilAndEmpty: a nil source is not asked, and empty files are
// errors, not panics.
func TestSourceNilAndEmpty(t *testing.T) {
	syms := symstore.NewSymbols()
	defer syms.Close()
	syms.AddSource(nil)
	syms.AddSource(symstore.SourceFunc(nil))
	syms.AddSource(symstore.SourceFunc(func(context.Context, uuid.UUID, *archregs.Arch) ([]symstore.SymbolFile, error) {
		return []symstore.SymbolFile{{Name: "empty"}}, nil
	}))
	if e, err := syms.Lookup(uuid.UUID{7}); e != nil || !errors.Is(err, lookup.ErrNotFound) {
		t.Errorf("Lookup through an empty file = %v, %v; want no entry and lookup.ErrNotFound", e, err)
	}
	if len(syms.Warnings()) == 0 {
		t.Errorf("no warning for the source's empty file")
	}
	if _, err := (&symstore.MemorySource{}).Add("x", nil); err == nil {
		t.Errorf("MemorySource.Add(nil) did not fail")
	}
}

// tinySym is a Breakpad file of a Mach-O module: main at 0x100-0x120,
// line 5 of main.c at 0x100-0x110, line 6 after.
const tinySym = `MODULE mac arm64 4C4C444C55553144A1173E15AF6B6CFF0 tiny
FILE 0 /src/main.c
FUNC 100 20 0 main
100 10 5 0
110 10 6 0
`

// TestBreakpadFromSource: a Breakpad .sym file comes through a Source as
// a Mach-O file does, from memory and from a directory index (a symbol
// store's layout) fronted by another index.
func TestBreakpadFromSource(t *testing.T) {
	u, err := uuid.Parse("4C4C444C-5555-3144-A117-3E15AF6B6CFF")
	if err != nil {
		t.Fatal(err)
	}
	mem := &symstore.MemorySource{}
	ids, err := mem.Add("tiny.sym", []byte(tinySym))
	if err != nil || len(ids) != 1 || ids[0] != u {
		t.Fatalf("MemorySource.Add(tiny.sym) = %v, %v; want the MODULE line's UUID", ids, err)
	}
	dir := t.TempDir()
	store := filepath.Join(dir, "tiny", "4C4C444C55553144A1173E15AF6B6CFF0")
	if err := os.MkdirAll(store, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(store, "tiny.sym"), []byte(tinySym), 0o644); err != nil {
		t.Fatal(err)
	}
	onDisk := symstore.NewSymbols()
	defer onDisk.Close()
	if err := onDisk.AddDir(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	for name, src := range map[string]symstore.Source{"memory": mem, "store": onDisk} {
		t.Run(name, func(t *testing.T) {
			syms := symstore.NewSymbols()
			defer syms.Close()
			syms.AddSource(src)
			frames, err := syms.Resolve(u, nil, 0x114)
			if err != nil {
				t.Fatal(err)
			}
			if f := frames[len(frames)-1]; f.Symbol != "main" || f.SourceLocation() != "main.c:6" || f.SymbolSource != symstore.SourceBreakpad {
				t.Errorf("Resolve(0x114) = %s %s from %s, want main main.c:6 from breakpad", f.Symbol, f.SourceLocation(), f.SymbolSource)
			}
		})
	}
	if _, err := mem.Add("bad.sym", []byte("MODULE mac arm64 XYZ tiny\n")); err == nil {
		t.Errorf("MemorySource.Add of a bad MODULE line did not fail")
	}
}

// walkedFrames returns the capture's frames' names, source lines and
// how each was found.
func walkedFrames(t *testing.T, syms *symstore.Symbols) []string {
	t.Helper()
	var out []string
	for _, f := range captureFrames(t, syms) {
		out = append(out, f.Symbol+" "+f.SourceLocation()+" "+f.FoundBy.String())
	}
	return out
}

// TestIndexFromSource: an index file from a Source names the frames, and
// the binary given beside it adds its unwind tables, so the walk is the
// one the binary and dSYM on disk give, frame for frame and rule for
// rule; an index alone names the frames but walks by frame records. The
// index is mapped when the source gives a file, read when it gives
// memory.
func TestIndexFromSource(t *testing.T) {
	dir := filepath.Join("..", "fixtures", "bin")
	onDisk := symstore.NewSymbols()
	defer onDisk.Close()
	for _, p := range []string{"chain-arm64-O1", "chain-arm64-O1.dSYM"} {
		if err := onDisk.AddDir(context.Background(), filepath.Join(dir, p)); err != nil {
			t.Fatal(err)
		}
	}
	want := walkedFrames(t, onDisk)
	u := onDisk.UUIDs()[0]
	e, err := onDisk.Lookup(u)
	if err != nil {
		t.Fatal(err)
	}
	indexPath := filepath.Join(t.TempDir(), "chain.symindex")
	f, err := os.Create(indexPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.WriteIndex(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	e.Release()
	indexData := readTestFile(t, indexPath)
	binPath := filepath.Join(dir, "chain-arm64-O1")

	open := func(path string) symstore.SymbolFile {
		f, err := os.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		st, _ := f.Stat()
		return symstore.SymbolFile{Name: path, ReaderAt: f, Size: st.Size(), Closer: f}
	}
	walk := func(files func() []symstore.SymbolFile) []string {
		syms := symstore.NewSymbols()
		defer syms.Close()
		syms.AddSource(symstore.SourceFunc(func(_ context.Context, id uuid.UUID, _ *archregs.Arch) ([]symstore.SymbolFile, error) {
			if id != u {
				return nil, symstore.ErrNoSymbols
			}
			return files(), nil
		}))
		return walkedFrames(t, syms)
	}
	got := walk(func() []symstore.SymbolFile { return []symstore.SymbolFile{open(indexPath), open(binPath)} })
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("index and binary from a source: the walk differs from the files on disk (-want +got):\n%s", diff)
	}
	got = walk(func() []symstore.SymbolFile {
		return []symstore.SymbolFile{{Name: "memory", ReaderAt: bytes.NewReader(indexData), Size: int64(len(indexData))}, open(binPath)}
	})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("index in memory and binary from a source: the walk differs (-want +got):\n%s", diff)
	}
	alone := walk(func() []symstore.SymbolFile { return []symstore.SymbolFile{open(indexPath)} })
	if len(alone) < 2 || len(want) < 2 || strings.Contains(alone[1], "compact unwind") || !strings.Contains(want[1], "compact unwind") {
		t.Errorf("frame 1 from the binary's tables = %q, from an index alone = %q; want compact unwind only with the binary", want[1:2], alone[1:2])
	}
	if alone[0] != want[0] {
		t.Errorf("frame 0 from an index alone = %q, want %q", alone[0], want[0])
	}
	wrong := walk(func() []symstore.SymbolFile {
		data := bytes.Clone(indexData)
		data[len(data)/2] ^= 0xff
		return []symstore.SymbolFile{{Name: "damaged", ReaderAt: bytes.NewReader(data[:len(data)-1]), Size: int64(len(data) - 1)}, open(binPath)}
	})
	if len(wrong) == 0 || !strings.Contains(wrong[1], "compact unwind") {
		t.Errorf("a damaged index beside the binary: %q; want the binary's walk and names", wrong)
	}
}

func readTestFile(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
