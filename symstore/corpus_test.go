package symstore

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
