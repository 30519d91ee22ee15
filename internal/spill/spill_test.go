package spill

import (
	"bytes"
	"errors"
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

// TestReadFrom: a stream read whole, in memory within the bound and into
// a file past it, equal to what Write would keep, at every size around
// the bound and with reads of any length; a reader's error is returned
// with what was read before it.
func TestReadFrom(t *testing.T) {
	const bound = 4096
	for _, size := range []int{0, 1, 511, 512, bound - 1, bound, bound + 1, 3 * bound, 100_000} {
		for _, chunk := range []int{1, 7, 512, 1 << 20} {
			dir := t.TempDir()
			want := make([]byte, size)
			for i := range want {
				want[i] = byte(i * 7)
			}
			b := New(dir, bound)
			n, err := b.ReadFrom(&chunked{data: want, chunk: chunk})
			if n != int64(size) || err != nil || b.Size() != int64(size) {
				t.Fatalf("size %d, reads of %d: ReadFrom = %d, %v, Size %d", size, chunk, n, err, b.Size())
			}
			got, err := io.ReadAll(b.Reader())
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("size %d, reads of %d: read back %d bytes, %v", size, chunk, len(got), err)
			}
			files, _ := os.ReadDir(dir)
			if (len(files) == 1) != (size > bound) {
				t.Errorf("size %d: %d files, want one only past the bound", size, len(files))
			}
			b.Close()
		}
	}
	failing := errors.New("connection reset")
	b := New(t.TempDir(), bound)
	defer b.Close()
	n, err := b.ReadFrom(io.MultiReader(bytes.NewReader(make([]byte, 100)), &erring{failing}))
	if n != 100 || !errors.Is(err, failing) {
		t.Errorf("ReadFrom of a failing stream = %d, %v; want 100 and its error", n, err)
	}
}

// chunked reads its data at most chunk bytes at a time.
type chunked struct {
	data  []byte
	chunk int
}

func (c *chunked) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), c.chunk)], c.data)
	c.data = c.data[n:]
	return n, nil
}

type erring struct{ err error }

func (e *erring) Read([]byte) (int, error) { return 0, e.err }
