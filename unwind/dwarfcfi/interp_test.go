package dwarfcfi

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/unwind"
)

var exprEqual = cmp.Comparer(func(a, b *Expr) bool {
	return bytes.Equal(a.code, b.code) && a.pushCFA == b.pushCFA && (a.renumber == nil) == (b.renumber == nil)
})

func offsetRule(o int64) unwind.Rule { return unwind.Rule{Kind: unwind.Offset, Offset: o} }

// TestInstructions runs one FDE per instruction (or group) and checks the
// row at addresses before and after it.
func TestInstructions(t *testing.T) {
	base := []unwind.RegRule{{Reg: 16, Rule: offsetRule(-8)}}
	withBase := func(extra ...unwind.RegRule) []unwind.RegRule {
		return append(append([]unwind.RegRule(nil), base...), extra...)
	}
	cfa8 := unwind.CFA{Reg: 7, Offset: 8}
	tests := []struct {
		name   string
		arch   *archregs.Arch
		instrs []byte
		pc     uint64 // relative to the FDE's start, 0x1000
		want   unwind.Row
	}{
		{"initial row", nil, nil, 0, unwind.Row{CFA: cfa8, RA: 16, Regs: base}},
		{"advance_loc stops before", nil, []byte{cfaAdvanceLoc | 4, cfaDefCFAOffset, 16}, 3,
			unwind.Row{CFA: cfa8, RA: 16, Regs: base}},
		{"advance_loc reaches", nil, []byte{cfaAdvanceLoc | 4, cfaDefCFAOffset, 16}, 4,
			unwind.Row{CFA: unwind.CFA{Reg: 7, Offset: 16}, RA: 16, Regs: base}},
		{"advance_loc1", nil, []byte{cfaAdvanceLoc1, 200, cfaDefCFAOffset, 16}, 200,
			unwind.Row{CFA: unwind.CFA{Reg: 7, Offset: 16}, RA: 16, Regs: base}},
		{"advance_loc2", nil, cat([]byte{cfaAdvanceLoc2}, le16(0x300), []byte{cfaDefCFAOffset, 16}), 0x2ff,
			unwind.Row{CFA: cfa8, RA: 16, Regs: base}},
		{"advance_loc4", nil, cat([]byte{cfaAdvanceLoc4}, le32(0x300), []byte{cfaDefCFAOffset, 16}), 0x300,
			unwind.Row{CFA: unwind.CFA{Reg: 7, Offset: 16}, RA: 16, Regs: base}},
		{"set_loc", nil, cat([]byte{cfaSetLoc}, le64(0x1010), []byte{cfaDefCFAOffset, 24}), 0x10,
			unwind.Row{CFA: unwind.CFA{Reg: 7, Offset: 24}, RA: 16, Regs: base}},
		{"def_cfa", nil, []byte{cfaDefCFA, 6, 16}, 0, unwind.Row{CFA: unwind.CFA{Reg: 6, Offset: 16}, RA: 16, Regs: base}},
		{"def_cfa_sf", nil, cat([]byte{cfaDefCFASF, 6}, sleb(-2)), 0, unwind.Row{CFA: unwind.CFA{Reg: 6, Offset: 16}, RA: 16, Regs: base}},
		{"def_cfa_register", nil, []byte{cfaDefCFARegister, 6}, 0, unwind.Row{CFA: unwind.CFA{Reg: 6, Offset: 8}, RA: 16, Regs: base}},
		{"def_cfa_offset_sf", nil, cat([]byte{cfaDefCFAOffsetSF}, sleb(-4)), 0, unwind.Row{CFA: unwind.CFA{Reg: 7, Offset: 32}, RA: 16, Regs: base}},
		{"def_cfa_expression", nil, []byte{cfaDefCFAExpression, 2, opBreg0 + 7, 8}, 0,
			unwind.Row{CFA: unwind.CFA{Expr: &Expr{code: []byte{opBreg0 + 7, 8}}}, RA: 16, Regs: base}},
		{"offset", nil, []byte{cfaOffset | 6, 2}, 0, unwind.Row{CFA: cfa8, RA: 16, Regs: withBase(unwind.RegRule{Reg: 6, Rule: offsetRule(-16)})}},
		{"offset_extended", nil, []byte{cfaOffsetExtended, 70, 3}, 0, unwind.Row{CFA: cfa8, RA: 16, Regs: withBase(unwind.RegRule{Reg: 70, Rule: offsetRule(-24)})}},
		{"offset_extended_sf", nil, cat([]byte{cfaOffsetExtendedSF, 3}, sleb(2)), 0, unwind.Row{CFA: cfa8, RA: 16, Regs: withBase(unwind.RegRule{Reg: 3, Rule: offsetRule(-16)})}},
		{"GNU_negative_offset_extended", nil, []byte{cfaGNUNegOffsetExtnd, 3, 2}, 0, unwind.Row{CFA: cfa8, RA: 16, Regs: withBase(unwind.RegRule{Reg: 3, Rule: offsetRule(16)})}},
		{"val_offset", nil, []byte{cfaValOffset, 7, 0}, 0, unwind.Row{CFA: cfa8, RA: 16, Regs: withBase(unwind.RegRule{Reg: 7, Rule: unwind.Rule{Kind: unwind.ValOffset}})}},
		{"val_offset_sf", nil, cat([]byte{cfaValOffsetSF, 7}, sleb(-1)), 0, unwind.Row{CFA: cfa8, RA: 16, Regs: withBase(unwind.RegRule{Reg: 7, Rule: unwind.Rule{Kind: unwind.ValOffset, Offset: 8}})}},
		{"restore", nil, []byte{cfaOffset | 16, 3, cfaOffset | 3, 4, cfaRestore | 16, cfaRestore | 3}, 0,
			unwind.Row{CFA: cfa8, RA: 16, Regs: base}},
		{"restore_extended", nil, []byte{cfaOffset | 16, 3, cfaRestoreExtended, 16}, 0, unwind.Row{CFA: cfa8, RA: 16, Regs: base}},
		{"register", nil, []byte{cfaRegister, 3, 12}, 0, unwind.Row{CFA: cfa8, RA: 16, Regs: withBase(unwind.RegRule{Reg: 3, Rule: unwind.Rule{Kind: unwind.Register, Reg: 12}})}},
		{"same_value", nil, []byte{cfaSameValue, 3}, 0, unwind.Row{CFA: cfa8, RA: 16, Regs: withBase(unwind.RegRule{Reg: 3, Rule: unwind.Rule{Kind: unwind.SameValue}})}},
		{"undefined", nil, []byte{cfaUndefined, 16}, 0, unwind.Row{CFA: cfa8, RA: 16, Regs: []unwind.RegRule{{Reg: 16, Rule: unwind.Rule{Kind: unwind.Undefined}}}}},
		{"remember_state/restore_state", nil, []byte{
			cfaDefCFAOffset, 16, cfaOffset | 6, 2, cfaRememberState,
			cfaDefCFAOffset, 8, cfaRestore | 6, cfaAdvanceLoc | 1, cfaRestoreState}, 1,
			unwind.Row{CFA: unwind.CFA{Reg: 7, Offset: 16}, RA: 16, Regs: withBase(unwind.RegRule{Reg: 6, Rule: offsetRule(-16)})}},
		{"state before restore_state", nil, []byte{
			cfaDefCFAOffset, 16, cfaOffset | 6, 2, cfaRememberState,
			cfaDefCFAOffset, 8, cfaRestore | 6, cfaAdvanceLoc | 1, cfaRestoreState}, 0,
			unwind.Row{CFA: cfa8, RA: 16, Regs: base}},
		{"expression", nil, []byte{cfaExpression, 6, 2, opBreg0 + 7, 16}, 0,
			unwind.Row{CFA: cfa8, RA: 16, Regs: withBase(unwind.RegRule{Reg: 6, Rule: unwind.Rule{Kind: unwind.Expression, Expr: &Expr{code: []byte{opBreg0 + 7, 16}, pushCFA: true}}})}},
		{"val_expression", nil, []byte{cfaValExpression, 7, 1, opLit0}, 0,
			unwind.Row{CFA: cfa8, RA: 16, Regs: withBase(unwind.RegRule{Reg: 7, Rule: unwind.Rule{Kind: unwind.ValExpression, Expr: &Expr{code: []byte{opLit0}, pushCFA: true}}})}},
		{"GNU_args_size", nil, []byte{cfaGNUArgsSize, 16, cfaNop}, 0, unwind.Row{CFA: cfa8, RA: 16, Regs: base, ArgsSize: 16}},
		{"negate_ra_state arm64", archregs.ARM64, []byte{cfaNegateRAState, cfaAdvanceLoc | 4, cfaNegateRAState}, 0,
			unwind.Row{CFA: cfa8, RA: 16, Regs: base, RASigned: true}},
		{"negate_ra_state twice", archregs.ARM64, []byte{cfaNegateRAState, cfaAdvanceLoc | 4, cfaNegateRAState}, 4,
			unwind.Row{CFA: cfa8, RA: 16, Regs: base}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			arch := tt.arch
			if arch == nil {
				arch = archregs.X86_64
			}
			var s section
			c := s.cie(simpleCIE(x86CIEInstrs...))
			f := s.fde(c, absFDE(0x1000, 0x1000, tt.instrs...))
			tab, err := NewEHFrame(s.buf, 0, arch)
			if err != nil {
				t.Fatal(err)
			}
			got, info, err := tab.RowAt(0x1000 + tt.pc)
			if err != nil {
				t.Fatalf("RowAt(%#x): %v", 0x1000+tt.pc, err)
			}
			if info.Offset != uint64(f) {
				t.Errorf("RowAt(%#x) FDE offset = %#x, want %#x", 0x1000+tt.pc, info.Offset, f)
			}
			if diff := cmp.Diff(tt.want, got, exprEqual); diff != "" {
				t.Errorf("RowAt(%#x) (-want +got):\n%s", 0x1000+tt.pc, diff)
			}
		})
	}
}

