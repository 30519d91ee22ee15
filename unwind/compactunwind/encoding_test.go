package compactunwind

import (
	"errors"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/unwind"
)

// rowOf builds a row: CFA reg+off, then pairs of register and CFA offset
// (a register with offset 1 is SameValue).
func rowOf(arch *archregs.Arch, cfaReg unwind.Reg, cfaOff int64, regs ...int64) unwind.Row {
	row := unwind.Row{RA: arch.DWARFRA, CFA: unwind.CFA{Reg: cfaReg, Offset: cfaOff}}
	for i := 0; i < len(regs); i += 2 {
		rule := saved(regs[i+1])
		if regs[i+1] == 1 {
			rule = unwind.Rule{Kind: unwind.SameValue}
		}
		row.SetRule(unwind.Reg(regs[i]), rule)
	}
	return row
}

// codeAt is a CodeReader holding code at base.
type codeAt struct {
	base uint32
	code []byte
}

func (c codeAt) ReadAt(p []byte, off int64) (int, error) {
	if off < int64(c.base) || off >= int64(c.base)+int64(len(c.code)) {
		return 0, fmt.Errorf("no code at %#x", off)
	}
	n := copy(p, c.code[off-int64(c.base):])
	if n < len(p) {
		return n, fmt.Errorf("short read at %#x", off)
	}
	return n, nil
}

var sortRegs = cmpopts.SortSlices(func(a, b unwind.RegRule) bool { return a.Reg < b.Reg })

