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
	"github.com/stackimage/stackimage/unwind"
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

// TestCorpusUnwindInfo reads the __unwind_info of the ld64-linked images of
// the real-world corpus listed in testdata/corpus.list and compares every
// entry, its end, personality and LSDA with llvm-objdump-16's listing
// (testdata/corpus); every encoding must translate (or defer to DWARF),
// and Frame0Row at each function's first instruction must give the
// call-site state.
func TestCorpusUnwindInfo(t *testing.T) {
	dir := testcorpus.Dir(t)
	list, err := os.ReadFile(filepath.Join("testdata", "corpus.list"))
	if err != nil {
		t.Fatal(err)
	}
	entryLine := regexp.MustCompile(`^\s+\[\d+\]: function offset=0x([0-9a-f]+), encoding(?:\[\d+\])?=0x([0-9a-f]+)$`)
	lsdaLine := regexp.MustCompile(`^\s+\[\d+\]: function offset=0x([0-9a-f]+), LSDA offset=0x([0-9a-f]+)$`)
	persLine := regexp.MustCompile(`^\s+personality\[(\d+)\]: 0x([0-9a-f]+)$`)
	sentinelLine := regexp.MustCompile(`^\s+\[\d+\]: function offset=0x([0-9a-f]+), 2nd level page offset=0x00000000,`)
	hex := func(s string) uint32 { v, _ := strconv.ParseUint(s, 16, 32); return uint32(v) }
	for _, rel := range strings.Split(strings.TrimSpace(string(list)), "\n") {
		if strings.HasPrefix(rel, "#") {
			continue
		}
		name := filepath.Base(rel)
		t.Run(name, func(t *testing.T) {
			f, err := macho.Open(filepath.Join(dir, rel))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			arch, err := archregs.ByCPU(uint32(f.Cpu), f.SubCpu)
			if err != nil {
				t.Fatal(err)
			}
			_, data := section(t, f, "__TEXT", "__unwind_info")
			table, err := Parse(data)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			text := f.Segment("__TEXT")
			textData, err := text.Data()
			if err != nil {
				t.Fatal(err)
			}
			code := codeAt{0, textData} // the segment starts the image
			listing, err := os.ReadFile(filepath.Join("testdata", "corpus", name+".unwind_info.txt"))
			if err != nil {
				t.Fatal(err)
			}
			type want struct{ start, enc uint32 }
			var wants []want
			lsdas := map[uint32]uint32{}
			personalities := map[uint32]uint32{}
			var end uint32
			for _, l := range strings.Split(string(listing), "\n") {
				if m := entryLine.FindStringSubmatch(l); m != nil {
					wants = append(wants, want{hex(m[1]), hex(m[2])})
				} else if m := lsdaLine.FindStringSubmatch(l); m != nil {
					lsdas[hex(m[1])] = hex(m[2])
				} else if m := persLine.FindStringSubmatch(l); m != nil {
					n, _ := strconv.Atoi(m[1])
					personalities[uint32(n)] = hex(m[2])
				} else if m := sentinelLine.FindStringSubmatch(l); m != nil {
					end = hex(m[1])
				}
			}
			if len(wants) == 0 {
				t.Fatal("no entries in the listing")
			}
			entryRow := unwind.Row{RA: arch.DWARFRA, CFA: unwind.CFA{Reg: arch.DWARFSP}}
			if arch.CPUType == archregs.CPUTypeX86_64 || arch.CPUType == archregs.CPUTypeX86 {
				entryRow.CFA.Offset = int64(arch.PtrSize)
				entryRow.SetRule(arch.DWARFRA, saved(-int64(arch.PtrSize)))
			}
			counts := map[string]int{}
			for i, w := range wants {
				e, err := table.Lookup(w.start)
				if err != nil {
					t.Errorf("Lookup(%#x): %v", w.start, err)
					continue
				}
				wantEnd := end
				if i+1 < len(wants) {
					wantEnd = wants[i+1].start
				}
				want := Entry{FuncStart: w.start, FuncEnd: wantEnd, Encoding: w.enc,
					Personality: personalities[w.enc>>28&3], Off: e.Off}
				if w.enc&EncodingHasLSDA != 0 {
					want.LSDA = lsdas[w.start]
				}
				if e != want {
					t.Errorf("Lookup(%#x) = %+v, want %+v", w.start, e, want)
				}
				row, err := RowFor(arch, e, code)
				var ue *unwind.Error
				switch {
				case errors.As(err, &ue):
					t.Errorf("RowFor(%#08x) of %#x: %v", e.Encoding, e.FuncStart, err)
					continue
				case errors.Is(err, ErrDWARF):
					counts["dwarf"]++
				case errors.Is(err, ErrNoInfo):
					counts["none"]++
				case err != nil:
					t.Errorf("RowFor(%#08x) of %#x: %v", e.Encoding, e.FuncStart, err)
					continue
				default:
					counts["compact"]++
					if row.CFA.Reg != arch.DWARFSP && row.CFA.Reg != arch.DWARFFP || row.CFA.Offset < 0 {
						t.Errorf("RowFor(%#08x) of %#x: CFA r%d%+d", e.Encoding, e.FuncStart, row.CFA.Reg, row.CFA.Offset)
					}
					// The prologue, decoded to its end, builds the frame
					// the linker's encoding describes.
					if pro, ok := prologueRow(arch, e, code); ok {
						counts["prologue agrees"]++
						if d := diffRows(pro, row, false); d != "" {
							t.Errorf("prologue of %#x (encoding %#08x): %s", e.FuncStart, e.Encoding, d)
						}
					}
				}
				// At the first instruction nothing is pushed yet (a Thumb
				// function's start has bit 0 set, which Frame0Row reads).
				got, ok, err := Frame0Row(arch, e, e.FuncStart, code)
				if err != nil || !ok {
					t.Errorf("Frame0Row(%#x) = ok %v, %v; want the call-site row", e.FuncStart, ok, err)
				} else if d := diffRows(got, entryRow, false); d != "" {
					t.Errorf("Frame0Row(%#x): %s", e.FuncStart, d)
				}
			}
			t.Logf("%s: %d entries: %v", arch.Name, len(wants), counts)
		})
	}
}

// prologueRow decodes e's prologue to its first non-prologue instruction
// and returns the frame it built; false when it decodes no instruction.
func prologueRow(arch *archregs.Arch, e Entry, code CodeReader) (unwind.Row, bool) {
	start := e.FuncStart
	thumb := arch.CPUType == archregs.CPUTypeARM && start&1 != 0
	if thumb {
		start &^= 1
	}
	d := decoderFor(arch, thumb)
	pro, ok := readCode(code, start, min(e.FuncEnd, start+maxPrologueBytes))
	if !ok {
		return unwind.Row{}, false
	}
	s := d.entryState()
	at := 0
	for at < len(pro) {
		n, ok := d.prologue(&s, pro[at:])
		if !ok {
			break
		}
		at += n
	}
	return s.row(d), at > 0
}
