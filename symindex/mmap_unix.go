//go:build unix

package symindex

import (
	"fmt"
	"os"
	"syscall"
)

// mapping is an index file's bytes in memory.
type mapping interface {
	bytes() []byte
	close() error
}

// mmapped is a file mapped read-only. The file must not be truncated
// while it is mapped (the system would fault on the missing pages); index
// files are written once and replaced, never rewritten in place.
type mmapped struct{ data []byte }

func (m *mmapped) bytes() []byte { return m.data }
func (m *mmapped) close() error {
	if m.data == nil {
		return nil
	}
	err := syscall.Munmap(m.data)
	m.data = nil
	return err
}

// readBytes holds a file read into memory, for files too small to map.
type readBytes []byte

func (r readBytes) bytes() []byte { return r }
func (r readBytes) close() error  { return nil }

func openMapping(path string) (mapping, error) {
	// Refuse anything but a regular file before opening it: opening a
	// FIFO blocks until a writer comes.
	if st, err := os.Stat(path); err != nil {
		return nil, err
	} else if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	size := st.Size()
	if size < headerSize || size > 1<<40 || int64(int(size)) != size {
		// Too small to be an index (Parse says why) or to map.
		b, err := os.ReadFile(path)
		return readBytes(b), err
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("%s: mmap: %w", path, err)
	}
	return &mmapped{data: data}, nil
}
