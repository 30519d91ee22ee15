package walker

import "testing"

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
