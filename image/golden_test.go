package image

import (
	"encoding/binary"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite testdata/corpus.golden from the corpus")

// TestCorpusGolden describes every Mach-O file of the corpus (header,
// segments, sections, table sizes, function starts, exports, DWARF
// sections) and compares with testdata/corpus.golden. The golden file was
// written with `go test -run TestCorpusGolden -update ./image/` and checked
// against llvm-objdump-16 --macho (--private-headers, --section-headers,
// --function-starts, --exports-trie) for segments, sections, function
// starts and exports.
func TestCorpusGolden(t *testing.T) {
	dir := corpusDir(t)
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if isMachO(p) {
			paths = append(paths, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(paths)
	var b strings.Builder
	for _, p := range paths {
		rel, _ := filepath.Rel(dir, p)
		describeFile(&b, p, filepath.ToSlash(rel))
	}
	got := b.String()
	golden := filepath.Join("testdata", "corpus.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("corpus description differs from %s (-want +got):\n%s", golden, diff)
	}
}

// isMachO reports whether the file starts with a Mach-O or fat magic.
func isMachO(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var m [4]byte
	if _, err := f.Read(m[:]); err != nil {
		return false
	}
	switch binary.BigEndian.Uint32(m[:]) {
	case fatMagic, mhMagic, mhMagic64:
		return true
	}
	switch binary.LittleEndian.Uint32(m[:]) {
	case mhMagic, mhMagic64:
		return true
	}
	return false
}

func describeFile(b *strings.Builder, path, rel string) {
	f, err := Open(path)
	if err != nil {
		fmt.Fprintf(b, "%s: error: %s\n\n", rel, strings.ReplaceAll(err.Error(), path, rel))
		return
	}
	defer f.Close()
	fmt.Fprintf(b, "%s: fat=%v slices=%d\n", rel, f.Fat, len(f.Images))
	for _, im := range f.Images {
		describeImage(b, im)
	}
	b.WriteString("\n")
}

func describeImage(b *strings.Builder, im *Image) {
	fmt.Fprintf(b, "  slice %s cpu=%#x/%#x type=%d uuid=%s\n", im.ArchName(), im.CPUType, im.CPUSubtype, im.Type, im.UUID)
	for _, s := range im.Segments {
		fmt.Fprintf(b, "    segment %-14q vmaddr=%#x vmsize=%#x fileoff=%#x filesize=%#x prot=%d/%d\n",
			s.Name, s.Addr, s.Size, s.Offset, s.FileSize, s.Prot, s.MaxProt)
	}
	for _, s := range im.Sections {
		fmt.Fprintf(b, "    section %d %s,%s addr=%#x size=%#x offset=%#x flags=%#x\n",
			s.Index, s.Segment, s.Name, s.Addr, s.Size, s.Offset, s.Flags)
	}
	if raw, ok, err := im.Symtab(); err != nil {
		fmt.Fprintf(b, "    symtab error: %v\n", err)
	} else if ok {
		fmt.Fprintf(b, "    symtab nsyms=%d strsize=%d\n", raw.NSyms, len(raw.Strings))
	}
	if fs, err := im.FunctionStarts(); err != nil {
		fmt.Fprintf(b, "    function starts error: %v\n", err)
	} else if len(fs) > 0 {
		fmt.Fprintf(b, "    function starts n=%d first=%#x last=%#x\n", len(fs), fs[0], fs[len(fs)-1])
	}
	if ex, err := im.Exports(); err != nil {
		fmt.Fprintf(b, "    exports error: %v\n", err)
	} else {
		for i, e := range ex {
			if i == 8 {
				fmt.Fprintf(b, "    ... %d exports in all\n", len(ex))
				break
			}
			fmt.Fprintf(b, "    export %#x %s\n", e.Addr, e.Name)
		}
	}
	if dw, err := im.DWARFSections(); err != nil {
		fmt.Fprintf(b, "    dwarf error: %v\n", err)
	} else if len(dw) > 0 {
		var names []string
		for n, d := range dw {
			names = append(names, fmt.Sprintf("%s=%d", n, len(d)))
		}
		sort.Strings(names)
		fmt.Fprintf(b, "    dwarf %s\n", strings.Join(names, " "))
	}
}
