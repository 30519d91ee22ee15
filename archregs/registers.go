package archregs

import (
	"encoding/binary"
	"fmt"
	"math"
)

// Thread state flavors, as the Mach headers number them. The flavor number
// alone is ambiguous (1 is both x86_THREAD_STATE32 and ARM_THREAD_STATE); it
// is read together with the architecture.
const (
	FlavorX86ThreadState32 uint32 = 1 // x86_THREAD_STATE32
	FlavorX86ThreadState64 uint32 = 4 // x86_THREAD_STATE64
	FlavorX86ThreadState   uint32 = 7 // x86_THREAD_STATE (flavor/count header, then 32 or 64)
	FlavorARMThreadState   uint32 = 1 // ARM_THREAD_STATE
	FlavorARMThreadState64 uint32 = 6 // ARM_THREAD_STATE64
	// FlavorARMUnifiedThreadState is arm64's ARM_UNIFIED_THREAD_STATE, which
	// shares ARM_THREAD_STATE's number: an arm_state_hdr_t {flavor, count},
	// then the 32- or 64-bit state. Only the 64-bit half is decoded.
	FlavorARMUnifiedThreadState uint32 = 1 // ARM_UNIFIED_THREAD_STATE
)

// Registers is a snapshot of one thread's registers: the values and which of
// them are known. It is what the stack walkers consume.
type Registers struct {
	Arch  *Arch
	vals  []uint64 // indexed like Arch.RegNames
	known uint64   // bit i set when vals[i] is known
}

