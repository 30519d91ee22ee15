package walker

import (
	"reflect"
	"testing"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/unwind"
)

// The code inspection (inspect.go), instruction by instruction: for each
// function below, the row it gives at every instruction boundary, as a
// compiler's asynchronous CFI would describe it.

const inspectBase = 0x100004000

// rowAt is what a test expects at one PC: the CFA as register + offset,
// and the return address at CFA + raOff (raInLR: in LR instead).
type rowAt struct {
	off    uint64
	cfaReg unwind.Reg
	cfaOff int64
	raInLR bool
	raOff  int64
	// saved lists registers saved at CFA + offset.
	saved map[unwind.Reg]int64
}

func byteCode(parts ...[]byte) []byte {
	var b []byte
	for _, p := range parts {
		b = append(b, p...)
	}
	return b
}

func wordCode(words ...uint32) []byte {
	var b []byte
	for _, w := range words {
		b = append(b, le32(w)...)
	}
	return b
}

// inspectAt returns the row inspectRow gives for frame 0 at off in code.
func inspectAt(t *testing.T, arch *archregs.Arch, code []byte, off uint64) *unwind.Row {
	t.Helper()
	return inspectAtMode(t, arch, code, off, false)
}

// inspectAtMode is inspectAt with frame 0 in Thumb code when thumb is set
// (armv7's CPSR.T).
func inspectAtMode(t *testing.T, arch *archregs.Arch, code []byte, off uint64, thumb bool) *unwind.Row {
	t.Helper()
	return inspectWith(arch, code, off, thumb, nil)
}

// inspectWith is inspectAtMode with an InspectCache (nil for none).
func inspectWith(arch *archregs.Arch, code []byte, off uint64, thumb bool, cache *InspectCache) *unwind.Row {
	mem := &memory{base: inspectBase, data: append(append([]byte(nil), code...), make([]byte, 64)...)}
	w := newWalk(arch, archInfos[arch.CPUType], nil, Options{Instructions: mem,
		Functions: funcStarts{inspectBase, inspectBase + uint64(len(code))}, Inspections: cache})
	w.thumb = thumb
	pc := inspectBase + off
	return w.inspectRow(&Frame{ReturnAddress: pc, LookupAddress: pc})
}

func checkRows(t *testing.T, arch *archregs.Arch, code []byte, want []rowAt) {
	t.Helper()
	checkRowsMode(t, arch, code, want, false)
}

func checkRowsMode(t *testing.T, arch *archregs.Arch, code []byte, want []rowAt, thumb bool) {
	t.Helper()
	for _, tt := range want {
		row := inspectAtMode(t, arch, code, tt.off, thumb)
		if row == nil {
			t.Errorf("%s+%#x: no row", arch.Name, tt.off)
			continue
		}
		if row.CFA.Reg != tt.cfaReg || row.CFA.Offset != tt.cfaOff {
			t.Errorf("%s+%#x: CFA = r%d%+d, want r%d%+d", arch.Name, tt.off, row.CFA.Reg, row.CFA.Offset, tt.cfaReg, tt.cfaOff)
		}
		ra := row.Rule(arch.DWARFRA)
		switch {
		case tt.raInLR && ra.Kind != unwind.SameValue:
			t.Errorf("%s+%#x: return address rule %v%+d, want in LR", arch.Name, tt.off, ra.Kind, ra.Offset)
		case !tt.raInLR && (ra.Kind != unwind.Offset || ra.Offset != tt.raOff):
			t.Errorf("%s+%#x: return address rule %v%+d, want at CFA%+d", arch.Name, tt.off, ra.Kind, ra.Offset, tt.raOff)
		}
		for reg, off := range tt.saved {
			if r := row.Rule(reg); r.Kind != unwind.Offset || r.Offset != off {
				t.Errorf("%s+%#x: r%d rule %v%+d, want at CFA%+d", arch.Name, tt.off, reg, r.Kind, r.Offset, off)
			}
		}
		for _, rr := range row.Regs {
			if _, ok := tt.saved[rr.Reg]; !ok && rr.Reg != arch.DWARFRA {
				t.Errorf("%s+%#x: r%d has rule %v%+d, want none", arch.Name, tt.off, rr.Reg, rr.Rule.Kind, rr.Rule.Offset)
			}
		}
	}
}

