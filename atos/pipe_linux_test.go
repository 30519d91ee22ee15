package atos

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// fGetPipeSize is Linux's F_GETPIPE_SZ.
const fGetPipeSize = 1032

func pipeSize(t *testing.T, f *os.File) int {
	t.Helper()
	var size uintptr
	var errno syscall.Errno
	c, err := f.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	c.Control(func(fd uintptr) {
		size, _, errno = syscall.Syscall(syscall.SYS_FCNTL, fd, fGetPipeSize, 0)
	})
	if errno != 0 {
		t.Fatalf("F_GETPIPE_SZ: %v", errno)
	}
	return int(size)
}

// TestEnlargePipe checks that a pipe grows to bigPipeSize (unless the
// system's limit is lower and we may not pass it), and that other files
// and writers are left alone.
func TestEnlargePipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	before := pipeSize(t, w)
	enlargePipe(w)
	// Above the system's limit only a privileged process may go, and
	// the pipe then stays as it was.
	want := bigPipeSize
	if b, err := os.ReadFile("/proc/sys/fs/pipe-max-size"); err == nil && os.Geteuid() != 0 {
		if limit, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && limit < want {
			want = before
		}
	}
	if got := pipeSize(t, r); got < want {
		t.Errorf("pipe of %d bytes after enlargePipe (before: %d); want at least %d", got, before, want)
	}

	f, err := os.Create(filepath.Join(t.TempDir(), "file"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	enlargePipe(f) // a regular file: nothing to do, nothing to fail
	enlargePipe(&strings.Builder{})
	if _, err := f.WriteString("still writable"); err != nil {
		t.Errorf("write after enlargePipe on a file: %v", err)
	}
}
