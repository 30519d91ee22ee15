package dwarfcfi

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/unwind"
)

// TestPointerEncodings builds one FDE per pc_begin encoding and checks the
// address range read back.
func TestPointerEncodings(t *testing.T) {
	const sectionAddr = 0x2000
	tests := []struct {
		name  string
		enc   byte
		arch  *archregs.Arch
		begin func(fieldAddr uint64) []byte // pc_begin's bytes
		size  func(n uint64) []byte         // pc_range's bytes
		opts  []Option
		want  uint64
	}{
		{"absptr 8", pointerAbs, archregs.X86_64, func(uint64) []byte { return le64(0x100001000) }, le64, nil, 0x100001000},
		{"absptr 4", pointerAbs, archregs.I386, func(uint64) []byte { return le32(0x1000) }, func(n uint64) []byte { return le32(uint32(n)) }, nil, 0x1000},
		{"signed 4", pointerSigned, archregs.I386, func(uint64) []byte { return le32(0x1000) }, func(n uint64) []byte { return le32(uint32(n)) }, nil, 0x1000},
		{"uleb128", pointerULEB128, archregs.X86_64, func(uint64) []byte { return uleb(0x123456) }, uleb, nil, 0x123456},
		{"udata2", pointerUData2, archregs.X86_64, func(uint64) []byte { return le16(0x1234) }, func(n uint64) []byte { return le16(uint16(n)) }, nil, 0x1234},
		{"udata4", pointerUData4, archregs.X86_64, func(uint64) []byte { return le32(0x12345678) }, func(n uint64) []byte { return le32(uint32(n)) }, nil, 0x12345678},
		{"udata8", pointerUData8, archregs.X86_64, func(uint64) []byte { return le64(0x123456789) }, le64, nil, 0x123456789},
		{"sleb128 pcrel", pointerSLEB128 | pointerPCRel, archregs.X86_64, func(a uint64) []byte { return sleb(-0x100) }, uleb, nil, 0},
		{"sdata2 pcrel", pointerSData2 | pointerPCRel, archregs.X86_64, func(a uint64) []byte { return le16(uint16(0x10000 - 0x100)) }, func(n uint64) []byte { return le16(uint16(n)) }, nil, 0},
		{"sdata4 pcrel", pointerSData4 | pointerPCRel, archregs.X86_64, func(a uint64) []byte { return le32(uint32(0x100000000 - 0x100)) }, func(n uint64) []byte { return le32(uint32(n)) }, nil, 0},
		{"sdata8 pcrel", pointerSData8 | pointerPCRel, archregs.X86_64, func(a uint64) []byte { return le64(uint64(0x40)) }, le64, nil, 0x40},
		{"sdata4 pcrel 32-bit wraps", pointerSData4 | pointerPCRel, archregs.I386, func(a uint64) []byte { return le32(uint32(0x100000000 - a - 0x10 + 0x1000)) }, func(n uint64) []byte { return le32(uint32(n)) }, nil, 0x1000 - 0x10},
		{"datarel", pointerUData4 | pointerDataRel, archregs.X86_64, func(uint64) []byte { return le32(0x10) }, func(n uint64) []byte { return le32(uint32(n)) }, []Option{WithBases(0x5000, 0x7000)}, 0x7010},
		{"textrel", pointerUData4 | pointerTextRel, archregs.X86_64, func(uint64) []byte { return le32(0x10) }, func(n uint64) []byte { return le32(uint32(n)) }, []Option{WithBases(0x5000, 0x7000)}, 0x5010},
		{"indirect with reader", pointerUData4 | pointerIndirect, archregs.X86_64, func(uint64) []byte { return le32(0x8000) }, func(n uint64) []byte { return le32(uint32(n)) },
			[]Option{WithPointerReader(func(addr uint64) (uint64, error) { return addr + 0x111, nil })}, 0x8111},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s section
			cieBody := cat([]byte{1}, []byte("zR\x00"), uleb(1), sleb(-8), []byte{16}, uleb(1), []byte{tt.enc}, x86CIEInstrs)
			c := s.cie(cieBody)
			var fieldAddr uint64
			f := s.fde(c, func(bodyOff int) []byte {
				fieldAddr = sectionAddr + uint64(bodyOff)
				return cat(tt.begin(fieldAddr), tt.size(0x20), uleb(0))
			})
			want := tt.want
			if tt.enc&0x70 == pointerPCRel && tt.name != "sdata4 pcrel 32-bit wraps" {
				want += fieldAddr - 0x100
				if tt.name == "sdata8 pcrel" {
					want = fieldAddr + 0x40
				}
			}
			tab, err := NewEHFrame(s.buf, sectionAddr, tt.arch, tt.opts...)
			if err != nil {
				t.Fatal(err)
			}
			info, err := tab.FDEAt(uint64(f))
			if err != nil {
				t.Fatalf("FDEAt(%#x): %v", f, err)
			}
			if info.PCBegin != want || info.PCEnd != want+0x20 {
				t.Errorf("FDEAt(%#x) = [%#x, %#x), want [%#x, %#x)", f, info.PCBegin, info.PCEnd, want, want+0x20)
			}
			if _, got, err := tab.RowAt(want + 0x1f); err != nil || got.Offset != uint64(f) {
				t.Errorf("RowAt(%#x) = FDE %#x, %v; want FDE %#x", want+0x1f, got.Offset, err, f)
			}
		})
	}
}

