// Package buildversion reads what the Go toolchain recorded in a binary
// (runtime/debug.BuildInfo) and writes the lines "stackimage version"
// prints: the module version, the commit and whether the tree had
// uncommitted changes, and the Go version.
package buildversion
