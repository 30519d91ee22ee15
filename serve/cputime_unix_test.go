//go:build unix

package serve

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time this process has used, user and system. The
// benchmark reports throughput per CPU second as well as per wall second:
// on a shared machine the wall clock also counts other processes' turns.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
