//go:build linux || darwin || freebsd || netbsd || openbsd

package main

import (
	"os"
	"runtime"
	"syscall"
)

// peakRSS returns the process's peak resident set size in bytes, from the
// rusage wait4 returned.
func peakRSS(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" {
		return int64(ru.Maxrss) // bytes on macOS
	}
	return int64(ru.Maxrss) * 1024 // KiB elsewhere
}
