package symindex_test

import (
	"bytes"
	"crypto/sha256"
	"os"
	"path/filepath"
	"runtime"
	"testing"

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
