//go:build unicorn

package emu

import (
	"errors"
	"fmt"
	"time"

	"github.com/stackimage/stackimage/archregs"
)

// Machine is one emulated thread: a Unicorn engine for an architecture,
// a stack region, the images loaded into it and the shadow stack of the
// current run. It satisfies walker.Memory. It is not safe for concurrent
// use.
type Machine struct {
	Arch   *archregs.Arch
	Engine *Engine
	// StackLow and StackHigh bound the mapped stack, [low, high).
	StackLow, StackHigh uint64
	// Sentinel is the return address of the entry function: reaching it
	// ends a run cleanly. A page is mapped there so that a walker reading
	// it does not fault, but nothing there ever executes.
	Sentinel uint64
	// Images are the loaded images in load order.
	Images []*Loaded
	// Shadow is the true call stack; see ShadowStack.
	Shadow ShadowStack

	info *archInfo
	run  *runState
	buf  [16]byte // instruction bytes for the code hook
	regs []uint64 // scratch for Registers
}

// New opens an emulator for the architecture (arm64, armv7, x86_64 or
// i386) and maps its stack and sentinel page.
func New(arch *archregs.Arch) (*Machine, error) {
	info, err := infoFor(arch)
	if err != nil {
		return nil, err
	}
	e, err := Open(info.cpu)
	if err != nil {
		return nil, err
	}
	m := &Machine{
		Arch: info.arch, Engine: e, info: info,
		StackLow: info.stackTop - defaultStackSize, StackHigh: info.stackTop,
		Sentinel: info.sentinel,
		regs:     make([]uint64, len(info.regIDs)),
	}
	if err := e.MapMemory(m.StackLow, defaultStackSize, ProtRead|ProtWrite); err != nil {
		e.Close()
		return nil, fmt.Errorf("emu: stack: %w", err)
	}
	if err := e.MapMemory(m.Sentinel, PageSize, ProtRead|ProtExec); err != nil {
		e.Close()
		return nil, fmt.Errorf("emu: sentinel page: %w", err)
	}
	if err := e.AddCodeHook(1, 0, m.codeHook); err != nil {
		e.Close()
		return nil, err
	}
	return m, nil
}

// Close releases the emulator.
func (m *Machine) Close() error { return m.Engine.Close() }

// ReadMemory reads emulated memory; it satisfies walker.Memory.
func (m *Machine) ReadMemory(p []byte, addr uint64) (int, error) { return m.Engine.ReadMemory(p, addr) }

// PC returns the program counter, Thumb bit cleared.
func (m *Machine) PC() (uint64, error) { return m.Engine.RegRead(m.info.pc) }

// SP returns the stack pointer.
func (m *Machine) SP() (uint64, error) { return m.Engine.RegRead(m.info.sp) }

// SetEntry sets up the thread as the kernel and the ABI leave it at an
// entry point called like a function: SP 16-byte aligned at the call (so,
// on x86, SP ≡ −ptrSize mod 16 once the sentinel return address is
// pushed; on ARM the sentinel is in LR), the frame pointer zero so that the
// frame chain ends, and the PC at entry. An ARM entry with bit 0 set starts
// in Thumb state. The shadow stack restarts with the entry pseudo-call.
func (m *Machine) SetEntry(entry uint64) error {
	in := m.info
	sp := m.StackHigh &^ 15
	w := m.Engine.RegWrite
	var errs []error
	if in.cpsr >= 0 {
		// User mode (M = 0b10000) with the T bit from the entry address:
		// BX to an odd address enters Thumb state.
		cpsr := uint64(0x10)
		if in.arch.Thumb(entry) {
			cpsr |= in.arch.ThumbCPSR
		}
		errs = append(errs, w(in.cpsr, cpsr))
	}
	if in.pushesRet {
		// The call pushed the sentinel return address.
		sp -= uint64(in.ptrSize)
		ret := make([]byte, in.ptrSize)
		putPtr(ret, m.Sentinel)
		errs = append(errs, m.Engine.WriteMemory(sp, ret))
	}
	errs = append(errs, w(in.sp, sp), w(in.fp, 0))
	if in.lr >= 0 {
		errs = append(errs, w(in.lr, m.Sentinel))
	}
	errs = append(errs, w(in.pc, in.arch.CodeAddress(entry)))
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("emu: entry state: %w", err)
	}
	m.Shadow.Calls = append(m.Shadow.Calls[:0], Call{CallSite: m.Sentinel, ReturnAddress: m.Sentinel})
	return nil
}

func putPtr(b []byte, v uint64) {
	for i := range b {
		b[i] = byte(v >> (8 * i))
	}
}

// DefaultMaxSteps is the step budget of a run when RunOptions leaves it
// zero: far above any fixture, low enough that a loop ends in seconds.
const DefaultMaxSteps = 5_000_000

// RunOptions control one Run.
type RunOptions struct {
	// MaxSteps bounds the instructions executed; exceeding it is an error.
	// Zero means DefaultMaxSteps.
	MaxSteps int
	// Timeout bounds the wall-clock time as a backstop; zero means a
	// minute.
	Timeout time.Duration
	// StopAt, when set, is asked at every instruction boundary; returning
	// true stops the run before the instruction at pc executes. A Run
	// resumed from such a stop does not ask again about the same boundary.
	StopAt func(pc uint64) bool
	// OnStep, when set, is called at every instruction boundary, before the
	// instruction at pc executes and with the shadow stack matching that
	// boundary. It is where a sweep captures and compares; an error ends
	// the run with that error.
	OnStep func(pc uint64) error
}