func TestInspectARM64(t *testing.T) {
	const sp, fp, lr = 31, 29, 30
	t.Run("frame with saved registers", func(t *testing.T) {
		code := wordCode(
			0xd10103ff, // 0x00 sub sp, sp, #0x40
			0xa9024ff4, // 0x04 stp x20, x19, [sp, #0x20]
			0xa9037bfd, // 0x08 stp x29, x30, [sp, #0x30]
			0x9100c3fd, // 0x0c add x29, sp, #0x30
			0x94000000, // 0x10 bl
			0xa9437bfd, // 0x14 ldp x29, x30, [sp, #0x30]
			0xa9424ff4, // 0x18 ldp x20, x19, [sp, #0x20]
			0x910103ff, // 0x1c add sp, sp, #0x40
			0xd65f03c0, // 0x20 ret
		)
		saves := map[unwind.Reg]int64{20: -0x20, 19: -0x18}
		all := map[unwind.Reg]int64{20: -0x20, 19: -0x18, fp: -0x10}
		checkRows(t, archregs.ARM64, code, []rowAt{
			{off: 0x00, cfaReg: sp, raInLR: true},
			{off: 0x04, cfaReg: sp, cfaOff: 0x40, raInLR: true},
			{off: 0x08, cfaReg: sp, cfaOff: 0x40, raInLR: true, saved: saves},
			{off: 0x0c, cfaReg: sp, cfaOff: 0x40, raOff: -8, saved: all},
			{off: 0x10, cfaReg: fp, cfaOff: 0x10, raOff: -8, saved: all},
			{off: 0x14, cfaReg: fp, cfaOff: 0x10, raOff: -8, saved: all},
			{off: 0x18, cfaReg: sp, cfaOff: 0x40, raInLR: true, saved: saves},
			{off: 0x1c, cfaReg: sp, cfaOff: 0x40, raInLR: true},
			{off: 0x20, cfaReg: sp, raInLR: true},
		})
	})
	t.Run("early return, pre- and post-indexed record", func(t *testing.T) {
		code := wordCode(
			0x34000100, // 0x00 cbz w0, 0x20
			0xa9bf7bfd, // 0x04 stp x29, x30, [sp, #-16]!
			0x910003fd, // 0x08 mov x29, sp
			0x94000000, // 0x0c bl
			0xa8c17bfd, // 0x10 ldp x29, x30, [sp], #16
			0xd65f03c0, // 0x14 ret
			0xd503201f, // 0x18 nop
			0xd503201f, // 0x1c nop
			0x52800020, // 0x20 mov w0, #1: the early return, with the entry's frame
			0xd65f03c0, // 0x24 ret
		)
		record := map[unwind.Reg]int64{fp: -0x10}
		checkRows(t, archregs.ARM64, code, []rowAt{
			{off: 0x00, cfaReg: sp, raInLR: true},
			{off: 0x04, cfaReg: sp, raInLR: true},
			{off: 0x08, cfaReg: sp, cfaOff: 0x10, raOff: -8, saved: record},
			{off: 0x0c, cfaReg: fp, cfaOff: 0x10, raOff: -8, saved: record},
			{off: 0x10, cfaReg: fp, cfaOff: 0x10, raOff: -8, saved: record},
			{off: 0x14, cfaReg: sp, raInLR: true},
			{off: 0x20, cfaReg: sp, raInLR: true},
			{off: 0x24, cfaReg: sp, raInLR: true},
		})
	})
	t.Run("leaf storing a 32-bit value with writeback", func(t *testing.T) {
		code := wordCode(
			0xb81f0fe8, // 0x00 str w8, [sp, #-16]!
			0x529f136a, // 0x04 mov w10, #0xf89b
			0x910043ff, // 0x08 add sp, sp, #16
			0xd65f03c0, // 0x0c ret
		)
		checkRows(t, archregs.ARM64, code, []rowAt{
			{off: 0x04, cfaReg: sp, cfaOff: 0x10, raInLR: true},
			{off: 0x08, cfaReg: sp, cfaOff: 0x10, raInLR: true},
			{off: 0x0c, cfaReg: sp, raInLR: true},
		})
	})
	t.Run("alloca: SP lost, the CFA follows FP", func(t *testing.T) {
		code := wordCode(
			0xa9bf7bfd, // 0x00 stp x29, x30, [sp, #-16]!
			0x910003fd, // 0x04 mov x29, sp
			0xcb2863ff, // 0x08 sub sp, sp, x8
			0x94000000, // 0x0c bl
			0x910003bf, // 0x10 mov sp, x29
			0xa8c17bfd, // 0x14 ldp x29, x30, [sp], #16
			0xd65f03c0, // 0x18 ret
		)
		record := map[unwind.Reg]int64{fp: -0x10}
		checkRows(t, archregs.ARM64, code, []rowAt{
			{off: 0x0c, cfaReg: fp, cfaOff: 0x10, raOff: -8, saved: record},
			{off: 0x10, cfaReg: fp, cfaOff: 0x10, raOff: -8, saved: record},
			{off: 0x14, cfaReg: fp, cfaOff: 0x10, raOff: -8, saved: record},
			{off: 0x18, cfaReg: sp, raInLR: true},
		})
		// Without FP, a lost SP gives no row.
		lost := wordCode(0xd10043ff, 0xcb2863ff, 0xd503201f) // sub sp, sp, #16; sub sp, sp, x8; nop
		if row := inspectAt(t, archregs.ARM64, lost, 8); row != nil {
			t.Errorf("SP lost without FP: row %+v, want none", row.CFA)
		}
	})
	t.Run("a body's spill is no save; FP and LR restored first", func(t *testing.T) {
		// As clang -O1 -fomit-frame-pointer laid out a generated program
		// (gen237719483's f11): the walk from the instructions after
		// `ldp x29, x30` stopped at the caller, x11's spill giving a rule
		// whose slot lay below SP.
		code := wordCode(
			0xa9ba6ffc, // 0x00 stp x28, x27, [sp, #-0x60]!
			0xa9044ff4, // 0x04 stp x20, x19, [sp, #0x40]
			0xa9057bfd, // 0x08 stp x29, x30, [sp, #0x50]
			0xd11103ff, // 0x0c sub sp, sp, #0x440
			0xf90017eb, // 0x10 str x11, [sp, #0x28]: a temporary spilled
			0x94000000, // 0x14 bl
			0x911103ff, // 0x18 add sp, sp, #0x440
			0xa9457bfd, // 0x1c ldp x29, x30, [sp, #0x50]
			0xa9444ff4, // 0x20 ldp x20, x19, [sp, #0x40]
			0xa8c66ffc, // 0x24 ldp x28, x27, [sp], #0x60
			0xd65f03c0, // 0x28 ret
		)
		outer := map[unwind.Reg]int64{28: -0x60, 27: -0x58}
		inner := map[unwind.Reg]int64{28: -0x60, 27: -0x58, 20: -0x20, 19: -0x18}
		all := map[unwind.Reg]int64{28: -0x60, 27: -0x58, 20: -0x20, 19: -0x18, fp: -0x10}
		checkRows(t, archregs.ARM64, code, []rowAt{
			{off: 0x14, cfaReg: sp, cfaOff: 0x4a0, raOff: -8, saved: all},
			{off: 0x1c, cfaReg: sp, cfaOff: 0x60, raOff: -8, saved: all},
			{off: 0x20, cfaReg: sp, cfaOff: 0x60, raInLR: true, saved: inner},
			{off: 0x24, cfaReg: sp, cfaOff: 0x60, raInLR: true, saved: outer},
			{off: 0x28, cfaReg: sp, raInLR: true},
		})
		// A callee-saved register stored in the body and never restored:
		// once the epilogue moved SP above its slot, the slot is dead.
		dead := append(wordCode(0xa9ba6ffc, 0xa9057bfd, 0xd11103ff,
			0xf90007f5, // str x21, [sp, #0x8]
			0x911103ff), code[0x1c:]...)
		checkRows(t, archregs.ARM64, dead, []rowAt{
			{off: 0x10, cfaReg: sp, cfaOff: 0x4a0, raOff: -8, saved: map[unwind.Reg]int64{28: -0x60, 27: -0x58, fp: -0x10, 21: -0x498}},
			{off: 0x14, cfaReg: sp, cfaOff: 0x60, raOff: -8, saved: map[unwind.Reg]int64{28: -0x60, 27: -0x58, fp: -0x10}},
		})
	})
	t.Run("no code", func(t *testing.T) {
		if row := inspectAt(t, archregs.ARM64, wordCode(0, 0xd65f03c0), 4); row != nil {
			t.Errorf("udf before the PC: row %+v, want none", row.CFA)
		}
	})
	_ = lr
}

