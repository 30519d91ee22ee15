package dwarfcfi

import (
	"fmt"

	"github.com/stackimage/stackimage/unwind"
)

// maxStateDepth bounds DW_CFA_remember_state nesting. Compilers nest it
// once or twice (an epilogue in the middle of a function); a deeper stack
// is damaged or hostile data.
const maxStateDepth = 64

// Call frame instructions (DW_CFA_*), DWARF 5 §6.4.2 and the GNU and
// AArch64 extensions.
const (
	cfaAdvanceLoc        = 0x40 // high two bits; delta in the low six
	cfaOffset            = 0x80 // high two bits; register in the low six
	cfaRestore           = 0xc0 // high two bits; register in the low six
	cfaNop               = 0x00
	cfaSetLoc            = 0x01
	cfaAdvanceLoc1       = 0x02
	cfaAdvanceLoc2       = 0x03
	cfaAdvanceLoc4       = 0x04
	cfaOffsetExtended    = 0x05
	cfaRestoreExtended   = 0x06
	cfaUndefined         = 0x07
	cfaSameValue         = 0x08
	cfaRegister          = 0x09
	cfaRememberState     = 0x0a
	cfaRestoreState      = 0x0b
	cfaDefCFA            = 0x0c
	cfaDefCFARegister    = 0x0d
	cfaDefCFAOffset      = 0x0e
	cfaDefCFAExpression  = 0x0f
	cfaExpression        = 0x10
	cfaOffsetExtendedSF  = 0x11
	cfaDefCFASF          = 0x12
	cfaDefCFAOffsetSF    = 0x13
	cfaValOffset         = 0x14
	cfaValOffsetSF       = 0x15
	cfaValExpression     = 0x16
	cfaNegateRAState     = 0x2d // DW_CFA_AARCH64_negate_ra_state (DW_CFA_GNU_window_save on SPARC)
	cfaGNUArgsSize       = 0x2e
	cfaGNUNegOffsetExtnd = 0x2f
)

// savedState is what DW_CFA_remember_state pushes.
type savedState struct {
	cfa      unwind.CFA
	regs     []unwind.RegRule
	raSigned bool
}

// interp runs call frame instructions into a row.
type interp struct {
	t       *Table
	cie     *cie
	row     unwind.Row
	initial []unwind.RegRule // the rules after the CIE's instructions
	inCIE   bool
	loc     uint64 // the address the row describes from
	target  uint64 // stop before an advance past this address
	stack   []savedState
}

// run returns the row of FDE f in force at pc.
func (t *Table) run(f *fde, pc uint64) (unwind.Row, error) {
	c := f.cie
	ra, err := t.reg(c.raReg, c.off)
	if err != nil {
		return unwind.Row{}, err
	}
	in := &interp{t: t, cie: c, loc: f.PCBegin, target: pc, inCIE: true}
	in.row.RA = ra
	in.row.Regs = make([]unwind.RegRule, 0, 8) // room for a typical function's rules
	if err := in.execute(c.instrStart, c.instrEnd, f.PCBegin); err != nil {
		return unwind.Row{}, err
	}
	in.initial = append([]unwind.RegRule(nil), in.row.Regs...)
	in.inCIE = false
	in.stack = in.stack[:0]
	if err := in.execute(f.instrStart, f.instrEnd, f.PCBegin); err != nil {
		return unwind.Row{}, err
	}
	if len(in.row.Regs) == 0 {
		in.row.Regs = nil
	}
	return in.row, nil
}

