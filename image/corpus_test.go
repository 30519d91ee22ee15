package image

import (
	"path/filepath"
	"testing"

	"github.com/stackimage/stackimage/internal/testcorpus"
)

// findCorpus returns the shared corpus directory; ok is false when this
// checkout has none.
func findCorpus() (dir string, ok bool) {
	dir, err := testcorpus.Find()
	return dir, err == nil
}

// corpusDir returns ../shared/corpus beside the repository, skipping the
// test when it is absent: a user's clone does not have it, CI does.
func corpusDir(tb testing.TB) string {
	tb.Helper()
	return testcorpus.Dir(tb)
}

// corpusFile returns the path of a corpus file, skipping when the corpus is
// absent.
func corpusFile(t testing.TB, rel string) string {
	t.Helper()
	return filepath.Join(corpusDir(t), rel)
}
