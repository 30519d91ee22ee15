//go:build !unix

package serve

import "time"

func cpuTime() time.Duration { return 0 }
