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
