// Package walker recovers call stacks from a register snapshot and a memory
// reader. It knows nothing of Mach-O or dump formats.
//
// The walk follows frame records: on every supported architecture a function
// with a frame pushes the pair (saved FP, return address) and points FP at
// it, so [FP] is the caller's FP and [FP + pointer size] the return address
// into the caller. docs/walker.md describes the stop rules, the link-register
// rule for frame 0 and the pointer-authentication rule in full.
//
// On arm64 and arm64e every return address and saved FP is masked with
// Options.PACMask. When it is zero the mask is derived from Options.ImageEnd
// (and StackHigh): the smallest all-ones mask that keeps every address below
// both; without ImageEnd it keeps 47 bits (0x00007fffffffffff), the user
// address space of Apple's arm64 platforms.
//
// Every frame says which strategy found it (FoundBy) and what evidence
// backs it (Trust): for a scanned frame, whether the image's code, its
// symbols alone (Options.Symbols) or only its code range confirmed it.
package walker

import (
	"errors"
	"fmt"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/unwind"
)

// Memory reads target memory: unwind.Memory, the one memory interface
// the dump formats, the unwinders and the walker share.
type Memory = unwind.Memory

// CodeChecker says whether an address lies in code of a known image. The
// walker uses it to judge pointer-authentication stripping and whether the
// link register holds a plausible return address.
type CodeChecker interface {
	IsCode(addr uint64) bool
}

// FunctionStarter tells where the function holding an address begins, for
// example from LC_FUNCTION_STARTS or a symbol table. The walker uses it only
// to decide where frame 0's caller is (see Options).
type FunctionStarter interface {
	// FunctionStart returns the start of the function that holds addr, and
	// false when that is not known.
	FunctionStart(addr uint64) (uint64, bool)
}

// FoundBy says how a frame was recovered: the strategy that found it,
// which is also how far it can be trusted (context most, scan least).
type FoundBy int

const (
	FoundByContext      FoundBy = iota // frame 0: the thread's PC
	FoundByLinkRegister                // the caller of frame 0, read from LR
	FoundByFramePointer                // a return address read from a frame record
	// FoundByStackPointer: on x86, the caller of a frame 0 whose return
	// address is at a known place near SP: at [SP] when frame 0 has run no
	// instruction (PC below 4096 after a call through a null pointer, or at
	// a function's first instruction) or is at its `ret`, and at [SP + one
	// pointer] just after its first instruction `push rbp` (the last two
	// need Options.Instructions).
	FoundByStackPointer
	FoundByCompactUnwind // the rule of __unwind_info for the function
	FoundByCFI           // a DWARF CFI rule (__eh_frame, __debug_frame) or Breakpad STACK CFI
	// FoundByScan: a stack word that points just after a call instruction
	// in an image's code; the least trusted, used when nothing else works.
	FoundByScan
	// FoundByAsync: a Swift async continuation, the resume function of an
	// async context (Options.Async).
	FoundByAsync
	// FoundByCode: the rule derived from the function's own instructions
	// (prologue and epilogues, from its start to the PC), where no unwind
	// table describes it, as lldb's assembly inspection does; the return
	// address it reads must follow a call. Trusted below the tables and
	// above frame records and scans.
	FoundByCode
)

// StopReason says why a walk ended. String gives its stable name, which is
// also its text form (encoding.TextMarshaler), as JSON shows it.
type StopReason int

const (
	// StopNone: no reason, the zero value. A walk in progress has none; a
	// finished walk always has another.
	StopNone                   StopReason = iota
	StopFramePointerZero                  // the chain ended with FP = 0 (the normal end)
	StopFramePointerMisaligned            // FP not aligned as the platform guarantees
	StopFramePointerNotAbove              // FP not strictly above the previous one (cycle or corruption)
	StopOutsideStack                      // FP outside the known stack bounds
	StopMemoryUnreadable                  // a frame record could not be read
	StopPCTooLow                          // a return address below 4096
	StopMaxDepth                          // the maximum depth was reached
	StopNoRegisters                       // the snapshot lacks PC (or the FP/SP the walk needs)
	// StopReturnAddressNotCode: a return address carried pointer-
	// authentication bits and, once stripped, lay in no known image, so the
	// stripping (and the record) cannot be trusted.
	StopReturnAddressNotCode
	// StopBadUnwindInfo: the unwind tables for the frame's function are
	// damaged; the detail names the image and the offset.
	StopBadUnwindInfo
	// StopUnwindEnd: the unwind tables mark the frame as the outermost one
	// (its return address is undefined).
	StopUnwindEnd
	// StopAsyncChainEnd: the walk followed a Swift async context chain to
	// its end (Options.Async).
	StopAsyncChainEnd
	// StopNoCaller: no strategy found the caller: the frame pointer is
	// unknown and no unwind rule or scan applied.
	StopNoCaller
	// StopPCNotInImage: a caller's PC lies in no known image (Options.Code
	// says so): no table describes how to unwind it, and the frame record
	// of unknown code is not trusted. The frame is kept.
	StopPCNotInImage
)

