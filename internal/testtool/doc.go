// Package testtool finds the external programs tests check our output
// with (lldb-16, chromium) and decides what their absence means.
//
// `make test` installs them first and sets STACKIMAGE_REQUIRE_TOOLS=1, so
// there a missing program fails the test: a check we own never passes by
// not running. A plain `go test` on a machine without them skips the test
// and says which package to install.
package testtool
