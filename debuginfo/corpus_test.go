package debuginfo

import (
	"debug/macho"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// findCorpus returns /work/shared/corpus as seen from the repository:
// ../shared/corpus relative to the directory holding go.mod.
func findCorpus() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the package directory")
		}
		dir = parent
	}
	c := filepath.Join(dir, "..", "shared", "corpus")
	if _, err := os.Stat(c); err != nil {
		return "", fmt.Errorf("%s not found", c)
	}
	return c, nil
}

// corpusDir returns the corpus directory; tests skip when it is absent (a
// fresh clone does not have it).
func corpusDir(t testing.TB) string {
	t.Helper()
	c, err := findCorpus()
	if err != nil {
		t.Skipf("corpus absent: %v (see docs/debuginfo.md)", err)
	}
	return c
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
