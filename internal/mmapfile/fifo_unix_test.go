//go:build unix

package mmapfile

import (
	"path/filepath"
	"syscall"
)

func makeFIFO(dir string) (string, bool) {
	path := filepath.Join(dir, "fifo")
	return path, syscall.Mkfifo(path, 0o644) == nil
}