// Frame is one recovered frame.
type Frame struct {
	Index int
	// ReturnAddress is the PC for frame 0 and the return address for callers,
	// with pointer-authentication bits and the armv7 Thumb bit cleared.
	// For an async continuation it is the resume function's address plus
	// one, as Apple's thread_stack_async_pcs reports it.
	ReturnAddress uint64
	// LookupAddress is the address to symbolize: the PC for frame 0, the
	// return address minus one instruction for callers, so that a call that
	// is the last instruction of a function is attributed to it, and the
	// resume function itself for an async continuation.
	LookupAddress uint64
	// FP is the frame pointer in effect in this frame, when known.
	FP      uint64
	FoundBy FoundBy
	// Trust is the check the frame passed (for a scanned frame, what the
	// image's code or symbols could confirm).
	Trust Trust
	// Regs is the frame's register context, by DWARF number: every
	// register of frame 0's context, and for callers the ones the strategy
	// that found the frame could recover (at least PC, and SP where known).
	Regs Regs
}

// Unwinder gives the unwind rule for code at an address, from whatever
// tables describe it (compact unwind, DWARF CFI, Breakpad STACK CFI). The
// walker asks it first for every frame and falls back to frame records and
// scanning where it has no answer.
type Unwinder interface {
	// UnwindRow returns the rule that recovers the caller's registers at
	// q.Address, and the table it came from. A nil row and nil error mean
	// there is no rule there; an error means the tables are damaged (an
	// *unwind.Error names the table and offset).
	UnwindRow(q UnwindQuery) (*unwind.Row, unwind.Source, error)
}

// UnwindQuery is where the walker asks an Unwinder for a rule.
type UnwindQuery struct {
	// Address is the frame's lookup address: for frame 0 the PC, which may
	// be in a prologue or epilogue (an Unwinder must answer there only
	// with rules valid at every instruction); for a caller its return
	// address minus one instruction, inside the call.
	Address uint64
	Frame0  bool
	// Thumb says frame 0 executes armv7 Thumb code (CPSR.T), which an
	// Unwinder that decodes instructions needs to know.
	Thumb bool
}

// DefaultMaxDepth is the number of frames a walk returns at most when
// Options.MaxDepth is zero.
const DefaultMaxDepth = 512

// maxScanRun is how many frames in a row scanning may find: a scanned
// frame is a guess, and a run of guesses is more likely wrong than right.
const maxScanRun = 3

// scanWords is how many stack words a scan reads for one frame, as
// Breakpad's x86-64 walker does.
const scanWords = 40

// minValidAddress is the lowest plausible code address: the first page is
// never mapped, so a smaller return address is garbage or an end marker.
const minValidAddress = 4096

// asyncTagMask and asyncTag are the top bits of a saved frame pointer that
// Swift's async functions tag: 0b0001 in bits 63:60 says the frame record
// is extended, with the async context stored just below it.
const (
	asyncTagMask = 0xf << 60
	asyncTag     = 1 << 60
)

