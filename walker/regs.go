package walker

import (
	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/unwind"
)

// maxRegs bounds the DWARF register numbers a frame's context keeps: the
// general registers of every supported architecture (arm64's PC is 32).
// Floating-point registers, numbered higher, are never needed to find a
// caller and are not kept.
const maxRegs = 40

// Regs is a frame's register context: values by DWARF register number
// (archregs.Arch.DWARF names them), each known or not. The zero value
// knows no register. It is a value type: copying it copies the registers.
type Regs struct {
	vals  [maxRegs]uint64
	known uint64
}

// Get returns register r and whether it is known.
func (r *Regs) Get(n unwind.Reg) (uint64, bool) {
	if n >= maxRegs || r.known&(1<<n) == 0 {
		return 0, false
	}
	return r.vals[n], true
}

// Set records the value of register n; numbers the context does not keep
// are ignored.
func (r *Regs) Set(n unwind.Reg, v uint64) {
	if n < maxRegs {
		r.vals[n] = v
		r.known |= 1 << n
	}
}

// Forget marks register n unknown.
func (r *Regs) Forget(n unwind.Reg) {
	if n < maxRegs {
		r.known &^= 1 << n
	}
}

// Known reports how many registers are known.
func (r *Regs) Known() int {
	n := 0
	for k := r.known; k != 0; k &= k - 1 {
		n++
	}
	return n
}

// regsFromContext converts a thread's registers to DWARF numbering.
func regsFromContext(regs *archregs.Registers) Regs {
	var out Regs
	for i, name := range regs.Arch.DWARF {
		if name == "" {
			continue
		}
		if v, ok := regs.Get(name); ok {
			out.Set(unwind.Reg(i), v)
		}
	}
	return out
}