func TestInspectX86_64(t *testing.T) {
	const sp, fp, rbx, r14 = 7, 6, 3, 14
	t.Run("frameless, callee-saved pushes", func(t *testing.T) {
		code := byteCode(
			[]byte{0x55},                   // 0x00 push rbp
			[]byte{0x41, 0x56},             // 0x01 push r14
			[]byte{0x53},                   // 0x03 push rbx
			[]byte{0x48, 0x83, 0xec, 0x10}, // 0x04 sub rsp, 0x10
			[]byte{0xe8, 0, 0, 0, 0},       // 0x08 call
			[]byte{0x48, 0x83, 0xc4, 0x10}, // 0x0d add rsp, 0x10
			[]byte{0x5b},                   // 0x11 pop rbx
			[]byte{0x41, 0x5e},             // 0x12 pop r14
			[]byte{0x5d},                   // 0x14 pop rbp
			[]byte{0xc3},                   // 0x15 ret
		)
		s1 := map[unwind.Reg]int64{fp: -16}
		s2 := map[unwind.Reg]int64{fp: -16, r14: -24}
		s3 := map[unwind.Reg]int64{fp: -16, r14: -24, rbx: -32}
		checkRows(t, archregs.X86_64, code, []rowAt{
			{off: 0x00, cfaReg: sp, cfaOff: 8, raOff: -8},
			{off: 0x01, cfaReg: sp, cfaOff: 16, raOff: -8, saved: s1},
			{off: 0x03, cfaReg: sp, cfaOff: 24, raOff: -8, saved: s2},
			{off: 0x04, cfaReg: sp, cfaOff: 32, raOff: -8, saved: s3},
			{off: 0x08, cfaReg: sp, cfaOff: 48, raOff: -8, saved: s3},
			{off: 0x0d, cfaReg: sp, cfaOff: 48, raOff: -8, saved: s3},
			{off: 0x11, cfaReg: sp, cfaOff: 32, raOff: -8, saved: s3},
			{off: 0x12, cfaReg: sp, cfaOff: 24, raOff: -8, saved: s2},
			{off: 0x14, cfaReg: sp, cfaOff: 16, raOff: -8, saved: s1},
			{off: 0x15, cfaReg: sp, cfaOff: 8, raOff: -8},
		})
	})
	t.Run("frame pointer and alloca", func(t *testing.T) {
		code := byteCode(
			[]byte{0x55},                   // 0x00 push rbp
			[]byte{0x48, 0x89, 0xe5},       // 0x01 mov rbp, rsp
			[]byte{0x53},                   // 0x04 push rbx
			[]byte{0x48, 0x29, 0xc4},       // 0x05 sub rsp, rax
			[]byte{0xe8, 0, 0, 0, 0},       // 0x08 call
			[]byte{0x48, 0x8d, 0x65, 0xf8}, // 0x0d lea rsp, [rbp-8]
			[]byte{0x5b},                   // 0x11 pop rbx
			[]byte{0x5d},                   // 0x12 pop rbp
			[]byte{0xc3},                   // 0x13 ret
		)
		s1 := map[unwind.Reg]int64{fp: -16}
		s2 := map[unwind.Reg]int64{fp: -16, rbx: -24}
		checkRows(t, archregs.X86_64, code, []rowAt{
			{off: 0x01, cfaReg: sp, cfaOff: 16, raOff: -8, saved: s1},
			{off: 0x04, cfaReg: fp, cfaOff: 16, raOff: -8, saved: s1},
			{off: 0x05, cfaReg: fp, cfaOff: 16, raOff: -8, saved: s2},
			{off: 0x08, cfaReg: fp, cfaOff: 16, raOff: -8, saved: s2},
			{off: 0x0d, cfaReg: fp, cfaOff: 16, raOff: -8, saved: s2},
			{off: 0x11, cfaReg: fp, cfaOff: 16, raOff: -8, saved: s2},
			{off: 0x12, cfaReg: fp, cfaOff: 16, raOff: -8, saved: s1},
			{off: 0x13, cfaReg: sp, cfaOff: 8, raOff: -8},
		})
	})
	t.Run("early return to a block after the return", func(t *testing.T) {
		code := byteCode(
			[]byte{0x85, 0xff},       // 0x00 test edi, edi
			[]byte{0x74, 0x0a},       // 0x02 je 0x0e
			[]byte{0x53},             // 0x04 push rbx
			[]byte{0xe8, 0, 0, 0, 0}, // 0x05 call
			[]byte{0x5b},             // 0x0a pop rbx
			[]byte{0xc3},             // 0x0b ret
			[]byte{0x90, 0x90},       // 0x0c nop; nop
			[]byte{0x31, 0xc0},       // 0x0e xor eax, eax
			[]byte{0xc3},             // 0x10 ret
		)
		checkRows(t, archregs.X86_64, code, []rowAt{
			{off: 0x04, cfaReg: sp, cfaOff: 8, raOff: -8},
			{off: 0x05, cfaReg: sp, cfaOff: 16, raOff: -8, saved: map[unwind.Reg]int64{rbx: -16}},
			{off: 0x0b, cfaReg: sp, cfaOff: 8, raOff: -8},
			{off: 0x0e, cfaReg: sp, cfaOff: 8, raOff: -8},
			{off: 0x10, cfaReg: sp, cfaOff: 8, raOff: -8},
		})
	})
	t.Run("arguments pushed, then a block after a jump", func(t *testing.T) {
		// A generated program's f2 (seed 1830791055, built without
		// unwind tables): the arguments a call takes on the stack are
		// pushed after the prologue; the block after the jump, reached
		// backwards, is in the prologue's frame, not the pushes'.
		code := byteCode(
			[]byte{0x55},                   // 0x00 push rbp
			[]byte{0x41, 0x57},             // 0x01 push r15
			[]byte{0x50},                   // 0x03 push rax: a word of the frame
			[]byte{0x89, 0xf8},             // 0x04 mov eax, edi
			[]byte{0x41, 0x57},             // 0x06 push r15: an argument
			[]byte{0x41, 0x53},             // 0x08 push r11
			[]byte{0xff, 0x74, 0x24, 0x50}, // 0x0a push [rsp+0x50]
			[]byte{0xe8, 0, 0, 0, 0},       // 0x0e call
			[]byte{0x48, 0x83, 0xc4, 0x18}, // 0x13 add rsp, 0x18
			[]byte{0xeb, 0x02},             // 0x17 jmp 0x1b
			[]byte{0xeb, 0xfc},             // 0x19 jmp 0x17: reached backwards
			[]byte{0x59},                   // 0x1b pop rcx
			[]byte{0x41, 0x5f},             // 0x1c pop r15
			[]byte{0x5d},                   // 0x1e pop rbp
			[]byte{0xc3},                   // 0x1f ret
		)
		s := map[unwind.Reg]int64{fp: -16, 15: -24}
		checkRows(t, archregs.X86_64, code, []rowAt{
			{off: 0x04, cfaReg: sp, cfaOff: 32, raOff: -8, saved: s},
			{off: 0x0e, cfaReg: sp, cfaOff: 56, raOff: -8, saved: s},
			{off: 0x17, cfaReg: sp, cfaOff: 32, raOff: -8, saved: s},
			{off: 0x19, cfaReg: sp, cfaOff: 32, raOff: -8, saved: s},
			{off: 0x1b, cfaReg: sp, cfaOff: 32, raOff: -8, saved: s},
		})
	})
	t.Run("Swift async frame: lea rbp, callee-popped word", func(t *testing.T) {
		code := byteCode(
			[]byte{0x48, 0x0f, 0xba, 0xed, 0x3c}, // 0x00 btsq $0x3c, %rbp
			[]byte{0x55},                         // 0x05 push rbp
			[]byte{0x41, 0x56},                   // 0x06 push r14
			[]byte{0x48, 0x8d, 0x6c, 0x24, 0x08}, // 0x08 lea rbp, [rsp+8]
			[]byte{0x48, 0x83, 0xec, 0x08},       // 0x0d sub rsp, 8
			[]byte{0xe8, 0, 0, 0, 0},             // 0x11 call (the callee returns with ret 8)
			[]byte{0x48, 0x83, 0xec, 0x08},       // 0x16 sub rsp, 8: the popped word back
			[]byte{0x48, 0x83, 0xc4, 0x08},       // 0x1a add rsp, 8
			[]byte{0x41, 0x5e},                   // 0x1e pop r14
			[]byte{0x5d},                         // 0x20 pop rbp
			[]byte{0xc2, 0x08, 0x00},             // 0x21 ret 8
		)
		s := map[unwind.Reg]int64{fp: -16, r14: -24}
		checkRows(t, archregs.X86_64, code, []rowAt{
			{off: 0x08, cfaReg: sp, cfaOff: 24, raOff: -8, saved: s},
			{off: 0x0d, cfaReg: fp, cfaOff: 16, raOff: -8, saved: s},
			{off: 0x1a, cfaReg: fp, cfaOff: 16, raOff: -8, saved: s},
			{off: 0x20, cfaReg: fp, cfaOff: 16, raOff: -8, saved: map[unwind.Reg]int64{fp: -16}},
			{off: 0x21, cfaReg: sp, cfaOff: 8, raOff: -8},
		})
	})
	t.Run("mid-instruction PC and zeros give no row", func(t *testing.T) {
		code := byteCode([]byte{0x48, 0x83, 0xec, 0x10}, []byte{0xc3})
		if row := inspectAt(t, archregs.X86_64, code, 2); row != nil {
			t.Errorf("PC inside sub rsp: row %+v, want none", row.CFA)
		}
		if row := inspectAt(t, archregs.X86_64, []byte{0, 0, 0xc3}, 2); row != nil {
			t.Errorf("zeros before the PC: row %+v, want none", row.CFA)
		}
	})
}

