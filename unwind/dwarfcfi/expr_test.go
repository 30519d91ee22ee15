package dwarfcfi

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/stackimage/stackimage/unwind"
)

// fakeContext is a frame for expression tests: registers, a CFA and a
// little-endian memory of 8-byte words.
type fakeContext struct {
	regs    map[unwind.Reg]uint64
	cfa     uint64
	haveCFA bool
	mem     map[uint64]uint64 // 8-byte words by address
	ptrSize int
}

func (c *fakeContext) Reg(r unwind.Reg) (uint64, bool) { v, ok := c.regs[r]; return v, ok }
func (c *fakeContext) CFA() (uint64, bool)             { return c.cfa, c.haveCFA }
func (c *fakeContext) PtrSize() int                    { return c.ptrSize }

func (c *fakeContext) ReadMemory(p []byte, addr uint64) (int, error) {
	for i := range p {
		a := addr + uint64(i)
		w, ok := c.mem[a&^7]
		if !ok {
			return i, errors.New("unmapped")
		}
		var b [8]byte
		binary.LittleEndian.PutUint64(b[:], w)
		p[i] = b[a&7]
	}
	return len(p), nil
}

func TestExprEval(t *testing.T) {
	ctx := &fakeContext{
		regs:    map[unwind.Reg]uint64{6: 0x7000, 7: 0x8000, 40: 0x40},
		cfa:     0x9000,
		haveCFA: true,
		mem:     map[uint64]uint64{0x8000: 0x1122334455667788, 0x8008: 0xfffffffffffffff0},
		ptrSize: 8,
	}
	tests := []struct {
		name     string
		code     []byte
		pushCFA  bool
		addrSize int
		want     uint64
	}{
		{"lit", []byte{opLit0 + 31}, false, 8, 31},
		{"pushes the CFA", nil, true, 8, 0x9000},
		{"CFA plus", []byte{opPlusUconst, 0x10}, true, 8, 0x9010},
		{"const1u", []byte{opConst1u, 0xff}, false, 8, 0xff},
		{"const1s", []byte{opConst1s, 0xff}, false, 8, ^uint64(0)},
		{"const2u", cat([]byte{opConst2u}, le16(0xfffe)), false, 8, 0xfffe},
		{"const2s", cat([]byte{opConst2s}, le16(0xfffe)), false, 8, ^uint64(1)},
		{"const4u", cat([]byte{opConst4u}, le32(0xfffffffe)), false, 8, 0xfffffffe},
		{"const4s", cat([]byte{opConst4s}, le32(0xfffffffe)), false, 8, ^uint64(1)},
		{"const8u", cat([]byte{opConst8u}, le64(1<<40)), false, 8, 1 << 40},
		{"const8s", cat([]byte{opConst8s}, le64(^uint64(2))), false, 8, ^uint64(2)},
		{"constu", cat([]byte{opConstu}, uleb(300)), false, 8, 300},
		{"consts", cat([]byte{opConsts}, sleb(-300)), false, 8, neg(300)},
		{"addr", cat([]byte{opAddr}, le64(0x123456789)), false, 8, 0x123456789},
		{"addr 4", cat([]byte{opAddr}, le32(0x12345678)), false, 4, 0x12345678},
		{"reg", []byte{opReg0 + 6}, false, 8, 0x7000},
		{"regx", cat([]byte{opRegx}, uleb(40)), false, 8, 0x40},
		{"breg", cat([]byte{opBreg0 + 7}, sleb(-8)), false, 8, 0x7ff8},
		{"bregx", cat([]byte{opBregx}, uleb(40), sleb(2)), false, 8, 0x42},
		{"call_frame_cfa", []byte{opCallFrameC}, false, 8, 0x9000},
		{"deref", []byte{opBreg0 + 7, 0, opDeref}, false, 8, 0x1122334455667788},
		{"deref 4", []byte{opBreg0 + 7, 0, opDeref}, false, 4, 0x55667788},
		{"deref_size", []byte{opBreg0 + 7, 1, opDerefSize, 2}, false, 8, 0x6677},
		{"dup plus", []byte{opLit0 + 3, opDup, opPlus}, false, 8, 6},
		{"drop", []byte{opLit0 + 3, opLit0 + 4, opDrop}, false, 8, 3},
		{"over", []byte{opLit0 + 3, opLit0 + 4, opOver}, false, 8, 3},
		{"pick", []byte{opLit0 + 1, opLit0 + 2, opLit0 + 3, opPick, 2}, false, 8, 1},
		{"swap minus", []byte{opLit0 + 3, opLit0 + 10, opSwap, opMinus}, false, 8, 7},
		{"rot", []byte{opLit0 + 1, opLit0 + 2, opLit0 + 3, opRot, opDrop, opDrop}, false, 8, 3},
		{"rot top", []byte{opLit0 + 1, opLit0 + 2, opLit0 + 3, opRot}, false, 8, 2},
		{"rot third", []byte{opLit0 + 1, opLit0 + 2, opLit0 + 3, opRot, opDrop}, false, 8, 1},
		{"abs", cat([]byte{opConsts}, sleb(-5), []byte{opAbs}), false, 8, 5},
		{"abs 4", cat([]byte{opConst4u}, le32(0xfffffffb), []byte{opAbs}), false, 4, 5},
		{"and", []byte{opLit0 + 12, opLit0 + 10, opAnd}, false, 8, 8},
		{"or", []byte{opLit0 + 12, opLit0 + 3, opOr}, false, 8, 15},
		{"xor", []byte{opLit0 + 12, opLit0 + 10, opXor}, false, 8, 6},
		{"div signed", cat([]byte{opConsts}, sleb(-12), []byte{opLit0 + 4, opDiv}), false, 8, neg(3)},
		{"mod", []byte{opLit0 + 14, opLit0 + 4, opMod}, false, 8, 2},
		{"mul", []byte{opLit0 + 6, opLit0 + 7, opMul}, false, 8, 42},
		{"neg", []byte{opLit0 + 6, opNeg}, false, 8, neg(6)},
		{"neg 4", []byte{opLit0 + 6, opNeg}, false, 4, 0xfffffffa},
		{"not", []byte{opLit0, opNot}, false, 8, ^uint64(0)},
		{"plus wraps 4", cat([]byte{opConst4u}, le32(0xffffffff), []byte{opLit0 + 2, opPlus}), false, 4, 1},
		{"shl", []byte{opLit0 + 1, opLit0 + 4, opShl}, false, 8, 16},
		{"shl by 64", []byte{opLit0 + 1, opConst1u, 64, opShl}, false, 8, 0},
		{"shr", []byte{opLit0 + 16, opLit0 + 4, opShr}, false, 8, 1},
		{"shra", cat([]byte{opConsts}, sleb(-16), []byte{opLit0 + 2, opShra}), false, 8, neg(4)},
		{"eq", []byte{opLit0 + 3, opLit0 + 3, opEq}, false, 8, 1},
		{"ge signed", cat([]byte{opConsts}, sleb(-1), []byte{opLit0, opGe}), false, 8, 0},
		{"gt", []byte{opLit0 + 4, opLit0 + 3, opGt}, false, 8, 1},
		{"le", []byte{opLit0 + 4, opLit0 + 3, opLe}, false, 8, 0},
		{"lt", cat([]byte{opConsts}, sleb(-1), []byte{opLit0, opLt}), false, 8, 1},
		{"ne", []byte{opLit0 + 4, opLit0 + 3, opNe}, false, 8, 1},
		{"skip", cat([]byte{opLit0 + 1, opSkip}, le16(1), []byte{opLit0 + 2}), false, 8, 1},
		{"bra taken", cat([]byte{opLit0 + 5, opLit0 + 1, opBra}, le16(1), []byte{opLit0 + 2}), false, 8, 5},
		{"bra not taken", cat([]byte{opLit0 + 5, opLit0, opBra}, le16(1), []byte{opLit0 + 2}), false, 8, 2},
		{"nop", []byte{opNop, opLit0 + 9, opNop}, false, 8, 9},
		// The PLT rule GCC emits on x86-64: CFA = rsp+8 + ((rip&15)>=11)<<3.
		{"plt", []byte{opBreg0 + 7, 8, opBreg0 + 6, 0, opLit0 + 15, opAnd, opLit0 + 11, opGe, opLit0 + 3, opShl, opPlus}, false, 8, 0x8008},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &Expr{code: tt.code, addrSize: tt.addrSize, pushCFA: tt.pushCFA, source: unwind.SourceEHFrame}
			got, err := e.Eval(ctx)
			if err != nil || got != tt.want {
				t.Errorf("Eval(% x) = %#x, %v; want %#x", tt.code, got, err, tt.want)
			}
		})
	}
}

