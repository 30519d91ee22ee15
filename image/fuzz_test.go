package image

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stackimage/stackimage/internal/hostile"
)

// FuzzOpen opens arbitrary bytes as a Mach-O file, thin or fat, and reads
// every table: errors are fine, panics and unbounded allocations are not;
// the reads must keep the allocation budget of internal/hostile.
// It is seeded with the synthetic file and, when the corpus is present,
// real small files of every kind.
func FuzzOpen(f *testing.F) {
	f.Add(synthMachO())
	fat := []byte{0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 1, 1, 0, 0, 12, 0, 0, 0, 0, 0, 0, 0, 28, 0, 0, 1, 0x60, 0, 0, 0, 0}
	f.Add(append(fat, synthMachO()...))
	if dir, ok := findCorpus(); ok {
		for _, p := range []string{
			"object-testfiles/macho/static-x86",
			"object-testfiles/macho/base-aarch64.o",
			"object-testfiles/macho/reloc-arm.o",
			"object-testfiles/macho/fixup-dyldinfo.dylib",
			"object-testfiles/macho/imports-dyldinfo.bundle",
			"go-debug-macho/clang-386-darwin.obj",
			"go-debug-macho/gcc-amd64-darwin-exec-debug",
			"plcrashreporter/Resources/Tests/PLCrashAsyncCompactUnwindEncodingTests/test.sim",
			"pprof/internal/binutils/testdata/lib_mac_64",
		} {
			if data, err := os.ReadFile(filepath.Join(dir, p)); err == nil {
				f.Add(data)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		hostile.Budget(t, int64(len(data)), func() { exercise(data) })
		// The same bytes as captured memory: the header at a slid address.
		if f, err := NewFile(bytes.NewReader(data), "input"); err == nil && !f.Fat {
			mem := &testMemory{}
			mem.add(0x200000000, data)
			if im, err := FromMemory(mem, 0x200000000, "mem"); err == nil {
				im.Symtab()
				im.FunctionStarts()
				im.Exports()
				im.DWARFSections()
			}
		}
	})
}