func TestInspectI386(t *testing.T) {
	// Darwin's i386 __eh_frame numbering: EBP 4, ESP 5, EIP 8.
	const sp, fp, ebx, esi, edi = 5, 4, 3, 6, 7
	t.Run("frame pointer, saves, get-PC idiom", func(t *testing.T) {
		code := byteCode(
			[]byte{0x55},             // 0x00 push ebp
			[]byte{0x89, 0xe5},       // 0x01 mov ebp, esp
			[]byte{0x57},             // 0x03 push edi
			[]byte{0x56},             // 0x04 push esi
			[]byte{0x83, 0xec, 0x10}, // 0x05 sub esp, 0x10
			[]byte{0xe8, 0, 0, 0, 0}, // 0x08 call 0x0d
			[]byte{0x58},             // 0x0d pop eax
			[]byte{0xe8, 0, 0, 0, 0}, // 0x0e call
			[]byte{0x83, 0xc4, 0x10}, // 0x13 add esp, 0x10
			[]byte{0x5e},             // 0x16 pop esi
			[]byte{0x5f},             // 0x17 pop edi
			[]byte{0x5d},             // 0x18 pop ebp
			[]byte{0xc3},             // 0x19 ret
		)
		s1 := map[unwind.Reg]int64{fp: -8}
		s3 := map[unwind.Reg]int64{fp: -8, edi: -12, esi: -16}
		checkRows(t, archregs.I386, code, []rowAt{
			{off: 0x00, cfaReg: sp, cfaOff: 4, raOff: -4},
			{off: 0x01, cfaReg: sp, cfaOff: 8, raOff: -4, saved: s1},
			{off: 0x03, cfaReg: fp, cfaOff: 8, raOff: -4, saved: s1},
			{off: 0x08, cfaReg: fp, cfaOff: 8, raOff: -4, saved: s3},
			{off: 0x0e, cfaReg: fp, cfaOff: 8, raOff: -4, saved: s3},
			{off: 0x16, cfaReg: fp, cfaOff: 8, raOff: -4, saved: s3},
			{off: 0x18, cfaReg: fp, cfaOff: 8, raOff: -4, saved: s1},
			{off: 0x19, cfaReg: sp, cfaOff: 4, raOff: -4},
		})
	})
	t.Run("frameless, get-PC idiom followed by SP", func(t *testing.T) {
		code := byteCode(
			[]byte{0x53},             // 0x00 push ebx
			[]byte{0x83, 0xec, 0x18}, // 0x01 sub esp, 0x18
			[]byte{0xe8, 0, 0, 0, 0}, // 0x04 call 0x09
			[]byte{0x5b},             // 0x09 pop ebx
			[]byte{0xe8, 0, 0, 0, 0}, // 0x0a call
			[]byte{0x83, 0xc4, 0x18}, // 0x0f add esp, 0x18
			[]byte{0x5b},             // 0x12 pop ebx
			[]byte{0xc3},             // 0x13 ret
		)
		s := map[unwind.Reg]int64{ebx: -8}
		checkRows(t, archregs.I386, code, []rowAt{
			{off: 0x01, cfaReg: sp, cfaOff: 8, raOff: -4, saved: s},
			{off: 0x04, cfaReg: sp, cfaOff: 0x20, raOff: -4, saved: s},
			{off: 0x09, cfaReg: sp, cfaOff: 0x24, raOff: -4, saved: s},
			{off: 0x0a, cfaReg: sp, cfaOff: 0x20, raOff: -4, saved: s},
			{off: 0x12, cfaReg: sp, cfaOff: 8, raOff: -4, saved: s},
			{off: 0x13, cfaReg: sp, cfaOff: 4, raOff: -4},
		})
	})
}