func TestExprErrors(t *testing.T) {
	ctx := &fakeContext{regs: map[unwind.Reg]uint64{7: 0x8000}, mem: map[uint64]uint64{}, ptrSize: 8}
	deep := make([]byte, MaxExprStack+1)
	for i := range deep {
		deep[i] = opLit0
	}
	tests := []struct {
		name    string
		code    []byte
		pushCFA bool
		wantAt  int // offset in code; -1: not an *unwind.Error
		wantMsg string
	}{
		{"skip loop", cat([]byte{opLit0}, []byte{opSkip}, le16(0xfffd)), false, 1, "more than 10000 operations"},
		{"bra loop", cat([]byte{opLit0 + 1, opDup, opBra}, le16(0xfffc)), false, 2, "operations"},
		{"stack overflow", deep, false, MaxExprStack, "stack deeper"},
		{"empty at end", []byte{opNop}, false, 1, "empty"},
		{"pop empty", []byte{opPlus}, false, 0, "empty stack"},
		{"fbreg", cat([]byte{opLit0, 0x91}, sleb(8)), false, 1, "DW_OP_fbreg (0x91) unsupported"},
		{"unknown op", []byte{0xfe}, false, 0, "unknown operation 0xfe"},
		{"truncated operand", []byte{opConst4u, 1}, false, 0, "truncated"},
		{"branch outside", cat([]byte{opSkip}, le16(100)), false, 0, "outside"},
		{"div by zero", []byte{opLit0 + 1, opLit0, opDiv}, false, 2, "by zero"},
		{"mod by zero", []byte{opLit0 + 1, opLit0, opMod}, false, 2, "by zero"},
		{"unknown register", []byte{opBreg0 + 3, 0}, false, 0, "register 3 is not known"},
		{"CFA unknown", nil, true, 0, "CFA is not known"},
		{"call_frame_cfa unknown", []byte{opCallFrameC}, false, 0, "CFA is not known"},
		{"pick too deep", []byte{opLit0, opPick, 1}, false, 1, "entry 1"},
		{"deref_size too large", []byte{opLit0, opDerefSize, 9}, false, 1, "deref_size"},
		{"deref fault", []byte{opBreg0 + 7, 0, opDeref}, false, -1, "reading 8 bytes at 0x8000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &Expr{code: tt.code, off: 0x100, addrSize: 8, pushCFA: tt.pushCFA, source: unwind.SourceDebugFrame}
			_, err := e.Eval(ctx)
			if err == nil {
				t.Fatalf("Eval(% x) succeeded", tt.code)
			}
			if !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("Eval(% x) = %v, want it to say %q", tt.code, err, tt.wantMsg)
			}
			var ue *unwind.Error
			isUE := errors.As(err, &ue)
			if tt.wantAt < 0 {
				if isUE {
					t.Errorf("Eval(% x) = %v, a memory fault reported as bad unwind data", tt.code, err)
				}
				return
			}
			if !isUE || ue.Off != 0x100+uint64(tt.wantAt) || ue.Source != unwind.SourceDebugFrame {
				t.Errorf("Eval(% x) = %v, want an *unwind.Error in debug_frame at %#x", tt.code, err, 0x100+tt.wantAt)
			}
		})
	}
}

// neg returns -v in two's complement.
func neg(v int64) uint64 { return uint64(-v) }
