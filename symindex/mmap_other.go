//go:build !unix

package symindex

import (
	"fmt"
	"os"
)

// mapping is an index file's bytes in memory.
type mapping interface {
	bytes() []byte
	close() error
}

// readBytes holds a file read into memory: without mmap (Windows, plan9,
// wasm) the file is read whole.
type readBytes []byte

func (r readBytes) bytes() []byte { return r }
func (r readBytes) close() error  { return nil }

func openMapping(path string) (mapping, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file", path)
	}
	b, err := os.ReadFile(path)
	return readBytes(b), err
}
