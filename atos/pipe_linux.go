package atos

import (
	"os"
	"syscall"
)

// fSetPipeSize is Linux's F_SETPIPE_SZ.
const fSetPipeSize = 1031

// bigPipeSize is the capacity asked for a pipe Answer reads or writes a
// batch through: the most an unprivileged process gets by default
// (/proc/sys/fs/pipe-max-size).
const bigPipeSize = 1 << 20

// enlargePipe grows the pipe rw is an end of, when it is an *os.File on
// a pipe, from Linux's default 64 KiB: 100k addresses are 1.2 MB in and
// 6 MB of answers out, and every 64 KiB the reader of one end waited for
// the writer of the other to be woken. Measured with bench/compare on
// cmd/go without DWARF, the batch took about a fifth less wall time
// (docs/bench.md). Failure (another system's limit) changes nothing and
// is not an error.
func enlargePipe(rw any) {
	f, ok := rw.(*os.File)
	if !ok {
		return
	}
	if st, err := f.Stat(); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		return
	}
	// Through SyscallConn, not Fd, which would make the file blocking.
	if c, err := f.SyscallConn(); err == nil {
		c.Control(func(fd uintptr) {
			syscall.Syscall(syscall.SYS_FCNTL, fd, fSetPipeSize, bigPipeSize)
		})
	}
}
