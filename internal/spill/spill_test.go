package spill

import (
	"bytes"
	"io"
	"os"
	"testing"
)

// TestBuffer: bytes within the bound stay in memory, those past it go
// to a file in the directory with what memory held, and both read back
// whole and at an offset; Close removes the file.
func TestBuffer(t *testing.T) {
	for _, tt := range []struct {
		name   string
		writes []int
		file   bool
	}{
		{"within the bound", []int{10, 20, 34}, false},
		{"past the bound", []int{10, 20, 35}, true},
		{"one large write", []int{1000}, true},
		{"nothing", nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			b := New(dir, 64)
			var want []byte
			for i, n := range tt.writes {
				p := bytes.Repeat([]byte{byte('a' + i)}, n)
				if got, err := b.Write(p); got != n || err != nil {
					t.Fatalf("Write(%d bytes) = %d, %v", n, got, err)
				}
				want = append(want, p...)
			}
			if b.Size() != int64(len(want)) {
				t.Errorf("Size = %d, want %d", b.Size(), len(want))
			}
			got, err := io.ReadAll(b.Reader())
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("Reader read %q, %v; want %q", got, err, want)
			}
			if len(want) > 5 {
				p := make([]byte, 3)
				if _, err := b.ReadAt(p, 5); err != nil || !bytes.Equal(p, want[5:8]) {
					t.Errorf("ReadAt(5) = %q, %v; want %q", p, err, want[5:8])
				}
			}
			files, _ := os.ReadDir(dir)
			if (len(files) == 1) != tt.file || len(files) > 1 {
				t.Errorf("%d files in the directory, want a file: %v", len(files), tt.file)
			}
			if err := b.Close(); err != nil {
				t.Error(err)
			}
			if files, _ := os.ReadDir(dir); len(files) != 0 {
				t.Errorf("after Close: %d files left", len(files))
			}
		})
	}
}
