package symbolize

import (
	"context"
	"encoding/binary"
	"testing"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/walker"
)

// stackMemory is one readable region for the benchmark's stacks.
type stackMemory struct {
	base uint64
	data []byte
}

func (m *stackMemory) ReadMemory(p []byte, addr uint64) (int, error) {
	if addr < m.base || addr-m.base >= uint64(len(m.data)) {
		return 0, errOutside
	}
	n := copy(p, m.data[addr-m.base:])
	if n < len(p) {
		return n, errOutside
	}
	return n, nil
}

var errOutside = &image.FormatError{Msg: "outside the stack"}

// BenchmarkWalkUnwindTables walks 1,000 threads of 50 frames each through
// the unwind tables of a real image with warm tables: chain-nofp-x86_64-O1,
// built without frame pointers, whose recurse (push rbx; ...; call recurse)
// only compact unwind describes. Each thread is recurse calling itself 49
// times, its stack laid out as the code lays it out (saved rbx, then the
// return address after the call). The frames/s metric is the walk alone,
// without naming the frames.
func BenchmarkWalkUnwindTables(b *testing.B) {
	const (
		threads = 1000
		frames  = 50
		recurse = 0x100000430 // unslid, as nm prints it
		callAt  = 0x10000043c // call recurse
		retAddr = 0x100000441 // after it
		stack   = 0x7ff7bf000000
	)
	syms := symstore.NewSymbols()
	defer syms.Close()
	if err := syms.AddFile(context.Background(), "../fixtures/bin/chain-nofp-x86_64-O1"); err != nil {
		b.Fatal(err)
	}
	loaded := []*image.Loaded{{Name: "chain-nofp-x86_64-O1", UUID: fixtureUUID(b, "chain-nofp-x86_64-O1"), LoadAddress: 0x100000000}}
	p, err := (&Symbolizer{Symbols: syms}).NewProcess(archregs.X86_64, loaded)
	if err != nil || len(p.Missing) > 0 {
		b.Fatalf("no symbols for the fixture: %v", err)
	}
	defer p.Close()
	mem := &stackMemory{base: stack, data: make([]byte, frames*16)}
	for i := 0; i < frames; i++ {
		ra := uint64(retAddr)
		if i == frames-1 {
			ra = 0 // the outermost frame: the walk ends there
		}
		binary.LittleEndian.PutUint64(mem.data[i*16:], uint64(i)) // saved rbx
		binary.LittleEndian.PutUint64(mem.data[i*16+8:], ra)      // return address
	}
	regs := make([]*archregs.Registers, threads)
	for i := range regs {
		r := archregs.NewRegisters(archregs.X86_64)
		r.Set("rip", callAt)
		r.Set("rsp", stack)
		r.Set("rbp", 0)
		r.Set("rbx", uint64(i))
		regs[i] = r
	}
	opts := walker.Options{Unwinder: p, Code: p, Functions: p, Instructions: p, StackLow: stack, StackHigh: stack + uint64(len(mem.data))}
	// Warm the tables and check the walk once.
	if res := walker.Walk(regs[0], mem, opts); len(res.Frames) != frames || res.Frames[1].FoundBy != walker.FoundByCompactUnwind {
		b.Fatalf("walk = %d frames (stop %v: %s), frame 1 found by %v; want %d by compact unwind",
			len(res.Frames), res.Stop, res.StopDetail, res.Frames[min(1, len(res.Frames)-1)].FoundBy, frames)
	}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		for _, r := range regs {
			n += len(walker.Walk(r, mem, opts).Frames)
		}
	}
	b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "frames/s")
}