func halfCode(halves ...uint16) []byte {
	var b []byte
	for _, h := range halves {
		b = append(b, byte(h), byte(h>>8))
	}
	return b
}

func TestInspectARMV7(t *testing.T) {
	const sp, fp, r4, r5, r6, r8, r10, r11 = 13, 7, 4, 5, 6, 8, 10, 11
	record := map[unwind.Reg]int64{r4: -20, r5: -16, r6: -12, fp: -8}
	all := map[unwind.Reg]int64{r4: -20, r5: -16, r6: -12, fp: -8, r8: -32, r10: -28, r11: -24}
	t.Run("ARM: push, r7 frame, vpush, epilogue from r7", func(t *testing.T) {
		code := wordCode(
			0xe92d40f0, // 0x00 push {r4, r5, r6, r7, lr}
			0xe28d700c, // 0x04 add r7, sp, #12
			0xe92d0d00, // 0x08 push {r8, r10, r11}
			0xed2d8b04, // 0x0c vpush {d8, d9}
			0xe24dd010, // 0x10 sub sp, sp, #16
			0xebfffffe, // 0x14 bl
			0xe247d028, // 0x18 sub sp, r7, #40
			0xecbd8b04, // 0x1c vpop {d8, d9}
			0xe8bd0d00, // 0x20 pop {r8, r10, r11}
			0xe8bd80f0, // 0x24 pop {r4, r5, r6, r7, pc}
		)
		checkRows(t, archregs.ARMV7, code, []rowAt{
			{off: 0x00, cfaReg: sp, raInLR: true},
			{off: 0x04, cfaReg: sp, cfaOff: 20, raOff: -4, saved: record},
			{off: 0x08, cfaReg: fp, cfaOff: 8, raOff: -4, saved: record},
			{off: 0x10, cfaReg: fp, cfaOff: 8, raOff: -4, saved: all},
			{off: 0x18, cfaReg: fp, cfaOff: 8, raOff: -4, saved: all},
			{off: 0x20, cfaReg: fp, cfaOff: 8, raOff: -4, saved: all},
			{off: 0x24, cfaReg: fp, cfaOff: 8, raOff: -4, saved: record},
		})
	})
	t.Run("ARM: conditional return, branch past it, frameless leaf", func(t *testing.T) {
		code := wordCode(
			0xe3500000, // 0x00 cmp r0, #0
			0x012fff1e, // 0x04 bxeq lr: a conditional return changes nothing
			0xe52de004, // 0x08 push {lr}
			0xe24dd00c, // 0x0c sub sp, sp, #12
			0x0a000001, // 0x10 beq 0x1c
			0xebfffffe, // 0x14 bl
			0xe28dd00c, // 0x18 add sp, sp, #12
			0xe49df004, // 0x1c pop {pc}: reached from 0x10 with the frame built
		)
		checkRows(t, archregs.ARMV7, code, []rowAt{
			{off: 0x08, cfaReg: sp, raInLR: true},
			{off: 0x0c, cfaReg: sp, cfaOff: 4, raOff: -4},
			{off: 0x14, cfaReg: sp, cfaOff: 16, raOff: -4},
			{off: 0x18, cfaReg: sp, cfaOff: 16, raOff: -4},
			{off: 0x1c, cfaReg: sp, cfaOff: 4, raOff: -4},
		})
	})
	t.Run("Thumb-2: push, push.w, add r7, pop {pc}", func(t *testing.T) {
		code := halfCode(
			0xb5f0,         // 0x00 push {r4, r5, r6, r7, lr}
			0xaf03,         // 0x02 add r7, sp, #12
			0xe92d, 0x0d00, // 0x04 push.w {r8, r10, r11}
			0xb084,         // 0x08 sub sp, #16
			0xf7ff, 0xfffe, // 0x0a bl
			0xb004,         // 0x0e add sp, #16
			0xe8bd, 0x0d00, // 0x10 pop.w {r8, r10, r11}
			0xbdf0, // 0x14 pop {r4, r5, r6, r7, pc}
		)
		checkRowsMode(t, archregs.ARMV7, code, []rowAt{
			{off: 0x00, cfaReg: sp, raInLR: true},
			{off: 0x02, cfaReg: sp, cfaOff: 20, raOff: -4, saved: record},
			{off: 0x04, cfaReg: fp, cfaOff: 8, raOff: -4, saved: record},
			{off: 0x08, cfaReg: fp, cfaOff: 8, raOff: -4, saved: all},
			{off: 0x0e, cfaReg: fp, cfaOff: 8, raOff: -4, saved: all},
			{off: 0x14, cfaReg: fp, cfaOff: 8, raOff: -4, saved: record},
		}, true)
	})
	t.Run("Thumb-2: cbz early exit, sub.w sp, sub.w sp from r7", func(t *testing.T) {
		code := halfCode(
			0xb140,         // 0x00 cbz r0, 0x14
			0xbf00,         // 0x02 nop
			0xb580,         // 0x04 push {r7, lr}
			0x466f,         // 0x06 mov r7, sp
			0xf5ad, 0x7d00, // 0x08 sub.w sp, sp, #512
			0xf7ff, 0xfffe, // 0x0c bl
			0x46bd, // 0x10 mov sp, r7
			0xbd80, // 0x12 pop {r7, pc}
			0x4770, // 0x14 bx lr: reached from 0x00 only
		)
		checkRowsMode(t, archregs.ARMV7, code, []rowAt{
			{off: 0x02, cfaReg: sp, raInLR: true},
			{off: 0x06, cfaReg: sp, cfaOff: 8, raOff: -4, saved: map[unwind.Reg]int64{fp: -8}},
			{off: 0x0c, cfaReg: fp, cfaOff: 8, raOff: -4, saved: map[unwind.Reg]int64{fp: -8}},
			{off: 0x12, cfaReg: fp, cfaOff: 8, raOff: -4, saved: map[unwind.Reg]int64{fp: -8}},
			{off: 0x14, cfaReg: sp, raInLR: true},
		}, true)
	})
	t.Run("Thumb-2: a conditional return in an IT block", func(t *testing.T) {
		code := halfCode(
			0xb510,         // 0x00 push {r4, lr}
			0xb084,         // 0x02 sub sp, #16
			0xf7ff, 0xfffe, // 0x04 bl
			0xb004,         // 0x08 add sp, #16
			0x2800,         // 0x0a cmp r0, #0
			0xbf08,         // 0x0c it eq
			0xbd10,         // 0x0e popeq {r4, pc}: the path on changes nothing
			0xf7ff, 0xfffe, // 0x10 bl
			0xbd10, // 0x14 pop {r4, pc}
		)
		s := map[unwind.Reg]int64{r4: -8}
		checkRowsMode(t, archregs.ARMV7, code, []rowAt{
			{off: 0x04, cfaReg: sp, cfaOff: 24, raOff: -4, saved: s},
			{off: 0x0e, cfaReg: sp, cfaOff: 8, raOff: -4, saved: s},
			{off: 0x10, cfaReg: sp, cfaOff: 8, raOff: -4, saved: s},
			{off: 0x14, cfaReg: sp, cfaOff: 8, raOff: -4, saved: s},
		}, true)
	})
	t.Run("ARM: a load with SP written back loses SP", func(t *testing.T) {
		code := wordCode(
			0xe92d4010, // 0x00 push {r4, lr}
			0xe49d0008, // 0x04 ldr r0, [sp], #8: SP moves by a shape the decoder does not follow
			0xebfffffe, // 0x08 bl
		)
		if row := inspectAt(t, archregs.ARMV7, code, 8); row != nil {
			t.Errorf("after ldr r0, [sp], #8: row CFA r%d%+d, want none (SP lost)", row.CFA.Reg, row.CFA.Offset)
		}
	})
}

