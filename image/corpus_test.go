package image

import (
	"os"
	"path/filepath"
	"testing"
)

// corpusDir returns the shared Mach-O corpus (../shared/corpus next to the
// repository root), or skips the test when this checkout has none.
func corpusDir(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Skip("repository root not found; corpus tests need ../shared/corpus beside it")
		}
		dir = parent
	}
	c := filepath.Join(dir, "..", "shared", "corpus")
	if _, err := os.Stat(c); err != nil {
		t.Skipf("Mach-O corpus not present at %s (only on development machines): %v", c, err)
	}
	return c
}

// corpusFile returns the path of a corpus file, skipping when the corpus is
// absent.
func corpusFile(t testing.TB, rel string) string {
	t.Helper()
	return filepath.Join(corpusDir(t), rel)
}
