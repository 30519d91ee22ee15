package image

import (
	"os"
	"path/filepath"
	"testing"
)

// findCorpus returns the shared Mach-O corpus: ../shared/corpus beside the
// repository root, found by walking up from the package directory to
// go.mod. ok is false when this checkout has none.
func findCorpus() (dir string, ok bool) {
	dir, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
	c := filepath.Join(dir, "..", "shared", "corpus")
	if _, err := os.Stat(c); err != nil {
		return "", false
	}
	return c, true
}

// corpusDir returns the corpus directory or skips the test.
func corpusDir(t testing.TB) string {
	t.Helper()
	c, ok := findCorpus()
	if !ok {
		t.Skip("Mach-O corpus not present at ../shared/corpus beside the repository (only on development machines)")
	}
	return c
}

// corpusFile returns the path of a corpus file, skipping when the corpus is
// absent.
func corpusFile(t testing.TB, rel string) string {
	t.Helper()
	return filepath.Join(corpusDir(t), rel)
}
