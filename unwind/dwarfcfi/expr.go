package dwarfcfi

import (
	"encoding/binary"
	"fmt"

	"github.com/stackimage/stackimage/unwind"
)

// Limits of expression evaluation. Real CFI expressions are a handful of
// operations (x86's PLT and stack-realignment rules are the longest seen);
// the limits only stop damaged or hostile ones.
const (
	// MaxExprSteps bounds the operations one evaluation executes, so a
	// DW_OP_skip or DW_OP_bra back-edge loop ends with an error.
	MaxExprSteps = 10000
	// MaxExprStack bounds the expression stack's depth.
	MaxExprStack = 256
)

// Expr is a DWARF expression of a CFA or register rule. It implements
// unwind.Expr. Its bytes are a slice of the table's section. An Expr is
// immutable and safe for concurrent use.
type Expr struct {
	code     []byte
	off      uint64 // the expression's first byte's offset in the section
	source   unwind.Source
	addrSize int
	renumber func(unwind.Reg) unwind.Reg // converts __debug_frame's register numbers (Table.renumber); nil when none
	pushCFA  bool                        // a register rule's expression: the CFA is pushed first
}

var _ unwind.Expr = (*Expr)(nil)

// Bytes returns the expression's DWARF bytecode (shared; do not modify).
func (e *Expr) Bytes() []byte { return e.code }

// Offset returns the byte offset of the expression in its section.
func (e *Expr) Offset() uint64 { return e.off }

// PushesCFA reports whether evaluation starts with the CFA on the stack:
// true for DW_CFA_expression and DW_CFA_val_expression, false for
// DW_CFA_def_cfa_expression.
func (e *Expr) PushesCFA() bool { return e.pushCFA }

// DWARF expression operations (DW_OP_*), DWARF 5 §2.5.
const (
	opAddr       = 0x03
	opDeref      = 0x06
	opConst1u    = 0x08
	opConst1s    = 0x09
	opConst2u    = 0x0a
	opConst2s    = 0x0b
	opConst4u    = 0x0c
	opConst4s    = 0x0d
	opConst8u    = 0x0e
	opConst8s    = 0x0f
	opConstu     = 0x10
	opConsts     = 0x11
	opDup        = 0x12
	opDrop       = 0x13
	opOver       = 0x14
	opPick       = 0x15
	opSwap       = 0x16
	opRot        = 0x17
	opAbs        = 0x19
	opAnd        = 0x1a
	opDiv        = 0x1b
	opMinus      = 0x1c
	opMod        = 0x1d
	opMul        = 0x1e
	opNeg        = 0x1f
	opNot        = 0x20
	opOr         = 0x21
	opPlus       = 0x22
	opPlusUconst = 0x23
	opShl        = 0x24
	opShr        = 0x25
	opShra       = 0x26
	opXor        = 0x27
	opBra        = 0x28
	opEq         = 0x29
	opGe         = 0x2a
	opGt         = 0x2b
	opLe         = 0x2c
	opLt         = 0x2d
	opNe         = 0x2e
	opSkip       = 0x2f
	opLit0       = 0x30
	opLit31      = 0x4f
	opReg0       = 0x50
	opReg31      = 0x6f
	opBreg0      = 0x70
	opBreg31     = 0x8f
	opRegx       = 0x90
	opBregx      = 0x92
	opDerefSize  = 0x94
	opNop        = 0x96
	opCallFrameC = 0x9c
)

// unsupportedOps names the operations that are valid DWARF but have no
// meaning in call frame information (or need context we do not have).
var unsupportedOps = map[byte]string{
	0x18: "DW_OP_xderef", 0x91: "DW_OP_fbreg", 0x93: "DW_OP_piece", 0x95: "DW_OP_xderef_size",
	0x97: "DW_OP_push_object_address", 0x98: "DW_OP_call2", 0x99: "DW_OP_call4", 0x9a: "DW_OP_call_ref",
	0x9b: "DW_OP_form_tls_address", 0x9d: "DW_OP_bit_piece", 0x9e: "DW_OP_implicit_value", 0x9f: "DW_OP_stack_value",
	0xe0: "DW_OP_GNU_push_tls_address", 0xf3: "DW_OP_GNU_entry_value",
}

// Eval evaluates the expression against the frame's registers and memory.
// For a register rule the CFA is pushed first and must be known (ctx.CFA).
// Bad bytecode, a step or stack limit hit, or an unknown register returns
// an *unwind.Error naming the operation's offset in the section; a memory
// read that fails returns an error wrapping the reader's.
func (e *Expr) Eval(ctx unwind.Context) (uint64, error) {
	ev := evaluator{e: e, ctx: ctx}
	if e.addrSize == 4 {
		ev.mask = 0xffffffff
	} else {
		ev.mask = ^uint64(0)
	}
	if e.pushCFA {
		cfa, ok := ctx.CFA()
		if !ok {
			return 0, ev.errorf(0, "the CFA is not known")
		}
		ev.stack = append(ev.stack, cfa&ev.mask)
	}
	return ev.run()
}