// TestAugmentations checks L, P, S, eh, and CIE versions 3 and 4, in
// 32- and 64-bit DWARF.
func TestAugmentations(t *testing.T) {
	for _, is64 := range []bool{false, true} {
		t.Run(fmt.Sprintf("64-bit=%v", is64), func(t *testing.T) {
			s := section{is64: is64}
			// Version 3: the return address register is a ULEB128. "zPLRS":
			// personality (indirect pcrel sdata4), LSDA (pcrel sdata4), FDE
			// pointers (udata8), signal frame.
			augOff := 0
			var persField int
			cieBody := func(cieOff int) []byte {
				head := cat([]byte{3}, []byte("zPLRS\x00"), uleb(4), sleb(-8), uleb(30))
				// augmentation data: P enc, P value, L enc, R enc
				pers := []byte{pointerIndirect | pointerPCRel | pointerSData4}
				augOff = len(head) + 1 // after the augmentation length byte
				persField = augOff + 1
				data := cat(pers, le32(0x40), []byte{pointerPCRel | pointerSData4, pointerUData8})
				return cat(head, uleb(uint64(len(data))), data, []byte{cfaDefCFA, 31, 0})
			}
			cOff := len(s.buf)
			hdr := 8
			if is64 {
				hdr = 20
			}
			c := s.cie(cieBody(cOff))
			var lsdaField int
			f := s.fde(c, func(bodyOff int) []byte {
				lsdaField = bodyOff + 16 + 1
				return cat(le64(0x4000), le64(0x80), uleb(4), le32(0x100), []byte{cfaAdvanceLoc | 1, cfaDefCFAOffset, 16})
			})
			// An "eh" CIE (version 1, no 'z'), and a version 4 CIE in the
			// same section.
			ehCIE := s.cie(cat([]byte{1}, []byte("eh\x00"), le64(0xdead), uleb(1), sleb(-8), []byte{16}, x86CIEInstrs))
			ehFDE := s.fde(ehCIE, func(int) []byte { return cat(le64(0x5000), le64(0x10)) })
			v4CIE := s.cie(cat([]byte{4}, []byte("zR\x00"), []byte{8, 0}, uleb(1), sleb(-8), uleb(16), uleb(1), []byte{pointerUData8}, x86CIEInstrs))
			v4FDE := s.fde(v4CIE, absFDE(0x6000, 0x10))

			tab, err := NewEHFrame(s.buf, 0x10000, archregs.ARM64)
			if err != nil {
				t.Fatal(err)
			}
			if errs := tab.Errors(); len(errs) != 0 {
				t.Fatalf("Errors() = %v", errs)
			}
			row, info, err := tab.RowAt(0x4004)
			if err != nil {
				t.Fatal(err)
			}
			want := FDEInfo{
				Offset: uint64(f), CIEOffset: uint64(c), PCBegin: 0x4000, PCEnd: 0x4080,
				LSDA: 0x10000 + uint64(lsdaField) + 0x100, HasLSDA: true,
				Personality: 0x10000 + uint64(c+hdr+persField) + 0x40, HasPersonality: true, PersonalityIndirect: true,
				SignalFrame: true,
			}
			if diff := cmp.Diff(want, info); diff != "" {
				t.Errorf("RowAt(0x4004) FDE (-want +got):\n%s", diff)
			}
			wantRow := unwind.Row{CFA: unwind.CFA{Reg: 31, Offset: 16}, RA: 30}
			if diff := cmp.Diff(wantRow, row); diff != "" {
				t.Errorf("RowAt(0x4004) with code alignment 4 (-want +got):\n%s", diff)
			}
			for _, c := range []struct {
				pc  uint64
				off int
			}{{0x5008, ehFDE}, {0x6008, v4FDE}} {
				row, info, err := tab.RowAt(c.pc)
				if err != nil || info.Offset != uint64(c.off) || row.RA != 16 || row.CFA != (unwind.CFA{Reg: 7, Offset: 8}) {
					t.Errorf("RowAt(%#x) = %+v, FDE %#x, %v; want FDE %#x, CFA r7+8, RA 16", c.pc, row, info.Offset, err, c.off)
				}
			}
		})
	}
}

