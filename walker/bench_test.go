package walker

import (
	"testing"

	"github.com/stackimage/stackimage/archregs"
)

// BenchmarkWalk walks a full-depth chain of DefaultMaxDepth frames; the
// frames/s metric is what matters for symbolicating many threads.
func BenchmarkWalk(b *testing.B) {
	for _, ta := range testArchs {
		b.Run(ta.arch.Name, func(b *testing.B) {
			mem, fp := longChain(b, ta, DefaultMaxDepth-1)
			regs := ta.regs(b, map[string]uint64{"pc": ta.pc(0x100), "fp": fp})
			b.ReportAllocs()
			frames := 0
			for b.Loop() {
				res := Walk(regs, mem, Options{})
				if res.Stop != StopFramePointerZero {
					b.Fatalf("Walk stop = %v (%s), want %v", res.Stop, res.StopDetail, StopFramePointerZero)
				}
				frames += len(res.Frames)
			}
			b.ReportMetric(float64(frames)/b.Elapsed().Seconds(), "frames/s")
		})
	}
}

// BenchmarkWalkCallerScan walks code without frame pointers by the caller
// scan alone: 64 frames of a function R that calls itself directly
// (scanCode), each
// frame 256 bytes with its return address in its last word, and FP at the
// outermost record, as such code leaves it. Every word of the stack is
// read and every return address's call is decoded.
func BenchmarkWalkCallerScan(b *testing.B) {
	const depth, frameBytes = 64, 256
	for _, ta := range scanArchs {
		b.Run(ta.arch.Name, func(b *testing.B) {
			ra := scanRA(ta, scanCallR)
			s := newStack(b, ta.stack, ta.ptr)
			for range depth - 1 {
				s.Skip(frameBytes - ta.ptr).Ptr(ra)
			}
			var outer label
			s.Mark(&outer).Ptr(0).Ptr(0)
			mem := s.Memory()
			opts := Options{Code: ta.codeRanges(), Functions: scanFunctions(ta), Instructions: scanCode(ta).Memory(),
				StackLow: ta.stack, StackHigh: mem.base + uint64(len(mem.data))}
			regs := ta.regs(b, map[string]uint64{"pc": ta.pc(scanOffR + 8), "sp": ta.stack, "fp": outer.addr})
			b.ReportAllocs()
			frames := 0
			for b.Loop() {
				res := Walk(regs, mem, opts)
				if len(res.Frames) != depth {
					b.Fatalf("Walk found %d frames, want %d (stop %v: %s)", len(res.Frames), depth, res.Stop, res.StopDetail)
				}
				frames += len(res.Frames)
			}
			b.ReportMetric(float64(frames)/b.Elapsed().Seconds(), "frames/s")
		})
	}
}

// inspectChain builds what BenchmarkWalkInspect walks: a function R at
// 0x100 that calls itself after a body of fillerBytes (so that every frame
// decodes about that much code), frameless (no frame pointer), and a
// stack of depth frames of R with frame 0 in its body.
func inspectChain(tb testing.TB, ta testArch, depth, fillerBytes int) (*memory, Options, *archregs.Registers) {
	const start = 0x100
	c := newCode(ta)
	var callAt, frame int
	switch ta.arch {
	case archregs.X86_64:
		// push rbx; sub rsp, 0x20; fillerBytes of mov eax, ecx; call R; add rsp, 0x20; pop rbx; ret
		c.put(start, []byte{0x53, 0x48, 0x83, 0xec, 0x20})
		for i := 0; i < fillerBytes; i += 2 {
			c.put(start+5+uint64(i), []byte{0x89, 0xc8})
		}
		callAt = start + 5 + fillerBytes
		c.put(uint64(callAt), []byte{0xe8}, le32(uint32(start-(callAt+5))), []byte{0x48, 0x83, 0xc4, 0x20, 0x5b, 0xc3})
		callAt += 5
		frame = 0x30 // locals, rbx, return address
	case archregs.ARM64:
		// sub sp, sp, #0x20; stp x29, x30, [sp, #0x10]; nops; bl R; ldp; add sp; ret
		c.put(start, le32(0xd10083ff), le32(0xa9017bfd))
		for i := 0; i < fillerBytes; i += 4 {
			c.put(start+8+uint64(i), le32(0xd503201f))
		}
		callAt = start + 8 + fillerBytes
		c.put(uint64(callAt), le32(0x94000000|uint32(int32(start-callAt)/4)&0x3ffffff), le32(0xa9417bfd), le32(0x910083ff), le32(0xd65f03c0))
		callAt += 4
		frame = 0x20
	default:
		tb.Fatalf("no R for %s", ta.arch.Name)
	}
	s := newStack(tb, ta.stack, ta.ptr)
	for i := range depth {
		ra := ta.pc(uint64(callAt))
		if i == depth-1 {
			ra = 0
		}
		s.Skip(frame - 2*ta.ptr).Ptr(0).Ptr(ra)
	}
	s.Skip(64)
	mem := s.Memory()
	opts := Options{Code: ta.codeRanges(), Instructions: c.Memory(), Functions: funcStarts{ta.pc(start), ta.pc(uint64(callAt) + 16)},
		StackLow: ta.stack, StackHigh: mem.base + uint64(len(mem.data))}
	vals := map[string]uint64{"pc": ta.pc(uint64(callAt - 4 - fillerBytes/2)), "sp": ta.stack, "fp": 0}
	if ta.arch.LR != "" {
		vals["lr"] = ta.pc(uint64(callAt)) // stale: the code says it was saved
	}
	regs := ta.regs(tb, vals)
	return mem, opts, regs
}

// BenchmarkWalkInspect walks 64 frames of a frameless function whose
// callers only its code places (no unwind table, no frame pointer): each
// frame decodes about 1 KiB of the function, from its start to the
// return address. "uncached" decodes at every frame of every walk, as
// before Options.Inspections; "cached" shares one InspectCache across the
// walks, as symbolize.Process does for the threads of a dump.
func BenchmarkWalkInspect(b *testing.B) {
	const depth, filler = 64, 1024
	for _, ta := range []testArch{testArchs[0], testArchs[3]} {
		for _, cached := range []bool{false, true} {
			name := ta.arch.Name + "/uncached"
			if cached {
				name = ta.arch.Name + "/cached"
			}
			b.Run(name, func(b *testing.B) {
				mem, opts, regs := inspectChain(b, ta, depth, filler)
				if cached {
					opts.Inspections = &InspectCache{}
				}
				if res := Walk(regs, mem, opts); len(res.Frames) < 3 || res.Frames[2].FoundBy != FoundByCode {
					b.Fatalf("frames %+v: want frame 2 found by the code", res.Frames)
				}
				b.ReportAllocs()
				frames := 0
				for b.Loop() {
					res := Walk(regs, mem, opts)
					if len(res.Frames) != depth {
						b.Fatalf("Walk found %d frames, want %d (stop %v: %s)", len(res.Frames), depth, res.Stop, res.StopDetail)
					}
					frames += len(res.Frames)
				}
				b.ReportMetric(float64(frames)/b.Elapsed().Seconds(), "frames/s")
			})
		}
	}
}
