package machocore

import (
	"bytes"
	"testing"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/uuid"
)

// FuzzParse opens arbitrary bytes as a core and reads what it names:
// errors and warnings are fine, panics and output out of proportion to the
// input are not. It is seeded with round-trip cores of all four
// architectures, with notes of both kinds, and a core whose image is found
// by the header scan.
func FuzzParse(f *testing.F) {
	// Seeds without the page of padding before the data: small inputs
	// fuzz and minimize faster.
	defer func(a uint64) { dataAlign = a }(dataAlign)
	dataAlign = 16
	for _, ta := range testArches {
		for _, lb := range []bool{false, true} {
			in := testInput(f, ta.arch, ta.stack, ta.image)
			in.LoadBinaryNotes = lb
			f.Add(writeCore(f, in))
		}
	}
	// A dyld for the header scan, its load commands in the file, the rest
	// of its segment zero.
	dyld := dylinkerImage(uuid.UUID{1}, "/usr/lib/dyld")[:0xc0]
	f.Add(writeCore(f, &WriteInput{Arch: archregs.ARM64, Regions: []WriteRegion{{Addr: 0x180000000, Size: 0x4000, Data: dyld}}}))
	f.Add(writeCore(f, &WriteInput{Arch: archregs.ARM64}))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Open(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		// Every output record needs input bytes of its own: a thread or
		// state at least 8, a region 56, an image 32 (a header found in
		// memory) or more. Warnings are at most a few per command or record.
		size := len(data)
		states := 0
		for _, th := range c.Threads {
			states += len(th.States)
		}
		if len(c.Threads)*8 > size || states*8 > size || len(c.Regions)*56 > size || len(c.Images)*32 > size+32 || len(c.Warnings) > size {
			t.Fatalf("%d bytes gave %d threads, %d states, %d regions, %d images, %d warnings",
				size, len(c.Threads), states, len(c.Regions), len(c.Images), len(c.Warnings))
		}
		p := make([]byte, 64)
		for _, r := range c.Regions {
			c.Memory.ReadMemory(p, r.Addr)
			c.Memory.ReadMemory(p, r.End()-1)
		}
		for _, th := range c.Threads {
			if th.Registers != nil {
				if sp, ok := th.Registers.SP(); ok {
					c.Memory.ReadMemory(p, sp)
				}
			}
		}
	})
}
