//go:build unix

package testtool

import (
	"syscall"
	"time"
)

// CPUTime is the CPU time this process has used, user and system. A
// benchmark reports throughput per CPU second as well as per wall second:
// on a shared machine the wall clock also counts other processes' turns.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