// TestBadInstructions checks that each malformed program is an
// *unwind.Error naming the instruction's offset.
func TestBadInstructions(t *testing.T) {
	deep := bytes.Repeat([]byte{cfaRememberState}, maxStateDepth+1)
	tests := []struct {
		name      string
		arch      *archregs.Arch
		cieInstrs []byte
		instrs    []byte
		wantAt    int // index in instrs of the bad instruction (-1: in the CIE)
		wantMsg   string
	}{
		{"restore_state without remember_state", nil, nil, []byte{cfaNop, cfaRestoreState}, 1, "restore_state without remember_state"},
		{"remember_state too deep", nil, nil, deep, maxStateDepth, "nested deeper"},
		{"advance in the CIE", nil, []byte{cfaAdvanceLoc | 1}, nil, -1, "location change in a CIE"},
		{"unknown instruction", nil, nil, []byte{0x3f}, 0, "unknown call frame instruction"},
		{"window_save on x86", nil, nil, []byte{cfaNegateRAState}, 0, "SPARC"},
		{"def_cfa_register after expression", nil, nil, []byte{cfaDefCFAExpression, 1, opLit0, cfaDefCFARegister, 6}, 3, "while the CFA is an expression"},
		{"def_cfa_offset after expression", nil, nil, []byte{cfaDefCFAExpression, 1, opLit0, cfaDefCFAOffset, 6}, 3, "while the CFA is an expression"},
		{"expression past the end", nil, nil, []byte{cfaExpression, 3, 200, opLit0}, 0, "longer than"},
		{"truncated operand", nil, nil, []byte{cfaAdvanceLoc4, 1}, 0, "truncated"},
		{"set_loc backwards", nil, nil, cat([]byte{cfaSetLoc}, le64(0xfff)), 0, "before the current location"},
		{"register number out of range", nil, nil, cat([]byte{cfaOffsetExtended}, uleb(0x10000), uleb(1)), 0, "out of range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			arch := tt.arch
			if arch == nil {
				arch = archregs.X86_64
			}
			var s section
			cieBody := simpleCIE(append(append([]byte(nil), x86CIEInstrs...), tt.cieInstrs...)...)
			c := s.cie(cieBody)
			f := s.fde(c, absFDE(0x1000, 0x100, tt.instrs...))
			tab, err := NewEHFrame(s.buf, 0, arch)
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = tab.RowAt(0x10ff)
			var ue *unwind.Error
			if !errors.As(err, &ue) {
				t.Fatalf("RowAt = %v, want an *unwind.Error", err)
			}
			want := uint64(f + 8 + 17 + tt.wantAt) // length, id, 2 addresses, aug length
			if tt.wantAt < 0 {
				want = uint64(c + 8 + len(cieBody) - len(tt.cieInstrs))
			}
			if ue.Source != unwind.SourceEHFrame || ue.Off != want || !strings.Contains(ue.Msg, tt.wantMsg) {
				t.Errorf("RowAt error = %v (source %v, offset %#x), want %s at %#x saying %q", err, ue.Source, ue.Off, unwind.SourceEHFrame, want, tt.wantMsg)
			}
		})
	}
}
