//go:build !(darwin || freebsd || linux || netbsd || openbsd)

package aggregate

import (
	"errors"
	"os"
)

// mapFile is not done on this system: stream files are read.
func mapFile(f *os.File, size int64) ([]byte, func() error, error) {
	return nil, nil, errors.ErrUnsupported
}

func releaseMapped(mapped []byte, from, to int) {}
