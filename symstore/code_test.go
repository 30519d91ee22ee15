package symstore

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stackimage/stackimage/image"
)

// TestCodeCacheBound reads more pages than an entry's cache may hold: the
// cache stays bounded and every read still returns the file's bytes.
func TestCodeCacheBound(t *testing.T) {
	path := filepath.Join("..", "fixtures", "bin", "chain-arm64-O0")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := image.NewFile(bytes.NewReader(data), path)
	if err != nil {
		t.Fatal(err)
	}
	e, err := NewEntry(f.Images[0])
	if err != nil {
		t.Fatal(err)
	}
	// The fixture's __TEXT is at vmaddr 0x100000000, file offset 0, 16 KiB
	// (llvm-objdump --macho --private-headers).
	const text, textSize = 0x100000000, 0x4000
	e.code.limit = 2
	for round := 0; round < 3; round++ {
		for off := uint64(0x10); off < textSize; off += codePageSize {
			code, ok, err := e.Code("__TEXT", text+off)
			if err != nil || !ok || len(code) < 4 || !bytes.Equal(code[:4], data[off:off+4]) {
				t.Fatalf("Code(__TEXT, %#x) = % x, %v, %v; want % x", text+off, code[:min(4, len(code))], ok, err, data[off:off+4])
			}
			e.code.mu.Lock()
			n := len(e.code.pages)
			e.code.mu.Unlock()
			if n > e.code.limit {
				t.Fatalf("the code cache holds %d pages, want at most %d", n, e.code.limit)
			}
		}
	}
	if _, ok, err := e.Code("__TEXT", text+textSize+8); ok || err != nil {
		t.Errorf("Code(__TEXT past its end) = %v, %v; want no code and no error", ok, err)
	}
}
