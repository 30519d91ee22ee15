package archregs

import (
	"encoding/binary"
	"fmt"
)

// Go mirrors of the thread state structs in <mach/i386/_structs.h>,
// <mach/arm/_structs.h> and the thread_status.h headers, field for field.
// Each COUNT constant is the header's sizeof(struct)/sizeof(uint32_t); a test
// checks binary.Size of each mirror against 4 × COUNT, so a misplaced field
// cannot go unnoticed.
//
// fields returns pointers to the register fields in the order of the
// architecture's RegNames (padding excluded), so that one loop converts any
// state to and from Registers.

// Thread state counts, in 32-bit words, as the headers define them.
const (
	countX86ThreadState32  = 16 // x86_THREAD_STATE32_COUNT
	countX86ThreadState64  = 42 // x86_THREAD_STATE64_COUNT
	countX86ThreadState    = 44 // x86_THREAD_STATE_COUNT: header + union of both
	countARMThreadState    = 17 // ARM_THREAD_STATE_COUNT (ARM_THREAD_STATE32_COUNT)
	countARMThreadState64  = 68 // ARM_THREAD_STATE64_COUNT
	countARMUnifiedState   = 70 // ARM_UNIFIED_THREAD_STATE_COUNT: header + union of both
	countStateHeader       = 2  // x86_state_hdr_t / arm_state_hdr_t: flavor, count
	flavorARMThreadState32 = 9  // ARM_THREAD_STATE32: names the 32-bit half of the unified ARM state
)

// x86ThreadState32 mirrors _STRUCT_X86_THREAD_STATE32 (i386_thread_state_t).
type x86ThreadState32 struct {
	EAX    uint32 // __eax
	EBX    uint32 // __ebx
	ECX    uint32 // __ecx
	EDX    uint32 // __edx
	EDI    uint32 // __edi
	ESI    uint32 // __esi
	EBP    uint32 // __ebp
	ESP    uint32 // __esp
	SS     uint32 // __ss
	EFLAGS uint32 // __eflags
	EIP    uint32 // __eip
	CS     uint32 // __cs
	DS     uint32 // __ds
	ES     uint32 // __es
	FS     uint32 // __fs
	GS     uint32 // __gs
}

func (s *x86ThreadState32) fields() []any {
	return []any{&s.EAX, &s.EBX, &s.ECX, &s.EDX, &s.EDI, &s.ESI, &s.EBP, &s.ESP,
		&s.SS, &s.EFLAGS, &s.EIP, &s.CS, &s.DS, &s.ES, &s.FS, &s.GS}
}

// x86ThreadState64 mirrors _STRUCT_X86_THREAD_STATE64. The segment
// registers are 64-bit fields in the struct although only 16 bits are used.
type x86ThreadState64 struct {
	RAX    uint64 // __rax
	RBX    uint64 // __rbx
	RCX    uint64 // __rcx
	RDX    uint64 // __rdx
	RDI    uint64 // __rdi
	RSI    uint64 // __rsi
	RBP    uint64 // __rbp
	RSP    uint64 // __rsp
	R8     uint64 // __r8
	R9     uint64 // __r9
	R10    uint64 // __r10
	R11    uint64 // __r11
	R12    uint64 // __r12
	R13    uint64 // __r13
	R14    uint64 // __r14
	R15    uint64 // __r15
	RIP    uint64 // __rip
	RFLAGS uint64 // __rflags
	CS     uint64 // __cs
	FS     uint64 // __fs
	GS     uint64 // __gs
}

func (s *x86ThreadState64) fields() []any {
	return []any{&s.RAX, &s.RBX, &s.RCX, &s.RDX, &s.RDI, &s.RSI, &s.RBP, &s.RSP,
		&s.R8, &s.R9, &s.R10, &s.R11, &s.R12, &s.R13, &s.R14, &s.R15,
		&s.RIP, &s.RFLAGS, &s.CS, &s.FS, &s.GS}
}

// stateHeader mirrors x86_state_hdr_t and arm_state_hdr_t, which open the
// unified states: the flavor and count of the state that follows.
type stateHeader struct {
	Flavor uint32 // flavor
	Count  uint32 // count
}

// x86ThreadState mirrors x86_thread_state_t: the header, then a union of
// x86_thread_state32_t and x86_thread_state64_t, sized by the larger.
type x86ThreadState struct {
	TSH stateHeader                     // tsh
	UTS [4 * countX86ThreadState64]byte // uts: union { ts32; ts64; }
}

// armThreadState mirrors _STRUCT_ARM_THREAD_STATE (arm_thread_state_t,
// also arm_thread_state32_t).
type armThreadState struct {
	R    [13]uint32 // __r[13]: r0-r12
	SP   uint32     // __sp
	LR   uint32     // __lr
	PC   uint32     // __pc
	CPSR uint32     // __cpsr
}

func (s *armThreadState) fields() []any {
	f := make([]any, 0, 17)
	for i := range s.R {
		f = append(f, &s.R[i])
	}
	return append(f, &s.SP, &s.LR, &s.PC, &s.CPSR)
}

