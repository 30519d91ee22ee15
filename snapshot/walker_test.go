package snapshot

import "github.com/stackimage/stackimage/walker"

// A snapshot's memory is what the walker reads.
var _ walker.Memory = (*Regions)(nil)
