package walker

import (
	"testing"

	"github.com/stackimage/stackimage/archregs"
)

// FuzzWalk walks random memory from random registers. The walk must not
// panic, must end, and must keep its invariants whatever the input.
func FuzzWalk(f *testing.F) {
	for i, ta := range testArchs {
		mem, fp := longChain(f, ta, 20)
		f.Add(mem.data, uint8(i), ta.pc(0x100), mem.base, fp, ta.pc(0x1000), uint64(0), uint64(0), uint16(0))
		f.Add(mem.data, uint8(i), ta.pc(0x100), mem.base, fp, uint64(0), mem.base, mem.base+uint64(len(mem.data)), uint16(5))
		// A frameless leaf with signed values on arm64.
		var f0, f1, f2 label
		s := threeRecords(f, ta, &f0, &f1, &f2, 0, ta.pc(0x300)|0x0023000000000000, ta.pc(0x400))
		m := s.Memory()
		f.Add(m.data, uint8(i), ta.pc(0x100), m.base, f1.addr, ta.pc(0x200)|0x7f00000000000000, uint64(0), uint64(0), uint16(0))
	}
	f.Fuzz(func(t *testing.T, data []byte, archIdx uint8, pc, base, fp, lr, low, high uint64, depth uint16) {
		ta := testArchs[int(archIdx)%len(testArchs)]
		r := archregs.NewRegisters(ta.arch)
		for name, v := range map[string]uint64{ta.arch.PC: pc, ta.arch.SP: base, ta.arch.FP: fp, ta.arch.LR: lr} {
			if name != "" {
				r.Set(name, v)
			}
		}
		if ta.arch == archregs.ARMV7 {
			r.Set("cpsr", uint64(depth&1)<<5) // ARM or Thumb code
		}
		opts := Options{MaxDepth: int(depth), StackLow: low, StackHigh: high,
			Code: codeRanges{{base, base + uint64(len(data))}}, Functions: funcStarts{base, base + 64},
			// The same bytes as code: every decoder meets arbitrary words.
			Instructions: &memory{base: base, data: data}}
		res := Walk(r, &memory{base: base, data: data}, opts)

		maxDepth := int(depth)
		if maxDepth == 0 {
			maxDepth = DefaultMaxDepth
		}
		if len(res.Frames) > maxDepth {
			t.Fatalf("Walk returned %d frames, more than MaxDepth %d", len(res.Frames), maxDepth)
		}
		if res.Stop == StopNone || res.Stop.String() != stopNames[res.Stop] || res.StopDetail == "" {
			t.Fatalf("Walk stop = %v %q: unknown or unexplained", res.Stop, res.StopDetail)
		}
		for i, fr := range res.Frames {
			if fr.Index != i {
				t.Fatalf("frame %d has Index %d", i, fr.Index)
			}
			if i > 0 && fr.ReturnAddress < minValidAddress {
				t.Fatalf("frame %d return address %#x below %#x", i, fr.ReturnAddress, minValidAddress)
			}
		}
	})
}