// Options tune a walk. The zero value is usable.
type Options struct {
	MaxDepth int // default DefaultMaxDepth
	// StackLow and StackHigh bound the stack, [low, high), when both are
	// nonzero and low < high. Every frame record must lie wholly inside.
	StackLow, StackHigh uint64
	// PACMask keeps the address bits of a pointer-authenticated arm64 or
	// arm64e value; zero picks the default (see the package documentation).
	PACMask uint64
	// ImageEnd is one past the highest address of any loaded image (the
	// largest load address + size). On arm64 and arm64e it sets the default
	// PACMask; zero means unknown.
	ImageEnd uint64
	// Code, when set, tells which addresses are code of a known image. A
	// stripped return address must then be code, and so must LR for it to
	// become frame 1.
	Code CodeChecker
	// Functions, when set, sharpens the frame 1 rules: at the first
	// instruction of a function LR (arm) or the word at SP (x86) is the
	// caller; otherwise an LR whose call site (LR minus one instruction) is
	// in the same function as PC is stale.
	Functions FunctionStarter
	// Instructions, when set, reads the bytes of code: the images' files,
	// not the stack. nil when unknown. The walker decodes a few instruction
	// shapes with it to place frame 0's caller (docs/walker.md, "With the
	// code"): the call before LR and before the record's return address
	// (arm), and prologue and epilogue instructions at the PC (arm, x86).
	// Code it cannot read leaves the walk as it is without Instructions.
	// Scanning needs it too: a scanned word must follow a call.
	Instructions Memory
	// Symbols, when set, tells which images' symbol files list their
	// functions: a scan then weighs a word in code it cannot read by
	// them, and a word in an image without symbols is a lower trust
	// (docs/walker.md, "Without the code").
	Symbols SymbolCoverage
	// FrameRecords, when set, tells whether a function keeps a frame
	// record, from its unwind table. Where it does not (or neither it nor
	// the function's prologue tells, and Symbols is set), an end of the
	// frame-record chain in that function does not end the walk: a scan
	// is tried first.
	FrameRecords FrameRecordKeeper
	// Inspections, when set, keeps what reading a function's code found
	// (Instructions) across walks over the same images, per function:
	// the threads of a dump return into the same functions at the same
	// places. nil decodes the code again at every frame.
	Inspections *InspectCache
	// Unwinder, when set, gives unwind rules, tried before frame records
	// for every frame. nil walks by frame records only.
	Unwinder Unwinder
	// NoScan turns off stack scanning, the last resort when neither an
	// unwind rule nor a frame record gives the caller.
	NoScan bool
	// Async follows Swift async context chains: at an async frame (a frame
	// record whose saved FP is tagged), the walk continues along the
	// async contexts (parent at +0, resume function at +8) instead of the
	// thread's stack, as thread_stack_async_pcs does. Without it the tag is
	// stripped and the walk follows the stack.
	Async bool
}

// Result is a finished walk: the frames found and why it stopped.
type Result struct {
	Frames []Frame
	Stop   StopReason
	// StopDetail explains the stop with addresses ("FP 0x16fdff0e1 not
	// 8-byte aligned at frame 3").
	StopDetail string
	// AmbiguousLR is frame 0's link register (PAC bits and the Thumb bit
	// cleared) when the walk set it aside as neither shown to be frame
	// 0's caller nor shown to be stale: in frame 0's image, near its PC,
	// where that image has neither code nor symbols (docs/walker.md,
	// "What it cannot know without unwind info"). It may be frame 0's
	// caller, missing between frames 0 and 1. Zero otherwise.
	AmbiguousLR uint64
}

// stopped reports whether a strategy has ended the walk (or stopped it for
// a later strategy to clear, see byScan).
func (w *walk) stopped() bool { return w.res.Stop != StopNone }

// archInfo holds the walker's own per-architecture code: the instruction
// decoders. Every other fact comes from archregs.Arch. One is chosen when a
// walk starts; the loop itself never looks at the architecture.
type archInfo struct {
	// callBefore decodes the call instruction before a return address
	// (PAC-stripped, Thumb bit kept).
	callBefore func(w *walk, ra uint64) callSite
	// frameState tells from the code at pc whether frame 0 is in a
	// prologue before it set FP or an epilogue after it restored FP and
	// LR, or has set FP to its own record (arm).
	frameState func(w *walk, regs *archregs.Registers, pc uint64) frameState
	// returnOnStack gives the offset from SP of frame 0's return address
	// when the code at pc shows it (x86).
	returnOnStack func(w *walk, pc uint64) (uint64, bool)
	// jumpTarget decodes a direct jump (tailCalls), tried at every
	// multiple of jumpAlign: x86 instructions start at any byte, armv7
	// ones at any half-word (Thumb), arm64 ones at words.
	jumpTarget jumpDecoder
	jumpAlign  uint64
	// wordISA and storesLR decode a prologue of fixed-width instructions
	// that stores LR (lrSavedAt); nil where LR is not a register (x86).
	wordISA  *armISA
	storesLR func(insn uint32) bool
	// inspect decodes one instruction for the code inspection
	// (inspect.go); nil where the walker has no such decoder.
	inspect inspector
}

// archInfos holds the walker's instruction decoders for each instruction
// set, keyed by the Mach-O CPU type that names it (arm64e runs arm64's):
// the decoders are code over the walker's types, which archregs, a leaf,
// cannot hold; every fact about an architecture is in its archregs.Arch.
var archInfos = map[uint32]*archInfo{ // archcheck: instruction decoders keyed by the CPU type of their instruction set
	archregs.CPUTypeARM64: {callBefore: arm64CallBefore, frameState: arm64FrameState,
		jumpTarget: arm64JumpTarget, jumpAlign: 4, wordISA: arm64ISA, storesLR: arm64StoresLR, inspect: arm64Inspect},
	archregs.CPUTypeARM: {callBefore: armCallBefore, frameState: armFrameState,
		jumpTarget: armJumpTarget, jumpAlign: 2, wordISA: armARMISA, storesLR: armStoresLR, inspect: armInspect},
	archregs.CPUTypeX86_64: {callBefore: x86CallBefore, returnOnStack: x86ReturnOnStack,
		jumpTarget: x86JumpTarget, jumpAlign: 1, inspect: x86Inspect},
	archregs.CPUTypeX86: {callBefore: x86CallBefore, returnOnStack: x86ReturnOnStack,
		jumpTarget: x86JumpTarget, jumpAlign: 1, inspect: x86Inspect},
}