// TestInspectWalk walks a two-function x86_64 program without tables:
// frame 0 in a frameless function whose return address is 0x30 bytes
// above SP, below a stale return address into the same caller. The code
// gives the right word; a scan would take the stale one first.
func TestInspectWalk(t *testing.T) {
	ta := testArchs[3]
	if ta.arch != archregs.X86_64 {
		t.Fatalf("testArchs[3] is %s, want x86_64", ta.arch.Name)
	}
	// f at 0x100: push rbx; sub rsp, 0x20; nop; g at 0x200 calls f at 0x210.
	c := newCode(ta)
	c.put(0x100, []byte{0x53, 0x48, 0x83, 0xec, 0x20, 0x90, 0x90})
	rel := func(from int32) []byte { return le32(uint32(0x100 - from)) }
	c.put(0x210, []byte{0xe8}, rel(0x215))
	c.put(0x220, []byte{0xe8}, rel(0x225))
	raGood, raStale := ta.pc(0x215), ta.pc(0x225)
	s := newStack(t, ta.stack, ta.ptr)
	s.Ptr(raStale).Skip(0x18).Ptr(0).Ptr(raGood).Skip(64)
	opts := Options{Code: ta.codeRanges(), Instructions: c.Memory(), Functions: funcStarts{ta.pc(0x100), ta.pc(0x200), ta.pc(0x300)},
		StackLow: ta.stack, StackHigh: ta.stack + 0x1000}
	res := Walk(ta.regs(t, map[string]uint64{"pc": ta.pc(0x105), "sp": ta.stack, "fp": 0}), s.Memory(), opts)
	if len(res.Frames) < 2 || res.Frames[1].ReturnAddress != raGood || res.Frames[1].FoundBy != FoundByCode {
		t.Fatalf("frames %+v (%s), want frame 1 at %#x found by code", res.Frames, res.StopDetail, raGood)
	}
	if sp, _ := res.Frames[1].Regs.Get(ta.arch.DWARFSP); sp != ta.stack+0x30 {
		t.Errorf("frame 1 SP = %#x, want %#x", sp, ta.stack+0x30)
	}
	if v, ok := res.Frames[1].Regs.Get(3); !ok || v != 0 {
		t.Errorf("frame 1 rbx = %#x (%v), want 0 (saved at CFA-16)", v, ok)
	}
}

