//go:build linux || darwin || freebsd || netbsd || openbsd

package benchkit

import (
	"os"
	"runtime"
	"syscall"
)

// PeakRSS returns the process's peak resident set size in bytes, from the
// rusage wait4 returned.
func PeakRSS(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" {
		return int64(ru.Maxrss) // bytes on macOS
	}
	return int64(ru.Maxrss) * 1024 // KiB elsewhere
}