// CallerLookupAddress returns the address to symbolize for a caller's
// return address found by other means (a crash reporter's backtrace): the
// return address minus one instruction, with the Thumb bit cleared on
// armv7, exactly as Walk computes LookupAddress. For an architecture
// without a walker it subtracts one, as atos does.
func CallerLookupAddress(arch *archregs.Arch, returnAddress uint64) uint64 {
	if arch == nil || archInfos[arch.CPUType] == nil {
		return returnAddress - 1
	}
	return arch.CallSite(returnAddress)
}

// Walk walks the thread's stack. For each frame it tries, in order, the
// unwind rule for the function holding the PC (Options.Unwinder), frame 0's
// link register or return slot, the frame record, and last a scan of the
// stack. It never fails: a walk that cannot go on ends with a stop reason,
// and the frames found until then are kept.
func Walk(regs *archregs.Registers, mem Memory, opts Options) Result {
	if regs == nil || regs.Arch == nil {
		return Result{Stop: StopNoRegisters, StopDetail: "no registers"}
	}
	ai := archInfos[regs.Arch.CPUType]
	if ai == nil {
		return Result{Stop: StopNoRegisters,
			StopDetail: fmt.Sprintf("no stack walker for architecture %s", regs.Arch.Name)}
	}
	w := newWalk(regs.Arch, ai, mem, opts)
	w.run(regs)
	return w.res
}

// walk is the state of one walk.
type walk struct {
	arch     *archregs.Arch
	ai       *archInfo
	ptrSize  uint64
	mem      Memory
	opts     Options
	maxDepth int
	pacMask  uint64 // all ones when the architecture has no PAC
	res      Result
	buf      [8]byte
	// scanRun counts the frames in a row found by scanning.
	scanRun int
	// weakScans counts the callers the caller scan took from a call whose
	// target is unknown (maxWeakScans).
	weakScans int
	// rangeRun counts the frames in a row found by scanning that only an
	// image's code range checked (maxRangeRun).
	rangeRun int
	// tried names the strategies tried for the innermost frame, for the
	// stop detail when none found its caller; triedBuf holds it, so that
	// a walk allocates nothing for it.
	tried    []string
	triedBuf [8]string
	// pastChainEnd says the frame-record step ended the chain at the
	// innermost frame in code that may keep no record: the stack scan
	// then takes only what the caller scan's checks confirm.
	pastChainEnd bool
	// rowUnusable says the innermost frame has an unwind table row that
	// could not be applied: a scan that finds its caller is a CFI scan
	// (TrustCFIScan).
	rowUnusable bool
	// fpChecked is set once the frame-0 check of FP against SP is done.
	fpChecked bool
	// thumb says frame 0 executes Thumb code (armv7 CPSR.T).
	thumb bool
	// regs0 is frame 0's context, pc0 and fp0 its PC and FP (stripped of
	// PAC bits), and fp0Known whether it has FP: what frame0Strategies
	// read.
	regs0    *archregs.Registers
	pc0, fp0 uint64
	fp0Known bool
	// rowCtx is what the expressions of the row being applied see.
	rowCtx rowContext
	// scanBuf holds the stack words byCallerScan reads at once.
	scanBuf [512]byte
	// inspectBuf, inspectTargets, inspectRowBuf, inspectState and
	// inspectBody are the code inspection's scratch space (inspect.go).
	inspectBuf                []byte
	inspectTargets            []inspectTarget
	inspectRowBuf             unwind.Row
	inspectState, inspectBody inspectState
	// inspectThumb says the function inspected runs Thumb code (armv7).
	inspectThumb bool
}

func newWalk(arch *archregs.Arch, ai *archInfo, mem Memory, opts Options) *walk {
	w := &walk{arch: arch, ai: ai, ptrSize: uint64(arch.PtrSize), mem: mem, opts: opts,
		maxDepth: opts.MaxDepth, pacMask: ^uint64(0)}
	if w.maxDepth <= 0 {
		w.maxDepth = DefaultMaxDepth
	}
	if arch.PAC {
		w.pacMask = pacMask(opts)
	}
	// Enough for most stacks without sizing anything from the input.
	w.res.Frames = make([]Frame, 0, min(w.maxDepth, 64))
	return w
}

