//go:build linux || darwin || freebsd || netbsd || openbsd

package main

import (
	"os"
	"runtime"
	"syscall"
)

// peakRSSMB returns a finished child's peak resident set size in MB, from
// the rusage wait4 returned.
func peakRSSMB(ps *os.ProcessState) float64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0
	}
	if runtime.GOOS == "darwin" {
		return float64(ru.Maxrss) / 1e6 // bytes on macOS
	}
	return float64(ru.Maxrss) * 1024 / 1e6 // KiB elsewhere
}
