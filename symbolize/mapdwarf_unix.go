//go:build unix

package symbolize

import (
	"os"
	"syscall"
)

// mapFile maps the regular file at path read-only; nil for an empty file
// or one too large to map.
func mapFile(path string) (*mapping, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return nil, err
	}
	size := st.Size()
	if size <= 0 || size > 1<<40 || int64(int(size)) != size {
		return nil, nil
	}
	data, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	return &mapping{data: data}, nil
}

func unmap(data []byte) { syscall.Munmap(data) }