// TestDebugFrame checks __debug_frame's CIE ids and pointers, and i386's
// register numbering.
func TestDebugFrame(t *testing.T) {
	for _, is64 := range []bool{false, true} {
		s := section{debug: true, is64: is64}
		// CIE: ESP(4)+4, EIP(8) at CFA-4; FDE: CFA = EBP(5)+8, EBP at CFA-8,
		// and an expression naming EBP (DW_OP_breg5).
		c := s.cie(cat([]byte{4}, []byte("\x00"), []byte{4, 0}, uleb(1), sleb(-4), uleb(8), []byte{cfaDefCFA, 4, 4, cfaOffset | 8, 1}))
		f := s.fde(c, func(int) []byte {
			return cat(le32(0x1000), le32(0x40), []byte{cfaDefCFA, 5, 8, cfaOffset | 5, 2, cfaValExpression, 4, 2, opBreg0 + 5, 0})
		})
		tab, err := NewDebugFrame(s.buf, archregs.I386)
		if err != nil {
			t.Fatal(err)
		}
		row, info, err := tab.RowAt(0x1010)
		if err != nil || info.Offset != uint64(f) {
			t.Fatalf("64-bit=%v: RowAt(0x1010) = FDE %#x, %v; want FDE %#x", is64, info.Offset, err, f)
		}
		want := unwind.Row{CFA: unwind.CFA{Reg: 4, Offset: 8}, RA: 8, Regs: []unwind.RegRule{
			{Reg: 8, Rule: offsetRule(-4)},
			{Reg: 4, Rule: offsetRule(-8)},
			{Reg: 5, Rule: unwind.Rule{Kind: unwind.ValExpression, Expr: &Expr{code: []byte{opBreg0 + 5, 0}, pushCFA: true, renumber: archregs.I386DebugFrameReg}}},
		}}
		if diff := cmp.Diff(want, row, exprEqual); diff != "" {
			t.Errorf("64-bit=%v: RowAt(0x1010) in Darwin numbering (-want +got):\n%s", is64, diff)
		}
		// DW_OP_breg5 is the standard EBP: Darwin's register 4.
		v, err := row.Rule(5).Expr.Eval(&fakeContext{regs: map[unwind.Reg]uint64{4: 0x7000, 5: 0x9000}, cfa: 1, haveCFA: true, ptrSize: 4})
		if err != nil || v != 0x7000 {
			t.Errorf("64-bit=%v: DW_OP_breg5 in __debug_frame = %#x, %v; want EBP's 0x7000", is64, v, err)
		}
	}
}