// FuzzInspect decodes arbitrary bytes as a function up to every PC in it,
// as every architecture: no panic, and no row from an offset the bytes do
// not reach.
func FuzzInspect(f *testing.F) {
	f.Add(wordCode(0xd10103ff, 0xa9024ff4, 0xa9037bfd, 0x9100c3fd, 0x94000000, 0xd65f03c0), uint16(0x10))
	f.Add([]byte{0x55, 0x48, 0x89, 0xe5, 0x53, 0x48, 0x29, 0xc4, 0x5b, 0x5d, 0xc3}, uint16(8))
	f.Add([]byte{0x74, 0xfe, 0xeb, 0xfe, 0xe9, 0xff, 0xff, 0xff, 0x7f}, uint16(4))
	f.Fuzz(func(t *testing.T, code []byte, pcOff uint16) {
		if len(code) > 1<<12 {
			code = code[:1<<12]
		}
		for _, arch := range []*archregs.Arch{archregs.ARM64, archregs.X86_64, archregs.I386, archregs.ARMV7} {
			off := uint64(pcOff)
			row := inspectAt(t, arch, code, off)
			if row != nil && off > uint64(len(code))+64 {
				t.Fatalf("%s: row at %#x, past the code's %d bytes", arch.Name, off, len(code))
			}
			if arch.ThumbBit != 0 {
				if row := inspectAtMode(t, arch, code, off, true); row != nil && off > uint64(len(code))+64 {
					t.Fatalf("%s Thumb: row at %#x, past the code's %d bytes", arch.Name, off, len(code))
				}
			}
			// A cache answers as decoding does, kept or not.
			var cache InspectCache
			for range 2 {
				got := inspectWith(arch, code, off, false, &cache)
				if (got == nil) != (row == nil) || got != nil && !reflect.DeepEqual(cloneRow(got), cloneRow(row)) {
					t.Fatalf("%s at %#x: cached row %v, uncached %v", arch.Name, off, got, row)
				}
			}
		}
	})
}

// TestFrame0CompactRowCheckedByCode: frame 0 stopped before a
// shrink-wrapped frameless prologue, where compact unwind's body row puts
// the return address 0x28 bytes too high. The code's row, which finds no
// frame built, wins over compact unwind's, over the decoded prologue's
// (SourceCode) and over DWARF CFI's, when its caller passes the checks;
// where the word at SP is no return address, the table's row stands.
func TestFrame0CompactRowCheckedByCode(t *testing.T) {
	ta := testArchs[3]
	c := newCode(ta)
	// f at 0x100: test edi, edi; je 0x112; sub rsp, 0x28; call; add rsp, 0x28; ret; 0x112: ret
	c.put(0x100, []byte{0x85, 0xff, 0x74, 0x0e, 0x48, 0x83, 0xec, 0x28, 0xe8, 0, 0, 0, 0, 0x48, 0x83, 0xc4, 0x28, 0xc3, 0xc3})
	rel := func(from int32) []byte { return le32(uint32(0x100 - from)) }
	c.put(0x210, []byte{0xe8}, rel(0x215)) // g calls f
	c.put(0x220, []byte{0xe8}, rel(0x225)) // and again: a stale return address
	raGood, raStale := ta.pc(0x215), ta.pc(0x225)
	atSP := newStack(t, ta.stack, ta.ptr)
	atSP.Ptr(raGood).Skip(0x20).Ptr(raStale).Skip(64)
	// A local at SP: the code's caller fails, and the table's row, whose
	// slot holds a return address this time, is taken.
	inSlot := newStack(t, ta.stack, ta.ptr)
	inSlot.Ptr(0x1234).Skip(0x20).Ptr(raGood).Skip(64)
	for _, src := range []unwind.Source{unwind.SourceCompactUnwind, unwind.SourceCode, unwind.SourceEHFrame, unwind.SourceBreakpad} {
		for _, s := range []*stack{atSP, inSlot} {
			table := rowTable{{start: ta.pc(0x100), end: ta.pc(0x200), row: x86Frameless(0x28), src: src}}
			opts := Options{Code: ta.codeRanges(), Instructions: c.Memory(), Functions: funcStarts{ta.pc(0x100), ta.pc(0x200), ta.pc(0x300)},
				StackLow: ta.stack, StackHigh: ta.stack + 0x1000, Unwinder: table}
			res := Walk(ta.regs(t, map[string]uint64{"pc": ta.pc(0x102), "sp": ta.stack, "fp": 0}), s.Memory(), opts)
			if len(res.Frames) < 2 || res.Frames[1].ReturnAddress != raGood {
				t.Errorf("row from %v: frame 1 = %+v (%s), want return address %#x", src, res.Frames, res.StopDetail, raGood)
			}
		}
	}
}

