package crashreport

import "github.com/stackimage/stackimage/walker"

// A reported stack dump is what the walker reads.
var _ walker.Memory = (*StackDump)(nil)