func TestRowFor(t *testing.T) {
	x64, x86, a64, a32 := archregs.X86_64, archregs.I386, archregs.ARM64, archregs.ARMV7
	// sub rsp, 0xbb8 at function offset 2 (after push rbp; push rbx
	// encoded as one byte each): the immediate is at offset 5.
	bigCode := codeAt{0x100, []byte{0x55, 0x53, 0x48, 0x81, 0xEC, 0xB8, 0x0B, 0x00, 0x00, 0xC3}}
	tests := []struct {
		name string
		arch *archregs.Arch
		enc  uint32
		code CodeReader
		want unwind.Row
		err  error  // a sentinel
		msg  string // or an *unwind.Error's message
	}{
		{name: "x86_64 rbp frame", arch: x64, enc: 0x01030011, // offset 3; rbx, r12
			want: rowOf(x64, 6, 16, 6, -16, 16, -8, 3, -40, 12, -32)},
		{name: "x86_64 rbp frame sparse", arch: x64, enc: 0x01050000 | 5<<12 | 1<<3, // offset 5; rbx in slot 1, r15 in slot 4
			want: rowOf(x64, 6, 16, 6, -16, 16, -8, 3, -48, 15, -24)},
		{name: "x86_64 frame register 7", arch: x64, enc: 0x01030007, msg: "names register 7"},
		{name: "x86_64 frame slot over the record", arch: x64, enc: 0x01010008, msg: "overlaps the saved frame pointer"},
		{name: "x86_64 frameless immediate", arch: x64, enc: 0x02040804, // 32 bytes; rbx, rbp
			want: rowOf(x64, 7, 32, 16, -8, 3, -24, 6, -16)},
		{name: "x86_64 frameless no registers", arch: x64, enc: 0x02010000,
			want: rowOf(x64, 7, 8, 16, -8)},
		{name: "x86_64 frameless indirect", arch: x64, enc: 0x03056804, code: bigCode, // imm at +5, adjust 3
			want: rowOf(x64, 7, 0xbb8+24, 16, -8, 3, -24, 6, -16)},
		{name: "x86_64 indirect outside function", arch: x64, enc: 0x03200000, code: bigCode, msg: "outside the function"},
		{name: "x86_64 indirect unreadable", arch: x64, enc: 0x03056804, code: codeAt{0x200, nil}, msg: "-"},
		{name: "x86_64 indirect no reader", arch: x64, enc: 0x03056804, msg: "-"},
		{name: "x86_64 permutation out of range", arch: x64, enc: 0x02040406, msg: "permutation 6 is out of range for 1"},
		{name: "x86_64 seven registers", arch: x64, enc: 0x02101C00, msg: "7 saved registers"},
		{name: "x86_64 stack too small", arch: x64, enc: 0x02010800, msg: "cannot hold"},
		{name: "x86_64 dwarf", arch: x64, enc: 0x04001234, err: ErrDWARF},
		{name: "x86_64 none", arch: x64, enc: 0, err: ErrNoInfo},
		{name: "x86_64 unknown mode", arch: x64, enc: 0x05000000, msg: "unknown mode 5"},
		{name: "i386 ebp frame", arch: x86, enc: 0x01020000 | 5 | 3<<3, // offset 2; esi, edx
			want: rowOf(x86, 4, 8, 4, -8, 8, -4, 6, -16, 2, -12)},
		{name: "i386 frameless", arch: x86, enc: 0x02050000 | 3<<10 | 0, // 20 bytes; ebx, ecx, edx
			want: rowOf(x86, 5, 20, 8, -4, 3, -16, 1, -12, 2, -8)},
		{name: "arm64 frame", arch: a64, enc: 0x04000101, // x19/x20, d8/d9
			want: rowOf(a64, 29, 16, 29, -16, 30, -8, 19, -24, 20, -32, 72, -40, 73, -48)},
		{name: "arm64 frame all pairs", arch: a64, enc: 0x04000F1F,
			want: rowOf(a64, 29, 16, 29, -16, 30, -8, 19, -24, 20, -32, 21, -40, 22, -48, 23, -56, 24, -64, 25, -72, 26, -80, 27, -88, 28, -96,
				72, -104, 73, -112, 74, -120, 75, -128, 76, -136, 77, -144, 78, -152, 79, -160)},
		{name: "arm64 frameless", arch: a64, enc: 0x02002001, // 32 bytes, x19/x20
			want: rowOf(a64, 31, 32, 30, 1, 19, -8, 20, -16)},
		{name: "arm64 frameless too small", arch: a64, enc: 0x02001003, msg: "cannot hold 32 bytes"},
		{name: "arm64 dwarf", arch: a64, enc: 0x03000040, err: ErrDWARF},
		{name: "arm64 unknown mode", arch: a64, enc: 0x01000000, msg: "unknown mode 1"},
		{name: "armv7 frame", arch: a32, enc: 0x01000000 | 0x07 | 0x08 | 0x20, // r4-r6, r8, r10
			want: rowOf(a32, 7, 8, 7, -8, 14, -4, 6, -12, 5, -16, 4, -20, 10, -24, 8, -28)},
		{name: "armv7 frame stack adjust", arch: a32, enc: 0x01400001, // 4 bytes, r4
			want: rowOf(a32, 7, 12, 7, -12, 14, -8, 4, -16)},
		{name: "armv7 frame d", arch: a32, enc: 0x02000101, // r4; d8, d10
			want: rowOf(a32, 7, 8, 7, -8, 14, -4, 4, -12, 264, -28, 266, -20)},
		{name: "armv7 dwarf", arch: a32, enc: 0x04000010, err: ErrDWARF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := Entry{FuncStart: 0x100, FuncEnd: 0x10a, Encoding: tt.enc, Off: 0x44}
			got, err := RowFor(tt.arch, e, tt.code)
			switch {
			case tt.err != nil:
				if !errors.Is(err, tt.err) {
					t.Errorf("RowFor(%#08x) error = %v, want %v", tt.enc, err, tt.err)
				}
			case tt.msg == "-":
				if err == nil {
					t.Errorf("RowFor(%#08x) = %+v, want an error", tt.enc, got)
				}
			case tt.msg != "":
				wantError(t, fmt.Sprintf("RowFor(%#08x)", tt.enc), err, 0x44, tt.msg)
			case err != nil:
				t.Errorf("RowFor(%#08x): %v", tt.enc, err)
			default:
				if diff := cmp.Diff(tt.want, got, sortRegs); diff != "" {
					t.Errorf("RowFor(%#08x) mismatch (-want +got):\n%s", tt.enc, diff)
				}
			}
		})
	}
}