type evaluator struct {
	e     *Expr
	ctx   unwind.Context
	mask  uint64 // the generic type's bits: 32 or 64
	stack []uint64
}

func (ev *evaluator) errorf(at int, format string, args ...any) error {
	return &unwind.Error{Source: ev.e.source, Off: ev.e.off + uint64(at), Msg: "DWARF expression: " + fmt.Sprintf(format, args...)}
}

// signed returns v as a signed value of the generic type.
func (ev *evaluator) signed(v uint64) int64 {
	if ev.mask == 0xffffffff {
		return int64(int32(v))
	}
	return int64(v)
}

func (ev *evaluator) push(at int, v uint64) error {
	if len(ev.stack) >= MaxExprStack {
		return ev.errorf(at, "stack deeper than %d", MaxExprStack)
	}
	ev.stack = append(ev.stack, v&ev.mask)
	return nil
}

func (ev *evaluator) pop(at int, op byte) (uint64, error) {
	n := len(ev.stack)
	if n == 0 {
		return 0, ev.errorf(at, "op %#02x pops an empty stack", op)
	}
	v := ev.stack[n-1]
	ev.stack = ev.stack[:n-1]
	return v, nil
}

// reg reads the frame's value of a register named in the expression.
func (ev *evaluator) reg(at int, r uint64) (uint64, error) {
	if r > 0xffff {
		return 0, ev.errorf(at, "register number %d out of range", r)
	}
	dr := unwind.Reg(r)
	if ev.e.renumber != nil {
		dr = ev.e.renumber(dr)
	}
	v, ok := ev.ctx.Reg(dr)
	if !ok {
		return 0, ev.errorf(at, "register %d is not known", dr)
	}
	return v, nil
}

func (ev *evaluator) deref(at int, addr uint64, size int) (uint64, error) {
	var buf [8]byte
	n, err := ev.ctx.ReadMemory(buf[:size], addr)
	if n < size {
		if err == nil {
			err = fmt.Errorf("short read of %d bytes", n)
		}
		return 0, fmt.Errorf("%s: DWARF expression at offset %#x: reading %d bytes at %#x: %w", ev.e.source, ev.e.off+uint64(at), size, addr, err)
	}
	return binary.LittleEndian.Uint64(buf[:]), nil
}

func (ev *evaluator) run() (uint64, error) {
	code := ev.e.code
	r := &reader{data: code, end: len(code)}
	for steps := 0; r.off < len(code); steps++ {
		if steps >= MaxExprSteps {
			return 0, ev.errorf(r.off, "more than %d operations executed", MaxExprSteps)
		}
		at := r.off
		op := r.u8()
		var err error
		switch {
		case op >= opLit0 && op <= opLit31:
			err = ev.push(at, uint64(op-opLit0))
		case op >= opReg0 && op <= opReg31:
			var v uint64
			if v, err = ev.reg(at, uint64(op-opReg0)); err == nil {
				err = ev.push(at, v)
			}
		case op >= opBreg0 && op <= opBreg31:
			off := r.sleb()
			if r.err != nil {
				break
			}
			var v uint64
			if v, err = ev.reg(at, uint64(op-opBreg0)); err == nil {
				err = ev.push(at, v+uint64(off))
			}
		default:
			err = ev.step(r, at, op)
		}
		if r.err != nil {
			return 0, ev.errorf(at, "op %#02x operand: %v", op, r.err)
		}
		if err != nil {
			return 0, err
		}
	}
	if len(ev.stack) == 0 {
		return 0, ev.errorf(len(code), "the stack is empty at the end")
	}
	return ev.stack[len(ev.stack)-1], nil
}

