package walker_test

import (
	"encoding/binary"
	"fmt"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/walker"
)

// region is one block of captured memory.
type region struct {
	base uint64
	data []byte
}

func (r region) ReadMemory(p []byte, addr uint64) (int, error) {
	if addr < r.base || addr-r.base >= uint64(len(r.data)) {
		return 0, fmt.Errorf("%#x not captured", addr)
	}
	n := copy(p, r.data[addr-r.base:])
	if n < len(p) {
		return n, fmt.Errorf("%#x: short read", addr)
	}
	return n, nil
}

// A frameless arm64 leaf: its caller is in LR, and FP still points at the
// caller's frame record, whose return address is the caller's caller.
func ExampleWalk() {
	stack := make([]byte, 32)
	binary.LittleEndian.PutUint64(stack[0:], 0x16fdff010)  // caller's saved FP: the outermost record
	binary.LittleEndian.PutUint64(stack[8:], 0x100003f70)  // return into the caller's caller
	binary.LittleEndian.PutUint64(stack[16:], 0)           // outermost record: saved FP 0
	binary.LittleEndian.PutUint64(stack[24:], 0x18d2b4274) // return into start

	regs := archregs.NewRegisters(archregs.ARM64)
	regs.Set("pc", 0x100003e20)
	regs.Set("lr", 0x100003f10)
	regs.Set("fp", 0x16fdff000)
	regs.Set("sp", 0x16fdfefe0)

	res := walker.Walk(regs, region{0x16fdff000, stack}, walker.Options{})
	for _, f := range res.Frames {
		fmt.Printf("%d %#x lookup %#x (%v)\n", f.Index, f.ReturnAddress, f.LookupAddress, f.FoundBy)
	}
	fmt.Println(res.Stop)
	// Output:
	// 0 0x100003e20 lookup 0x100003e20 (context)
	// 1 0x100003f10 lookup 0x100003f0c (link register)
	// 2 0x100003f70 lookup 0x100003f6c (frame pointer)
	// 3 0x18d2b4274 lookup 0x18d2b4270 (frame pointer)
	// fp_zero
}