// pacMask returns the mask that keeps the address bits of a signed value.
func pacMask(opts Options) uint64 {
	if opts.PACMask != 0 {
		return opts.PACMask
	}
	if opts.ImageEnd == 0 {
		return archregs.DefaultPACMask
	}
	// Every return address is below ImageEnd and every saved FP below
	// StackHigh; keep all the bits either needs.
	return archregs.AddressMask(max(opts.ImageEnd, opts.StackHigh))
}

func (w *walk) stop(reason StopReason, format string, args ...any) {
	w.res.Stop = reason
	w.res.StopDetail = fmt.Sprintf(format, args...)
}

// add appends a caller frame, or stops the walk and returns false when
// MaxDepth frames are there already. The limit is checked only when there is
// a frame to add, so a chain exactly MaxDepth long ends with its own reason.
func (w *walk) add(f Frame) bool {
	if len(w.res.Frames) >= w.maxDepth {
		w.stop(StopMaxDepth, "maximum depth %d reached", w.maxDepth)
		return false
	}
	f.Index = len(w.res.Frames)
	if f.LookupAddress == 0 {
		f.LookupAddress = f.ReturnAddress - w.arch.CallSize
	}
	f.Regs.Set(w.arch.DWARFPC, f.ReturnAddress)
	if f.Trust == TrustNone {
		f.Trust = trustOf(f.FoundBy)
	}
	if w.rowUnusable && f.FoundBy == FoundByScan && (f.Trust == TrustScanCode || f.Trust == TrustScanSymbols) {
		f.Trust = TrustCFIScan
	}
	w.rowUnusable = false
	if f.Trust == TrustScan {
		w.rangeRun++
	} else {
		w.rangeRun = 0
	}
	if f.FoundBy == FoundByScan {
		w.scanRun++
	} else {
		w.scanRun = 0
	}
	w.res.Frames = append(w.res.Frames, f)
	return true
}

// last returns the innermost frame found so far.
func (w *walk) last() *Frame { return &w.res.Frames[len(w.res.Frames)-1] }

func (w *walk) run(regs *archregs.Registers) {
	pc, ok := regs.PC()
	if !ok {
		w.stop(StopNoRegisters, "PC (%s) unknown", regs.Arch.PC)
		return
	}
	fp, fpKnown := regs.FP()
	fp &= w.pacMask
	// Frame 0 is a fact of the context even when PC is garbage: a call
	// through a null pointer leaves PC = 0 and the caller intact.
	f0 := Frame{ReturnAddress: pc, LookupAddress: pc, FP: fp, FoundBy: FoundByContext, Trust: TrustContext,
		Regs: regsFromContext(regs)}
	if fpKnown {
		f0.Regs.Set(w.arch.DWARFFP, fp)
	}
	w.res.Frames = append(w.res.Frames, f0)
	if cpsr, ok := regs.Get("cpsr"); ok {
		w.thumb = w.arch.ThumbState(cpsr)
	}
	if !fpKnown && w.opts.Unwinder == nil {
		w.stop(StopNoRegisters, "FP (%s) unknown", regs.Arch.FP)
		return
	}
	w.regs0, w.pc0, w.fp0, w.fp0Known = regs, pc, fp, fpKnown
	if w.tryInOrder(frame0Strategies) == endWalk {
		return
	}
	for !w.stopped() && w.tryInOrder(callerStrategies) == nextFrame {
	}
}

// tryInOrder tries strategies in order for the innermost frame until one
// settles it. When none applies, the walk ends: with the stop reason a
// strategy left for a later one to clear (byFrameRecord's, for byScan), or
// else StopNoCaller.
//
// The detail of such a stop names the strategies tried: the walk ends for
// good only where each of them found no caller.
func (w *walk) tryInOrder(strategies []strategy) outcome {
	w.tried = w.triedBuf[:0]
	w.pastChainEnd = false
	for _, s := range strategies {
		o := s.try(w)
		if !checkOnly[s.name] {
			w.tried = append(w.tried, s.name)
		}
		if o == endWalk && !checkOnly[s.name] && w.res.Stop != StopMaxDepth && w.res.Stop != StopAsyncChainEnd {
			// The strategy ended the walk for good (the chain's end in a
			// function that keeps a frame record, say): say which were
			// tried, the last among them.
			w.noteTried()
		}
		if o != tryNext {
			return o
		}
	}
	if !w.stopped() {
		w.stopNoCaller()
	}
	if len(w.tried) > 0 {
		w.noteTried()
	}
	return endWalk
}

