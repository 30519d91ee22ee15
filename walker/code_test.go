package walker

import (
	"encoding/binary"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stackimage/stackimage/archregs"
)

// Instruction encodings for the tests, written from the architecture
// manuals independently of the decoders (and checked against clang-16's
// assembler: see TestCallBefore for the assembled words).

func le32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

func le16(vs ...uint16) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.LittleEndian.AppendUint16(b, v)
	}
	return b
}

// armEnc encodes the few instructions the scenarios place in code.
type armEnc struct {
	call    func(from, to uint64) []byte // a direct call at from
	callReg []byte                       // a call through a register
	push    []byte                       // pushes the frame record
	setFP   []byte                       // points FP at it
	body    []byte                       // anything else (an add)
	ret     []byte                       // returns to LR
	cpsr    uint64                       // armv7: the CPSR to set (T bit), else 0
}

var (
	arm64Enc = armEnc{
		call:    func(from, to uint64) []byte { return le32(0x94000000 | uint32((to-from)/4)&0x3ffffff) },
		callReg: le32(0xd63f0060), // blr x3
		push:    le32(0xa9bf7bfd), // stp x29, x30, [sp, #-16]!
		setFP:   le32(0x910003fd), // mov x29, sp
		body:    le32(0x91000400), // add x0, x0, #1
		ret:     le32(0xd65f03c0), // ret
	}
	armEncARM = armEnc{
		call:    func(from, to uint64) []byte { return le32(0xeb000000 | uint32((to-from-8)/4)&0xffffff) },
		callReg: le32(0xe12fff33), // blx r3
		push:    le32(0xe92d4080), // push {r7, lr}
		setFP:   le32(0xe1a0700d), // mov r7, sp
		body:    le32(0xe2800001), // add r0, r0, #1
		ret:     le32(0xe12fff1e), // bx lr
		cpsr:    0x10,             // user mode, ARM state
	}
	armEncThumb = armEnc{
		call:    thumbBL,
		callReg: le16(0xbf00, 0x4798), // nop; blx r3: four bytes like the other calls
		push:    le16(0xb580, 0xbf00), // push {r7, lr}; nop
		setFP:   le16(0x466f, 0xbf00), // mov r7, sp; nop
		body:    le16(0x3001, 0x3001), // adds r0, #1 (twice)
		ret:     le16(0x4770, 0xbf00), // bx lr
		cpsr:    0x30,                 // user mode, Thumb state
	}
)

// thumbBL encodes a Thumb-2 BL at from: imm32 = S:I1:I2:imm10:imm11:0 from
// PC + 4, with J1 = NOT(I1) XOR S and J2 = NOT(I2) XOR S.
func thumbBL(from, to uint64) []byte {
	off := uint32(to - (from + 4))
	s := off >> 24 & 1
	i1, i2 := off>>23&1, off>>22&1
	j1, j2 := (^i1^s)&1, (^i2^s)&1
	hw1 := 0xf000 | s<<10 | off>>12&0x3ff
	hw2 := 0xd000 | j1<<13 | j2<<11 | off>>1&0x7ff
	return le16(uint16(hw1), uint16(hw2))
}

// code is a test code region, ta.code to ta.code+0x10000.
type code struct {
	ta   testArch
	data []byte
}

func newCode(ta testArch) *code { return &code{ta: ta, data: make([]byte, 0x10000)} }

// put writes instructions one after the other from off.
func (c *code) put(off uint64, insns ...[]byte) *code {
	for _, b := range insns {
		copy(c.data[off:], b)
		off += uint64(len(b))
	}
	return c
}

func (c *code) Memory() *memory { return &memory{base: c.ta.code, data: c.data} }

// armLayout is the code the arm scenarios walk through, as offsets in the
// code region. B calls C at 0x20; C sets up its frame at 0x100 and calls X
// at 0x130; X calls Y at 0x220 (so an LR of 0x224 left over after X returned
// is stale in C); T at 0x280 tail-calls L at 0x380; A at 0x400 is the
// outermost function.
const (
	offB, offCallC         = 0x000, 0x020
	offC, offCallX, offCPC = 0x100, 0x130, 0x140
	offX, offCallY         = 0x200, 0x220
	offT, offY, offL, offA = 0x280, 0x300, 0x380, 0x400
)

