//go:build !unix

package swiftdemangle

import "time"

func cpuTime() time.Duration { return 0 }
