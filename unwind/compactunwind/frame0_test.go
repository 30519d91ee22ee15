package compactunwind

import (
	"debug/macho"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/unwind"
)

// frame0Case is the row expected at one instruction; the rows are worked
// out by hand from the instructions' definitions.
type frame0Case struct {
	pc   uint32
	want unwind.Row
}

func checkFrame0(t *testing.T, arch *archregs.Arch, e Entry, code CodeReader, cases []frame0Case) {
	t.Helper()
	for _, c := range cases {
		got, ok, err := Frame0Row(arch, e, c.pc, code)
		if err != nil || !ok {
			t.Errorf("Frame0Row(%#x) = ok %v, %v; want a row", c.pc, ok, err)
			continue
		}
		if diff := cmp.Diff(c.want, got, sortRegs); diff != "" {
			t.Errorf("Frame0Row(%#x) mismatch (-want +got):\n%s", c.pc, diff)
		}
	}
}

// TestFrame0RowARM checks ARM-mode prologues and epilogues of the armv7k
// fixture, for which LLVM writes compact encodings and no epilogue CFI.
func TestFrame0RowARM(t *testing.T) {
	f, err := macho.Open(filepath.Join("testdata", "armv7k-fp.o"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	text, code := section(t, f, "__TEXT", "__text")
	_, cu := section(t, f, "__LD", "__compact_unwind")
	table, err := ParseObject(cu, 4)
	if err != nil {
		t.Fatal(err)
	}
	reader := sectionReader{text.Addr, code}
	a := archregs.ARMV7
	r := func(cfaReg unwind.Reg, cfaOff int64, regs ...int64) unwind.Row {
		return rowOf(a, cfaReg, cfaOff, regs...)
	}
	// push {r4, r5, r6, r7, lr}: what every frame below saves.
	first := []int64{4, -20, 5, -16, 6, -12, 7, -8, 14, -4}
	with := func(extra ...int64) []int64 { return append(append([]int64{}, first...), extra...) }
	tests := []struct {
		name  string
		start uint32
		cases []frame0Case
	}{
		{"saves", 0x24, []frame0Case{
			{0x24, r(13, 0, 14, 1)},            // push {r4, r5, r6, r7, lr}
			{0x28, r(13, 20, first...)},        // add r7, sp, #12
			{0x2c, r(7, 8, first...)},          // str r8, [sp, #-4]!
			{0x30, r(7, 8, with(8, -24)...)},   // sub sp, sp, #8
			{0x44, r(7, 8, with(8, -24)...)},   // bl (the body: RowFor)
			{0x7c, r(7, 8, with(8, -24)...)},   // sub sp, r7, #16
			{0x80, r(13, 24, with(8, -24)...)}, // ldr r8, [sp], #4
			{0x84, r(13, 20, first...)},        // pop {r4, r5, r6, r7, pc}
		}},
		{"many", 0x88, []frame0Case{
			{0x15c, r(7, 8, with(8, -32, 10, -28, 11, -24)...)},   // sub sp, r7, #24
			{0x160, r(13, 32, with(8, -32, 10, -28, 11, -24)...)}, // pop {r8, r10, r11}
			{0x164, r(13, 20, first...)},                          // pop {r4, r5, r6, r7, pc}
		}},
		{"locals", 0x1e4, []frame0Case{
			{0x1e4, r(13, 0, 14, 1)},
			{0x1e8, r(13, 8, 7, -8, 14, -4)}, // mov r7, sp
			{0x224, r(7, 8, 7, -8, 14, -4)},  // mov sp, r7
			{0x228, r(13, 8, 7, -8, 14, -4)}, // pop {r7, pc}
		}},
		{"branches", 0x22c, []frame0Case{
			{0x254, r(13, 16, 4, -16, 5, -12, 7, -8, 14, -4)}, // pop {r4, r5, r7, pc} mid-function
			{0x258, r(7, 8, 4, -16, 5, -12, 7, -8, 14, -4)},   // cmp: the body again
			{0x260, r(7, 8, 4, -16, 5, -12, 7, -8, 14, -4)},   // poplt: conditional, not an epilogue
		}},
		{"fp", 0x274, []frame0Case{ // DWARF encoding: the body row comes from the prologue
			{0x280, r(7, 8, 7, -8, 14, -4, 270, -16)}, // vpush {d8-d12}
			{0x2e0, r(7, 8, 7, -8, 14, -4, 270, -16, 264, -56, 265, -48, 266, -40, 267, -32, 268, -24)},
			{0x2e4, r(13, 56, 7, -8, 14, -4, 270, -16, 264, -56, 265, -48, 266, -40, 267, -32, 268, -24)}, // vpop {d8-d12}
			{0x2e8, r(13, 16, 7, -8, 14, -4, 270, -16)},                                                   // vpop {d14}
			{0x2ec, r(13, 8, 7, -8, 14, -4)},                                                              // pop {r7, pc}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := table.Lookup(tt.start)
			if err != nil || e.FuncStart != tt.start {
				t.Fatalf("Lookup(%#x) = %+v, %v", tt.start, e, err)
			}
			checkFrame0(t, a, e, reader, tt.cases)
		})
	}
}

// TestFrame0RowThumb checks the Thumb-2 prologues and epilogues of the
// armv7k-thumb fixture (bit 0 of the PC says Thumb).
func TestFrame0RowThumb(t *testing.T) {
	f, err := macho.Open(filepath.Join("testdata", "armv7k-thumb.o"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	text, code := section(t, f, "__TEXT", "__text")
	_, cu := section(t, f, "__LD", "__compact_unwind")
	table, err := ParseObject(cu, 4)
	if err != nil {
		t.Fatal(err)
	}
	reader := sectionReader{text.Addr, code}
	a := archregs.ARMV7
	r := func(cfaReg unwind.Reg, cfaOff int64, regs ...int64) unwind.Row {
		return rowOf(a, cfaReg, cfaOff, regs...)
	}
	first := []int64{4, -20, 5, -16, 6, -12, 7, -8, 14, -4} // push {r4, r5, r6, r7, lr}
	with := func(extra ...int64) []int64 { return append(append([]int64{}, first...), extra...) }
	big := []int64{4, -16, 5, -12, 7, -8, 14, -4} // push {r4, r5, r7, lr}
	tests := []struct {
		name  string
		start uint32
		cases []frame0Case
	}{
		{"saves", 0x16, []frame0Case{
			{0x16, r(13, 0, 14, 1)},            // push {r4, r5, r6, r7, lr}
			{0x18, r(13, 20, first...)},        // add r7, sp, #12
			{0x1a, r(7, 8, first...)},          // str.w r8, [sp, #-4]!
			{0x1e, r(7, 8, with(8, -24)...)},   // sub sp, #8
			{0x20, r(7, 8, with(8, -24)...)},   // the body
			{0x4c, r(13, 32, with(8, -24)...)}, // add sp, #8
			{0x4e, r(13, 24, with(8, -24)...)}, // ldr.w r8, [sp], #4
			{0x52, r(13, 20, first...)},        // pop {r4, r5, r6, r7, pc}
		}},
		{"many", 0x54, []frame0Case{
			{0x58, r(7, 8, first...)}, // push.w {r8, r10, r11}
			{0x5c, r(7, 8, with(8, -32, 10, -28, 11, -24)...)},
			{0xd2, r(13, 64, with(8, -32, 10, -28, 11, -24)...)}, // add sp, #0x20
			{0xd4, r(13, 32, with(8, -32, 10, -28, 11, -24)...)}, // pop.w {r8, r10, r11}
			{0xd8, r(13, 20, first...)},                          // pop {r4, r5, r6, r7, pc}
		}},
		{"big", 0xda, []frame0Case{
			{0xdc, r(13, 16, big...)},    // add r7, sp, #8
			{0xde, r(7, 8, big...)},      // sub.w sp, sp, #0xbc0
			{0xe2, r(7, 8, big...)},      // the body
			{0x11c, r(13, 3024, big...)}, // add.w sp, sp, #0xbc0
			{0x120, r(13, 16, big...)},   // pop {r4, r5, r7, pc}
		}},
		{"locals", 0x122, []frame0Case{
			{0x124, r(13, 8, 7, -8, 14, -4)},  // mov r7, sp
			{0x126, r(7, 8, 7, -8, 14, -4)},   // sub sp, #0x48
			{0x14a, r(13, 80, 7, -8, 14, -4)}, // add sp, #0x48
			{0x14c, r(13, 8, 7, -8, 14, -4)},  // pop {r7, pc}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := table.Lookup(tt.start)
			if err != nil || e.FuncStart != tt.start {
				t.Fatalf("Lookup(%#x) = %+v, %v", tt.start, e, err)
			}
			for i := range tt.cases {
				tt.cases[i].pc |= 1
			}
			checkFrame0(t, a, e, reader, tt.cases)
		})
	}
}

// TestFrame0RowShapes checks shapes the fixtures lack: x86 lea/leave
// epilogues and tail jumps; arm64e signing and tail branches.
func TestFrame0RowShapes(t *testing.T) {
	x := archregs.X86_64
	xr := func(cfaReg unwind.Reg, cfaOff int64, regs ...int64) unwind.Row {
		return rowOf(x, cfaReg, cfaOff, append([]int64{16, -8}, regs...)...)
	}
	prologue := []byte{
		0x55,             // 0x100 push rbp
		0x48, 0x89, 0xE5, // 0x101 mov rbp, rsp
		0x53,                   // 0x104 push rbx
		0x48, 0x83, 0xEC, 0x18, // 0x105 sub rsp, 0x18
		0x90, // 0x109 nop
	}
	dwarf := uint32(0x04000000) // the body row then comes from the prologue
	t.Run("x86_64 lea and tail jump", func(t *testing.T) {
		code := append(append([]byte{}, prologue...),
			0x48, 0x8D, 0x65, 0xF8, // 0x10a lea rsp, [rbp-8]
			0x5B,                         // 0x10e pop rbx
			0x5D,                         // 0x10f pop rbp
			0xE9, 0xEB, 0x00, 0x00, 0x00, // 0x110 jmp 0x200
		)
		e := Entry{FuncStart: 0x100, FuncEnd: 0x115, Encoding: dwarf}
		body := xr(6, 16, 6, -16, 3, -24)
		checkFrame0(t, x, e, codeAt{0x100, code}, []frame0Case{
			{0x100, xr(7, 8)},
			{0x101, xr(7, 16, 6, -16)},
			{0x104, xr(6, 16, 6, -16)},
			{0x105, body},
			{0x109, body},
			{0x10a, body},
			{0x10e, xr(7, 24, 3, -24, 6, -16)},
			{0x10f, xr(7, 16, 6, -16)},
			{0x110, xr(7, 8)},
		})
	})
	t.Run("x86_64 leave", func(t *testing.T) {
		code := append(append([]byte{}, prologue...), 0xC9, 0xC3) // 0x10a leave; 0x10b ret
		e := Entry{FuncStart: 0x100, FuncEnd: 0x10c, Encoding: dwarf}
		checkFrame0(t, x, e, codeAt{0x100, code}, []frame0Case{
			{0x10a, xr(6, 16, 6, -16, 3, -24)},
			{0x10b, xr(7, 8)},
		})
	})
	t.Run("x86_64 shrink-wrapped", func(t *testing.T) {
		// check of the noreturn fixture: an early return, then the frame.
		code := []byte{
			0x40, 0xF6, 0xC7, 0x01, // 0x100 test dil, 1
			0x75, 0x05, // 0x104 jne 0x10b
			0xD1, 0xEF, // 0x106 shr edi
			0x89, 0xF8, // 0x108 mov eax, edi
			0xC3,             // 0x10a ret
			0x55,             // 0x10b push rbp
			0x48, 0x89, 0xE5, // 0x10c mov rbp, rsp
			0xE8, 0, 0, 0, 0, // 0x10f call
		}
		e := Entry{FuncStart: 0x100, FuncEnd: 0x114, Encoding: 0x01000000}
		checkFrame0(t, x, e, codeAt{0x100, code}, []frame0Case{
			{0x10a, xr(7, 8)},
			{0x10b, xr(7, 8)},
			{0x10c, xr(7, 16, 6, -16)},
			{0x10f, xr(6, 16, 6, -16)},
		})
	})
	t.Run("x86_64 jump inside the function", func(t *testing.T) {
		code := append(append([]byte{}, prologue...), 0x5B, 0xEB, 0xFC) // 0x10a pop rbx; 0x10b jmp 0x109
		e := Entry{FuncStart: 0x100, FuncEnd: 0x10d, Encoding: dwarf}
		checkFrame0(t, x, e, codeAt{0x100, code}, []frame0Case{{0x10a, xr(6, 16, 6, -16, 3, -24)}})
	})

	a := archregs.ARM64E
	ar := func(signed bool, cfaReg unwind.Reg, cfaOff int64, regs ...int64) unwind.Row {
		row := rowOf(a, cfaReg, cfaOff, regs...)
		row.RASigned = signed
		return row
	}
	le := func(insns ...uint32) []byte {
		var b []byte
		for _, i := range insns {
			b = le32put(b, i)
		}
		return b
	}
	t.Run("arm64e", func(t *testing.T) {
		code := le(0xD503237F, // 0x0 pacibsp
			0xA9BF7BFD, // 0x4 stp x29, x30, [sp, #-16]!
			0x910003FD, // 0x8 mov x29, sp
			0xD503201F, // 0xc nop
			0xA8C17BFD, // 0x10 ldp x29, x30, [sp], #16
			0xD65F0FFF, // 0x14 retab
		)
		e := Entry{FuncStart: 0, FuncEnd: 0x18, Encoding: 0x03000000}
		checkFrame0(t, a, e, codeAt{0, code}, []frame0Case{
			{0x0, ar(false, 31, 0, 30, 1)},
			{0x4, ar(true, 31, 0, 30, 1)},
			{0x8, ar(true, 31, 16, 29, -16, 30, -8)},
			{0xc, ar(true, 31, 16, 29, -16, 30, -8)}, // a nop ahead of the epilogue: part of it
			{0x10, ar(true, 31, 16, 29, -16, 30, -8)},
			{0x14, ar(true, 31, 0, 30, 1)},
		})
	})
	t.Run("arm64 tail branch", func(t *testing.T) {
		code := le(0xA9BF7BFD, // 0x0 stp x29, x30, [sp, #-16]!
			0x910003FD, // 0x4 mov x29, sp
			0xA8C17BFD, // 0x8 ldp x29, x30, [sp], #16
			0x14000040, // 0xc b 0x10c
		)
		e := Entry{FuncStart: 0, FuncEnd: 0x10, Encoding: 0x04000000}
		checkFrame0(t, archregs.ARM64, e, codeAt{0, code}, []frame0Case{
			{0x8, rowOf(archregs.ARM64, 31, 16, 29, -16, 30, -8)},
			{0xc, rowOf(archregs.ARM64, 31, 0, 30, 1)},
		})
	})
	t.Run("arm64 shrink-wrapped, alloca, SP restored from FP", func(t *testing.T) {
		// As clang -O1 builds a function with an early return and a
		// variable-length array: at the SP restore the body's FP-based
		// row holds (SP lies below the frame by the alloca), the
		// epilogue's SP-based one only once SP is restored.
		code := le(0x52800028, // 0x0 mov w8, #1
			0x54000041, // 0x4 b.ne 0xc
			0xD65F03C0, // 0x8 ret
			0xA9BE4FF4, // 0xc stp x20, x19, [sp, #-0x20]!
			0xA9017BFD, // 0x10 stp x29, x30, [sp, #0x10]
			0x910043FD, // 0x14 add x29, sp, #0x10
			0xD10803FF, // 0x18 sub sp, sp, #0x200
			0x910001DF, // 0x1c mov sp, x14
			0xD10043BF, // 0x20 sub sp, x29, #0x10
			0xA9417BFD, // 0x24 ldp x29, x30, [sp, #0x10]
			0xA8C24FF4, // 0x28 ldp x20, x19, [sp], #0x20
			0xD65F03C0, // 0x2c ret
		)
		arm := archregs.ARM64
		e := Entry{FuncStart: 0, FuncEnd: 0x30, Encoding: 0x04000001} // frame, x19/x20 saved
		body := rowOf(arm, 29, 16, 29, -16, 30, -8, 19, -24, 20, -32)
		checkFrame0(t, arm, e, codeAt{0, code}, []frame0Case{
			{0x20, body},
			{0x24, rowOf(arm, 31, 32, 29, -16, 30, -8, 19, -24, 20, -32)},
		})
	})
	t.Run("unreadable", func(t *testing.T) {
		e := Entry{FuncStart: 0x100, FuncEnd: 0x110, Encoding: 0x02010000}
		for _, tt := range []struct {
			name string
			pc   uint32
			code CodeReader
		}{
			{"nil reader", 0x104, nil},
			{"no code", 0x104, codeAt{0x400, []byte{0x90}}},
			{"pc before the function", 0xff, codeAt{0x100, prologue}},
			{"pc after the function", 0x110, codeAt{0x100, prologue}},
		} {
			if row, ok, err := Frame0Row(x, e, tt.pc, tt.code); ok || err != nil {
				t.Errorf("%s: Frame0Row = %+v, ok %v, %v; want not ok", tt.name, row, ok, err)
			}
		}
	})
}