// TestBadRecords checks that each damaged record is an *unwind.Error
// naming its offset, and that the FDEs around it stay usable.
func TestBadRecords(t *testing.T) {
	type built struct {
		data    []byte
		badOff  int
		goodFDE []int // FDEs that must stay indexed
	}
	tests := []struct {
		name    string
		build   func() built
		wantMsg string
	}{
		{"CIE pointer before the section", func() built {
			var s section
			c := s.cie(simpleCIE(x86CIEInstrs...))
			g := s.fde(c, absFDE(0x1000, 0x10))
			off := len(s.buf)
			s.record(0x1000, absFDE(0x2000, 0x10)(0))
			return built{s.buf, off, []int{g}}
		}, "before the section start"},
		{"CIE pointer at an FDE", func() built {
			var s section
			c := s.cie(simpleCIE(x86CIEInstrs...))
			g := s.fde(c, absFDE(0x1000, 0x10))
			off := s.fde(g, absFDE(0x2000, 0x10))
			return built{s.buf, off, []int{g}}
		}, "does not point at a CIE"},
		{"debug_frame CIE pointer past the end", func() built {
			s := section{debug: true}
			c := s.cie(cat([]byte{1}, []byte("\x00"), uleb(1), sleb(-8), []byte{16}))
			g := s.fde(c, func(int) []byte { return cat(le64(0x1000), le64(0x10)) })
			off := s.fde(0x7fff, func(int) []byte { return cat(le64(0x2000), le64(0x10)) })
			return built{s.buf, off, []int{g}}
		}, "past the end"},
		{"unsupported CIE version", func() built {
			var s section
			c := s.cie(simpleCIE(x86CIEInstrs...))
			g := s.fde(c, absFDE(0x1000, 0x10))
			bad := s.cie(cat([]byte{2}, simpleCIE()[1:]))
			off := s.fde(bad, absFDE(0x2000, 0x10))
			return built{s.buf, off, []int{g}}
		}, "version 2 unsupported"},
		{"absurd augmentation length", func() built {
			var s section
			c := s.cie(simpleCIE(x86CIEInstrs...))
			g := s.fde(c, absFDE(0x1000, 0x10))
			off := s.fde(c, func(int) []byte { return cat(le64(0x2000), le64(0x10), uleb(1<<40)) })
			return built{s.buf, off, []int{g}}
		}, "augmentation data length"},
		{"absurd CIE augmentation length", func() built {
			var s section
			c := s.cie(simpleCIE(x86CIEInstrs...))
			g := s.fde(c, absFDE(0x1000, 0x10))
			bad := s.cie(cat([]byte{1}, []byte("zR\x00"), uleb(1), sleb(-8), []byte{16}, uleb(1<<62)))
			off := s.fde(bad, absFDE(0x2000, 0x10))
			return built{s.buf, off, []int{g}}
		}, "augmentation data length"},
		{"unknown augmentation without z", func() built {
			var s section
			c := s.cie(simpleCIE(x86CIEInstrs...))
			g := s.fde(c, absFDE(0x1000, 0x10))
			bad := s.cie(cat([]byte{1}, []byte("Q\x00"), uleb(1), sleb(-8), []byte{16}))
			off := s.fde(bad, absFDE(0x2000, 0x10))
			return built{s.buf, off, []int{g}}
		}, "augmentation \"Q\" unsupported"},
		{"textrel without bases", func() built {
			var s section
			c := s.cie(simpleCIE(x86CIEInstrs...))
			g := s.fde(c, absFDE(0x1000, 0x10))
			bad := s.cie(cat([]byte{1}, []byte("zR\x00"), uleb(1), sleb(-8), []byte{16}, uleb(1), []byte{pointerTextRel | pointerUData4}))
			off := s.fde(bad, func(int) []byte { return cat(le32(0x2000), le32(0x10), uleb(0)) })
			return built{s.buf, off, []int{g}}
		}, "needs a text base"},
		{"indirect pc_begin without reader", func() built {
			var s section
			c := s.cie(simpleCIE(x86CIEInstrs...))
			g := s.fde(c, absFDE(0x1000, 0x10))
			bad := s.cie(cat([]byte{1}, []byte("zR\x00"), uleb(1), sleb(-8), []byte{16}, uleb(1), []byte{pointerIndirect | pointerUData4}))
			off := s.fde(bad, func(int) []byte { return cat(le32(0x2000), le32(0x10), uleb(0)) })
			return built{s.buf, off, []int{g}}
		}, "indirect"},
		{"FDE range wraps", func() built {
			var s section
			c := s.cie(simpleCIE(x86CIEInstrs...))
			g := s.fde(c, absFDE(0x1000, 0x10))
			off := s.fde(c, absFDE(^uint64(0)-4, 0x10))
			return built{s.buf, off, []int{g}}
		}, "wraps"},
		{"truncated FDE", func() built {
			var s section
			c := s.cie(simpleCIE(x86CIEInstrs...))
			g := s.fde(c, absFDE(0x1000, 0x10))
			off := s.fde(c, func(int) []byte { return le64(0x2000) })
			return built{s.buf, off, []int{g}}
		}, "pc_range"},
		{"length past the end", func() built {
			var s section
			c := s.cie(simpleCIE(x86CIEInstrs...))
			g := s.fde(c, absFDE(0x1000, 0x10))
			off := len(s.buf)
			s.buf = append(s.buf, le32(0x1000)...)
			s.buf = append(s.buf, 1, 2, 3, 4)
			return built{s.buf, off, []int{g}}
		}, "past the end of the section"},
		{"64-bit length past the end", func() built {
			var s section
			c := s.cie(simpleCIE(x86CIEInstrs...))
			g := s.fde(c, absFDE(0x1000, 0x10))
			off := len(s.buf)
			s.buf = append(s.buf, cat(le32(0xffffffff), le64(1<<63), le64(0))...)
			return built{s.buf, off, []int{g}}
		}, "past the end of the section"},
		{"truncated length", func() built {
			var s section
			c := s.cie(simpleCIE(x86CIEInstrs...))
			g := s.fde(c, absFDE(0x1000, 0x10))
			off := len(s.buf)
			s.buf = append(s.buf, 1, 0)
			return built{s.buf, off, []int{g}}
		}, "length truncated"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := tt.build()
			var tab *Table
			var err error
			if strings.HasPrefix(tt.name, "debug_frame") {
				tab, err = NewDebugFrame(b.data, archregs.X86_64)
			} else {
				tab, err = NewEHFrame(b.data, 0, archregs.X86_64)
			}
			if err != nil {
				t.Fatal(err)
			}
			// A bad CIE is reported, and so is each FDE that uses it.
			errs := tab.Errors()
			var ue *unwind.Error
			for _, e := range errs {
				if errors.As(e, &ue) && ue.Off == uint64(b.badOff) {
					break
				}
				ue = nil
			}
			if ue == nil || !strings.Contains(ue.Msg, tt.wantMsg) || len(errs) > 2 {
				t.Errorf("Errors() = %v, want an *unwind.Error at %#x saying %q", errs, b.badOff, tt.wantMsg)
			}
			if ue != nil && ue.Source != tab.Source() {
				t.Errorf("error source = %v, want %v", ue.Source, tab.Source())
			}
			for _, g := range b.goodFDE {
				if _, info, err := tab.RowAt(0x1008); err != nil || info.Offset != uint64(g) {
					t.Errorf("RowAt(0x1008) = FDE %#x, %v; want the good FDE %#x", info.Offset, err, g)
				}
			}
			if _, err := tab.FDEAt(uint64(b.badOff)); err == nil {
				t.Errorf("FDEAt(%#x) of the bad record succeeded", b.badOff)
			}
		})
	}
}

