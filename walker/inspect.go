package walker

import (
	"fmt"

	"github.com/stackimage/stackimage/unwind"
)

// This file derives a frame's unwind row from its function's instructions,
// where no unwind table describes the function: lldb's way
// (x86AssemblyInspectionEngine for x86, UnwindAssemblyInstEmulation for
// arm64). From the function's first instruction (Options.Functions) to
// the frame's PC it follows the stack pointer, the frame pointer once the
// prologue points it at the frame, and where the return address and the
// callee-saved registers were stored; epilogues before the PC undo what
// they restore. Straight-line code is read in order; a branch carries its
// state to a forward target in the function, and code after a return or
// an unconditional jump starts from the state its branches recorded, or
// else from the state the prologue built (lldb's "reinstate the prologue
// row after an epilogue"). Each architecture's instruction decoder
// (archInfo.inspect) says what one instruction does.

// Limits of an inspection: the bytes read from the function start to the
// PC, the registers tracked, and the branch targets remembered.
const (
	maxInspectBytes   = 16 << 10
	maxInspectSaves   = 24
	maxInspectTargets = 64
)

// inspectFlow says where control goes after one instruction.
type inspectFlow uint8

const (
	flowNext   inspectFlow = iota // to the next instruction
	flowBranch                    // to the next instruction or to target (a conditional branch)
	flowJump                      // to target only (an unconditional jump)
	flowEnd                       // out of the function: a return, a tail call, an indirect jump
)

// inspectStep is what one instruction does to the flow.
type inspectStep struct {
	size   uint64
	flow   inspectFlow
	target uint64 // flowBranch, flowJump
	// builds marks an instruction of a prologue: it grows the frame, saves
	// a register or points FP at the frame.
	builds bool
}

// inspector decodes the instruction at the start of code (at address at)
// and applies its effect to st; false when it cannot decode it or the
// frame can no longer be followed.
type inspector func(w *walk, code []byte, at uint64, st *inspectState) (inspectStep, bool)

// savedReg says a register's caller value is in memory at CFA + off.
type savedReg struct {
	reg unwind.Reg
	off int64
}

// inspectState is the frame at one instruction, relative to the CFA (the
// SP before the call that entered the function).
type inspectState struct {
	spOff   int64 // CFA - SP, when spKnown
	spKnown bool
	fpOff   int64 // CFA - FP, when fpSet: the CFA is computed from FP
	fpSet   bool
	// afterCall says the instruction before was a call (x86: a callee
	// may pop words of its caller's, which the caller takes back).
	afterCall bool
	// getPC says the instruction before was i386's call to the next
	// instruction, whose pushed word a pop takes into a register.
	getPC bool
	// prevBuilds says the instruction before built the frame, or none
	// has run yet: a push there continues a prologue (x86's `push rax`
	// that allocates a word), where one elsewhere passes an argument.
	prevBuilds bool
	// itLeft counts the Thumb instructions an IT block still makes
	// conditional.
	itLeft uint8
	n      int
	saved  [maxInspectSaves]savedReg
}

// save records that reg's caller value is at CFA + off, unless an
// earlier store saved it (that one holds the caller's value).
func (s *inspectState) save(reg unwind.Reg, off int64) {
	for i := 0; i < s.n; i++ {
		if s.saved[i].reg == reg {
			return
		}
	}
	if s.n < len(s.saved) {
		s.saved[s.n] = savedReg{reg, off}
		s.n++
	}
}

// restore records that reg holds its caller's value again.
func (s *inspectState) restore(reg unwind.Reg) {
	for i := 0; i < s.n; i++ {
		if s.saved[i].reg == reg {
			s.n--
			s.saved[i] = s.saved[s.n]
			return
		}
	}
}

// savedAt returns where reg's caller value is, relative to the CFA.
func (s *inspectState) savedAt(reg unwind.Reg) (int64, bool) {
	for i := 0; i < s.n; i++ {
		if s.saved[i].reg == reg {
			return s.saved[i].off, true
		}
	}
	return 0, false
}

// moveSP records SP moving down by d bytes (up when d < 0).
func (s *inspectState) moveSP(d int64) { s.spOff += d }

// unknownSP records a write to SP the decoder cannot follow (alloca,
// alignment): only an FP-based CFA survives it.
func (s *inspectState) unknownSP() { s.spKnown = false }

// setFP records FP = SP + d.
func (s *inspectState) setFP(d int64) bool {
	if !s.spKnown {
		return false
	}
	s.fpSet, s.fpOff = true, s.spOff-d
	return true
}

// spFromFP records SP = FP + d.
func (s *inspectState) spFromFP(d int64) {
	if s.fpSet {
		s.spOff, s.spKnown = s.fpOff-d, true
	} else {
		s.spKnown = false
	}
}