// step executes one operation other than the lit, reg and breg families.
func (ev *evaluator) step(r *reader, at int, op byte) error {
	switch op {
	case opNop:
		return nil
	case opAddr:
		return ev.push(at, r.uint(ev.e.addrSize))
	case opConst1u:
		return ev.push(at, uint64(r.u8()))
	case opConst1s:
		return ev.push(at, uint64(int64(int8(r.u8()))))
	case opConst2u:
		return ev.push(at, uint64(r.u16()))
	case opConst2s:
		return ev.push(at, uint64(int64(int16(r.u16()))))
	case opConst4u:
		return ev.push(at, uint64(r.u32()))
	case opConst4s:
		return ev.push(at, uint64(int64(int32(r.u32()))))
	case opConst8u, opConst8s:
		return ev.push(at, r.u64())
	case opConstu:
		return ev.push(at, r.uleb())
	case opConsts:
		return ev.push(at, uint64(r.sleb()))
	case opRegx:
		n := r.uleb()
		if r.err != nil {
			return nil
		}
		v, err := ev.reg(at, n)
		if err != nil {
			return err
		}
		return ev.push(at, v)
	case opBregx:
		n, off := r.uleb(), r.sleb()
		if r.err != nil {
			return nil
		}
		v, err := ev.reg(at, n)
		if err != nil {
			return err
		}
		return ev.push(at, v+uint64(off))
	case opCallFrameC:
		cfa, ok := ev.ctx.CFA()
		if !ok {
			return ev.errorf(at, "DW_OP_call_frame_cfa while the CFA is not known")
		}
		return ev.push(at, cfa)
	case opDup, opOver, opPick:
		idx := 0
		switch op {
		case opOver:
			idx = 1
		case opPick:
			idx = int(r.u8())
		}
		if idx >= len(ev.stack) {
			return ev.errorf(at, "op %#02x reads entry %d of a %d-entry stack", op, idx, len(ev.stack))
		}
		return ev.push(at, ev.stack[len(ev.stack)-1-idx])
	case opDrop:
		_, err := ev.pop(at, op)
		return err
	case opSwap:
		n := len(ev.stack)
		if n < 2 {
			return ev.errorf(at, "DW_OP_swap on a %d-entry stack", n)
		}
		ev.stack[n-1], ev.stack[n-2] = ev.stack[n-2], ev.stack[n-1]
		return nil
	case opRot:
		n := len(ev.stack)
		if n < 3 {
			return ev.errorf(at, "DW_OP_rot on a %d-entry stack", n)
		}
		// The top entry moves to third place; the second and third move up.
		s := ev.stack[n-3:]
		s[0], s[1], s[2] = s[2], s[0], s[1]
		return nil
	case opDeref, opDerefSize:
		size := ev.e.addrSize
		if op == opDerefSize {
			size = int(r.u8())
			if r.err != nil {
				return nil
			}
			if size < 1 || size > ev.e.addrSize {
				return ev.errorf(at, "DW_OP_deref_size of %d bytes", size)
			}
		}
		addr, err := ev.pop(at, op)
		if err != nil {
			return err
		}
		v, err := ev.deref(at, addr, size)
		if err != nil {
			return err
		}
		return ev.push(at, v)
	case opAbs, opNeg, opNot:
		v, err := ev.pop(at, op)
		if err != nil {
			return err
		}
		switch op {
		case opAbs:
			if s := ev.signed(v); s < 0 {
				v = uint64(-s)
			}
		case opNeg:
			v = uint64(-ev.signed(v))
		case opNot:
			v = ^v
		}
		return ev.push(at, v)
	case opPlusUconst:
		n := r.uleb()
		if r.err != nil {
			return nil
		}
		v, err := ev.pop(at, op)
		if err != nil {
			return err
		}
		return ev.push(at, v+n)
	case opAnd, opDiv, opMinus, opMod, opMul, opOr, opPlus, opShl, opShr, opShra, opXor,
		opEq, opGe, opGt, opLe, opLt, opNe:
		b, err := ev.pop(at, op)
		if err != nil {
			return err
		}
		a, err := ev.pop(at, op)
		if err != nil {
			return err
		}
		v, err := ev.binary(at, op, a, b)
		if err != nil {
			return err
		}
		return ev.push(at, v)
	case opSkip, opBra:
		delta := int(int16(r.u16()))
		if r.err != nil {
			return nil
		}
		if op == opBra {
			v, err := ev.pop(at, op)
			if err != nil {
				return err
			}
			if v == 0 {
				return nil
			}
		}
		target := r.off + delta
		if target < 0 || target > len(ev.e.code) {
			return ev.errorf(at, "branch to %d, outside the %d-byte expression", target, len(ev.e.code))
		}
		r.off = target
		return nil
	}
	if name, ok := unsupportedOps[op]; ok {
		return ev.errorf(at, "%s (%#02x) unsupported in call frame information", name, op)
	}
	return ev.errorf(at, "unknown operation %#02x", op)
}

// binary applies a two-operand operation: a is the second entry, b the top.
func (ev *evaluator) binary(at int, op byte, a, b uint64) (uint64, error) {
	sa, sb := ev.signed(a), ev.signed(b)
	flag := func(c bool) uint64 {
		if c {
			return 1
		}
		return 0
	}
	switch op {
	case opAnd:
		return a & b, nil
	case opOr:
		return a | b, nil
	case opXor:
		return a ^ b, nil
	case opPlus:
		return a + b, nil
	case opMinus:
		return a - b, nil
	case opMul:
		return a * b, nil
	case opDiv:
		if sb == 0 {
			return 0, ev.errorf(at, "DW_OP_div by zero")
		}
		return uint64(sa / sb), nil // Go defines MinInt64 / -1 as MinInt64
	case opMod:
		if b == 0 {
			return 0, ev.errorf(at, "DW_OP_mod by zero")
		}
		return a % b, nil
	case opShl:
		if b >= 64 {
			return 0, nil
		}
		return a << b, nil
	case opShr:
		if b >= 64 {
			return 0, nil
		}
		return a >> b, nil
	case opShra:
		if b >= 64 {
			b = 63
		}
		return uint64(sa >> b), nil
	case opEq:
		return flag(sa == sb), nil
	case opGe:
		return flag(sa >= sb), nil
	case opGt:
		return flag(sa > sb), nil
	case opLe:
		return flag(sa <= sb), nil
	case opLt:
		return flag(sa < sb), nil
	default: // opNe
		return flag(sa != sb), nil
	}
}