// encodePermutation is the inverse of the frameless register permutation,
// from the encoding's definition: each register's rank among the registers
// not yet used, as digits of ranges 6, 5, 4, ... .
func encodePermutation(regs []int) uint32 {
	var used [7]bool
	var perm uint32
	for i, r := range regs {
		rank := 0
		for u := 1; u < r; u++ {
			if !used[u] {
				rank++
			}
		}
		used[r] = true
		perm = perm*uint32(6-i) + uint32(rank)
	}
	return perm
}

func TestPermutation(t *testing.T) {
	var selections func(prefix []int, k int, f func([]int))
	selections = func(prefix []int, k int, f func([]int)) {
		if len(prefix) == k {
			f(prefix)
			return
		}
	next:
		for r := 1; r <= 6; r++ {
			for _, p := range prefix {
				if p == r {
					continue next
				}
			}
			selections(append(prefix, r), k, f)
		}
	}
	n := 0
	for k := 0; k <= 6; k++ {
		max := uint32(0)
		selections(nil, k, func(regs []int) {
			n++
			perm := encodePermutation(regs)
			max = perm
			got, err := permutedRegisters(k, perm)
			if err != nil || !cmp.Equal(got, regs, cmpopts.EquateEmpty()) {
				t.Errorf("permutedRegisters(%d, %d) = %v, %v; want %v", k, perm, got, err, regs)
			}
		})
		// The next value is out of range (none fits 10 bits for k = 6).
		if _, err := permutedRegisters(k, max+1); err == nil && max+1 < 1024 {
			t.Errorf("permutedRegisters(%d, %d): no error", k, max+1)
		}
	}
	if n != 1957 { // the ordered selections of 0 to 6 of 6 registers
		t.Errorf("%d selections, want 1957", n)
	}
}

func TestDWARFOffset(t *testing.T) {
	for _, tt := range []struct {
		arch *archregs.Arch
		enc  uint32
		off  uint32
		ok   bool
	}{
		{archregs.X86_64, 0x04abcdef, 0xabcdef, true},
		{archregs.I386, 0x44000010, 0x10, true},
		{archregs.ARM64, 0x03000100, 0x100, true},
		{archregs.ARM64, 0x04000100, 0, false},
		{archregs.ARMV7, 0x04000008, 8, true},
		{archregs.X86_64, 0x01000000, 0, false},
	} {
		off, ok := Entry{Encoding: tt.enc}.DWARFOffset(tt.arch)
		if off != tt.off || ok != tt.ok {
			t.Errorf("DWARFOffset(%s, %#08x) = %#x, %v; want %#x, %v", tt.arch, tt.enc, off, ok, tt.off, tt.ok)
		}
	}
}

// aligned d-register slots of armv7 frames with more than four.
type fakeContext struct{ cfa uint64 }

func (c fakeContext) Reg(unwind.Reg) (uint64, bool) { return 0, false }
func (c fakeContext) CFA() (uint64, bool)           { return c.cfa, true }
func (c fakeContext) ReadMemory(p []byte, addr uint64) (int, error) {
	return 0, errors.New("no memory")
}
func (c fakeContext) PtrSize() int { return 4 }

func TestARMAlignedDRegisters(t *testing.T) {
	// r7 frame, no other registers, 7 d registers: d8-d14 stored at
	// (r7 - 56) & ^15 upward. With r7 = 0x1008, CFA = 0x1010.
	row, err := RowFor(archregs.ARMV7, Entry{Encoding: 0x02000600}, nil)
	if err != nil {
		t.Fatal(err)
	}
	base := (uint64(0x1008) - 56) &^ 15
	for k := 0; k < 7; k++ {
		r := row.Rule(unwind.Reg(264 + k))
		if r.Kind != unwind.Expression {
			t.Fatalf("d%d rule %v, want an expression", 8+k, r.Kind)
		}
		addr, err := r.Expr.Eval(fakeContext{cfa: 0x1010})
		if want := base + 8*uint64(k); err != nil || addr != want {
			t.Errorf("d%d at %#x, %v; want %#x", 8+k, addr, err, want)
		}
	}
	if r := row.Rule(264 + 7); r.Kind != unwind.Unspecified {
		t.Errorf("d15 rule %v, want none", r.Kind)
	}
}