// fpRestored records that FP holds its caller's value again: the CFA is
// SP-based from here.
func (s *inspectState) fpRestored() { s.fpSet = false }

// inspectTarget is a branch target's state.
type inspectTarget struct {
	addr uint64
	st   inspectState
}

// inspectFunction returns the frame state at pc, by decoding the function
// that starts at start up to pc (the state before the instruction at pc
// executes). false when the code cannot be read or decoded, pc is not on
// an instruction boundary of the straight-line decoding, or SP is lost.
// With Options.Inspections the answer is looked up there first, and kept.
func (w *walk) inspectFunction(start, pc uint64) (inspectState, bool) {
	c := w.opts.Inspections
	if c == nil {
		return w.decodeFunction(start, pc)
	}
	key := inspectKey{arch: w.arch, start: start, thumb: w.inspectThumb}
	if st, ok, hit := c.get(key, pc); hit {
		return st, ok
	}
	st, ok := w.decodeFunction(start, pc)
	c.put(key, pc, &st, ok)
	return st, ok
}

// decodeFunction is inspectFunction without the cache.
func (w *walk) decodeFunction(start, pc uint64) (inspectState, bool) {
	if pc < start || pc-start > maxInspectBytes || w.ai.inspect == nil {
		return inspectState{}, false
	}
	// The function's bytes to the PC, and one instruction beyond; the
	// buffer grows to the longest function prefix a walk reads.
	need := pc - start + 16
	if uint64(cap(w.inspectBuf)) < need {
		w.inspectBuf = make([]byte, (need+1023)&^1023)
	}
	code := w.inspectBuf[:need]
	n, _ := w.opts.Instructions.ReadMemory(code, start)
	if uint64(n) < pc-start {
		return inspectState{}, false
	}
	code = code[:n]
	entry := inspectState{spKnown: true, prevBuilds: true, spOff: w.entryCFAOffset()}
	// The states live in the walk: handed to the decoder through a
	// function value, a local would be allocated at every frame.
	st, body := &w.inspectState, &w.inspectBody
	*st, *body = entry, entry
	targets := w.inspectTargets[:0]
	// reachable says the instruction at hand follows the one before it;
	// guessed that its state is the prologue's, taken after a return for
	// code no recorded branch leads to (padding, or a block reached
	// backwards), which a recorded branch target overrides.
	reachable, guessed := true, false
	for at := start; at < pc; {
		if !reachable {
			*st, reachable, guessed = *body, true, true
		}
		if guessed {
			for i := range targets {
				if targets[i].addr == at {
					*st, guessed = targets[i].st, false
					break
				}
			}
			// A block no instruction falls into continues no prologue.
			st.prevBuilds = false
		}
		off := at - start
		step, ok := w.ai.inspect(w, code[off:], at, st)
		if !ok || step.size == 0 {
			return inspectState{}, false
		}
		st.prevBuilds = step.builds
		if step.builds {
			*body = *st
		}
		switch step.flow {
		case flowBranch, flowJump:
			if step.target > at && step.target <= pc && len(targets) < maxInspectTargets && w.inFunction(step.target, start) {
				known := false
				for i := range targets {
					known = known || targets[i].addr == step.target
				}
				if !known {
					targets = append(targets, inspectTarget{step.target, *st})
					w.inspectTargets = targets[:0] // keep what append grew for the next frame
				}
			}
			reachable = step.flow == flowBranch
		case flowEnd:
			reachable = false
		}
		at += step.size
		if at > pc {
			return inspectState{}, false
		}
	}
	if !reachable {
		*st, guessed = *body, true
	}
	if guessed {
		for i := range targets {
			if targets[i].addr == pc {
				*st = targets[i].st
			}
		}
	}
	return *st, true
}

// inFunction reports whether addr lies in the function starting at start.
func (w *walk) inFunction(addr, start uint64) bool {
	s, ok := w.functionStart(addr)
	return ok && s == start
}

