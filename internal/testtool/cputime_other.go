//go:build !unix

package testtool

import "time"

// CPUTime is 0 where the process's CPU time is not read: callers then
// report wall-clock figures alone.
func CPUTime() time.Duration { return 0 }
