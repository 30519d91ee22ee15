package symtab

import (
	"testing"

	"github.com/stackimage/stackimage/internal/testcorpus"
)

// corpusDir returns ../shared/corpus beside the repository, skipping the
// test when it is absent: a user's clone does not have it, CI does.
func corpusDir(tb testing.TB) string {
	tb.Helper()
	return testcorpus.Dir(tb)
}

// goDarwinBinary returns a GOOS=darwin GOARCH=arm64 build of cmd/go (about
// 20k symbols), built once per toolchain version into the user's cache.
func goDarwinBinary(tb testing.TB) string {
	path, err := testcorpus.GoDarwinBinary()
	if err != nil {
		tb.Fatal(err)
	}
	return path
}