// inspectRow returns the unwind row of the innermost frame from its
// function's code, or nil.
func (w *walk) inspectRow(cur *Frame) *unwind.Row {
	if w.ai.inspect == nil || w.opts.Instructions == nil || w.opts.Functions == nil {
		return nil
	}
	// armv7: a caller's return address says by its Thumb bit which
	// instruction set its function runs, frame 0's CPSR.T.
	pc := w.arch.CodeAddress(cur.ReturnAddress)
	w.inspectThumb = cur.Index == 0 && w.thumb || cur.Index > 0 && w.arch.Thumb(cur.ReturnAddress)
	start, ok := w.functionStart(cur.LookupAddress)
	if !ok {
		return nil
	}
	st, ok := w.inspectFunction(start, pc)
	if !ok {
		return nil
	}
	row := &w.inspectRowBuf
	*row = unwind.Row{RA: w.arch.DWARFRA, Regs: row.Regs[:0]}
	switch {
	case st.fpSet:
		row.CFA = unwind.CFA{Reg: w.arch.DWARFFP, Offset: st.fpOff}
	case st.spKnown:
		row.CFA = unwind.CFA{Reg: w.arch.DWARFSP, Offset: st.spOff}
	default:
		return nil
	}
	for i := 0; i < st.n; i++ {
		if sv := st.saved[i]; w.keepsSave(&st, sv) {
			row.SetRule(sv.reg, unwind.Rule{Kind: unwind.Offset, Offset: sv.off})
		}
	}
	if w.arch.LR == "" {
		row.SetRule(w.arch.DWARFRA, unwind.Rule{Kind: unwind.Offset, Offset: -int64(w.ptrSize)})
	} else if _, saved := st.savedAt(w.arch.DWARFRA); !saved {
		if cur.Index != 0 {
			// A caller made a call, which wrote LR: its return address
			// must have been saved before.
			return nil
		}
		row.SetRule(w.arch.DWARFRA, unwind.Rule{Kind: unwind.SameValue})
	}
	return row
}

// keepsSave reports whether a store the code made of a register is a
// rule of the row: the register is one a function keeps for its caller
// (callee-saved, FP, the return address), and its slot is still on the
// stack. A store of another register is a spill of a value the function
// computed (`str x11, [sp, #0x28]` in a body), not its caller's value;
// and once an epilogue has moved SP above a slot, the slot is dead and
// need not be readable (a walk of a stale stack finds anything there).
func (w *walk) keepsSave(st *inspectState, sv savedReg) bool {
	if sv.reg != w.arch.DWARFRA && sv.reg != w.arch.DWARFFP && !w.arch.IsCalleeSaved(sv.reg) {
		return false
	}
	return !st.spKnown || sv.off >= -st.spOff
}

// tryInspect is the strategy that finds the caller from the function's
// code (inspectRow): a caller whose return address is no code after a
// call is not taken, and the next strategy is tried.
func (w *walk) tryInspect() outcome { return w.inspectStep(false) }

// inspectStep is tryInspect. With overriding (frame 0's code row tried
// before a table's that says otherwise, codeRowFirst), a return address
// in no image is not taken for the thread's entry either: the table's
// row judges it.
func (w *walk) inspectStep(overriding bool) outcome {
	cur := w.last()
	row := w.inspectRow(cur)
	if row == nil {
		return tryNext
	}
	caller, ok := w.applyRow(cur, row)
	if !ok {
		if w.stopped() {
			// The return address is 0 where the code says it is (in
			// memory, or in LR before the prologue saved it): the
			// thread's outermost frame.
			return endWalk
		}
		return tryNext
	}
	if w.opts.Code == nil || w.ai.callBefore == nil {
		return tryNext
	}
	if !w.opts.Code.IsCode(caller.ReturnAddress) {
		if overriding {
			return tryNext
		}
		// Where the code keeps the return address there is no code of a
		// known image: the thread's entry called from outside them (a
		// sentinel, or an image the dump does not list), or code made
		// at run time. The frame is kept, as an unwind rule's would be,
		// and the walk ends there: nothing describes that code, and a
		// scan above the frame would only find stale words.
		where := "LR"
		if slot := w.raSlot(cur, row); slot != 0 {
			where = fmt.Sprintf("%#x", slot)
		}
		caller.FoundBy = FoundByCode
		if w.add(caller) {
			w.stop(StopPCNotInImage, "the code of frame %d's function keeps its return address in %s, which holds %#x: in no known image, end of the walk",
				cur.Index, where, caller.ReturnAddress)
		}
		return endWalk
	}
	// The word the code names must be a return address, as the caller
	// scan checks its candidates: code just after a call that could have
	// entered the frame's function. A function start that is wrong, or
	// code the decoder misread, gives a word that is not; so does a chain
	// of tail calls the check cannot follow. The next strategy judges.
	callee, known := w.functionStart(cur.LookupAddress)
	if _, ok := w.confirmsCaller(caller.ReturnAddress, callee, known, false); !ok {
		return tryNext
	}
	caller.FoundBy = FoundByCode
	if cur.Index == 0 && w.arch.LR != "" && raFromRegister(row, w.arch) {
		caller.FoundBy = FoundByLinkRegister
	}
	if !w.add(caller) {
		return endWalk
	}
	return nextFrame
}

// raSlot returns where row keeps the return address of cur's caller (the
// CFA plus the rule's offset), or 0 when it is in a register.
func (w *walk) raSlot(cur *Frame, row *unwind.Row) uint64 {
	rule := row.Rule(w.arch.DWARFRA)
	base, ok := cur.Regs.Get(row.CFA.Reg)
	if rule.Kind != unwind.Offset || !ok {
		return 0
	}
	return base + uint64(row.CFA.Offset) + uint64(rule.Offset)
}

