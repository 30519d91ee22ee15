package compactunwind

import (
	"debug/macho"
	"encoding/binary"
	"errors"
	"path/filepath"
	"testing"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/internal/testcorpus"
	"github.com/stackimage/stackimage/unwind"
)

// FuzzParse parses the input as __unwind_info and as __compact_unwind,
// looks up offsets taken from the input and around its functions, and
// translates what it finds into rows for every architecture, with the
// input as the code. Nothing may panic, errors must be typed, and a row
// may hold no more rules than registers exist.
func FuzzParse(f *testing.F) {
	for _, fx := range fixtures {
		if fx.arch == archregs.I386 || fx.arch == archregs.ARMV7 {
			continue
		}
		m, err := macho.Open(filepath.Join("testdata", fx.name))
		if err != nil {
			f.Fatal(err)
		}
		_, ui := section(f, m, "__TEXT", "__unwind_info")
		f.Add(ui)
		m.Close()
	}
	// The corpus's real tables, when it is there.
	if dir, err := testcorpus.Find(); err == nil {
		for _, rel := range []string{"symbolic/symbolic-testutils/fixtures/macos/crash",
			"plcrashreporter/Resources/Tests/PLCrashAsyncDwarfEncodingTests/regression-bins/tbin.unwind_test_x86_64_frameless_big.s.8"} {
			if m, err := macho.Open(filepath.Join(dir, rel)); err == nil {
				if s := m.Section("__unwind_info"); s != nil {
					if b, err := s.Data(); err == nil {
						f.Add(b)
					}
				}
				m.Close()
			}
		}
	}
	f.Add((&tableBuilder{funcs: syntheticFuncs(), end: 0x1400, common: []uint32{0x01010005}, personalities: []uint32{0x5000, 0x5008}, perPage: 3, compressed: true}).build())
	f.Add((&tableBuilder{funcs: syntheticFuncs(), end: 0x1400, perPage: 2}).build())
	f.Add(objectSection(8, []Entry{{FuncStart: 0x40, FuncEnd: 0x80, Encoding: 0x02010000}}))
	f.Fuzz(func(t *testing.T, data []byte) {
		var pcs []uint32
		for i := 0; i+4 <= len(data) && len(pcs) < 16; i += 4 {
			pcs = append(pcs, binary.LittleEndian.Uint32(data[i:]))
		}
		pcs = append(pcs, 0, 1, 0x1000, 0xffffffff)
		code := codeAt{0, data}
		check := func(table *Table) {
			for _, pc := range pcs {
				e, err := table.Lookup(pc)
				if err != nil {
					var ue *unwind.Error
					if !errors.Is(err, ErrNotFound) && !errors.As(err, &ue) {
						t.Fatalf("Lookup(%#x): untyped error %v", pc, err)
					}
					continue
				}
				if pc < e.FuncStart || pc >= e.FuncEnd {
					t.Fatalf("Lookup(%#x) = [%#x, %#x), which does not hold it", pc, e.FuncStart, e.FuncEnd)
				}
				for _, arch := range archregs.All {
					row, _ := RowFor(arch, e, code)
					if len(row.Regs) > 40 {
						t.Fatalf("RowFor(%s, %#08x): %d rules", arch, e.Encoding, len(row.Regs))
					}
					for _, at := range []uint32{e.FuncStart, pc, e.FuncEnd - 1} {
						row, _, _ := Frame0Row(arch, e, at, code)
						if len(row.Regs) > 40 {
							t.Fatalf("Frame0Row(%s, %#x): %d rules", arch, at, len(row.Regs))
						}
					}
				}
			}
		}
		if table, err := Parse(data); err == nil {
			check(table)
		} else if _, ok := err.(*unwind.Error); !ok {
			t.Fatalf("Parse: untyped error %v", err)
		}
		for _, ptr := range []int{4, 8} {
			if table, err := ParseObject(data, ptr); err == nil {
				check(table)
			}
		}
	})
}
