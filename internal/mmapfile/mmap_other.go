//go:build !unix

package mmapfile

import "os"

// Without mmap (Windows, plan9, wasm) nothing is mapped: Map returns nil
// and Open reads the file.
func mmap(*os.File, int) ([]byte, error) { return nil, nil }

func unmap([]byte) error { return nil }
