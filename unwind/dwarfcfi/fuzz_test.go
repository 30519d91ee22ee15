package dwarfcfi

import (
	"debug/macho"
	"path/filepath"
	"testing"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/unwind"
)

// fuzzArchs are the architectures the fuzz input's first byte selects.
var fuzzArchs = []*archregs.Arch{archregs.X86_64, archregs.ARM64, archregs.ARMV7, archregs.I386}

// FuzzParse parses a section, looks rows up at several addresses of every
// FDE (and at offsets the input names), and evaluates every expression the
// rows hold against a fake frame. Nothing may panic, and what the table
// holds must stay bounded by the input's size.
func FuzzParse(f *testing.F) {
	// Seeds: the committed objects' sections, and synthetic sections.
	objs, _ := filepath.Glob("testdata/*.o")
	objs = append(objs, "testdata/arm64_linked", "testdata/x86_64_dsym.dwarf")
	for _, obj := range objs {
		mf, err := macho.Open(obj)
		if err != nil {
			continue
		}
		archIdx := byte(0)
		switch mf.Cpu {
		case macho.CpuArm64:
			archIdx = 1
		case macho.CpuArm:
			archIdx = 2
		case macho.Cpu386:
			archIdx = 3
		}
		for i, name := range []string{"__eh_frame", "__debug_frame"} {
			if s := mf.Section(name); s != nil {
				if data, err := s.Data(); err == nil {
					f.Add(archIdx|byte(i)<<2, s.Addr, data)
				}
			}
		}
		mf.Close()
	}
	var s section
	c := s.cie(simpleCIE(x86CIEInstrs...))
	s.fde(c, absFDE(0x1000, 0x40, cfaRememberState, cfaDefCFAExpression, 3, opBreg0+7, 8, opDeref,
		cfaAdvanceLoc|4, cfaExpression, 6, 3, opLit0+8, opMinus, opDeref, cfaRestoreState,
		cfaValExpression, 3, 4, opCallFrameC, opSkip, 0xfd, 0xff))
	f.Add(byte(0), uint64(0), s.buf)
	d := section{debug: true, is64: true}
	dc := d.cie(cat([]byte{4}, []byte("\x00"), []byte{4, 0}, uleb(1), sleb(-4), uleb(8), []byte{cfaDefCFA, 4, 4}))
	d.fde(dc, func(int) []byte { return cat(le32(0x1000), le32(0x40), []byte{cfaAdvanceLoc | 1, cfaDefCFA, 5, 8}) })
	f.Add(byte(3|4), uint64(0), d.buf)

	f.Fuzz(func(t *testing.T, sel byte, addr uint64, data []byte) {
		arch := fuzzArchs[int(sel&3)]
		var tab *Table
		var err error
		if sel&4 != 0 {
			tab, err = NewDebugFrame(data, arch)
		} else {
			tab, err = NewEHFrame(data, addr, arch)
		}
		if err != nil {
			t.Fatal(err)
		}
		errs := tab.Errors()
		fdes, indexed, cies := tab.Stats()
		// Every record is at least 8 bytes; an FDE gives at most one read
		// error and one overlap error.
		if limit := len(data)/8 + 1; fdes > limit || cies > limit || len(errs) > 2*limit || indexed > fdes {
			t.Fatalf("%d bytes gave %d FDEs (%d indexed), %d CIEs, %d errors", len(data), fdes, indexed, cies, len(errs))
		}
		ctx := &fakeContext{
			regs:    map[unwind.Reg]uint64{4: 0x7000, 5: 0x7100, 6: 0x7200, 7: 0x7300, 29: 0x7400, 31: 0x7500},
			cfa:     0x7800,
			haveCFA: true,
			mem:     map[uint64]uint64{0x7000: 0x7008, 0x7008: 0x7000, 0x7300: 0x7800, 0x7800: 0x1234},
			ptrSize: arch.PtrSize,
		}
		check := func(row unwind.Row) {
			if len(row.Regs) > len(data) {
				t.Fatalf("row with %d rules from %d bytes", len(row.Regs), len(data))
			}
			if row.CFA.Expr != nil {
				row.CFA.Expr.Eval(ctx)
			}
			for _, rr := range row.Regs {
				if rr.Rule.Expr != nil {
					rr.Rule.Expr.Eval(ctx)
				}
			}
		}
		for i, r := range tab.FDEs() {
			if i >= 64 {
				break
			}
			for _, pc := range []uint64{r.PCBegin, r.PCBegin + (r.PCEnd-r.PCBegin)/2, r.PCEnd - 1} {
				if row, _, err := tab.RowAt(pc); err == nil {
					check(row)
				}
				if row, _, err := tab.RowInFDE(r.Offset, pc); err == nil {
					check(row)
				}
			}
		}
		for _, off := range []uint64{0, uint64(len(data)) / 2, addr % (uint64(len(data)) + 1)} {
			if info, err := tab.FDEAt(off); err == nil {
				if row, _, err := tab.RowInFDE(off, info.PCBegin); err == nil {
					check(row)
				}
			}
		}
	})
}
