// Package walker recovers call stacks from a register snapshot and a memory
// reader. It knows nothing of Mach-O or dump formats.
package walker

import "github.com/stackimage/stackimage/archregs"

// Memory reads target memory. It has io.ReaderAt semantics with a uint64
// address: it returns the number of bytes read and an error when fewer than
// len(p) could be read.
type Memory interface {
	ReadMemory(p []byte, addr uint64) (int, error)
}

// CodeChecker says whether an address lies in code of a known image. The
// walker uses it to judge pointer-authentication stripping.
type CodeChecker interface {
	IsCode(addr uint64) bool
}

// FoundBy says how a frame was recovered.
type FoundBy int

const (
	FoundByContext      FoundBy = iota // frame 0: the thread's PC
	FoundByLinkRegister                // the caller of frame 0, read from LR
	FoundByFramePointer                // a return address read from a frame record
)

// StopReason says why a walk ended.
type StopReason int

const (
	StopFramePointerZero       StopReason = iota // the chain ended with FP = 0 (the normal end)
	StopFramePointerMisaligned                   // FP not aligned as the platform guarantees
	StopFramePointerNotAbove                     // FP not strictly above the previous one (cycle or corruption)
	StopOutsideStack                             // FP outside the known stack bounds
	StopMemoryUnreadable                         // a frame record could not be read
	StopPCTooLow                                 // a return address below 4096
	StopMaxDepth                                 // the maximum depth was reached
	StopNoRegisters                              // the snapshot lacks PC (or the FP/SP the walk needs)
)

// Frame is one recovered frame.
type Frame struct {
	Index int
	// ReturnAddress is the PC for frame 0 and the return address for callers,
	// with pointer-authentication bits stripped.
	ReturnAddress uint64
	// LookupAddress is the address to symbolize: the PC for frame 0, and the
	// return address minus one instruction for callers, so that a call that
	// is the last instruction of a function is attributed to it.
	LookupAddress uint64
	// FP is the frame pointer in effect in this frame, when known.
	FP      uint64
	FoundBy FoundBy
}

// Options tune a walk. The zero value is usable.
type Options struct {
	MaxDepth int // default 512
	// StackLow and StackHigh bound the stack, [low, high), when both are
	// nonzero.
	StackLow, StackHigh uint64
	// PACMask keeps the address bits of a pointer-authenticated arm64e value;
	// zero picks the default (see the package documentation).
	PACMask uint64
	// Code, when set, tells which addresses are code of a known image.
	Code CodeChecker
}

// Result is a finished walk: the frames found and why it stopped.
type Result struct {
	Frames []Frame
	Stop   StopReason
	// StopDetail explains the stop with addresses ("FP 0x16fdff0e1 not
	// 8-byte aligned at frame 3").
	StopDetail string
}

// Walk walks the thread's stack by frame pointers.
func Walk(regs *archregs.Registers, mem Memory, opts Options) Result {
	return Result{Stop: StopNoRegisters, StopDetail: "unimplemented"}
}

func (f FoundBy) String() string    { return "" }
func (s StopReason) String() string { return "" }