// noteTried appends the strategies tried to the stop's detail, in one
// allocation.
func (w *walk) noteTried() {
	var buf [256]byte
	b := append(append(buf[:0], w.res.StopDetail...), " (tried: "...)
	for i, name := range w.tried {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, name...)
	}
	w.res.StopDetail = string(append(b, ')'))
}

// outsideImages stops the walk at a caller whose PC lies in no known
// image: with the unwind tables in use, nothing describes that code, and a
// frame pointer inside it (a JIT's, or garbage) is not followed. Without
// an Unwinder the walk is the frame-record walk, which follows it.
func (w *walk) outsideImages() outcome {
	cur := w.last()
	if cur.Index == 0 || w.opts.Code == nil || w.opts.Unwinder == nil || w.opts.Code.IsCode(cur.ReturnAddress) {
		return tryNext
	}
	w.stop(StopPCNotInImage, "the PC %#x of frame %d is in no known image: end of the walk", cur.ReturnAddress, cur.Index)
	return endWalk
}

func (w *walk) stopNoCaller() {
	w.stop(StopNoCaller, "no unwind rule, frame record or stack word gives the caller of frame %d", len(w.res.Frames)-1)
}

// linkRegister adds LR as frame 1 when it is frame 0's caller.
//
// Frame 0 has not saved LR when it is a frameless leaf, or stopped in its
// prologue before pushing its frame record or in its epilogue after popping
// it: then FP is still the caller's and the record at FP holds the caller's
// own return address, which differs from LR. Once frame 0 has pushed its
// record, the record at FP holds LR itself, and LR must be skipped or the
// caller would appear twice. What this cannot see without unwind info is a
// stale LR: after frame 0's own call returned, LR points into frame 0 and
// differs from its record. Options.Functions and Options.Instructions catch
// that case; docs/walker.md has the rules in full.
//
// It returns false when the walk must stop (MaxDepth reached).
func (w *walk) linkRegister(regs *archregs.Registers, pc, lr, fp uint64) bool {
	raw := lr & w.pacMask // Thumb bit kept: it tells the call's instruction set
	stripped := w.arch.CodeAddress(raw)
	if stripped < minValidAddress {
		return true
	}
	if w.opts.Code != nil && !w.opts.Code.IsCode(stripped) {
		return true
	}
	state := stateUnknown
	if w.ai.frameState != nil && w.opts.Instructions != nil {
		state = w.ai.frameState(w, regs, pc)
	}
	switch {
	case w.atFunctionStart(pc), state == stateCallerRegs:
		// Nothing has run yet, or the code shows that FP and LR are still
		// (or again) the caller's: LR is the caller even when it equals the
		// record's return address (direct recursion) or lies in PC's
		// function (recursion, or a noreturn call ending the caller).
	case w.lrIsRecorded(fp, stripped), w.lrCallInPCFunction(pc, stripped), w.lrContradicted(pc, raw, fp, state):
		return true
	case w.lrAmbiguous(pc, stripped):
		w.res.AmbiguousLR = stripped
		return true
	}
	f := Frame{ReturnAddress: stripped, FP: fp, FoundBy: FoundByLinkRegister}
	// Frame 0 has not pushed anything: the caller's SP and FP are frame
	// 0's. Its LR is unknown: it was the value just used.
	f.Regs = w.last().Regs
	f.Regs.Forget(w.arch.DWARFRA)
	return w.add(f)
}

// lrIsRecorded reports whether the record at fp holds LR: frame 0 has
// pushed its record, and LR would duplicate frame 1.
func (w *walk) lrIsRecorded(fp, lr uint64) bool {
	ra, ok := w.recordReturnAddress(fp)
	return ok && w.arch.CodeAddress(ra) == lr
}

// lrAmbiguous reports whether LR must be set aside because nothing can
// tell it from a stale return address: frame 0's image has neither code
// to read nor symbols (Options.Symbols says so), LR lies in that same
// image, and within ambiguousLRReach instructions of PC, before or after
// it. A stale LR, left by a call frame 0 made and that returned, lies in
// frame 0's own function, so near PC and always in its image; a frameless
// leaf's caller near PC in the same image is byte for byte the same
// registers and stack (the leaf pushed nothing, and neither did the
// returned callee when it was a leaf itself). The walk then continues
// from the frame record, as a frame-pointer walker that never reads LR
// does: a leaf's caller is lost rather than a stale frame added, and
// Result.AmbiguousLR keeps LR for whoever reads the walk. An LR in
// another image, or further from PC, is kept: no stale LR lies there.
func (w *walk) lrAmbiguous(pc, lr uint64) bool {
	if w.opts.Symbols == nil || w.opts.Symbols.KnowsFunctions(pc) || w.codeReadable(pc) {
		return false
	}
	if !w.opts.Symbols.SameImage(pc, lr) {
		return false
	}
	pc = w.arch.CodeAddress(pc)
	d := max(pc, lr) - min(pc, lr)
	return d < ambiguousLRReach*w.arch.CallSize
}