// tryFrame0UnwindRow is the unwind rule for frame 0, held against the
// function's code where the rule comes from compact unwind. Compact
// unwind describes a function's body; symbolize decodes the prologue and
// epilogue shapes around it (compactunwind.Frame0), but a frameless
// function that builds its frame after a branch (shrink-wrapped, as
// clang does at -O1 for an early exit) is in none of those shapes, and
// the body's row there puts the caller's SP a frame too high, and the
// FP-based body row of a shrink-wrapped function holds neither before
// its frame is built nor after it is torn down (a loop after the
// epilogue). Where the code gives another row (for DWARF CFI and
// Breakpad rules, only an SP-based one where theirs is FP-based:
// codeRowFirst), and a caller that passes its checks, the code's row is
// taken; elsewhere the table's.
func (w *walk) tryFrame0UnwindRow() outcome {
	if w.opts.Unwinder != nil && w.ai.inspect != nil && w.opts.Instructions != nil {
		cur := w.last()
		q := UnwindQuery{Address: cur.LookupAddress, Frame0: true, Thumb: w.thumb}
		row, src, err := w.opts.Unwinder.UnwindRow(q)
		if err == nil && row != nil && src != unwind.SourceNone {
			if code := w.inspectRow(cur); code != nil && !sameFrame(row, code, w.arch.DWARFRA) && w.codeRowFirst(src, row, code) {
				if o := w.inspectStep(true); o != tryNext {
					return o
				}
			}
		}
	}
	return w.tryUnwindRow()
}

// codeRowFirst reports whether frame 0 tries the code's row before the
// table's, where the two differ. Compact unwind (and the prologue and
// epilogue shapes decoded around it, SourceCode) describes a function's
// body, valid at its calls only, as lldb takes it: elsewhere the code
// knows better. DWARF CFI and Breakpad's STACK CFI may describe every
// instruction; but CFI made for unwinding at calls only (clang's
// -funwind-tables on arm64) may leave the body's rule in force after the
// epilogue, where the code finds the frame gone (lldb augments such CFI
// from the code the same way): an FP-based rule after FP was restored,
// or an SP-based one after SP was (a shrink-wrapped function's loop
// placed after its epilogue, whose CFI restores the entry rule only at
// the end of the loop).
func (w *walk) codeRowFirst(src unwind.Source, table, code *unwind.Row) bool {
	switch src {
	case unwind.SourceCompactUnwind, unwind.SourceCode:
		return true
	}
	sp := w.arch.DWARFSP
	if !frameless(code, sp) {
		return false
	}
	return !frameless(table, sp) || w.entryRow(code) && table.CFA.Offset > code.CFA.Offset
}

// entryCFAOffset is the CFA's offset from SP at a function's first
// instruction: 0 where the call left the return address in LR, one
// pointer where it pushed it (x86).
func (w *walk) entryCFAOffset() int64 {
	if w.arch.LR == "" {
		return int64(w.ptrSize)
	}
	return 0
}

// entryRow reports whether row is a function's rule at its first
// instruction: the CFA is SP as the call left it (plus the pushed
// return address on x86) and no register but the return address is
// saved.
func (w *walk) entryRow(row *unwind.Row) bool {
	if row.CFA.Expr != nil || row.CFA.Reg != w.arch.DWARFSP || row.CFA.Offset != w.entryCFAOffset() {
		return false
	}
	for _, r := range row.Regs {
		if r.Reg != w.arch.DWARFRA && r.Rule.Kind != unwind.SameValue && r.Rule.Kind != unwind.Unspecified {
			return false
		}
	}
	return true
}

// sameFrame reports whether two rows put the CFA and the return address
// in the same place.
func sameFrame(a, b *unwind.Row, ra unwind.Reg) bool {
	if a.CFA.Expr != nil || b.CFA.Expr != nil || a.CFA.Reg != b.CFA.Reg || a.CFA.Offset != b.CFA.Offset {
		return false
	}
	ra1, ra2 := a.Rule(ra), b.Rule(ra)
	inReg := func(k unwind.RuleKind) bool { return k == unwind.Unspecified || k == unwind.SameValue }
	return inReg(ra1.Kind) && inReg(ra2.Kind) || ra1.Kind == ra2.Kind && ra1.Offset == ra2.Offset && ra1.Reg == ra2.Reg
}

// frameless reports whether a row computes the CFA from SP.
func frameless(row *unwind.Row, sp unwind.Reg) bool { return row.CFA.Expr == nil && row.CFA.Reg == sp }