// TestOverlap checks the deterministic choice between overlapping FDEs and
// the error naming both.
func TestOverlap(t *testing.T) {
	var s section
	c := s.cie(simpleCIE(x86CIEInstrs...))
	later := s.fde(c, absFDE(0x1008, 0x20, cfaDefCFAOffset, 32))
	first := s.fde(c, absFDE(0x1000, 0x10, cfaDefCFAOffset, 16))
	other := s.fde(c, absFDE(0x2000, 0x10))
	tab, err := NewEHFrame(s.buf, 0, archregs.X86_64)
	if err != nil {
		t.Fatal(err)
	}
	errs := tab.Errors()
	if len(errs) != 1 || !strings.Contains(errs[0].Error(), fmt.Sprintf("offset %#x", first)) || !strings.Contains(errs[0].Error(), fmt.Sprintf("offset %#x", later)) {
		t.Errorf("Errors() = %v, want one overlap error naming offsets %#x and %#x", errs, later, first)
	}
	for _, c := range []struct {
		pc   uint64
		want int
	}{{0x1000, first}, {0x100c, first}, {0x2004, other}} {
		if _, info, err := tab.RowAt(c.pc); err != nil || info.Offset != uint64(c.want) {
			t.Errorf("RowAt(%#x) = FDE %#x, %v; want %#x", c.pc, info.Offset, err, c.want)
		}
	}
	if _, _, err := tab.RowAt(0x1018); !errors.Is(err, ErrNoFDE) {
		t.Errorf("RowAt(0x1018) past the kept FDE = %v, want ErrNoFDE", err)
	}
	// FDEAt still reads the dropped FDE, as compact unwind may name it.
	if row, _, err := tab.RowInFDE(uint64(later), 0x1018); err != nil || row.CFA.Offset != 32 {
		t.Errorf("RowInFDE(%#x, 0x1018) = %+v, %v; want CFA offset 32", later, row, err)
	}
	if _, _, err := tab.RowInFDE(uint64(later), 0x1000); err == nil {
		t.Errorf("RowInFDE(%#x, 0x1000) outside its range succeeded", later)
	}
	if _, err := tab.FDEAt(uint64(c)); err == nil {
		t.Errorf("FDEAt(%#x) of a CIE succeeded", c)
	}
	if _, err := tab.FDEAt(uint64(len(s.buf)) + 4); err == nil {
		t.Errorf("FDEAt past the end succeeded")
	}
	want := []FDERange{{uint64(first), 0x1000, 0x1010}, {uint64(other), 0x2000, 0x2010}}
	if diff := cmp.Diff(want, tab.FDEs()); diff != "" {
		t.Errorf("FDEs() (-want +got):\n%s", diff)
	}
}

