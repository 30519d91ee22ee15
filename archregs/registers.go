package archregs

import "fmt"

// Thread state flavors, as the Mach headers number them. The flavor number
// alone is ambiguous (1 is both x86_THREAD_STATE32 and ARM_THREAD_STATE); it
// is read together with the architecture.
const (
	FlavorX86ThreadState32 uint32 = 1 // x86_THREAD_STATE32
	FlavorX86ThreadState64 uint32 = 4 // x86_THREAD_STATE64
	FlavorX86ThreadState   uint32 = 7 // x86_THREAD_STATE (flavor/count header, then 32 or 64)
	FlavorARMThreadState   uint32 = 1 // ARM_THREAD_STATE
	FlavorARMThreadState64 uint32 = 6 // ARM_THREAD_STATE64
)

// Registers is a snapshot of one thread's registers: the values and which of
// them are known. It is what the stack walkers consume.
type Registers struct {
	Arch  *Arch
	vals  []uint64 // indexed like Arch.RegNames
	known uint64   // bit i set when vals[i] is known
}

// NewRegisters returns an empty register set for arch: no register known.
func NewRegisters(arch *Arch) *Registers {
	return &Registers{Arch: arch, vals: make([]uint64, len(arch.RegNames))}
}

// Get returns the value of the named register and whether it is known.
func (r *Registers) Get(name string) (uint64, bool) {
	i := r.Arch.regIndex(name)
	if i < 0 || r.known&(1<<uint(i)) == 0 {
		return 0, false
	}
	return r.vals[i], true
}

// Set records the value of the named register.
func (r *Registers) Set(name string, v uint64) error {
	i := r.Arch.regIndex(name)
	if i < 0 {
		return fmt.Errorf("archregs: %s has no register %q", r.Arch.Name, name)
	}
	r.vals[i] = v
	r.known |= 1 << uint(i)
	return nil
}

// Known returns the names of the known registers, in struct order.
func (r *Registers) Known() []string {
	var names []string
	for i, n := range r.Arch.RegNames {
		if r.known&(1<<uint(i)) != 0 {
			names = append(names, n)
		}
	}
	return names
}

// PC, SP, FP and LR return the registers with those roles and whether they
// are known. LR is never known on x86.
func (r *Registers) PC() (uint64, bool) { return r.Get(r.Arch.PC) }
func (r *Registers) SP() (uint64, bool) { return r.Get(r.Arch.SP) }
func (r *Registers) FP() (uint64, bool) { return r.Get(r.Arch.FP) }
func (r *Registers) LR() (uint64, bool) {
	if r.Arch.LR == "" {
		return 0, false
	}
	return r.Get(r.Arch.LR)
}

// Decode reads raw thread state bytes of the given flavor, little-endian and
// laid out as Apple's headers define the flavor's struct. The data must hold
// exactly 4 × the flavor's count bytes (x86_THREAD_STATE: its header plus the
// state the header names).
func Decode(arch *Arch, flavor uint32, data []byte) (*Registers, error) {
	return nil, fmt.Errorf("archregs: unimplemented")
}

// Encode writes the registers as the raw bytes thread_get_state returns for
// the flavor; unknown registers are written as zero.
func (r *Registers) Encode(flavor uint32) ([]byte, error) {
	return nil, fmt.Errorf("archregs: unimplemented")
}

// NativeFlavor returns the thread state flavor thread_get_state uses for the
// architecture's full general register set.
func NativeFlavor(arch *Arch) uint32 { return 0 }
