// Package mmapfile maps regular files read-only where the system has mmap
// and reads them where it has not. Index files and big DWARF files are
// read this way: the pages are shared with the page cache and only those
// touched are brought in.
package mmapfile

import (
	"fmt"
	"os"
)

// File is a file's bytes in memory, mapped or read. A File is safe for
// concurrent readers of Bytes; Close must come after the last of them.
type File struct {
	data   []byte
	mapped bool
}

// Bytes returns the file's contents; they must not be written to, and not
// used after Close.
func (f *File) Bytes() []byte { return f.data }

// Close releases the mapping; it is a no-op for a file that was read and
// on a second call.
func (f *File) Close() error {
	data, mapped := f.data, f.mapped
	f.data, f.mapped = nil, false
	if !mapped {
		return nil
	}
	return unmap(data)
}

// Map maps the regular file at path. It returns nil and no error when the
// file cannot be mapped here (no mmap on this system, an empty file, or
// one larger than the address space allows), so that the caller can read
// what it needs instead. Anything but a regular file is refused before it
// is opened: opening a FIFO blocks until a writer comes. The file must not
// be truncated while it is mapped: the system would fault on the missing
// pages.
func Map(path string) (*File, error) {
	f, size, err := openRegular(path)
	if err != nil || f == nil {
		return nil, err
	}
	defer f.Close()
	if size <= 0 || size > 1<<40 || int64(int(size)) != size {
		return nil, nil
	}
	data, err := mmap(f, int(size))
	if err != nil || data == nil {
		return nil, err
	}
	return &File{data: data, mapped: true}, nil
}

// Open maps the regular file at path, or reads it whole where it cannot be
// mapped.
func Open(path string) (*File, error) {
	if m, err := Map(path); m != nil || err != nil {
		return m, err
	}
	if _, _, err := statRegular(path); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return &File{data: data}, nil
}

// statRegular returns path's size, refusing anything but a regular file.
func statRegular(path string) (os.FileInfo, int64, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, 0, err
	}
	if !st.Mode().IsRegular() {
		return nil, 0, fmt.Errorf("%s: not a regular file", path)
	}
	return st, st.Size(), nil
}

// openRegular opens the regular file at path, checking it again once open
// (the path may have been replaced in between), and returns its size.
func openRegular(path string) (*os.File, int64, error) {
	if _, _, err := statRegular(path); err != nil {
		return nil, 0, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("%s: not a regular file", path)
	}
	if err != nil {
		f.Close()
		return nil, 0, err
	}
	return f, st.Size(), nil
}