// TestTerminator checks that a zero length ends __eh_frame, and that the
// records before it are read.
func TestTerminator(t *testing.T) {
	var s section
	c := s.cie(simpleCIE(x86CIEInstrs...))
	s.fde(c, absFDE(0x1000, 0x10))
	s.buf = append(s.buf, 0, 0, 0, 0)
	s.buf = append(s.buf, 0xff, 0xff, 0xff) // junk after the terminator
	tab, _ := NewEHFrame(s.buf, 0, archregs.X86_64)
	if errs := tab.Errors(); len(errs) != 0 {
		t.Errorf("Errors() = %v, want none", errs)
	}
	if fdes, indexed, cies := tab.Stats(); fdes != 1 || indexed != 1 || cies != 1 {
		t.Errorf("Stats() = %d, %d, %d; want 1, 1, 1", fdes, indexed, cies)
	}
}

func TestNewTableErrors(t *testing.T) {
	if _, err := NewEHFrame(nil, 0, nil); err == nil {
		t.Error("NewEHFrame with a nil arch succeeded")
	}
	if _, err := NewDebugFrame(nil, &archregs.Arch{Name: "odd", PtrSize: 2}); err == nil {
		t.Error("NewDebugFrame with 2-byte pointers succeeded")
	}
}

// TestConcurrentLookups races first lookups (which build the index) and
// FDEAt from several goroutines; run with -race.
func TestConcurrentLookups(t *testing.T) {
	data := benchSection(200)
	tab, err := NewEHFrame(data, 0, archregs.X86_64)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error)
	for g := 0; g < 4; g++ {
		go func(g int) {
			for i := 0; i < 200; i++ {
				pc := 0x100000000 + uint64((i*37+g)%200)*0x40 + 12
				row, _, err := tab.RowAt(pc)
				if err != nil {
					done <- err
					return
				}
				if row.CFA != (unwind.CFA{Reg: 6, Offset: 16}) {
					done <- fmt.Errorf("RowAt(%#x) CFA = %+v, want r6+16", pc, row.CFA)
					return
				}
			}
			done <- nil
		}(g)
	}
	for g := 0; g < 4; g++ {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

// TestIndirectPersonality checks that an indirect personality the
// PointerReader cannot read leaves the FDE usable, reporting the pointer's
// address; one it can read is resolved.
func TestIndirectPersonality(t *testing.T) {
	var s section
	c := s.cie(cat([]byte{1}, []byte("zPR\x00"), uleb(1), sleb(-8), []byte{16},
		uleb(6), []byte{pointerIndirect | pointerUData4}, le32(0x3000), []byte{pointerAbs}, x86CIEInstrs))
	f := s.fde(c, absFDE(0x1000, 0x10))
	for _, tt := range []struct {
		name         string
		read         PointerReader
		want         uint64
		wantIndirect bool
	}{
		{"no reader", nil, 0x3000, true},
		{"failing reader", func(uint64) (uint64, error) { return 0, errors.New("unmapped") }, 0x3000, true},
		{"reader", func(a uint64) (uint64, error) { return a + 0x10, nil }, 0x3010, false},
	} {
		var opts []Option
		if tt.read != nil {
			opts = append(opts, WithPointerReader(tt.read))
		}
		tab, _ := NewEHFrame(s.buf, 0, archregs.X86_64, opts...)
		_, info, err := tab.RowAt(0x1000)
		if err != nil || info.Offset != uint64(f) || !info.HasPersonality || info.Personality != tt.want || info.PersonalityIndirect != tt.wantIndirect {
			t.Errorf("%s: RowAt(0x1000) = %+v, %v; want personality %#x (indirect %v)", tt.name, info, err, tt.want, tt.wantIndirect)
		}
	}
}
