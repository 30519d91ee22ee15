//go:build darwin || freebsd || linux || netbsd || openbsd

package aggregate

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// mapFile maps size bytes of f, read-only, and returns them with the
// function that unmaps them. A stream file is then read in place: no
// read() copies it into the process, no buffer holds its lines.
func mapFile(f *os.File, size int64) ([]byte, func() error, error) {
	if size <= 0 || int64(int(size)) != size {
		return nil, nil, fmt.Errorf("cannot map %d bytes", size)
	}
	conn, err := f.SyscallConn()
	if err != nil {
		return nil, nil, err
	}
	var data []byte
	var mapErr error
	if err := conn.Control(func(fd uintptr) {
		data, mapErr = unix.Mmap(int(fd), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	}); err != nil {
		return nil, nil, err
	}
	if mapErr != nil {
		return nil, nil, mapErr
	}
	return data, func() error { return unix.Munmap(data) }, nil
}

// releaseMapped tells the system that the whole pages of
// mapped[from:to], a part of a mapped file already read, are not needed
// again: they leave the process's resident memory (the file stays in the
// page cache), so that reading a file of 500 MB does not add 500 MB to
// it. A page read again after is read from the file again.
func releaseMapped(mapped []byte, from, to int) {
	page := unix.Getpagesize() // the mapping starts at a page
	from = (from + page - 1) / page * page
	to = to / page * page
	if to > from {
		_ = unix.Madvise(mapped[from:to], unix.MADV_DONTNEED) // advice: a failure changes nothing read
	}
}
