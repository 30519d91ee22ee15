package compactunwind

import (
	"debug/macho"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/internal/testcorpus"
)

// TestPLCrashReporterCorpus decodes the __unwind_info of PLCrashReporter's
// compact unwind test binaries and compares every entry with the
// llvm-objdump-16 listing in testdata/plcrash, and with what
// PLCrashReporter's own tests (PLCrashAsyncCompactUnwindEncodingTests.m)
// expect: the encoding at PC 1 is the common one, at PC 2 the page's own,
// at PC 10 the regular page's, each a DWARF (x86) encoding whose offset is
// the PC.
func TestPLCrashReporterCorpus(t *testing.T) {
	dir := filepath.Join(testcorpus.Dir(t), "plcrashreporter/Resources/Tests/PLCrashAsyncCompactUnwindEncodingTests")
	entryLine := regexp.MustCompile(`^\s+\[\d+\]: function offset=0x([0-9a-f]+), encoding(?:\[\d+\])?=0x([0-9a-f]+)$`)
	for _, file := range []string{"test.ios", "test.macosx"} {
		fat, err := macho.OpenFat(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		defer fat.Close()
		for _, fa := range fat.Arches {
			arch, err := archregs.ByCPU(uint32(fa.Cpu), fa.SubCpu)
			if err != nil {
				t.Fatal(err)
			}
			name := map[uint32]string{archregs.CPUSubtypeARMV7: "armv7", 11: "armv7s"}[fa.SubCpu&0xff]
			if arch.CPUType != archregs.CPUTypeARM {
				name = arch.Name
			}
			t.Run(file+"/"+name, func(t *testing.T) {
				_, data := section(t, fa.File, "__TEXT", "__unwind_info")
				table, err := Parse(data)
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				listing, err := os.ReadFile(filepath.Join("testdata", "plcrash", file+"."+name+".unwind_info.txt"))
				if err != nil {
					t.Fatal(err)
				}
				n := 0
				for _, l := range strings.Split(string(listing), "\n") {
					m := entryLine.FindStringSubmatch(l)
					if m == nil {
						continue
					}
					n++
					start, _ := strconv.ParseUint(m[1], 16, 32)
					enc, _ := strconv.ParseUint(m[2], 16, 32)
					e, err := table.Lookup(uint32(start))
					if err != nil || e.FuncStart != uint32(start) || e.Encoding != uint32(enc) {
						t.Errorf("Lookup(%#x) = start %#x encoding %#08x, %v; want %#x %#08x", start, e.FuncStart, e.Encoding, err, start, enc)
					}
				}
				if n != 3 {
					t.Errorf("%d entries in the listing, want 3", n)
				}
				for _, pc := range []uint32{1, 2, 10} {
					e, err := table.Lookup(pc)
					if err != nil {
						t.Errorf("Lookup(%d): %v", pc, err)
						continue
					}
					if want := 0x04000000 | pc; e.Encoding != want {
						t.Errorf("Lookup(%d).Encoding = %#08x, want %#08x", pc, e.Encoding, want)
					}
					_, err = RowFor(arch, e, nil)
					off, isDWARF := e.DWARFOffset(arch)
					switch {
					case arch.CPUType == archregs.CPUTypeARM64:
						// Mode 4 is a frame on arm64.
						if err != nil || isDWARF {
							t.Errorf("RowFor(arm64, %#08x) = %v, DWARF %v; want a frame row", e.Encoding, err, isDWARF)
						}
					case !errors.Is(err, ErrDWARF) || !isDWARF || off != pc:
						t.Errorf("RowFor(%s, %#08x) = %v, DWARF offset %#x %v; want ErrDWARF at %#x", arch.Name, e.Encoding, err, off, isDWARF, pc)
					}
				}
				if _, err := table.Lookup(0); err != ErrNotFound {
					t.Errorf("Lookup(0) error = %v, want ErrNotFound", err)
				}
			})
		}
	}
}