// TestFrame0AfterSPRestoredCheckedByCode: frame 0 stopped in a loop that
// runs after an arm64 function's epilogue has popped its saved registers
// (a generated program's f6, seed 903199904, at -O1). Its CFI, made for
// unwinding at calls only (-funwind-tables), restores the entry rule only
// at the end of the loop, and puts the caller's SP 16 bytes too high; the
// code finds the frame gone. Where LR is no return address, the table's
// row stands.
func TestFrame0AfterSPRestoredCheckedByCode(t *testing.T) {
	ta := testArchs[0]
	c := newCode(ta)
	// f at 0x100: stp x20, x19, [sp, #-16]!; ldp x20, x19, [sp], #16;
	// 0x108: subs w0, w0, #1; b.ne 0x108; ret
	c.put(0x100, []byte{0xf4, 0x4f, 0xbf, 0xa9}, []byte{0xf4, 0x4f, 0xc1, 0xa8},
		[]byte{0x00, 0x04, 0x00, 0x71}, []byte{0xe1, 0xff, 0xff, 0x54}, []byte{0xc0, 0x03, 0x5f, 0xd6})
	c.put(0x200, []byte{0xc0, 0xff, 0xff, 0x97}) // g: bl f
	// CFA = SP + 16, x19 at CFA - 8, x20 at CFA - 16, the return address in LR.
	body := unwind.Row{CFA: unwind.CFA{Reg: 31, Offset: 16}, RA: 30, Regs: []unwind.RegRule{
		{Reg: 19, Rule: unwind.Rule{Kind: unwind.Offset, Offset: -8}}, {Reg: 20, Rule: unwind.Rule{Kind: unwind.Offset, Offset: -16}}}}
	s := newStack(t, ta.stack, ta.ptr)
	s.Skip(64)
	for _, tt := range []struct {
		lr, wantSP uint64
	}{
		{ta.pc(0x204), ta.stack},
		{ta.pc(0x208), ta.stack + 16}, // no call before it: the code's caller fails
	} {
		for _, src := range []unwind.Source{unwind.SourceEHFrame, unwind.SourceBreakpad} {
			table := rowTable{{start: ta.pc(0x100), end: ta.pc(0x200), row: body, src: src}}
			opts := Options{Code: ta.codeRanges(), Instructions: c.Memory(), Functions: funcStarts{ta.pc(0x100), ta.pc(0x200), ta.pc(0x300)},
				StackLow: ta.stack, StackHigh: ta.stack + 0x1000, Unwinder: table}
			res := Walk(ta.regs(t, map[string]uint64{"pc": ta.pc(0x108), "sp": ta.stack, "fp": 0, "lr": tt.lr}), s.Memory(), opts)
			got := summarize(res.Frames, ta.arch)
			if len(got) < 2 || got[1].RA != tt.lr || got[1].SP != tt.wantSP {
				t.Errorf("row from %v, LR %#x: frames %+v (%s), want frame 1 at %#x with SP %#x", src, tt.lr, got, res.StopDetail, tt.lr, tt.wantSP)
			}
		}
	}
}

// TestFrame0AfterEpilogueCheckedByCode: frame 0 stopped in a loop that
// runs after a shrink-wrapped function's epilogue has restored RBP (a
// generated program's f5, seed 926758733). The table's FP-based body row
// reads the caller's own frame record there and skips the caller; the
// code's row (return address at RSP) wins over compact unwind's, over
// the decoded shapes' (SourceCode), and over DWARF CFI's made for calls
// only, which leave the body's rule in force after the epilogue.
func TestFrame0AfterEpilogueCheckedByCode(t *testing.T) {
	ta := testArchs[3]
	c := newCode(ta)
	// f at 0x100: test edi, edi; je 0x110; push rbp; mov rbp, rsp;
	// mov rsp, rbp; pop rbp; 0x10c: dec edi; jne 0x10c; 0x110: ret
	c.put(0x100, []byte{0x85, 0xff, 0x74, 0x0c, 0x55, 0x48, 0x89, 0xe5, 0x48, 0x89, 0xec, 0x5d, 0xff, 0xcf, 0x75, 0xfc, 0xc3})
	rel := func(from int32) []byte { return le32(uint32(0x100 - from)) }
	c.put(0x210, []byte{0xe8}, rel(0x215)) // g calls f
	c.put(0x310, []byte{0xe8}, rel(0x315)) // h, g's caller, calls f too: its return address is in g's frame record
	raGood, raSkipping := ta.pc(0x215), ta.pc(0x315)
	var record label
	s := newStack(t, ta.stack, ta.ptr)
	s.Ptr(raGood).Skip(0x18).Mark(&record).Ptr(0).Ptr(raSkipping).Skip(64)
	// CFA = RBP + 16, return address at CFA - 8, RBP at CFA - 16.
	rbpFrame := unwind.Row{CFA: unwind.CFA{Reg: 6, Offset: 16}, RA: 16, Regs: []unwind.RegRule{
		{Reg: 16, Rule: unwind.Rule{Kind: unwind.Offset, Offset: -8}}, {Reg: 6, Rule: unwind.Rule{Kind: unwind.Offset, Offset: -16}}}}
	for _, src := range []unwind.Source{unwind.SourceCompactUnwind, unwind.SourceCode, unwind.SourceEHFrame, unwind.SourceBreakpad} {
		table := rowTable{{start: ta.pc(0x100), end: ta.pc(0x200), row: rbpFrame, src: src}}
		opts := Options{Code: ta.codeRanges(), Instructions: c.Memory(), Functions: funcStarts{ta.pc(0x100), ta.pc(0x200), ta.pc(0x300), ta.pc(0x400)},
			StackLow: ta.stack, StackHigh: ta.stack + 0x1000, Unwinder: table}
		mem := s.Memory()
		res := Walk(ta.regs(t, map[string]uint64{"pc": ta.pc(0x10c), "sp": ta.stack, "fp": record.addr}), mem, opts)
		if len(res.Frames) < 2 || res.Frames[1].ReturnAddress != raGood {
			t.Errorf("row from %v: frames %+v (%s), want frame 1 at %#x", src, res.Frames, res.StopDetail, raGood)
		}
	}
}
