package symindex_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stackimage/stackimage/internal/testcorpus"
	"github.com/stackimage/stackimage/symstore"
)

// TestLineRanges checks that a lookup finds the range a plain decoding of
// its line block finds, at every range start and one byte either side
// (the edges of the blocks and of their search buckets among them), in
// the fixtures' indexes and the darwin cmd/go build's when it is there.
func TestLineRanges(t *testing.T) {
	dir := fixtureDir(t)
	entries, _ := os.ReadDir(dir)
	var paths []string
	for _, e := range entries {
		if !e.IsDir() && !strings.Contains(e.Name(), ".") {
			paths = append(paths, filepath.Join(dir, e.Name()))
			if d := dsymFile(filepath.Join(dir, e.Name()+".dSYM")); d != "" {
				paths = append(paths, d)
			}
		}
	}
	if bin, err := testcorpus.GoDarwinBinary(); err == nil && !testing.Short() {
		paths = append(paths, bin)
	}
	total := 0
	for _, images := range openImages(t, paths...) {
		e, _ := symstore.NewEntry(images...)
		ix, _ := roundTrip(t, e)
		n, err := ix.CheckLineRanges()
		if err != nil {
			t.Errorf("%s: %v", images[0].UUID, err)
		}
		total += n
	}
	if total == 0 {
		t.Fatal("no line ranges checked")
	}
	t.Logf("%d addresses", total)
}
