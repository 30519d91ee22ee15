package walker

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stackimage/stackimage/archregs"
)

// The caller scan (byCallerScan): code built without frame pointers leaves
// FP at an outer frame record, often the thread's outermost one (saved FP
// 0), while the callers' return addresses lie on the stack in between.
// These scenarios are arm64 and x86_64 programs laid out in the test code
// region:
//
//	0x000 header   bytes of an image's header, before every function
//	0x100 A        the outermost function: calls B at 0x120 (bl / call rel32)
//	0x200 B        calls C through a register at 0x220
//	0x300 C        calls D at 0x320
//	0x400 D        frame 0: stores LR (arm64) at 0x400, body from 0x404
//	0x500 E        calls X at 0x520: a return address left over on the stack
//	0x600 X        E's callee, on no stack here
//	0x700 T        calls nothing; tail-calls D at 0x720 (b / jmp rel32)
//	0x800 U        calls T at 0x820: U's return address is D's caller
//	0x900 R        calls itself at 0x920
//	0xa00 V        tail-calls T at 0xa20: two tail calls in a row reach D
//	0xb00 W        calls V at 0xb20: W's return address is D's caller
const (
	scanOffA, scanCallB   = 0x100, 0x120
	scanOffB, scanCallC   = 0x200, 0x220
	scanOffC, scanCallD   = 0x300, 0x320
	scanOffD, scanBodyD   = 0x400, 0x404
	scanOffE, scanCallX   = 0x500, 0x520
	scanOffX              = 0x600
	scanOffT, scanTailD   = 0x700, 0x720
	scanOffU, scanCallT   = 0x800, 0x820
	scanOffR, scanCallR   = 0x900, 0x920
	scanOffV, scanTailT   = 0xa00, 0xa20
	scanOffW, scanCallV   = 0xb00, 0xb20
	scanHeaderCall        = 0x1c // bytes in the header that decode as a call
	scanFrameBytes        = 0x40 // each function's frame
	scanEnd               = 0xc00
	x86CallRel32, x86Jmp  = 0xe8, 0xe9
	x86CallRAX0, x86CallR = 0xff, 0xd0 // call *%rax
)

// scanArchs are the architectures the scenarios are written for.
var scanArchs = []testArch{testArchs[0], testArchs[3]}

// scanCode lays out the program above. callCIndirect makes B's call of C go
// through a register.
func scanCode(ta testArch) *code {
	c := newCode(ta)
	if ta.isARM64() {
		bl := func(at, to uint64) (uint64, []byte) { return at, arm64Enc.call(ta.pc(at), ta.pc(to)) }
		for _, p := range [][2]uint64{{scanCallB, scanOffB}, {scanCallD, scanOffD}, {scanCallX, scanOffX}, {scanCallT, scanOffT}, {scanCallR, scanOffR}, {scanCallV, scanOffV}} {
			c.put(bl(p[0], p[1]))
		}
		c.put(scanCallC, arm64Enc.callReg)
		c.put(scanHeaderCall, arm64Enc.callReg)
		c.put(scanOffD, le32(0xf81f0ffe)) // str x30, [sp, #-16]!
		// mov sp, x9: SP moves by an amount only the run knows, and no FP
		// follows the frame, so D's code does not say where its caller
		// is: the scan must.
		c.put(scanBodyD, le32(0x9100013f), arm64Enc.body)
		// b D
		c.put(scanTailD, le32(0x14000000|uint32((ta.pc(scanOffD)-ta.pc(scanTailD))/4)&0x3ffffff))
		c.put(scanTailT, le32(0x14000000|uint32((ta.pc(scanOffT)-ta.pc(scanTailT))/4)&0x3ffffff))
		return c
	}
	rel := func(at, to uint64, op byte) (uint64, []byte) {
		d := uint32(to - (at + 5))
		return at, []byte{op, byte(d), byte(d >> 8), byte(d >> 16), byte(d >> 24)}
	}
	for _, p := range [][2]uint64{{scanCallB, scanOffB}, {scanCallD, scanOffD}, {scanCallX, scanOffX}, {scanCallT, scanOffT}, {scanCallR, scanOffR}, {scanCallV, scanOffV}} {
		c.put(rel(p[0], p[1], x86CallRel32))
	}
	c.put(rel(scanTailD, scanOffD, x86Jmp))
	c.put(rel(scanTailT, scanOffT, x86Jmp))
	c.put(scanCallC+3, []byte{x86CallRAX0, x86CallR})
	c.put(scanHeaderCall+3, []byte{x86CallRAX0, x86CallR})
	// push rbx; sub rsp, 0x38; mov rsp, rax: as on arm64, D's code loses
	// track of SP.
	c.put(scanOffD, []byte{0x53}, []byte{0x48, 0x83, 0xec, 0x38}, []byte{0x48, 0x89, 0xc4})
	return c
}