// ambiguousLRReach is how near PC, in instructions, lrAmbiguous sets LR
// aside: a call frame 0 made lies in frame 0's own function, within 512
// bytes of PC in all but the largest functions (after PC too, when frame
// 0 loops back). It is the bound of the rule it replaced (LR refused
// where the record of frame 0's returned call lay below SP), not tuned
// again: a smaller one keeps more leaf callers on the generated programs
// but leaves stale LRs of larger functions (docs/walker.md, "Fewer symbol
// files, fewer frames").
const ambiguousLRReach = 128

// codeReadable reports whether Options.Instructions can read the code at
// addr.
func (w *walk) codeReadable(addr uint64) bool {
	if w.opts.Instructions == nil {
		return false
	}
	_, ok := w.code32(w.arch.CodeAddress(addr))
	return ok
}

// lrCallInPCFunction reports whether Options.Functions puts LR's call site
// (LR minus one instruction) in the function holding PC: LR is then a stale
// return address from a call frame 0 made. The call site, not LR, is
// judged: a noreturn call can be the last instruction of the caller, so
// that LR is the first instruction of the next function, possibly PC's.
func (w *walk) lrCallInPCFunction(pc, lr uint64) bool {
	pcStart, ok1 := w.functionStart(pc)
	lrStart, ok2 := w.functionStart(lr - w.arch.CallSize)
	return ok1 && ok2 && pcStart == lrStart
}

// lrContradicted reports whether the code shows that LR cannot be frame
// 0's caller. LR (raw, Thumb bit kept) is rejected when the instruction
// before it is not a call at all, or when the call before it does not
// enter PC's function (a) and either
//
//	(c) the code shows frame 0 has set FP to its own record (state): a
//	    genuine LR would then be in that record; or
//	(b) the call before the return address in the record at FP does not
//	    enter LR's function either (if it did, LR's function reached
//	    frame 0 by tail calls).
//
// A check fails only on a direct call whose target is a known function
// start other than the one required; an indirect call, or a target that is
// no function start (a stub, a branch island), leaves it unknown and LR is
// kept, as without code.
func (w *walk) lrContradicted(pc, raw, fp uint64, state frameState) bool {
	if w.ai.callBefore == nil || w.opts.Instructions == nil {
		return false
	}
	c := w.ai.callBefore(w, raw)
	if c.kind == callNone {
		return true
	}
	if !w.callMisses(c, pc) {
		return false
	}
	if state == stateOwnRecord {
		return true
	}
	ra, ok := w.recordReturnAddress(fp)
	if !ok {
		return false
	}
	return w.callMisses(w.ai.callBefore(w, ra), w.arch.CallSite(raw))
}

// callMisses reports whether c is a direct call to a known function start
// that is not the start of the function holding addr.
func (w *walk) callMisses(c callSite, addr uint64) bool {
	if c.kind != callDirect {
		return false
	}
	if start, ok := w.functionStart(c.target); !ok || start != c.target {
		return false
	}
	start, ok := w.functionStart(addr)
	return ok && start != c.target
}

// functionStart asks Options.Functions for the start of addr's function.
func (w *walk) functionStart(addr uint64) (uint64, bool) {
	if w.opts.Functions == nil {
		return 0, false
	}
	return w.opts.Functions.FunctionStart(addr)
}

// atFunctionStart reports whether Options.Functions says pc is the first
// instruction of its function.
func (w *walk) atFunctionStart(pc uint64) bool {
	start, ok := w.functionStart(pc)
	return ok && start == pc
}

// stackTop adds the word at addr (SP or just above) as frame 1. It is
// called only on x86 when that word is known to be frame 0's return address
// and FP the caller's: nothing has run since the call pushed it at SP (PC
// below 4096: the CPU faulted fetching the target of a call through a null
// pointer; or PC at the first instruction of its function), or the code
// shows PC just after `push rbp` or at `ret`. With any other PC the word at
// SP could be anything; the frame-pointer chain alone is trusted then. It
// returns false when the walk must stop (MaxDepth reached).
func (w *walk) stackTop(addr, fp uint64) bool {
	ra, err := w.readPtr(addr)
	if err != nil || ra < minValidAddress {
		return true
	}
	if w.opts.Code != nil && !w.opts.Code.IsCode(ra) {
		return true
	}
	f := Frame{ReturnAddress: ra, FP: fp, FoundBy: FoundByStackPointer}
	f.Regs.Set(w.arch.DWARFSP, addr+w.ptrSize)
	f.Regs.Set(w.arch.DWARFFP, fp)
	w.keepCalleeSaved(&f.Regs)
	return w.add(f)
}

