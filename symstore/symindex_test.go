package symstore

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stackimage/stackimage/uuid"
)

// TestIndexFiles checks that Symbols answers a UUID from its index file,
// as the Mach-O files would, and falls back to the Mach-O files when the
// index file is damaged.
func TestIndexFiles(t *testing.T) {
	bin := filepath.Join("..", "fixtures", "bin", "chain-arm64-O1")
	dsym := filepath.Join(bin+".dSYM", "Contents", "Resources", "DWARF", "chain-arm64-O1")
	files := NewSymbols()
	for _, p := range []string{bin, dsym} {
		if err := files.AddFile(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	defer files.Close()
	uuids := files.UUIDs()
	if len(uuids) != 1 {
		t.Fatalf("UUIDs() = %v, want one", uuids)
	}
	u := uuids[0]
	fromFiles, err := files.Lookup(u)
	if err != nil || fromFiles == nil {
		t.Fatalf("Lookup(%s) = %v, %v", u, fromFiles, err)
	}
	var buf bytes.Buffer
	if err := fromFiles.WriteIndex(&buf); err != nil {
		t.Fatal(err)
	}

	good := filepath.Join(t.TempDir(), "arm64.symindex")
	if err := os.WriteFile(good, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	stored := NewSymbols()
	if err := stored.AddDir(context.Background(), filepath.Dir(good)); err != nil {
		t.Fatal(err)
	}
	e, err := stored.Lookup(u)
	if err != nil || e == nil || e.stored == nil {
		t.Fatalf("Lookup(%s) from the index = %+v, %v; want an entry made from the index", u, e, err)
	}
	if !e.HasDebugInfo() {
		t.Errorf("HasDebugInfo() = false for an index with line tables")
	}
	text, _ := fromFiles.Image().TextSegment()
	for a := text.Addr; a < text.Addr+text.Size; a += 2 {
		f := Frame{Address: a, LookupAddress: a}
		want := fromFiles.Resolve(f, a, ResolveOptions{})
		got := e.Resolve(f, a, ResolveOptions{})
		if len(got) != len(want) {
			t.Fatalf("Resolve(%#x) = %d frames, want %d", a, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("Resolve(%#x)[%d] = %+v, want %+v", a, i, got[i], want[i])
			}
		}
	}

	var addrs []uint64
	for a := text.Addr; a < text.Addr+text.Size; a += 2 {
		addrs = append(addrs, a)
	}
	checkSymbolBatch(t, e, addrs)
	checkSymbolBatch(t, fromFiles, addrs)

	// A damaged index is skipped with its reason; the Mach-O files answer.
	damaged := filepath.Join(t.TempDir(), "arm64.symindex")
	if err := os.WriteFile(damaged, buf.Bytes()[:buf.Len()-10], 0o644); err != nil {
		t.Fatal(err)
	}
	both := NewSymbols()
	defer both.Close()
	for _, p := range []string{damaged, bin} {
		if err := both.AddFile(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	if len(both.Skipped) != 1 || !strings.Contains(both.Skipped[0], "truncated") {
		t.Errorf("Skipped = %q, want the damaged index, truncated", both.Skipped)
	}
	e, err = both.Lookup(u)
	if err != nil || e == nil || e.stored != nil || len(e.Images) != 1 || e.Images[0].UUID != u {
		t.Fatalf("Lookup(%s) with a damaged index = %+v, %v; want the binary's entry", u, e, err)
	}
	var zero uuid.UUID
	if e.UUID == zero {
		t.Errorf("entry without UUID")
	}
}

// TestIndexResolveCPP checks, on a C++ dSYM of the corpus, that an entry
// made from its index resolves every address of __text (every 2nd byte)
// as the dSYM does, with names demangled and with NoDemangle: the index
// answers both from the names it stores, without demangling.
func TestIndexResolveCPP(t *testing.T) {
	dsym := filepath.Join(corpusDir(t), "symbolic/symbolic-testutils/fixtures/macos/crash.dSYM/Contents/Resources/DWARF/crash")
	files := NewSymbols()
	defer files.Close()
	if err := files.AddFile(context.Background(), dsym); err != nil {
		t.Fatal(err)
	}
	for _, u := range files.UUIDs() {
		fromFiles, err := files.Lookup(u)
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := fromFiles.WriteIndex(&buf); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(t.TempDir(), "x.symindex")
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		e, err := NewIndexEntry(path)
		if err != nil {
			t.Fatal(err)
		}
		text, ok := fromFiles.Image().Section("__TEXT", "__text")
		if !ok {
			t.Fatal("no __TEXT,__text")
		}
		mangled := 0
		// AppendResolve, as atos calls it, reusing one slice after a
		// frame it must keep.
		kept := Frame{Symbol: "kept"}
		reused := []Frame{kept}
		for _, opts := range []ResolveOptions{{}, {NoDemangle: true}} {
			for a := text.Addr; a < text.Addr+text.Size; a += 2 {
				f := Frame{Address: a, LookupAddress: a}
				want := fromFiles.Resolve(f, a, opts)
				got := e.Resolve(f, a, opts)
				if !slices.Equal(want, got) { // cmp.Diff only then: it is slow
					t.Fatalf("Resolve(%#x, %+v) mismatch (-dSYM +index):\n%s", a, opts, cmp.Diff(want, got))
				}
				reused = e.AppendResolve(reused[:1], f, a, opts)
				if reused[0] != kept || !slices.Equal(reused[1:], want) {
					t.Fatalf("AppendResolve(%#x, %+v) mismatch (-dSYM +index):\n%s", a, opts, cmp.Diff(append([]Frame{kept}, want...), reused))
				}
				for _, fr := range got {
					if fr.MangledSymbol != "" {
						mangled++
					}
				}
			}
		}
		if mangled == 0 {
			t.Errorf("no frame with a demangled name: the test compares nothing demangled")
		}
	}
}
