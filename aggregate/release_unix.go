//go:build darwin || freebsd || linux || netbsd || openbsd

package aggregate

import "golang.org/x/sys/unix"

// releaseMapped tells the system that the whole pages of
// mapped[from:to], a part of a mapped file already read, are not needed
// again: they leave the process's resident memory (the file stays in the
// page cache), so that reading a file of 500 MB does not add 500 MB to
// it. A page read again after is read from the file again. (The
// standard library's syscall has madvise on Linux only.)
func releaseMapped(mapped []byte, from, to int) {
	page := unix.Getpagesize() // the mapping starts at a page
	from = (from + page - 1) / page * page
	to = to / page * page
	if to > from {
		_ = unix.Madvise(mapped[from:to], unix.MADV_DONTNEED) // advice: a failure changes nothing read
	}
}