// recordReturnAddress reads the return address of the frame record at fp
// when fp passes the checks the chain applies; it reports nothing otherwise.
// PAC bits are stripped; the armv7 Thumb bit is kept.
func (w *walk) recordReturnAddress(fp uint64) (uint64, bool) {
	if fp == 0 || fp%w.arch.FPAlign != 0 || !w.inStack(fp) {
		return 0, false
	}
	ra, err := w.readPtr(fp + w.ptrSize)
	if err != nil {
		return 0, false
	}
	return ra & w.pacMask, true
}

// inStack reports whether the whole frame record at fp lies inside the
// stack bounds, or true when they are not known.
func (w *walk) inStack(fp uint64) bool {
	lo, hi := w.opts.StackLow, w.opts.StackHigh
	if lo == 0 || hi == 0 || lo >= hi {
		return true
	}
	size := 2 * w.ptrSize
	return fp >= lo && hi-lo >= size && fp-lo <= hi-lo-size
}

var (
	errNoMemory = errors.New("no memory")
	errNoExpr   = errors.New("rule without an expression")
)

// readPtr reads one little-endian pointer at addr.
func (w *walk) readPtr(addr uint64) (uint64, error) {
	return readPtr(w.mem, w.buf[:w.ptrSize], addr)
}

// readPtr reads a little-endian value of len(p) bytes (4 or 8) at addr,
// using p as scratch space.
func readPtr(mem Memory, p []byte, addr uint64) (uint64, error) {
	if mem == nil {
		return 0, errNoMemory
	}
	if addr+uint64(len(p)) < addr {
		return 0, fmt.Errorf("address %#x overflows", addr)
	}
	n, err := mem.ReadMemory(p, addr)
	if n < len(p) {
		if err == nil {
			err = fmt.Errorf("short read")
		}
		return 0, fmt.Errorf("read %d of %d bytes at %#x: %w", n, len(p), addr, err)
	}
	var v uint64
	for i := len(p) - 1; i >= 0; i-- {
		v = v<<8 | uint64(p[i])
	}
	return v, nil
}

var foundByNames = [...]string{
	FoundByContext:       "context",
	FoundByLinkRegister:  "link register",
	FoundByFramePointer:  "frame pointer",
	FoundByStackPointer:  "stack pointer",
	FoundByCompactUnwind: "compact unwind",
	FoundByCFI:           "cfi",
	FoundByScan:          "scan",
	FoundByAsync:         "async",
	FoundByCode:          "code",
}

// String returns "context", "link register", "frame pointer", "stack
// pointer", "compact unwind", "cfi", "scan", "async" or "code".
func (f FoundBy) String() string {
	if f >= 0 && int(f) < len(foundByNames) {
		return foundByNames[f]
	}
	return fmt.Sprintf("FoundBy(%d)", int(f))
}

// stopNames are stable: they appear as stop_reason in JSON output.
var stopNames = [...]string{
	StopNone:                   "",
	StopFramePointerZero:       "fp_zero",
	StopFramePointerMisaligned: "fp_misaligned",
	StopFramePointerNotAbove:   "fp_not_above",
	StopOutsideStack:           "outside_stack",
	StopMemoryUnreadable:       "memory_unreadable",
	StopPCTooLow:               "pc_too_low",
	StopMaxDepth:               "max_depth",
	StopNoRegisters:            "no_registers",
	StopReturnAddressNotCode:   "return_address_not_code",
	StopBadUnwindInfo:          "bad_unwind_info",
	StopUnwindEnd:              "unwind_end",
	StopAsyncChainEnd:          "async_chain_end",
	StopNoCaller:               "no_caller",
	StopPCNotInImage:           "pc_not_in_image",
}

// String returns a short, stable, machine-friendly name such as "fp_zero";
// "" for StopNone.
func (s StopReason) String() string {
	if s >= 0 && int(s) < len(stopNames) {
		return stopNames[s]
	}
	return fmt.Sprintf("StopReason(%d)", int(s))
}

// MarshalText returns String's text.
func (s StopReason) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads what MarshalText writes.
func (s *StopReason) UnmarshalText(text []byte) error {
	for i, name := range stopNames {
		if name == string(text) {
			*s = StopReason(i)
			return nil
		}
	}
	return fmt.Errorf("walker: unknown stop reason %q", text)
}