// NewRegisters returns an empty register set for arch: no register known.
// A nil arch gives a set of an architecture with no registers, which
// knows none and refuses every Set.
func NewRegisters(arch *Arch) *Registers {
	if arch == nil {
		arch = &Arch{Name: "unknown"}
	}
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

// Values returns the known registers by name.
func (r *Registers) Values() map[string]uint64 {
	m := make(map[string]uint64)
	for i, n := range r.Arch.RegNames {
		if r.known&(1<<uint(i)) != 0 {
			m[n] = r.vals[i]
		}
	}
	return m
}

// state is a mirror of an Apple thread state struct (see state.go).
type state interface {
	// fields returns pointers (*uint32 or *uint64) to the register fields,
	// in the order of the architecture's RegNames.
	fields() []any
}

// stateFormat describes one flat thread state flavor.
type stateFormat struct {
	flavor   uint32
	name     string // the Apple name, for messages
	count    int    // in 32-bit words
	newState func() state
}

// unifiedFormat describes a flavor made of a {flavor, count} header and a
// union of the 32- and 64-bit states, of which this architecture uses one.
type unifiedFormat struct {
	flavor uint32
	name   string
	count  int // header and the whole union, in 32-bit words
}

// archStates lists the thread state flavors an architecture decodes.
type archStates struct {
	native  stateFormat
	unified *unifiedFormat // nil when the architecture has none
}

var (
	arm64States = archStates{
		native: stateFormat{FlavorARMThreadState64, "ARM_THREAD_STATE64", countARMThreadState64,
			func() state { return new(armThreadState64) }},
		unified: &unifiedFormat{FlavorARMUnifiedThreadState, "ARM_UNIFIED_THREAD_STATE", countARMUnifiedState},
	}
	armStates = archStates{
		native: stateFormat{FlavorARMThreadState, "ARM_THREAD_STATE", countARMThreadState,
			func() state { return new(armThreadState) }},
	}
	x86_64States = archStates{
		native: stateFormat{FlavorX86ThreadState64, "x86_THREAD_STATE64", countX86ThreadState64,
			func() state { return new(x86ThreadState64) }},
		unified: &unifiedFormat{FlavorX86ThreadState, "x86_THREAD_STATE", countX86ThreadState},
	}
	i386States = archStates{
		native: stateFormat{FlavorX86ThreadState32, "x86_THREAD_STATE32", countX86ThreadState32,
			func() state { return new(x86ThreadState32) }},
		unified: &unifiedFormat{FlavorX86ThreadState, "x86_THREAD_STATE", countX86ThreadState},
	}
)

// statesOf returns the thread state flavors of arch. arm64e shares arm64's:
// pointer authentication changes register values, not the layout.
func statesOf(arch *Arch) (*archStates, error) {
	if arch == nil {
		return nil, fmt.Errorf("archregs: no architecture given")
	}
	if arch.states != nil {
		return arch.states, nil
	}
	return nil, fmt.Errorf("archregs: %s: no thread state layout for CPU type %#x", arch.Name, arch.CPUType)
}

// flavorList names the flavors an architecture accepts, for error messages.
func (s *archStates) flavorList() string {
	l := fmt.Sprintf("%d (%s)", s.native.flavor, s.native.name)
	if s.unified != nil {
		l += fmt.Sprintf(" or %d (%s)", s.unified.flavor, s.unified.name)
	}
	return l
}

// NativeFlavor returns the thread state flavor thread_get_state uses for the
// architecture's full general register set: ARM_THREAD_STATE64 on arm64 and
// arm64e, ARM_THREAD_STATE on armv7, x86_THREAD_STATE64 on x86_64 and
// x86_THREAD_STATE32 on i386. It returns 0 for an unknown architecture.
func NativeFlavor(arch *Arch) uint32 {
	s, err := statesOf(arch)
	if err != nil {
		return 0
	}
	return s.native.flavor
}

// FlavorName returns Apple's name for a thread state flavor of the
// architecture ("ARM_THREAD_STATE64"), or "flavor N" when it has no such
// flavor here.
func FlavorName(arch *Arch, flavor uint32) string {
	s, err := statesOf(arch)
	switch {
	case err != nil:
	case flavor == s.native.flavor:
		return s.native.name
	case s.unified != nil && flavor == s.unified.flavor:
		return s.unified.name
	}
	return fmt.Sprintf("flavor %d", flavor)
}

// Decode reads raw thread state bytes of the given flavor, little-endian and
// laid out as Apple's headers define the flavor's struct. The flavor number
// is read in the architecture's namespace (1 is x86_THREAD_STATE32 on i386,
// ARM_THREAD_STATE on armv7 and ARM_UNIFIED_THREAD_STATE on arm64).
//
// The data must hold exactly 4 × the flavor's count bytes. The unified
// x86_THREAD_STATE and ARM_UNIFIED_THREAD_STATE start with a {flavor, count}
// header that must name the architecture's own flat state; their data is
// either the whole struct, as thread_get_state returns it (the union sized
// by its 64-bit member), or just the header and the named state.
//
// Every register of the flavor is known in the result.
func Decode(arch *Arch, flavor uint32, data []byte) (*Registers, error) {
	states, err := statesOf(arch)
	if err != nil {
		return nil, err
	}
	nat := &states.native
	switch {
	case flavor == nat.flavor:
		if len(data) != 4*nat.count {
			return nil, &StateSizeError{Arch: arch, Flavor: flavor, FlavorName: nat.name, Size: len(data),
				Want: []int{4 * nat.count}, want: fmt.Sprintf("%d (count %d)", 4*nat.count, nat.count)}
		}
		return decodeFlat(arch, nat, data)
	case states.unified != nil && flavor == states.unified.flavor:
		return decodeUnified(arch, states, data)
	}
	return nil, &FlavorError{Arch: arch, Flavor: flavor, want: states.flavorList()}
}

// StateSizeError is Decode's error for thread state bytes of a size the
// flavor does not have.
type StateSizeError struct {
	Arch       *Arch
	Flavor     uint32
	FlavorName string // Apple's name of the flavor ("ARM_THREAD_STATE64")
	Size       int    // the bytes given
	Want       []int  // the sizes the flavor accepts
	want       string // Want, explained
}

func (e *StateSizeError) Error() string {
	return fmt.Sprintf("archregs: %s %s (flavor %d): %d bytes of data, want %s",
		e.Arch.Name, e.FlavorName, e.Flavor, e.Size, e.want)
}

// FlavorError is the error of Decode and Encode for a thread state flavor
// the architecture does not have.
type FlavorError struct {
	Arch   *Arch
	Flavor uint32
	want   string // the flavors it has
}

func (e *FlavorError) Error() string {
	return fmt.Sprintf("archregs: %s has no thread state flavor %d (want %s)", e.Arch.Name, e.Flavor, e.want)
}

// decodeUnified checks a unified state's header and decodes the flat state
// that follows it.
func decodeUnified(arch *Arch, states *archStates, data []byte) (*Registers, error) {
	u, nat := states.unified, &states.native
	const hdrSize = 4 * countStateHeader
	full, compact := 4*u.count, hdrSize+4*nat.count
	sizeError := func() error {
		e := &StateSizeError{Arch: arch, Flavor: u.flavor, FlavorName: u.name, Size: len(data),
			Want: []int{full}, want: fmt.Sprintf("%d (count %d)", full, u.count)}
		if compact != full {
			e.Want = append(e.Want, compact)
			e.want += fmt.Sprintf(" or %d (header and %s)", compact, nat.name)
		}
		return e
	}
	if len(data) < hdrSize {
		return nil, sizeError()
	}
	var hdr stateHeader
	if _, err := binary.Decode(data, binary.LittleEndian, &hdr); err != nil {
		return nil, fmt.Errorf("archregs: %s %s header: %v", arch.Name, u.name, err)
	}
	if hdr.Flavor != nat.flavor || hdr.Count != uint32(nat.count) {
		return nil, fmt.Errorf("archregs: %s %s (flavor %d): header names flavor %d count %d, want flavor %d (%s) count %d",
			arch.Name, u.name, u.flavor, hdr.Flavor, hdr.Count, nat.flavor, nat.name, nat.count)
	}
	if len(data) != full && len(data) != compact {
		return nil, sizeError()
	}
	return decodeFlat(arch, nat, data[hdrSize:compact])
}

// decodeFlat decodes data, whose length the caller checked, as the flat
// state f.
func decodeFlat(arch *Arch, f *stateFormat, data []byte) (*Registers, error) {
	s := f.newState()
	if _, err := binary.Decode(data, binary.LittleEndian, s); err != nil {
		return nil, fmt.Errorf("archregs: %s %s: %v", arch.Name, f.name, err)
	}
	fields := s.fields()
	if len(fields) != len(arch.RegNames) {
		// A table error, not bad input: the struct and RegNames disagree.
		return nil, fmt.Errorf("archregs: %s %s has %d registers, RegNames %d",
			arch.Name, f.name, len(fields), len(arch.RegNames))
	}
	r := NewRegisters(arch)
	for i, p := range fields {
		switch p := p.(type) {
		case *uint32:
			r.vals[i] = uint64(*p)
		case *uint64:
			r.vals[i] = *p
		}
		r.known |= 1 << uint(i)
	}
	return r, nil
}

// Encode writes the registers as the raw bytes thread_get_state returns for
// the flavor; unknown registers are written as zero. The unified flavors are
// written whole (header, then the union sized by its 64-bit member), and
// arm64's padding word is zero. A value too wide for its field is an error.
func (r *Registers) Encode(flavor uint32) ([]byte, error) {
	states, err := statesOf(r.Arch)
	if err != nil {
		return nil, err
	}
	nat := &states.native
	switch {
	case flavor == nat.flavor:
		return r.encodeFlat(nat)
	case states.unified != nil && flavor == states.unified.flavor:
		flat, err := r.encodeFlat(nat)
		if err != nil {
			return nil, err
		}
		out := binary.LittleEndian.AppendUint32(nil, nat.flavor)
		out = binary.LittleEndian.AppendUint32(out, uint32(nat.count))
		out = append(out, flat...)
		// The union is as large as its 64-bit member; the rest is zero.
		return append(out, make([]byte, 4*states.unified.count-len(out))...), nil
	}
	return nil, &FlavorError{Arch: r.Arch, Flavor: flavor, want: states.flavorList()}
}

// encodeFlat writes the registers as the flat state f.
func (r *Registers) encodeFlat(f *stateFormat) ([]byte, error) {
	s := f.newState()
	fields := s.fields()
	if len(fields) != len(r.Arch.RegNames) || len(r.vals) != len(fields) {
		return nil, fmt.Errorf("archregs: %s %s has %d registers, RegNames %d",
			r.Arch.Name, f.name, len(fields), len(r.Arch.RegNames))
	}
	for i, p := range fields {
		v := r.vals[i]
		switch p := p.(type) {
		case *uint32:
			if v > math.MaxUint32 {
				return nil, fmt.Errorf("archregs: %s %s: register %s = %#x does not fit in 32 bits",
					r.Arch.Name, f.name, r.Arch.RegNames[i], v)
			}
			*p = uint32(v)
		case *uint64:
			*p = v
		}
	}
	return binary.Append(nil, binary.LittleEndian, s)
}
