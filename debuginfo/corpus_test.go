package debuginfo

import (
	"debug/macho"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stackimage/stackimage/internal/testcorpus"
)

// findCorpus returns the shared corpus directory, or why there is none.
func findCorpus() (string, error) { return testcorpus.Find() }

// corpusDir returns ../shared/corpus beside the repository, skipping the
// test when it is absent: a user's clone does not have it, CI does.
func corpusDir(tb testing.TB) string {
	tb.Helper()
	return testcorpus.Dir(tb)
}

// corpusFile returns the path of a corpus file.
func corpusFile(t testing.TB, rel string) string {
	t.Helper()
	return filepath.Join(corpusDir(t), filepath.FromSlash(rel))
}

// dwarfSections extracts the __DWARF sections of a Mach-O file (the slice
// for cpu when the file is fat) keyed as image.DWARFSections keys them. It
// uses the standard library's debug/macho so that these tests do not depend
// on the image package.
func dwarfSections(t testing.TB, path string, cpu macho.Cpu) map[string][]byte {
	t.Helper()
	var f *macho.File
	if ff, err := macho.OpenFat(path); err == nil {
		defer ff.Close()
		for _, a := range ff.Arches {
			if a.Cpu == cpu {
				f = a.File
			}
		}
		if f == nil {
			t.Fatalf("%s: no %v slice", path, cpu)
		}
	} else {
		f, err = macho.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
	}
	secs := make(map[string][]byte)
	for _, s := range f.Sections {
		if s.Seg != "__DWARF" || !strings.HasPrefix(s.Name, "__debug_") {
			continue
		}
		b, err := s.Data()
		if err != nil {
			t.Fatalf("%s: %s: %v", path, s.Name, err)
		}
		secs[strings.TrimPrefix(s.Name, "__")] = b
	}
	return secs
}