// StopReason says why a Run ended without error.
type StopReason int

const (
	StopSentinel StopReason = iota // the entry function returned to the sentinel
	StopAtPC                       // RunOptions.StopAt asked to stop
)

func (r StopReason) String() string {
	switch r {
	case StopSentinel:
		return "returned to sentinel"
	case StopAtPC:
		return "stopped at requested PC"
	}
	return fmt.Sprintf("StopReason(%d)", int(r))
}

// runState is the bookkeeping of the current Run, read by the code hook.
type runState struct {
	opts      RunOptions
	maxSteps  int
	steps     int
	resumePC  uint64 // StopAt is not asked again at this PC first
	resuming  bool
	stopped   bool
	reason    StopReason
	expectRet uint64 // where the last return should land
	checkRet  bool
}

// Steps returns the instructions executed by the last Run.
func (m *Machine) Steps() int {
	if m.run == nil {
		return 0
	}
	return m.run.steps
}

// Run executes from the current PC until the entry function returns to the
// sentinel, StopAt stops it, or an error: a stray memory access
// (*MemFault), an exhausted step budget or timeout, a lost shadow stack
// (*ShadowError) or an error from OnStep.
func (m *Machine) Run(opts RunOptions) (StopReason, error) {
	pc, err := m.PC()
	if err != nil {
		return 0, err
	}
	rs := &runState{opts: opts, maxSteps: opts.MaxSteps}
	if rs.maxSteps <= 0 {
		rs.maxSteps = DefaultMaxSteps
	}
	if prev := m.run; prev != nil && prev.stopped && prev.reason == StopAtPC {
		rs.resuming, rs.resumePC = true, pc
		rs.checkRet, rs.expectRet = prev.checkRet, prev.expectRet
	}
	m.run = rs
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = time.Minute
	}
	begin := pc
	if m.info.cpsr >= 0 {
		// uc_emu_start takes the Thumb state from bit 0 of the address.
		if cpsr, err := m.Engine.RegRead(m.info.cpsr); err == nil {
			begin = m.Arch.WithThumb(begin, m.Arch.ThumbState(cpsr))
		}
	}
	if pc == m.Sentinel {
		return StopSentinel, nil
	}
	err = m.Engine.Start(begin, m.Sentinel, uint64(timeout/time.Microsecond), 0)
	if err != nil {
		return 0, err
	}
	if rs.stopped {
		return rs.reason, nil
	}
	pc, err = m.PC()
	if err != nil {
		return 0, err
	}
	if pc == m.Sentinel {
		rs.stopped, rs.reason = true, StopSentinel
		return StopSentinel, nil
	}
	return 0, fmt.Errorf("emu: run timed out after %v at PC %#x after %d instructions", timeout, pc, rs.steps)
}

// codeHook runs before every instruction: it enforces the step budget,
// checks that returns land where their call said, offers the boundary to
// StopAt and OnStep, then records the instruction's effect on the shadow
// stack.
func (m *Machine) codeHook(pc uint64, size uint32) {
	rs := m.run
	if rs == nil || rs.stopped {
		return
	}
	if pc == m.Sentinel {
		rs.stopped, rs.reason = true, StopSentinel
		m.Engine.Stop()
		return
	}
	rs.steps++
	if rs.steps > rs.maxSteps {
		m.Engine.fail(fmt.Errorf("emu: step budget of %d instructions exhausted at PC %#x (a loop?)", rs.maxSteps, pc))
		return
	}
	if rs.checkRet {
		rs.checkRet = false
		if pc != rs.expectRet {
			m.Engine.fail(&ShadowError{PC: pc, Expected: rs.expectRet, Detail: "a return landed elsewhere (longjmp or a stack smash?)"})
			return
		}
	}
	if rs.resuming && pc == rs.resumePC {
		rs.resuming = false
	} else if rs.opts.StopAt != nil && rs.opts.StopAt(pc) {
		rs.stopped, rs.reason = true, StopAtPC
		m.Engine.Stop()
		return
	}
	rs.resuming = false
	if rs.opts.OnStep != nil {
		if err := rs.opts.OnStep(pc); err != nil {
			m.Engine.fail(err)
			return
		}
	}
	if size == 0 || int(size) > len(m.buf) {
		return
	}
	insn := m.buf[:size]
	if _, err := m.Engine.ReadMemory(insn, pc); err != nil {
		return // the fetch itself will fault and say so
	}
	kind, ret := m.info.classify(m, pc, insn)
	switch kind {
	case insnCall:
		m.Shadow.Calls = append(m.Shadow.Calls, Call{CallSite: pc, ReturnAddress: ret})
	case insnRet:
		n := len(m.Shadow.Calls)
		if n == 0 {
			m.Engine.fail(&ShadowError{PC: pc, Detail: "return with no active call"})
			return
		}
		rs.checkRet, rs.expectRet = true, m.Shadow.Calls[n-1].ReturnAddress
		m.Shadow.Calls = m.Shadow.Calls[:n-1]
	}
}
