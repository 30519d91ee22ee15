package image

import "github.com/stackimage/stackimage/walker"

// A List tells the walker which addresses are code, and walker's Memory is
// what FromMemory reads.
var (
	_ walker.CodeChecker = (*List)(nil)
	_ Memory             = walker.Memory(nil)
)