// execute runs the instructions in data[start:end] until they end or an
// advance moves past the target address. Each instruction consumes at
// least one byte, so the loop runs at most end-start times.
func (in *interp) execute(start, end int, funcBase uint64) error {
	t := in.t
	r := &reader{data: t.data, off: start, end: end}
	for r.left() > 0 {
		at := r.off
		op := r.u8()
		var operand uint8
		if op&0xc0 != 0 {
			op, operand = op&0xc0, op&0x3f
		}
		fail := func(format string, args ...any) error {
			return t.errorf(at, "DW_CFA %#02x: %s", op, fmt.Sprintf(format, args...))
		}
		switch op {
		case cfaNop:
		case cfaAdvanceLoc, cfaAdvanceLoc1, cfaAdvanceLoc2, cfaAdvanceLoc4, cfaSetLoc:
			var newLoc uint64
			if op == cfaSetLoc {
				enc := in.cie.fdeEncoding
				if t.source != unwind.SourceEHFrame {
					enc = pointerAbs
				}
				v, err := t.readEncoded(r, enc, encodingBases{funcBase: funcBase, haveFunc: true}, in.cie.addrSize)
				if err != nil {
					return fail("set_loc: %v", err)
				}
				if v < in.loc {
					return fail("set_loc to %#x, before the current location %#x", v, in.loc)
				}
				newLoc = v
			} else {
				var delta uint64
				switch op {
				case cfaAdvanceLoc:
					delta = uint64(operand)
				case cfaAdvanceLoc1:
					delta = uint64(r.u8())
				case cfaAdvanceLoc2:
					delta = uint64(r.u16())
				case cfaAdvanceLoc4:
					delta = uint64(r.u32())
				}
				if r.err != nil {
					return fail("advance_loc operand: %v", r.err)
				}
				step := delta * in.cie.codeAlign
				if in.cie.codeAlign != 0 && step/in.cie.codeAlign != delta || in.loc+step < in.loc {
					return fail("advance_loc by %d × %d overflows", delta, in.cie.codeAlign)
				}
				newLoc = in.loc + step
			}
			if in.inCIE {
				return fail("location change in a CIE's initial instructions")
			}
			if newLoc > in.target {
				return nil // the current row is the one in force at target
			}
			in.loc = newLoc
		case cfaOffset, cfaOffsetExtended, cfaOffsetExtendedSF, cfaGNUNegOffsetExtnd, cfaValOffset, cfaValOffsetSF:
			reg := uint64(operand)
			if op != cfaOffset {
				reg = r.uleb()
			}
			var factored int64
			switch op {
			case cfaOffsetExtendedSF, cfaValOffsetSF:
				factored = r.sleb()
			case cfaGNUNegOffsetExtnd:
				factored = -int64(r.uleb())
			default:
				factored = int64(r.uleb())
			}
			if r.err != nil {
				return fail("operands: %v", r.err)
			}
			kind := unwind.Offset
			if op == cfaValOffset || op == cfaValOffsetSF {
				kind = unwind.ValOffset
			}
			if err := in.set(reg, at, unwind.Rule{Kind: kind, Offset: factored * in.cie.dataAlign}); err != nil {
				return err
			}
		case cfaRestore, cfaRestoreExtended:
			reg := uint64(operand)
			if op == cfaRestoreExtended {
				reg = r.uleb()
			}
			if r.err != nil {
				return fail("operands: %v", r.err)
			}
			dr, err := t.reg(reg, at)
			if err != nil {
				return err
			}
			in.restore(dr)
		case cfaUndefined, cfaSameValue:
			reg := r.uleb()
			if r.err != nil {
				return fail("operands: %v", r.err)
			}
			kind := unwind.Undefined
			if op == cfaSameValue {
				kind = unwind.SameValue
			}
			if err := in.set(reg, at, unwind.Rule{Kind: kind}); err != nil {
				return err
			}
		case cfaRegister:
			reg, from := r.uleb(), r.uleb()
			if r.err != nil {
				return fail("operands: %v", r.err)
			}
			src, err := t.reg(from, at)
			if err != nil {
				return err
			}
			if err := in.set(reg, at, unwind.Rule{Kind: unwind.Register, Reg: src}); err != nil {
				return err
			}
		case cfaRememberState:
			if len(in.stack) >= maxStateDepth {
				return fail("remember_state nested deeper than %d", maxStateDepth)
			}
			in.stack = append(in.stack, savedState{
				cfa:      in.row.CFA,
				regs:     append([]unwind.RegRule(nil), in.row.Regs...),
				raSigned: in.row.RASigned,
			})
		case cfaRestoreState:
			n := len(in.stack)
			if n == 0 {
				return fail("restore_state without remember_state")
			}
			s := in.stack[n-1]
			in.stack = in.stack[:n-1]
			in.row.CFA, in.row.Regs, in.row.RASigned = s.cfa, s.regs, s.raSigned
		case cfaDefCFA, cfaDefCFASF:
			reg := r.uleb()
			var off int64
			if op == cfaDefCFASF {
				off = r.sleb() * in.cie.dataAlign
			} else {
				off = int64(r.uleb())
			}
			if r.err != nil {
				return fail("operands: %v", r.err)
			}
			dr, err := t.reg(reg, at)
			if err != nil {
				return err
			}
			in.row.CFA = unwind.CFA{Reg: dr, Offset: off}
		case cfaDefCFARegister:
			reg := r.uleb()
			if r.err != nil {
				return fail("operands: %v", r.err)
			}
			if in.row.CFA.Expr != nil {
				return fail("def_cfa_register while the CFA is an expression")
			}
			dr, err := t.reg(reg, at)
			if err != nil {
				return err
			}
			in.row.CFA.Reg = dr
		case cfaDefCFAOffset, cfaDefCFAOffsetSF:
			var off int64
			if op == cfaDefCFAOffsetSF {
				off = r.sleb() * in.cie.dataAlign
			} else {
				off = int64(r.uleb())
			}
			if r.err != nil {
				return fail("operands: %v", r.err)
			}
			if in.row.CFA.Expr != nil {
				return fail("def_cfa_offset while the CFA is an expression")
			}
			in.row.CFA.Offset = off
		case cfaDefCFAExpression:
			e, err := in.block(r, at, false)
			if err != nil {
				return err
			}
			in.row.CFA = unwind.CFA{Expr: e}
		case cfaExpression, cfaValExpression:
			reg := r.uleb()
			if r.err != nil {
				return fail("operands: %v", r.err)
			}
			e, err := in.block(r, at, true)
			if err != nil {
				return err
			}
			kind := unwind.Expression
			if op == cfaValExpression {
				kind = unwind.ValExpression
			}
			if err := in.set(reg, at, unwind.Rule{Kind: kind, Expr: e}); err != nil {
				return err
			}
		case cfaGNUArgsSize:
			n := r.uleb()
			if r.err != nil {
				return fail("operands: %v", r.err)
			}
			in.row.ArgsSize = n
		case cfaNegateRAState:
			if !t.negateRAState {
				return fail("DW_CFA_GNU_window_save is SPARC's; unsupported on %s", t.arch.Name)
			}
			in.row.RASigned = !in.row.RASigned
		default:
			return fail("unknown call frame instruction")
		}
	}
	return nil
}