func (ta testArch) armEncs() []armEnc {
	if ta.isARM64() {
		return []armEnc{arm64Enc}
	}
	return []armEnc{armEncARM, armEncThumb}
}

// callEnd is the return address of a call placed at off: calls are four
// bytes on every arm encoding here.
func (ta testArch) callEnd(off uint64) uint64 { return ta.pc(off + 4) }

// armProgram lays out B, C, X, T, L and A in code. callC is B's call of C
// (direct or through a register).
func armProgram(ta testArch, e armEnc, callCDirect bool) *code {
	c := newCode(ta)
	callC := e.callReg
	if callCDirect {
		callC = e.call(ta.pc(offCallC), ta.pc(offC))
	}
	c.put(offCallC, callC)
	c.put(offC, e.push, e.setFP, e.body)
	c.put(offCallX, e.call(ta.pc(offCallX), ta.pc(offX)), e.body)
	c.put(offX, e.push, e.setFP, e.body)
	c.put(offCallY, e.call(ta.pc(offCallY), ta.pc(offY)), e.body)
	c.put(offT, e.body)
	c.put(offY, e.body, e.body, e.ret)
	c.put(offL, e.body, e.body, e.ret)
	c.put(offA, e.body)
	return c
}

func (ta testArch) armFuncs() funcStarts {
	return funcStarts{ta.pc(offB), ta.pc(offC), ta.pc(offX), ta.pc(offT), ta.pc(offY), ta.pc(offL), ta.pc(offA), ta.pc(0x500)}
}

// lrWith returns a return address as the CPU leaves it in LR (and a
// function saves it in its record): with the Thumb bit after a call from
// Thumb code.
func (e armEnc) lrWith(ra uint64) uint64 {
	if archregs.ARMV7.ThumbState(e.cpsr) {
		return ra | 1
	}
	return ra
}