// armThreadState64 mirrors _STRUCT_ARM_THREAD_STATE64. On arm64e with
// pointer authentication the kernel names fp, lr, sp and pc __opaque_* and
// the padding __opaque_flags; the layout is the same. The flags are not kept.
type armThreadState64 struct {
	X    [29]uint64 // __x[29]: x0-x28
	FP   uint64     // __fp (x29)
	LR   uint64     // __lr (x30)
	SP   uint64     // __sp
	PC   uint64     // __pc
	CPSR uint32     // __cpsr
	Pad  uint32     // __pad (__opaque_flags on arm64e)
}

func (s *armThreadState64) fields() []any {
	f := make([]any, 0, 34)
	for i := range s.X {
		f = append(f, &s.X[i])
	}
	return append(f, &s.FP, &s.LR, &s.SP, &s.PC, &s.CPSR)
}

// armUnifiedThreadState mirrors arm_unified_thread_state_t
// (ARM_UNIFIED_THREAD_STATE): the header, then a union of
// arm_thread_state32_t and arm_thread_state64_t.
type armUnifiedThreadState struct {
	ASH stateHeader                     // ash
	UTS [4 * countARMThreadState64]byte // uts: union { ts_32; ts_64; }
}

// An ExceptionFormat is an architecture's exception state flavor, as the
// thread_status.h headers define it: the fault address, the syndrome and
// the exception number the kernel saw. A core file's LC_THREAD holds it
// after the general registers.
type ExceptionFormat struct {
	Flavor uint32 // ARM_EXCEPTION_STATE64, x86_EXCEPTION_STATE64, ...
	Name   string // Apple's name of the flavor
	Count  uint32 // in 32-bit words
	// Where the three fields are: the exception number (__exception,
	// __trapno), the syndrome (__esr, __fsr, __err) and the fault address
	// (__far, __faultvaddr). Bytes between them (x86's __cpu) are zero.
	Exception, Syndrome, FaultAddress StateField
}

// A StateField is one little-endian field of a state struct: its offset
// and width in bytes (2, 4 or 8).
type StateField struct{ Off, Size int }

func (f StateField) get(d []byte) uint64 {
	switch f.Size {
	case 2:
		return uint64(binary.LittleEndian.Uint16(d[f.Off:]))
	case 4:
		return uint64(binary.LittleEndian.Uint32(d[f.Off:]))
	}
	return binary.LittleEndian.Uint64(d[f.Off:])
}

func (f StateField) put(d []byte, v uint64) {
	switch f.Size {
	case 2:
		binary.LittleEndian.PutUint16(d[f.Off:], uint16(v))
	case 4:
		binary.LittleEndian.PutUint32(d[f.Off:], uint32(v))
	default:
		binary.LittleEndian.PutUint64(d[f.Off:], v)
	}
}

// Decode reads the three fields from data, which must hold 4 × Count
// bytes.
func (f *ExceptionFormat) Decode(data []byte) (exception, syndrome uint32, faultAddress uint64, err error) {
	if len(data) != 4*int(f.Count) {
		return 0, 0, 0, fmt.Errorf("archregs: %s: %d bytes of data, want %d (count %d)", f.Name, len(data), 4*f.Count, f.Count)
	}
	return uint32(f.Exception.get(data)), uint32(f.Syndrome.get(data)), f.FaultAddress.get(data), nil
}

// Encode lays out the three fields as the flavor's struct, 4 × Count
// bytes; values are truncated to their fields' widths.
func (f *ExceptionFormat) Encode(exception, syndrome uint32, faultAddress uint64) []byte {
	d := make([]byte, 4*f.Count)
	f.Exception.put(d, uint64(exception))
	f.Syndrome.put(d, uint64(syndrome))
	f.FaultAddress.put(d, faultAddress)
	return d
}

// The exception state flavors, as <mach/arm/thread_status.h> and
// <mach/i386/thread_status.h> number them.
var (
	// _STRUCT_ARM_EXCEPTION_STATE64 {__far u64; __esr u32; __exception u32}
	arm64Exception = &ExceptionFormat{Flavor: 7, Name: "ARM_EXCEPTION_STATE64", Count: 4, // ARM_EXCEPTION_STATE64_COUNT
		FaultAddress: StateField{0, 8}, Syndrome: StateField{8, 4}, Exception: StateField{12, 4}}
	// _STRUCT_ARM_EXCEPTION_STATE {__exception u32; __fsr u32; __far u32}
	armException = &ExceptionFormat{Flavor: 3, Name: "ARM_EXCEPTION_STATE", Count: 3, // ARM_EXCEPTION_STATE_COUNT
		Exception: StateField{0, 4}, Syndrome: StateField{4, 4}, FaultAddress: StateField{8, 4}}
	// _STRUCT_X86_EXCEPTION_STATE64 {__trapno u16; __cpu u16; __err u32; __faultvaddr u64}
	x86_64Exception = &ExceptionFormat{Flavor: 6, Name: "x86_EXCEPTION_STATE64", Count: 4, // x86_EXCEPTION_STATE64_COUNT
		Exception: StateField{0, 2}, Syndrome: StateField{4, 4}, FaultAddress: StateField{8, 8}}
	// _STRUCT_X86_EXCEPTION_STATE32 {__trapno u16; __cpu u16; __err u32; __faultvaddr u32}
	i386Exception = &ExceptionFormat{Flavor: 3, Name: "x86_EXCEPTION_STATE32", Count: 3, // x86_EXCEPTION_STATE32_COUNT
		Exception: StateField{0, 2}, Syndrome: StateField{4, 4}, FaultAddress: StateField{8, 4}}
)