// restore gives register r the rule the CIE's instructions left it, or
// none.
func (in *interp) restore(r unwind.Reg) {
	for _, rr := range in.initial {
		if rr.Reg == r {
			in.row.SetRule(r, rr.Rule)
			return
		}
	}
	regs := in.row.Regs
	for i := range regs {
		if regs[i].Reg == r {
			in.row.Regs = append(regs[:i:i], regs[i+1:]...)
			return
		}
	}
}

// set sets the rule of the table's register number reg.
func (in *interp) set(reg uint64, at int, rule unwind.Rule) error {
	dr, err := in.t.reg(reg, at)
	if err != nil {
		return err
	}
	in.row.SetRule(dr, rule)
	return nil
}

// block reads a DWARF expression's length and bytes.
func (in *interp) block(r *reader, at int, pushCFA bool) (*Expr, error) {
	n := r.uleb()
	if r.err == nil && n > uint64(r.left()) {
		return nil, in.t.errorf(at, "expression of %d bytes is longer than the %d bytes left in the record", n, r.left())
	}
	start := r.off
	code := r.bytes(int(n))
	if r.err != nil {
		return nil, in.t.errorf(at, "expression length: %v", r.err)
	}
	return &Expr{
		code:     code,
		off:      uint64(start),
		source:   in.t.source,
		addrSize: in.cie.addrSize,
		renumber: in.t.renumber,
		pushCFA:  pushCFA,
	}, nil
}
