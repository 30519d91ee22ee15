// Package spill keeps bytes in memory up to a bound and in a temporary
// file past it, so that a large request body or answer costs disk, not
// memory, and a small one costs no file.
package spill

import (
	"errors"
	"io"
	"os"
	"slices"
)

// Buffer is bytes written in order and read back at any offset: in
// memory while they fit within its bound, in a temporary file once they
// do not. Close removes the file. Writes are not safe for concurrent
// use; once they are done, ReadAt is (a parser may read at several
// offsets at once).
type Buffer struct {
	dir       string
	maxMemory int
	mem       []byte
	file      *os.File
	size      int64
}

// New makes a Buffer keeping at most maxMemory bytes in memory; its file
// goes in dir ("" for the system's temporary directory).
func New(dir string, maxMemory int) *Buffer {
	return &Buffer{dir: dir, maxMemory: maxMemory}
}

// Write appends p, moving what memory held into a new file at the first
// write past the bound.
func (b *Buffer) Write(p []byte) (int, error) {
	if b.file == nil && len(b.mem)+len(p) > b.maxMemory {
		if err := b.spill(); err != nil {
			return 0, err
		}
	}
	if b.file == nil {
		b.mem = append(b.mem, p...)
		b.size += int64(len(p))
		return len(p), nil
	}
	n, err := b.file.Write(p)
	b.size += int64(n)
	return n, err
}

// ReadFrom appends what r holds until it ends, reading straight into
// memory while the bytes fit (io.Copy would allocate a buffer of its own
// for every body) and into the file once they do not.
func (b *Buffer) ReadFrom(r io.Reader) (int64, error) {
	var total int64
	for b.file == nil {
		if cap(b.mem)-len(b.mem) < minRead {
			b.mem = slices.Grow(b.mem, max(len(b.mem), 4*minRead))
		}
		n, err := r.Read(b.mem[len(b.mem):cap(b.mem)])
		b.mem = b.mem[:len(b.mem)+n]
		b.size += int64(n)
		total += int64(n)
		if len(b.mem) > b.maxMemory {
			if err := b.spill(); err != nil {
				return total, err
			}
		}
		if err == io.EOF {
			return total, nil
		}
		if err != nil {
			return total, err
		}
	}
	n, err := io.Copy(b.file, r)
	b.size += n
	return total + n, err
}

// minRead is the least room ReadFrom reads into.
const minRead = 512

// spill moves what memory holds into a new file.
func (b *Buffer) spill() error {
	f, err := os.CreateTemp(b.dir, "spill-*")
	if err != nil {
		return err
	}
	b.file = f
	_, err = f.Write(b.mem)
	b.mem = nil
	return err
}

// Size is the bytes written.
func (b *Buffer) Size() int64 { return b.size }

// ReadAt reads the bytes written at off.
func (b *Buffer) ReadAt(p []byte, off int64) (int, error) {
	if b.file != nil {
		return b.file.ReadAt(p, off)
	}
	if off < 0 {
		return 0, errors.New("spill: negative offset")
	}
	if off >= int64(len(b.mem)) {
		return 0, io.EOF
	}
	n := copy(p, b.mem[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// Reader reads the bytes written from the start.
func (b *Buffer) Reader() io.Reader { return io.NewSectionReader(b, 0, b.size) }

// Close lets go of the bytes and removes the file.
func (b *Buffer) Close() error {
	b.mem = nil
	if b.file == nil {
		return nil
	}
	err := b.file.Close()
	os.Remove(b.file.Name())
	b.file = nil
	return err
}