// scanRA is the return address of the call at off.
func scanRA(ta testArch, off uint64) uint64 {
	switch {
	case ta.isARM64():
		return ta.pc(off + 4)
	case off == scanCallC || off == scanHeaderCall:
		return ta.pc(off + 5) // the two bytes of call *%rax end where a rel32 call would
	}
	return ta.pc(off + 5)
}

// scanFunctions are the function starts of scanCode: none in the header.
func scanFunctions(ta testArch) funcStarts {
	return funcStarts{ta.pc(scanOffA), ta.pc(scanOffB), ta.pc(scanOffC), ta.pc(scanOffD), ta.pc(scanOffE),
		ta.pc(scanOffX), ta.pc(scanOffT), ta.pc(scanOffU), ta.pc(scanOffR), ta.pc(scanOffV), ta.pc(scanOffW), ta.pc(scanEnd)}
}

// scanStack lays out, from SP up, D's frame (junk words, then the return
// address into caller), then a frame for each further return address,
// then the outermost frame record (saved FP 0, return address 0), which
// FP points at. Each frame is scanFrameBytes long and its return address
// is its last word, as arm64 and x86_64 code without frame pointers leave
// it.
func scanStack(t testing.TB, ta testArch, junk []uint64, ras ...uint64) (mem *memory, sp, outer uint64) {
	s := newStack(t, ta.stack, ta.ptr)
	var rec label
	for _, j := range junk {
		s.Ptr(j)
	}
	for i, ra := range ras {
		words := scanFrameBytes/ta.ptr - 1
		if i == 0 {
			words -= len(junk)
		}
		s.Skip(words * ta.ptr).Ptr(ra)
	}
	s.Mark(&rec).Ptr(0).Ptr(0).Skip(64)
	return s.Memory(), ta.stack, rec.addr
}

func scanNames(ta testArch, frames []Frame) []string {
	names := map[uint64]string{
		ta.pc(scanOffA): "A", ta.pc(scanOffB): "B", ta.pc(scanOffC): "C", ta.pc(scanOffD): "D",
		ta.pc(scanOffE): "E", ta.pc(scanOffX): "X", ta.pc(scanOffT): "T", ta.pc(scanOffU): "U", ta.pc(scanOffV): "V", ta.pc(scanOffW): "W",
		ta.pc(scanOffR): "R",
	}
	fs := scanFunctions(ta)
	var out []string
	for _, f := range frames {
		start, ok := fs.FunctionStart(f.LookupAddress)
		n := names[start]
		if !ok || n == "" {
			n = "?"
		}
		out = append(out, n+"/"+f.FoundBy.String())
	}
	return out
}

