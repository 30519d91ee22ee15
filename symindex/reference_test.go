package symindex_test

import (
	"bytes"
	"crypto/sha256"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stackimage/stackimage/debuginfo"
	"github.com/stackimage/stackimage/internal/testcorpus"
	"github.com/stackimage/stackimage/symindex"
	"github.com/stackimage/stackimage/symstore"
)

// inputOf returns what symstore.Entry.WriteIndex writes for e.
func inputOf(e *symstore.Entry) symindex.Input {
	im := e.Image()
	in := symindex.Input{UUID: im.UUID, CPUType: im.CPUType, CPUSubtype: im.CPUSubtype,
		FileType: uint32(im.Type), Name: im.Name, Symbols: e.Tables, Debug: e.Debug()}
	for _, s := range im.Segments {
		in.Segments = append(in.Segments, symindex.Segment{Name: s.Name, Addr: s.Addr, Size: s.Size, Prot: s.Prot})
	}
	return in
}

// checkReference checks that the file Write made for e (data) holds the
// same bytes as the one the reference writer makes: one lookup per DWARF
// boundary, frames interned by value.
func checkReference(t testing.TB, e *symstore.Entry, data []byte) {
	t.Helper()
	var ref bytes.Buffer
	if err := symindex.WriteReference(&ref, inputOf(e)); err != nil {
		t.Fatalf("WriteReference: %v", err)
	}
	if !bytes.Equal(ref.Bytes(), data) {
		t.Errorf("Write made %d bytes (sha256 %x), the reference writer %d (sha256 %x)",
			len(data), sha256.Sum256(data), ref.Len(), sha256.Sum256(ref.Bytes()))
	}
}

// TestBigDSYMReference checks on the dSYM bench/bigdsym generates (over
// 200 MB of C++ DWARF, inline chains eight deep, 82,488 demangled names)
// that Write and the reference writer make the same bytes. Set
// STACKIMAGE_BIGDSYM to the DWARF file `go run ./bench/bigdsym` prints.
func TestBigDSYMReference(t *testing.T) {
	path := os.Getenv("STACKIMAGE_BIGDSYM")
	if path == "" {
		t.Skip("set STACKIMAGE_BIGDSYM to the DWARF file `go run ./bench/bigdsym` prints")
	}
	for _, images := range openImages(t, path) {
		e, _ := symstore.NewEntry(images...)
		var buf bytes.Buffer
		if err := e.WriteIndex(&buf); err != nil {
			t.Fatalf("WriteIndex: %v", err)
		}
		checkReference(t, e, buf.Bytes())
		t.Logf("%d bytes, sha256 %x", buf.Len(), sha256.Sum256(buf.Bytes()))
	}
}

// TestReferenceOneProcessor checks Write against the reference writer
// with GOMAXPROCS=1, where units are parsed and names demangled in order
// on one goroutine (the other tests run with the machine's processors),
// on the corpus's C++ crash.dSYM (skipped without the corpus).
func TestReferenceOneProcessor(t *testing.T) {
	file := dsymFile(filepath.Join(testcorpus.Dir(t), "symbolic/symbolic-testutils/fixtures/macos/crash.dSYM"))
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	for _, images := range openImages(t, file) {
		e, _ := symstore.NewEntry(images...)
		var buf bytes.Buffer
		if err := e.WriteIndex(&buf); err != nil {
			t.Fatalf("WriteIndex: %v", err)
		}
		checkReference(t, e, buf.Bytes())
	}
}

// TestReferenceTwoIndexes checks Write against the reference writer with
// two DWARF indexes whose addresses overlap (the dSYMs of two fixtures
// built for the same architecture): an address is answered by the first
// index that finds something there, the second filling what the first
// leaves out, so that Write merges the two indexes' steps.
func TestReferenceTwoIndexes(t *testing.T) {
	dir := fixtureDir(t)
	var debug []*debuginfo.Index
	var first *symstore.Entry
	for _, name := range []string{"chain-arm64-O1", "dwarf-arm64-O2"} {
		for _, images := range openImages(t, dsymFile(filepath.Join(dir, name+".dSYM"))) {
			e, _ := symstore.NewEntry(images...)
			if first == nil {
				first = e
			}
			debug = append(debug, e.Debug()...)
		}
	}
	if len(debug) != 2 {
		t.Fatalf("%d DWARF indexes, want 2", len(debug))
	}
	lo0, hi0, _ := debug[0].Bounds()
	lo1, hi1, _ := debug[1].Bounds()
	if lo1 >= hi0 || lo0 >= hi1 {
		t.Fatalf("the indexes cover [%#x, %#x) and [%#x, %#x): no overlap to merge", lo0, hi0, lo1, hi1)
	}
	in := inputOf(first)
	in.Debug = debug
	var got, want bytes.Buffer
	if err := symindex.Write(&got, in); err != nil {
		t.Fatalf("Write: %v", err)
	}
	if err := symindex.WriteReference(&want, in); err != nil {
		t.Fatalf("WriteReference: %v", err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Errorf("Write made %d bytes, the reference writer %d: they differ", got.Len(), want.Len())
	}
}
