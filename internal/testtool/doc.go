// Package testtool finds the external programs tests check our output
// with (lldb-16, chromium) and decides what their absence means.
//
// `make test` installs them first and sets STACKIMAGE_REQUIRE_TOOLS=1, so
// there a missing program fails the test: a check we own never passes by
// not running. A plain `go test` on a machine without them skips the test
// and says which package to install.
//
// It also holds what several packages' tests share: the seeds of
// programs generated afresh (FreshSeed) and a heap count for allocation
// budgets that a garbage collection cannot inflate (HeapAllocated).
package testtool