func TestCallerScan(t *testing.T) {
	for _, ta := range scanArchs {
		ta := ta
		opts := func() Options {
			return Options{Code: ta.codeRanges(), Functions: scanFunctions(ta), Instructions: scanCode(ta).Memory(),
				StackLow: ta.stack, StackHigh: ta.stack + 0x1000}
		}
		regs := func(sp, fp, lr uint64) *archregs.Registers {
			vals := map[string]uint64{"pc": ta.pc(scanBodyD + 4), "sp": sp, "fp": fp}
			if ta.hasLR() {
				vals["lr"] = lr
			}
			return ta.regs(t, vals)
		}
		raC, raB, raA := scanRA(ta, scanCallD), scanRA(ta, scanCallC), scanRA(ta, scanCallB)
		want := []string{"D/context", "C/scan", "B/scan", "A/scan"}

		t.Run(ta.arch.Name+"/stale FP at the outermost record", func(t *testing.T) {
			// FP still points at the thread's outermost record (saved FP 0):
			// the record step ends the walk at frame 0.
			mem, sp, outer := scanStack(t, ta, nil, raC, raB, raA)
			res := Walk(regs(sp, outer, 0), mem, opts())
			if diff := cmp.Diff(want, scanNames(ta, res.Frames)); diff != "" {
				t.Errorf("frames (-want +got):\n%s", diff)
			}
			if res.Stop != StopFramePointerZero {
				t.Errorf("stop = %v (%s), want fp_zero", res.Stop, res.StopDetail)
			}
			if len(res.Frames) > 1 {
				if v, ok := res.Frames[1].Regs.Get(ta.arch.DWARFSP); !ok || v != sp+scanFrameBytes {
					t.Errorf("frame 1 SP = %#x (%v), want %#x (just above its return address)", v, ok, sp+scanFrameBytes)
				}
			}
		})
		t.Run(ta.arch.Name+"/FP zero", func(t *testing.T) {
			mem, sp, _ := scanStack(t, ta, nil, raC, raB, raA)
			res := Walk(regs(sp, 0, 0), mem, opts())
			if diff := cmp.Diff(want, scanNames(ta, res.Frames)); diff != "" {
				t.Errorf("frames (-want +got):\n%s", diff)
			}
		})
		t.Run(ta.arch.Name+"/return addresses nothing on the stack called", func(t *testing.T) {
			// Below D's return address: E's return address from a call of
			// X (code after a call, but not of D), an address after no
			// call (D's own body), the image's header and an address in
			// it after bytes that look like a call. A scan that checks
			// only "code after a call" takes the first. FP is misaligned,
			// so the frame record fails and the scan is all there is.
			junk := []uint64{scanRA(ta, scanCallX), ta.pc(scanBodyD + 8), ta.code, scanRA(ta, scanHeaderCall)}
			mem, sp, outer := scanStack(t, ta, junk, raC, raB, raA)
			res := Walk(regs(sp, outer+1, 0), mem, opts())
			got := scanNames(ta, res.Frames)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("frames (-want +got):\n%s", diff)
			}
		})
		t.Run(ta.arch.Name+"/a frame's own record wins over its locals", func(t *testing.T) {
			// Code with frame pointers: FP is D's own record, whose return
			// address follows C's call of D. A stale word below it, in
			// D's locals, also follows a call of D (from C, an earlier
			// call): the record is taken, the locals are not scanned.
			var rec, outer label
			s := newStack(t, ta.stack, ta.ptr)
			s.Skip(2 * ta.ptr).Ptr(scanRA(ta, scanCallT)).Skip(ta.ptr)
			s.Mark(&rec).PtrTo(&outer).Ptr(raC)
			s.Skip(4 * ta.ptr).Mark(&outer).Ptr(0).Ptr(raB).Ptr(0).Ptr(0)
			res := Walk(regs(ta.stack, rec.addr, 0), s.Memory(), opts())
			want := []string{"D/context", "C/frame pointer", "B/frame pointer"}
			if diff := cmp.Diff(want, scanNames(ta, res.Frames)); diff != "" {
				t.Errorf("frames (-want +got):\n%s", diff)
			}
		})
		t.Run(ta.arch.Name+"/calls through a register are a few guesses at most", func(t *testing.T) {
			// Above C's return address, B's return address (a call
			// through a register: it may have entered anything) and A's
			// (a direct call of B) alternate. Each B is a guess; a run
			// of confirmed calls between guesses does not make more of
			// them safe: at most maxWeakScans are taken.
			ras := []uint64{raC}
			for range maxWeakScans + 2 {
				ras = append(ras, raB, raA)
			}
			mem, sp, outer := scanStack(t, ta, nil, ras...)
			res := Walk(regs(sp, outer, 0), mem, opts())
			if got, want := len(res.Frames), 2+2*maxWeakScans; got != want {
				t.Errorf("Walk found %d frames (%q), want %d: D, C and %d times B, A", got, scanNames(ta, res.Frames), want, maxWeakScans)
			}
		})
		t.Run(ta.arch.Name+"/the image's header where its code cannot be read", func(t *testing.T) {
			// The last-resort scan takes a word in code after an
			// unreadable instruction (no binary for the image), but the
			// image's first address, its header, follows nothing.
			mem, sp, outer := scanStack(t, ta, []uint64{ta.code})
			o := opts()
			o.Instructions = &memory{base: ta.code, data: scanCode(ta).data[:scanEnd]}
			res := Walk(regs(sp, outer+1, 0), mem, o)
			if diff := cmp.Diff([]string{"D/context"}, scanNames(ta, res.Frames)); diff != "" {
				t.Errorf("frames (-want +got):\n%s", diff)
			}
		})
		for _, tc := range []struct {
			name, caller string
			call         uint64
		}{
			// U called T, which tail-called D: D returns to U, whose
			// call names T.
			{"tail call", "U", scanCallT},
			// W called V, which tail-called T, which tail-called D: D
			// returns to W, whose call names V (a generated program's
			// start, f4, f8 and f9, seed 1531985555).
			{"two tail calls", "W", scanCallV},
		} {
			t.Run(ta.arch.Name+"/"+tc.name, func(t *testing.T) {
				mem, sp, outer := scanStack(t, ta, nil, scanRA(ta, tc.call))
				res := Walk(regs(sp, outer, 0), mem, opts())
				if diff := cmp.Diff([]string{"D/context", tc.caller + "/scan"}, scanNames(ta, res.Frames)); diff != "" {
					t.Errorf("frames (-want +got):\n%s", diff)
				}
			})
		}
		if !ta.hasLR() {
			continue
		}
		t.Run(ta.arch.Name+"/duplicate of the link register's frame", func(t *testing.T) {
			// B called D through a register, and D has stored LR and made
			// no call yet: LR is frame 1 (B), and D's saved copy of it is
			// the first return address above SP. Only the code of D's
			// prologue tells it from B's own return address: an indirect
			// call says nothing about its target.
			mem, sp, outer := scanStack(t, ta, nil, raB, raA)
			res := Walk(regs(sp, outer, raB), mem, opts())
			want := []string{"D/context", "B/link register", "A/scan"}
			if diff := cmp.Diff(want, scanNames(ta, res.Frames)); diff != "" {
				t.Errorf("frames (-want +got):\n%s", diff)
			}
		})
		t.Run(ta.arch.Name+"/recursion at the first instruction is no duplicate", func(t *testing.T) {
			// D at its first instruction, called by R, which R called:
			// LR and the first word above SP are the same return address,
			// and both frames are real.
			raR := scanRA(ta, scanCallR)
			mem, sp, outer := scanStack(t, ta, nil, raR)
			r := ta.regs(t, map[string]uint64{"pc": ta.pc(scanOffD), "sp": sp, "fp": outer, "lr": raR})
			res := Walk(r, mem, opts())
			want := []string{"D/context", "R/link register", "R/scan"}
			if diff := cmp.Diff(want, scanNames(ta, res.Frames)); diff != "" {
				t.Errorf("frames (-want +got):\n%s", diff)
			}
		})
		t.Run(ta.arch.Name+"/a function's own call through a register", func(t *testing.T) {
			// D has stored LR and made no call; LR is B's call through a
			// register. Above D's copy of it lies another copy of B's
			// return address, in B's frame: B is not recursive, so a call
			// through a register in B cannot have entered B: a stale word.
			mem, sp, outer := scanStack(t, ta, nil, raB, raB, raA)
			res := Walk(regs(sp, outer, raB), mem, opts())
			want := []string{"D/context", "B/link register", "A/scan"}
			if diff := cmp.Diff(want, scanNames(ta, res.Frames)); diff != "" {
				t.Errorf("frames (-want +got):\n%s", diff)
			}
		})

	}
}