// armRegs sets pc, fp, lr and, on armv7, CPSR.
func (ta testArch) armRegs(t testing.TB, e armEnc, pc, fp, lr uint64) *archregs.Registers {
	r := ta.regs(t, map[string]uint64{"pc": pc, "fp": fp, "lr": lr})
	if e.cpsr != 0 {
		if err := r.Set("cpsr", e.cpsr); err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// codeScenario is a scenario run once per arm encoding.
type codeScenario struct {
	name  string
	build func(t *testing.T, ta testArch, e armEnc) (*archregs.Registers, Memory, Options, []Frame)
}

var codeScenarios = []codeScenario{
	{
		name: "stale LR in another function, C called directly: rejected",
		build: func(t *testing.T, ta testArch, e armEnc) (*archregs.Registers, Memory, Options, []Frame) {
			// C is in its body at offCPC with its record at f0; X (which
			// called Y) returned with pop {..., pc}, leaving LR in X.
			var f0, f1, f2 label
			raB, ra2, ra3 := ta.callEnd(offCallC), ta.pc(offA+0x10), ta.pc(offA+0x20)
			mem := threeRecords(t, ta, &f0, &f1, &f2, e.lrWith(raB), e.lrWith(ra2), e.lrWith(ra3)).Memory()
			pc := ta.pc(offCPC)
			opts := Options{Functions: ta.armFuncs(), Instructions: armProgram(ta, e, true).Memory()}
			want := []Frame{ctxFrame(pc, f0.addr), ta.fpFrame(1, raB, f1.addr), ta.fpFrame(2, ra2, f2.addr), ta.fpFrame(3, ra3, 0)}
			return ta.armRegs(t, e, pc, f0.addr, e.lrWith(ta.callEnd(offCallY))), mem, opts, want
		},
	},
	{
		name: "stale LR in another function, C called through a pointer: rejected by C's prologue",
		build: func(t *testing.T, ta testArch, e armEnc) (*archregs.Registers, Memory, Options, []Frame) {
			var f0, f1, f2 label
			raB, ra2, ra3 := ta.callEnd(offCallC), ta.pc(offA+0x10), ta.pc(offA+0x20)
			mem := threeRecords(t, ta, &f0, &f1, &f2, e.lrWith(raB), e.lrWith(ra2), e.lrWith(ra3)).Memory()
			pc := ta.pc(offCPC)
			opts := Options{Functions: ta.armFuncs(), Instructions: armProgram(ta, e, false).Memory()}
			want := []Frame{ctxFrame(pc, f0.addr), ta.fpFrame(1, raB, f1.addr), ta.fpFrame(2, ra2, f2.addr), ta.fpFrame(3, ra3, 0)}
			return ta.armRegs(t, e, pc, f0.addr, e.lrWith(ta.callEnd(offCallY))), mem, opts, want
		},
	},
	{
		name: "stale LR in another function without code: kept (documented limit)",
		build: func(t *testing.T, ta testArch, e armEnc) (*archregs.Registers, Memory, Options, []Frame) {
			var f0, f1, f2 label
			raB, ra2, ra3 := ta.callEnd(offCallC), ta.pc(offA+0x10), ta.pc(offA+0x20)
			mem := threeRecords(t, ta, &f0, &f1, &f2, e.lrWith(raB), e.lrWith(ra2), e.lrWith(ra3)).Memory()
			pc, stale := ta.pc(offCPC), ta.callEnd(offCallY)
			opts := Options{Functions: ta.armFuncs()}
			want := []Frame{ctxFrame(pc, f0.addr), ta.lrFrame(1, stale, f0.addr),
				ta.fpFrame(2, raB, f1.addr), ta.fpFrame(3, ra2, f2.addr), ta.fpFrame(4, ra3, 0)}
			return ta.armRegs(t, e, pc, f0.addr, e.lrWith(stale)), mem, opts, want
		},
	},
	{
		name: "frameless leaf called directly: LR kept",
		build: func(t *testing.T, ta testArch, e armEnc) (*archregs.Registers, Memory, Options, []Frame) {
			// Y is frame 0, in its body: LR after X's call of Y, FP X's
			// record (holding C's return address).
			var f0, f1, f2 label
			raC, raB, ra3 := ta.callEnd(offCallX), ta.callEnd(offCallC), ta.pc(offA+0x20)
			mem := threeRecords(t, ta, &f0, &f1, &f2, e.lrWith(raC), e.lrWith(raB), e.lrWith(ra3)).Memory()
			pc, lr := ta.pc(offY)+uint64(len(e.body)), ta.callEnd(offCallY)
			opts := Options{Functions: ta.armFuncs(), Instructions: armProgram(ta, e, true).Memory()}
			want := []Frame{ctxFrame(pc, f0.addr), ta.lrFrame(1, lr, f0.addr),
				ta.fpFrame(2, raC, f1.addr), ta.fpFrame(3, raB, f2.addr), ta.fpFrame(4, ra3, 0)}
			return ta.armRegs(t, e, pc, f0.addr, e.lrWith(lr)), mem, opts, want
		},
	},
	{
		name: "frameless leaf reached by a tail call: LR kept, the record's call enters LR's function",
		build: func(t *testing.T, ta testArch, e armEnc) (*archregs.Registers, Memory, Options, []Frame) {
			// C called T (offCallX is patched to call T), T tail-called L:
			// PC in L, LR after C's call of T, FP C's record (B's call of C).
			var f0, f1, f2 label
			raB, ra2, ra3 := ta.callEnd(offCallC), ta.pc(offA+0x10), ta.pc(offA+0x20)
			mem := threeRecords(t, ta, &f0, &f1, &f2, e.lrWith(raB), e.lrWith(ra2), e.lrWith(ra3)).Memory()
			prog := armProgram(ta, e, true).put(offCallX, e.call(ta.pc(offCallX), ta.pc(offT)))
			pc, lr := ta.pc(offL)+uint64(len(e.body)), ta.callEnd(offCallX)
			opts := Options{Functions: ta.armFuncs(), Instructions: prog.Memory()}
			want := []Frame{ctxFrame(pc, f0.addr), ta.lrFrame(1, lr, f0.addr),
				ta.fpFrame(2, raB, f1.addr), ta.fpFrame(3, ra2, f2.addr), ta.fpFrame(4, ra3, 0)}
			return ta.armRegs(t, e, pc, f0.addr, e.lrWith(lr)), mem, opts, want
		},
	},
	{
		name: "LR after an instruction that is no call: rejected",
		build: func(t *testing.T, ta testArch, e armEnc) (*archregs.Registers, Memory, Options, []Frame) {
			var f0, f1, f2 label
			raC, raB, ra3 := ta.callEnd(offCallX), ta.callEnd(offCallC), ta.pc(offA+0x20)
			mem := threeRecords(t, ta, &f0, &f1, &f2, e.lrWith(raC), e.lrWith(raB), e.lrWith(ra3)).Memory()
			pc := ta.pc(offY) + uint64(len(e.body))
			opts := Options{Functions: ta.armFuncs(), Instructions: armProgram(ta, e, true).Memory()}
			want := []Frame{ctxFrame(pc, f0.addr), ta.fpFrame(1, raC, f1.addr), ta.fpFrame(2, raB, f2.addr), ta.fpFrame(3, ra3, 0)}
			// offA+4 holds no instruction (zero bytes).
			return ta.armRegs(t, e, pc, f0.addr, e.lrWith(ta.pc(offA+8))), mem, opts, want
		},
	},
	{
		name: "call to a stub (no function start) leaves the check unknown: LR kept",
		build: func(t *testing.T, ta testArch, e armEnc) (*archregs.Registers, Memory, Options, []Frame) {
			// X called Y through a stub at 0x3f0 (inside L's range, not a
			// start): PC in Y, FP C's record, B called C through a pointer.
			var f0, f1, f2 label
			raB, ra2, ra3 := ta.callEnd(offCallC), ta.pc(offA+0x10), ta.pc(offA+0x20)
			mem := threeRecords(t, ta, &f0, &f1, &f2, e.lrWith(raB), e.lrWith(ra2), e.lrWith(ra3)).Memory()
			prog := armProgram(ta, e, true).put(offCallY, e.call(ta.pc(offCallY), ta.pc(0x3f0)))
			pc, lr := ta.pc(offY)+uint64(len(e.body)), ta.callEnd(offCallY)
			opts := Options{Functions: ta.armFuncs(), Instructions: prog.Memory()}
			want := []Frame{ctxFrame(pc, f0.addr), ta.lrFrame(1, lr, f0.addr),
				ta.fpFrame(2, raB, f1.addr), ta.fpFrame(3, ra2, f2.addr), ta.fpFrame(4, ra3, 0)}
			return ta.armRegs(t, e, pc, f0.addr, e.lrWith(lr)), mem, opts, want
		},
	},
	{
		name: "recursion in the prologue after the push: LR kept although the record holds it",
		build: func(t *testing.T, ta testArch, e armEnc) (*archregs.Registers, Memory, Options, []Frame) {
			// C calls itself at offCallX; the parent C was called from the
			// same site, so its record holds LR too. The child stopped
			// after pushing its record, before setting FP.
			var f0, f1, f2 label
			self, raB := ta.callEnd(offCallX), ta.callEnd(offCallC)
			mem := threeRecords(t, ta, &f0, &f1, &f2, 0, e.lrWith(self), e.lrWith(raB)).Memory()
			prog := armProgram(ta, e, true).put(offCallX, e.call(ta.pc(offCallX), ta.pc(offC)))
			pc := ta.pc(offC) + uint64(len(e.push))
			opts := Options{Functions: ta.armFuncs(), Instructions: prog.Memory()}
			want := []Frame{ctxFrame(pc, f1.addr), ta.lrFrame(1, self, f1.addr), ta.fpFrame(2, self, f2.addr), ta.fpFrame(3, raB, 0)}
			return ta.armRegs(t, e, pc, f1.addr, e.lrWith(self)), mem, opts, want
		},
	},
	{
		name: "recursion at the return: LR kept although in PC's function",
		build: func(t *testing.T, ta testArch, e armEnc) (*archregs.Registers, Memory, Options, []Frame) {
			// Y (at offY) is recursive here: it called itself at offY and
			// the child, having restored FP and LR, is at its return.
			var f0, f1, f2 label
			raB, ra2 := ta.callEnd(offCallC), ta.pc(offA+0x10)
			mem := threeRecords(t, ta, &f0, &f1, &f2, 0, e.lrWith(raB), e.lrWith(ra2)).Memory()
			prog := armProgram(ta, e, true).put(offY, e.call(ta.pc(offY), ta.pc(offY)), e.body, e.ret)
			self := ta.callEnd(offY)
			pc := self + uint64(len(e.body))
			opts := Options{Functions: ta.armFuncs(), Instructions: prog.Memory()}
			want := []Frame{ctxFrame(pc, f1.addr), ta.lrFrame(1, self, f1.addr), ta.fpFrame(2, raB, f2.addr), ta.fpFrame(3, ra2, 0)}
			return ta.armRegs(t, e, pc, f1.addr, e.lrWith(self)), mem, opts, want
		},
	},
	{
		name: "noreturn call ending the caller: LR is the callee's first instruction, kept",
		build: func(t *testing.T, ta testArch, e armEnc) (*archregs.Registers, Memory, Options, []Frame) {
			// T's last instruction calls L, which follows it at once: LR is
			// L's start. L stopped after pushing its record.
			var f0, f1, f2 label
			raB, ra2, ra3 := ta.callEnd(offCallC), ta.pc(offA+0x10), ta.pc(offA+0x20)
			mem := threeRecords(t, ta, &f0, &f1, &f2, e.lrWith(raB), e.lrWith(ra2), e.lrWith(ra3)).Memory()
			prog := armProgram(ta, e, true).put(offL-4, e.call(ta.pc(offL-4), ta.pc(offL))).put(offL, e.push, e.setFP)
			pc, lr := ta.pc(offL)+uint64(len(e.push)), ta.pc(offL)
			opts := Options{Functions: ta.armFuncs(), Instructions: prog.Memory()}
			want := []Frame{ctxFrame(pc, f0.addr), ta.lrFrame(1, lr, f0.addr),
				ta.fpFrame(2, raB, f1.addr), ta.fpFrame(3, ra2, f2.addr), ta.fpFrame(4, ra3, 0)}
			return ta.armRegs(t, e, pc, f0.addr, e.lrWith(lr)), mem, opts, want
		},
	},
}

func TestWalkWithCode(t *testing.T) {
	for _, ta := range testArchs {
		if !ta.hasLR() {
			continue
		}
		for _, e := range ta.armEncs() {
			for _, sc := range codeScenarios {
				name := ta.arch.Name + "/" + sc.name
				if archregs.ARMV7.ThumbState(e.cpsr) {
					name = ta.arch.Name + "/thumb/" + sc.name
				}
				t.Run(name, func(t *testing.T) {
					regs, mem, opts, want := sc.build(t, ta, e)
					got := Walk(regs, mem, opts)
					if diff := cmp.Diff(want, got.Frames, ignoreRegs); diff != "" {
						t.Errorf("Walk frames mismatch (-want +got):\n%s", diff)
					}
					if got.Stop != StopFramePointerZero {
						t.Errorf("Walk stop = %v (%s), want %v", got.Stop, got.StopDetail, StopFramePointerZero)
					}
				})
			}
		}
	}
}

// TestNoreturnCallerWithoutCode: the call site, not LR, decides whether LR
// is in PC's function, with function starts alone.
func TestNoreturnCallerWithoutCode(t *testing.T) {
	for _, ta := range testArchs {
		if !ta.hasLR() {
			continue
		}
		t.Run(ta.arch.Name, func(t *testing.T) {
			var f0, f1, f2 label
			raB, ra2, ra3 := ta.callEnd(offCallC), ta.pc(offA+0x10), ta.pc(offA+0x20)
			mem := threeRecords(t, ta, &f0, &f1, &f2, raB, ra2, ra3).Memory()
			pc, lr := ta.pc(offL+8), ta.pc(offL)
			got := Walk(ta.regs(t, map[string]uint64{"pc": pc, "fp": f0.addr, "lr": lr}), mem, Options{Functions: ta.armFuncs()})
			want := []Frame{ctxFrame(pc, f0.addr), ta.lrFrame(1, lr, f0.addr),
				ta.fpFrame(2, raB, f1.addr), ta.fpFrame(3, ra2, f2.addr), ta.fpFrame(4, ra3, 0)}
			if diff := cmp.Diff(want, got.Frames, ignoreRegs); diff != "" {
				t.Errorf("Walk frames mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCallBefore decodes calls assembled by clang-16 (llvm-objdump shows
// the words) and the tests' own encoders.
func TestCallBefore(t *testing.T) {
	const base = 0x4000
	tests := []struct {
		name string
		arch *archregs.Arch
		at   uint64 // where the bytes go
		code []byte
		ra   uint64 // raw return address (Thumb bit included)
		want callSite
	}{
		{"arm64 bl to itself", archregs.ARM64, base, le32(0x94000000), base + 4, callSite{callDirect, base}},
		{"arm64 bl backwards", archregs.ARM64, base, le32(0x97ffffed), base + 4, callSite{callDirect, base - 0x4c}},
		{"arm64 bl forwards", archregs.ARM64, base, le32(0x94000015), base + 4, callSite{callDirect, base + 0x54}},
		{"arm64 blr x3", archregs.ARM64, base, le32(0xd63f0060), base + 4, callSite{kind: callIndirect}},
		{"arm64e blraa x3, x4", archregs.ARM64E, base, le32(0xd73f0864), base + 4, callSite{kind: callIndirect}},
		{"arm64e blrab x3, x4", archregs.ARM64E, base, le32(0xd73f0c64), base + 4, callSite{kind: callIndirect}},
		{"arm64e blraaz x3", archregs.ARM64E, base, le32(0xd63f087f), base + 4, callSite{kind: callIndirect}},
		{"arm64e blrabz x3", archregs.ARM64E, base, le32(0xd63f0c7f), base + 4, callSite{kind: callIndirect}},
		{"arm64 br x3 is no call", archregs.ARM64, base, le32(0xd61f0060), base + 4, callSite{kind: callNone}},
		{"arm64 braa is no call", archregs.ARM64E, base, le32(0xd71f0864), base + 4, callSite{kind: callNone}},
		{"arm64 unreadable", archregs.ARM64, base, nil, 0x500000, callSite{}},
		{"arm bl to itself", archregs.ARMV7, base, le32(0xebfffffe), base + 4, callSite{callDirect, base}},
		{"arm bleq", archregs.ARMV7, base, le32(0x0bfffffb), base + 4, callSite{callDirect, base - 0xc}},
		{"arm bl _recurse (fixture)", archregs.ARMV7, 0x21b4, le32(0xebfffff7), 0x21b8, callSite{callDirect, 0x2198}},
		{"arm blx to Thumb, H clear", archregs.ARMV7, base, le32(0xfafffffd), base + 4, callSite{callDirect, base - 4}},
		{"arm blx to Thumb, H set", archregs.ARMV7, base, le32(0xfb000000), base + 4, callSite{callDirect, base + 10}},
		{"arm blx r3", archregs.ARMV7, base, le32(0xe12fff33), base + 4, callSite{kind: callIndirect}},
		{"arm bx lr is no call", archregs.ARMV7, base, le32(0xe12fff1e), base + 4, callSite{kind: callNone}},
		{"thumb bl to itself", archregs.ARMV7, 0x34, le16(0xf7ff, 0xfffe), 0x38 | 1, callSite{callDirect, 0x34}},
		{"thumb blx to ARM", archregs.ARMV7, 0x38, le16(0xf7ff, 0xefe2), 0x3c | 1, callSite{callDirect, 0}},
		{"thumb blx r3", archregs.ARMV7, 0x3c, le16(0x4798), 0x3e | 1, callSite{kind: callIndirect}},
		{"thumb bl far forwards", archregs.ARMV7, base, thumbBL(base, base+0x123456), base + 4 | 1, callSite{callDirect, base + 0x123456}},
		{"thumb bl far backwards", archregs.ARMV7, base + 0x200000, thumbBL(base+0x200000, base+0x10), base + 0x200004 | 1, callSite{callDirect, base + 0x10}},
		{"thumb b.w is no call", archregs.ARMV7, base, le16(0xf000, 0xb800), base + 4 | 1, callSite{kind: callNone}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := &memory{base: 0, data: make([]byte, 0x400000)}
			copy(mem.data[tt.at:], tt.code)
			w := newWalk(tt.arch, archInfos[tt.arch.CPUType], nil, Options{Instructions: mem})
			got := w.ai.callBefore(w, tt.ra)
			if got != tt.want {
				t.Errorf("callBefore(%#x) = %+v, want %+v", tt.ra, got, tt.want)
			}
		})
	}
}

// x86 code shapes: the return address at [SP] or [SP + pointer].
func TestWalkX86WithCode(t *testing.T) {
	const start, other = 0x100, 0x180 // frame 0's function and another
	tests := []struct {
		name    string
		code    map[uint64][]byte // offset: bytes
		pc      uint64            // offset
		spAbove bool              // the return address is one pointer above SP
		found   bool              // whether the caller is found from the stack
	}{
		{"after push rbp at the start", map[uint64][]byte{start: {0x55, 0x48, 0x89, 0xe5}}, start + 1, true, true},
		{"at ret", map[uint64][]byte{start + 0x10: {0x5d, 0xc3}}, start + 0x11, false, true},
		{"at ret imm16", map[uint64][]byte{start + 0x10: {0xc2, 0x08, 0x00}}, start + 0x10, false, true},
		{"shrink-wrapped push rbp, before mov rbp, rsp", map[uint64][]byte{start + 8: {0x55, 0x48, 0x89, 0xe5, 0x89, 0xe5}}, start + 9, true, true},
		{"tail jmp rel32 after pop rbp", map[uint64][]byte{start + 0x10: {0x5d, 0xe9, 0x6a, 0x00, 0x00, 0x00}}, start + 0x11, false, true},
		{"tail jmp rel8 after leave", map[uint64][]byte{start + 0x10: {0xc9, 0xeb, 0x6d}}, start + 0x11, false, true},
		{"jmp within the function is no tail call", map[uint64][]byte{start + 0x10: {0x5d, 0xeb, 0x02}}, start + 0x11, false, false},
		{"jmp to another function without pop rbp", map[uint64][]byte{start + 0x10: {0x90, 0xe9, 0x6a, 0x00, 0x00, 0x00}}, start + 0x11, false, false},
		{"in the body", map[uint64][]byte{start: {0x55, 0x48, 0x89, 0xe5, 0x90}}, start + 4, false, false},
	}
	for _, ta := range testArchs {
		if ta.hasLR() {
			continue
		}
		for _, tt := range tests {
			t.Run(ta.arch.Name+"/"+tt.name, func(t *testing.T) {
				c := newCode(ta)
				for off, b := range tt.code {
					if ta.ptr == 4 && len(b) > 2 && b[1] == 0x48 { // no REX.W on i386
						b = append([]byte{b[0]}, b[2:]...)
					}
					c.put(off, b)
				}
				// The caller's record at f1, with the return address into
				// frame 0's caller either at SP or one pointer above it.
				var f0, f1, f2 label
				ra1, ra2, ra3 := ta.pc(0x200), ta.pc(0x300), ta.pc(0x400)
				mem := threeRecords(t, ta, &f0, &f1, &f2, ra1, ra2, ra3).Memory()
				sp := f0.addr + uint64(ta.ptr) // [SP] = ra1
				if tt.spAbove {
					sp = f0.addr // [SP] = a saved FP, [SP + ptr] = ra1
				}
				pc := ta.pc(tt.pc)
				opts := Options{Code: ta.codeRanges(), Instructions: c.Memory(),
					Functions: funcStarts{ta.pc(start), ta.pc(other), ta.pc(0x200)}}
				got := Walk(ta.regs(t, map[string]uint64{"pc": pc, "sp": sp, "fp": f1.addr}), mem, opts)
				want := []Frame{ctxFrame(pc, f1.addr), ta.fpFrame(1, ra2, f2.addr), ta.fpFrame(2, ra3, 0)}
				if tt.found {
					want = []Frame{ctxFrame(pc, f1.addr), ta.spFrame(1, ra1, f1.addr), ta.fpFrame(2, ra2, f2.addr), ta.fpFrame(3, ra3, 0)}
				}
				if diff := cmp.Diff(want, got.Frames, ignoreRegs); diff != "" {
					t.Errorf("Walk frames mismatch (-want +got):\n%s", diff)
				}
			})
		}
	}
}
