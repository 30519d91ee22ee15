package walker

import (
	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/unwind"
)

// This file holds the strategies that find a frame's caller. The order in
// which the walk tries them is data: frame0Strategies for frame 0's
// caller, callerStrategies for every caller after it (docs/walker.md,
// "Strategies and trust"). Each either settles the frame (usually by
// adding its caller), ends the walk with a reason, or leaves the next one
// to try.

// outcome is what one strategy did for the innermost frame.
type outcome int

const (
	// tryNext: the strategy does not apply here; the next one is tried.
	tryNext outcome = iota
	// nextFrame: the strategy settled the frame, usually by adding its
	// caller; the walk goes on from the innermost frame.
	nextFrame
	// endWalk: the walk ends here, with the stop reason the strategy set.
	endWalk
)

// A strategy is one way of finding the innermost frame's caller.
type strategy struct {
	name string // as docs/walker.md names it
	try  func(w *walk) outcome
}

// checkOnly names the entries of the lists that are rules which can only
// end the walk, not ways to a caller: a stop's detail does not list them
// among the strategies tried.
var checkOnly = map[string]bool{"PC in no image": true}

// frame0Strategies find frame 0's caller, in this order. Frame 0 may have
// stopped anywhere in its function, so only rules that hold at every
// instruction apply: the unwind rule (which the Unwinder gives for frame 0
// only when it is valid there), a scan when the context has no FP, and
// the link register or return slot of a leaf, prologue or epilogue. The
// last always settles frame 0, whether or not it added a caller: the
// callers' strategies go on from there.
var frame0Strategies = []strategy{
	{"unwind rule", (*walk).tryFrame0UnwindRow},
	{"function's code", (*walk).tryInspect},
	{"scan without a frame pointer", (*walk).tryScanWithoutFP},
	{"link register or return slot", (*walk).tryFrame0Caller},
}

// callerStrategies find each caller after frame 0's, in this order, from
// the most trusted to the least: none applies, and the walk ends with
// StopNoCaller (or the reason the frame record left).
var callerStrategies = []strategy{
	{"PC in no image", (*walk).outsideImages},
	{"unwind rule", (*walk).tryUnwindRow},
	{"function's code", (*walk).tryInspect},
	{"caller scan", (*walk).tryCallerScan},
	{"frame record", (*walk).tryFrameRecord},
	{"stack scan", (*walk).tryScan},
}

// tryUnwindRow is byUnwindRow as a strategy: a damaged table or one that
// says the stack ends here ends the walk.
func (w *walk) tryUnwindRow() outcome {
	if w.byUnwindRow() {
		return nextFrame
	}
	if w.stopped() {
		return endWalk
	}
	return tryNext
}

// tryScanWithoutFP scans for frame 0's caller when the context has no FP
// (and there was no unwind rule): nothing else can find it.
func (w *walk) tryScanWithoutFP() outcome {
	if w.fp0Known {
		return tryNext
	}
	if w.byScan() {
		return nextFrame
	}
	w.stopNoCaller()
	return endWalk
}

// tryFrame0Caller looks for frame 0's caller in the link register or near
// SP, where a leaf, a prologue or an epilogue leaves it (frame0Caller).
func (w *walk) tryFrame0Caller() outcome {
	if !w.frame0Caller(w.regs0, w.pc0, w.fp0) {
		return endWalk
	}
	return nextFrame
}

// tryCallerScan is byCallerScan as a strategy.
func (w *walk) tryCallerScan() outcome {
	if w.byCallerScan() {
		return nextFrame
	}
	return tryNext
}

// tryFrameRecord is byFrameRecord as a strategy. A record it could not use
// leaves its stop reason for the stack scan to clear.
func (w *walk) tryFrameRecord() outcome {
	switch w.byFrameRecord() {
	case recordFound:
		return nextFrame
	case recordEnd:
		return endWalk
	}
	return tryNext
}

// tryScan is byScan as a strategy.
func (w *walk) tryScan() outcome {
	if w.byScan() {
		return nextFrame
	}
	return tryNext
}

// frame0Caller adds frame 0's caller when it is in the link register (arm)
// or at a known place near SP (x86), where no unwind rule said where it
// is. It returns false when the walk must stop.
func (w *walk) frame0Caller(regs *archregs.Registers, pc, fp uint64) bool {
	if w.arch.LR != "" {
		if lr, ok := regs.LR(); ok && !w.linkRegister(regs, pc, lr, fp) {
			return false
		}
	} else if sp, ok := regs.SP(); ok {
		off, onStack := uint64(0), pc < minValidAddress || w.atFunctionStart(pc)
		if !onStack && w.ai.returnOnStack != nil && w.opts.Instructions != nil {
			off, onStack = w.ai.returnOnStack(w, pc)
		}
		if onStack && !w.stackTop(sp+off, fp) {
			return false
		}
	}
	return true
}

// keepCalleeSaved copies into a caller's registers the callee-saved ones
// of the innermost frame that regs does not already know: a function that
// did not save them has not changed them.
func (w *walk) keepCalleeSaved(regs *Regs) {
	cur := &w.last().Regs
	for _, r := range w.arch.CalleeSaved {
		if _, ok := regs.Get(r); ok {
			continue
		}
		if v, ok := cur.Get(r); ok {
			regs.Set(r, v)
		}
	}
}

// recordResult is what the frame-record strategy did.
type recordResult int

const (
	recordFound  recordResult = iota // the caller was added
	recordEnd                        // the stack ends here (or MaxDepth): nothing more to try
	recordFailed                     // the record is unusable; the stop reason is set for a scan to clear
)

// byFrameRecord adds the caller from the frame record at the innermost
// frame's FP: [FP] is the caller's FP and [FP + pointer] the return
// address.
func (w *walk) byFrameRecord() recordResult {
	cur := w.last()
	at := cur.Index
	fp, ok := cur.Regs.Get(w.arch.DWARFFP)
	if !ok {
		return recordFailed
	}
	if !w.fpChecked {
		w.fpChecked = true
		if sp, ok := w.res.Frames[0].Regs.Get(w.arch.DWARFSP); ok && fp != 0 && fp < sp && at <= 1 {
			w.stop(StopFramePointerNotAbove, "FP %#x below SP %#x at frame 0", fp, sp)
			return w.chainEnd(cur)
		}
	}
	if sp, ok := cur.Regs.Get(w.arch.DWARFSP); ok && cur.FoundBy == FoundByScan && fp != 0 && fp < sp {
		// A frame found by scanning keeps the FP of the frame below; below
		// its SP that is no record of its own, nor of any caller.
		w.stop(StopFramePointerNotAbove, "FP %#x below SP %#x at frame %d", fp, sp, at)
		return w.chainEnd(cur)
	}
	switch {
	case fp == 0:
		w.stop(StopFramePointerZero, "FP is 0 at frame %d: end of the chain", at)
		return w.chainEnd(cur)
	case fp%w.arch.FPAlign != 0:
		w.stop(StopFramePointerMisaligned, "FP %#x not %d-byte aligned at frame %d", fp, w.arch.FPAlign, at)
		return recordFailed
	case !w.inStack(fp):
		w.stop(StopOutsideStack, "frame record at FP %#x (frame %d) outside the stack [%#x, %#x)",
			fp, at, w.opts.StackLow, w.opts.StackHigh)
		return recordFailed
	}
	next, err := w.readPtr(fp)
	if err != nil {
		w.stop(StopMemoryUnreadable, "cannot read the saved FP at %#x (frame %d): %v", fp, at, err)
		return recordFailed
	}
	raw, err := w.readPtr(fp + w.ptrSize)
	if err != nil {
		w.stop(StopMemoryUnreadable, "cannot read the return address at %#x (frame %d): %v",
			fp+w.ptrSize, at, err)
		return recordFailed
	}
	if w.isAsyncTagged(next) {
		// An extended frame record: cur is a Swift async function and its
		// async context is stored just below the record.
		if w.opts.Async {
			w.asyncChain(fp)
			return recordEnd
		}
		next &^= asyncTagMask
	}
	next &= w.pacMask
	ra := raw & w.pacMask
	if ra != raw && w.opts.Code != nil && !w.opts.Code.IsCode(ra) {
		w.stop(StopReturnAddressNotCode, "return address %#x at %#x (frame %d) stripped to %#x, which is in no known image",
			raw, fp+w.ptrSize, at, ra)
		return recordFailed
	}
	ra = w.arch.CodeAddress(ra)
	if ra < minValidAddress {
		if next == 0 {
			// start and thread_start end the chain with a record
			// whose saved FP is 0 and whose return slot is 0 or argc.
			w.stop(StopFramePointerZero, "saved FP is 0 at %#x (frame %d): end of the chain", fp, at)
			return w.chainEnd(cur)
		}
		w.stop(StopPCTooLow, "return address %#x at %#x (frame %d) below %#x",
			raw, fp+w.ptrSize, at, minValidAddress)
		return recordFailed
	}
	f := Frame{ReturnAddress: ra, FP: next, FoundBy: FoundByFramePointer}
	f.Regs.Set(w.arch.DWARFFP, next)
	// Every supported ABI puts the record at the top of the frame: the
	// caller's SP is just above it.
	f.Regs.Set(w.arch.DWARFSP, fp+2*w.ptrSize)
	if !w.add(f) {
		return recordEnd
	}
	if next != 0 && next <= fp {
		// Code without frame pointers uses FP as any other register, and
		// a function that has a record (alloca) saved that value in it:
		// the callers are still on the stack.
		if w.byCallerScan() {
			return recordFound
		}
		w.stop(StopFramePointerNotAbove, "saved FP %#x read at %#x is not above it (frame %d)",
			next, fp, at+1)
		return recordEnd
	}
	return recordFound
}

// chainEnd is the frame-record step's answer where the chain ends at cur
// (the stop reason set): the end of the stack when cur's function keeps a
// frame record, else only the end of what the records tell, and the
// stack scan is tried next (mayLackRecord), checked as the caller scan
// checks (pastChainEnd).
func (w *walk) chainEnd(cur *Frame) recordResult {
	if w.mayLackRecord(cur) {
		w.pastChainEnd = true
		return recordFailed
	}
	return recordEnd
}

// isAsyncTagged reports whether a saved FP carries Swift's extended frame
// record tag. Only 64-bit Apple platforms tag frame pointers.
func (w *walk) isAsyncTagged(v uint64) bool {
	return w.ptrSize == 8 && v&asyncTagMask == asyncTag
}

// byUnwindRow adds the innermost frame's caller by the unwind rule for its
// code. It returns false, with no stop, when there is no rule or the rule
// could not be applied (the next strategy is tried), and false with a stop
// when the tables are damaged or say the stack ends here.
func (w *walk) byUnwindRow() bool {
	if w.opts.Unwinder == nil {
		return false
	}
	cur := w.last()
	q := UnwindQuery{Address: cur.LookupAddress, Frame0: cur.Index == 0}
	q.Thumb = q.Frame0 && w.thumb
	row, src, err := w.opts.Unwinder.UnwindRow(q)
	if err != nil {
		w.stop(StopBadUnwindInfo, "unwind info for %#x (frame %d): %v", cur.LookupAddress, cur.Index, err)
		return false
	}
	if row == nil {
		return false
	}
	caller, ok := w.applyRow(cur, row)
	if !ok {
		w.rowUnusable = src != unwind.SourceCode
		return false
	}
	if w.guessedOutsideImages(cur, caller.ReturnAddress, src) {
		w.stop(StopPCNotInImage, "the unwind rule of frame %d, applied to registers its code could not confirm, gives %#x, in no known image: end of the walk",
			cur.Index, caller.ReturnAddress)
		return false
	}
	switch src {
	case unwind.SourceCompactUnwind:
		caller.FoundBy = FoundByCompactUnwind
	case unwind.SourceCode:
		// A row decoded from frame 0's prologue or epilogue: the return
		// address is where those rules put it, in LR or near SP.
		caller.FoundBy = FoundByStackPointer
		if cur.Index == 0 && w.arch.LR != "" && raFromRegister(row, w.arch) {
			caller.FoundBy = FoundByLinkRegister
		}
	default:
		caller.FoundBy = FoundByCFI
	}
	return w.add(caller)
}

// guessedOutsideImages reports whether a caller at ra, in no known image,
// came from a DWARF CFI or Breakpad rule applied to registers that are
// guesses: frame 0's, where such a table need not hold at every
// instruction, or those of a frame found in the link register (its SP is
// frame 0's) or by a scan, in code that cannot be read to check them (a
// dSYM alone). A caller outside every image is then more likely the rule
// reading a wrong slot than the stack's outermost frame; the walk ends
// instead of adding it. A compact unwind row, or one the code gave, is
// valid where it is given.
func (w *walk) guessedOutsideImages(cur *Frame, ra uint64, src unwind.Source) bool {
	if w.opts.Code == nil || w.opts.Code.IsCode(ra) || src == unwind.SourceCompactUnwind || src == unwind.SourceCode {
		return false
	}
	guessed := cur.Index == 0 || cur.FoundBy == FoundByLinkRegister || cur.FoundBy == FoundByScan
	return guessed && !w.codeReadable(cur.LookupAddress)
}

// raFromRegister reports whether row leaves the return address in a
// register (a leaf's LR) rather than in memory.
func raFromRegister(row *unwind.Row, arch *archregs.Arch) bool {
	k := row.Rule(arch.DWARFRA).Kind
	return k == unwind.Unspecified || k == unwind.SameValue || k == unwind.Register
}

// rowContext is the unwind.Context an expression of a row sees.
type rowContext struct {
	w      *walk
	regs   *Regs
	cfa    uint64
	hasCFA bool
}

func (c *rowContext) Reg(r unwind.Reg) (uint64, bool) { return c.regs.Get(r) }
func (c *rowContext) CFA() (uint64, bool)             { return c.cfa, c.hasCFA }
func (c *rowContext) PtrSize() int                    { return int(c.w.ptrSize) }
func (c *rowContext) ReadMemory(p []byte, addr uint64) (int, error) {
	if c.w.mem == nil {
		return 0, errNoMemory
	}
	return c.w.mem.ReadMemory(p, addr)
}

// applyRow computes the caller's registers from cur's by row. It reports
// false when a register the caller needs cannot be computed, or the
// result breaks the walk's rules (the caller's SP must be above cur's,
// except when the return address came from a register); a rule saying
// the stack ends stops the walk.
func (w *walk) applyRow(cur *Frame, row *unwind.Row) (Frame, bool) {
	// One context per walk: handing a new one to an expression would cost
	// an allocation per frame.
	ctx := &w.rowCtx
	*ctx = rowContext{w: w, regs: &cur.Regs}
	var cfa uint64
	if row.CFA.Expr != nil {
		v, err := row.CFA.Expr.Eval(ctx)
		if err != nil {
			return Frame{}, false
		}
		cfa = v
	} else {
		base, ok := cur.Regs.Get(row.CFA.Reg)
		if !ok {
			return Frame{}, false
		}
		cfa = base + uint64(row.CFA.Offset)
	}
	ctx.cfa, ctx.hasCFA = cfa, true

	var caller Frame
	regs := &caller.Regs
	regs.Set(w.arch.DWARFSP, cfa)
	raInRegister := false
	for _, rr := range row.Regs {
		if rr.Reg == w.arch.DWARFRA && (rr.Rule.Kind == unwind.SameValue || rr.Rule.Kind == unwind.Register) {
			raInRegister = true
		}
		v, known, err := w.recover(ctx, rr.Reg, rr.Rule)
		if err != nil {
			return Frame{}, false
		}
		if known {
			regs.Set(rr.Reg, v)
		} else {
			regs.Forget(rr.Reg)
		}
	}
	// Registers the row leaves unspecified: callee-saved ones keep their
	// value, and so does the return-address register (a leaf's LR).
	w.keepCalleeSaved(regs)
	if row.Rule(w.arch.DWARFRA).Kind == unwind.Unspecified {
		if v, ok := cur.Regs.Get(w.arch.DWARFRA); ok {
			regs.Set(w.arch.DWARFRA, v)
			raInRegister = true
		}
	}
	if row.Rule(w.arch.DWARFRA).Kind == unwind.Undefined {
		w.stop(StopUnwindEnd, "the unwind info marks frame %d as the outermost", cur.Index)
		return Frame{}, false
	}
	raw, ok := regs.Get(w.arch.DWARFRA)
	if !ok {
		return Frame{}, false
	}
	ra := w.arch.CodeAddress(raw & w.pacMask)
	if ra < minValidAddress {
		if ra == 0 {
			w.stop(StopUnwindEnd, "return address 0 at frame %d: end of the stack", cur.Index)
		}
		return Frame{}, false
	}
	if w.opts.Code != nil && raw&w.pacMask != raw && !w.opts.Code.IsCode(ra) {
		return Frame{}, false
	}
	sp, _ := cur.Regs.Get(w.arch.DWARFSP)
	if newSP, _ := regs.Get(w.arch.DWARFSP); newSP < sp || newSP == sp && !raInRegister {
		return Frame{}, false
	}
	if fp, ok := regs.Get(w.arch.DWARFFP); ok {
		if w.isAsyncTagged(fp) && w.opts.Async {
			if curFP, ok := cur.Regs.Get(w.arch.DWARFFP); ok {
				w.asyncChain(curFP)
				return Frame{}, false
			}
		}
		fp = fp &^ w.asyncBits(fp) & w.pacMask
		regs.Set(w.arch.DWARFFP, fp)
		caller.FP = fp
	}
	// On arm the caller's LR is not known: the value recovered for it is
	// the return address just used.
	if w.arch.LR != "" {
		regs.Forget(w.arch.DWARFRA)
	}
	caller.ReturnAddress = ra
	return caller, true
}

// asyncBits returns the async tag bits of a recovered FP, or 0.
func (w *walk) asyncBits(fp uint64) uint64 {
	if w.isAsyncTagged(fp) {
		return asyncTagMask
	}
	return 0
}

// recover computes one register of the caller by its rule. known is false
// when the rule says the value is lost.
func (w *walk) recover(ctx *rowContext, reg unwind.Reg, rule unwind.Rule) (v uint64, known bool, err error) {
	switch rule.Kind {
	case unwind.Unspecified, unwind.SameValue:
		v, known = ctx.regs.Get(reg)
		return v, known, nil
	case unwind.Undefined:
		return 0, false, nil
	case unwind.Offset:
		v, err = w.readPtr(ctx.cfa + uint64(rule.Offset))
		return v, err == nil, err
	case unwind.ValOffset:
		return ctx.cfa + uint64(rule.Offset), true, nil
	case unwind.Register:
		v, known = ctx.regs.Get(rule.Reg)
		return v, known, nil
	case unwind.Expression, unwind.ValExpression:
		if rule.Expr == nil {
			return 0, false, errNoExpr
		}
		v, err = rule.Expr.Eval(ctx)
		if err != nil || rule.Kind == unwind.ValExpression {
			return v, err == nil, err
		}
		v, err = w.readPtr(v)
		return v, err == nil, err
	}
	return 0, false, errNoExpr
}

// byScan looks up the stack from the innermost frame's SP for a word that
// points just after a call instruction in an image's code: Breakpad's last
// resort. It needs Options.Code and Options.Instructions; where the code
// of the image cannot be read, a word in its code range is taken without
// the call check. It finds at most maxScanRun frames in a row, and clears
// a stop reason the frame record left when it finds one.
func (w *walk) byScan() bool {
	if w.opts.NoScan || w.opts.Code == nil || w.opts.Instructions == nil || w.scanRun >= maxScanRun {
		return false
	}
	cur := w.last()
	sp, ok := cur.Regs.Get(w.arch.DWARFSP)
	if !ok {
		return false
	}
	callee, calleeKnown := w.functionStart(cur.LookupAddress)
	for i := uint64(0); i < scanWords; i++ {
		addr := sp + i*w.ptrSize
		if addr < sp || !w.inStackWord(addr) {
			return false
		}
		raw, err := w.readPtr(addr)
		if err != nil {
			return false
		}
		ra := w.arch.CodeAddress(raw & w.pacMask)
		if ra < minValidAddress || !w.opts.Code.IsCode(ra) {
			continue
		}
		// The word must follow a call. When the image's code cannot be
		// read (no binary for it), the symbols weigh it (withoutCode), or,
		// without Options.Symbols, lying in its code is all that can be
		// checked, as Breakpad's scan checks; and the call site must be
		// code too: an image's first address, its header, follows no call.
		if !w.opts.Code.IsCode(w.arch.CallSite(raw & w.pacMask)) {
			continue
		}
		ev := wordEvidence{trust: TrustScanCode}
		if w.pastChainEnd {
			// Past the end of the chain only what the caller scan would
			// take is taken: the stack above the outermost frame holds
			// stale words, not callers.
			var ok bool
			ev, ok = w.confirmsCaller(raw&w.pacMask, callee, calleeKnown, false)
			if !ok || !ev.strong && !ev.rangeOnly && w.weakScans >= maxWeakScans {
				continue
			}
		} else {
			switch c := w.ai.callBefore(w, raw&w.pacMask); c.kind {
			case callNone:
				continue
			case callUnknown:
				var ok bool
				if ev, ok = w.withoutCode(raw&w.pacMask, cur.LookupAddress, callee, calleeKnown, true); !ok {
					continue
				}
			}
		}
		f := Frame{ReturnAddress: ra, FoundBy: FoundByScan, Trust: ev.trust}
		f.Regs.Set(w.arch.DWARFSP, addr+w.ptrSize)
		// A function found by scanning is assumed not to have changed the
		// callee-saved registers, FP among them.
		w.keepCalleeSaved(&f.Regs)
		if fp, ok := f.Regs.Get(w.arch.DWARFFP); ok {
			f.FP = fp
		}
		w.res.Stop, w.res.StopDetail = StopNone, ""
		return w.add(f)
	}
	return false
}

// inStackWord reports whether one word at addr is inside the stack bounds,
// or true when they are not known.
func (w *walk) inStackWord(addr uint64) bool {
	lo, hi := w.opts.StackLow, w.opts.StackHigh
	if lo == 0 || hi == 0 || lo >= hi {
		return true
	}
	return addr >= lo && addr < hi && hi-addr >= w.ptrSize
}

// asyncChain follows the Swift async context chain of the async frame
// whose extended record is at fp, as thread_stack_async_pcs does: the
// context is stored just below the record; each context holds its parent
// at +0 and the resume function of its parent at +8. Each resume function
// becomes a frame, reported as its address + 1 and looked up at the
// address itself.
func (w *walk) asyncChain(fp uint64) {
	ctx, err := w.readPtr(fp - w.ptrSize)
	if err != nil {
		w.stop(StopMemoryUnreadable, "cannot read the async context at %#x (frame %d): %v", fp-w.ptrSize, len(w.res.Frames)-1, err)
		return
	}
	for ctx != 0 {
		ctx &= w.pacMask
		resume, err := w.readPtr(ctx + w.ptrSize)
		if err != nil {
			w.stop(StopMemoryUnreadable, "cannot read the resume function of async context %#x: %v", ctx, err)
			return
		}
		resume = w.arch.CodeAddress(resume & w.pacMask)
		if resume < minValidAddress {
			break
		}
		if !w.add(Frame{ReturnAddress: resume + 1, LookupAddress: resume, FoundBy: FoundByAsync}) {
			return
		}
		parent, err := w.readPtr(ctx)
		if err != nil {
			w.stop(StopMemoryUnreadable, "cannot read the parent of async context %#x: %v", ctx, err)
			return
		}
		ctx = parent
	}
	w.stop(StopAsyncChainEnd, "async context chain ends at frame %d", len(w.res.Frames)-1)
}

// maxCallerScanBytes bounds the stack the caller scan reads above a frame's
// SP when no frame record ends the stretch (FP is 0, below SP or outside
// the stack): a frame without a frame pointer can hold kilobytes of locals
// below its return address (the fixtures' big_frame holds 2 KiB).
const maxCallerScanBytes = 16 << 10

// byCallerScan adds the innermost frame's caller from the stack between its
// SP and the frame record at its FP (or, without a usable FP, up to
// maxCallerScanBytes above SP) when a word there is a return address that
// the code confirms: code of an image, just after a call instruction that is
// readable, and, for a direct call to a known function start, a call of the
// function the innermost frame is in (or of one that tail-calls it). Code
// built without frame pointers leaves FP at an outer record, often the
// thread's outermost one: taking that record would skip every caller in
// between. In code with frame pointers the record at FP is the frame's own,
// and what lies below it its locals, where a word that looks like a caller
// is a stale one: the scan is not made when the record's own return
// address is confirmed as a caller of the frame (recordConfirmed).
//
// A word equal to the return address of a frame found in the link register
// is skipped once (frame 0 saved LR in its own frame: the same frame
// again). A call whose target is not known (indirect, or into a stub) is
// taken only at a call site in a known function when Options.Functions is
// set (not in an image's header), and counts towards maxScanRun and
// maxWeakScans. It needs Options.Code and Options.Instructions; code that
// cannot be read confirms nothing.
func (w *walk) byCallerScan() bool {
	if w.opts.NoScan || w.opts.Code == nil || w.opts.Instructions == nil || w.ai.callBefore == nil {
		return false
	}
	cur := w.last()
	sp, ok := cur.Regs.Get(w.arch.DWARFSP)
	if !ok {
		return false
	}
	end := sp + maxCallerScanBytes
	if end < sp {
		end = ^uint64(0)
	}
	var fpEnd uint64
	if fp, ok := cur.Regs.Get(w.arch.DWARFFP); ok && fp >= sp && fp < end && w.inStack(fp) && fp%w.arch.FPAlign == 0 {
		end, fpEnd = fp, fp
	}
	if lo, hi := w.opts.StackLow, w.opts.StackHigh; lo != 0 && lo < hi && hi < end {
		end = hi
	}
	callee, calleeKnown := w.functionStart(cur.LookupAddress)
	if end == fpEnd && w.recordConfirmed(fpEnd, callee, calleeKnown) {
		// The record at FP is the frame's own: its return address
		// follows a call that could have entered the frame's function.
		// What lies below it is the frame's locals, where a word that
		// looks like a caller is a stale one.
		return false
	}
	var dup uint64
	if cur.FoundBy == FoundByLinkRegister && w.lrSavedAt(w.res.Frames[0].ReturnAddress) {
		dup = cur.ReturnAddress
	}
	p := w.ptrSize
	buf := w.scanBuf[:]
	// A word only an image's code range checks is taken only when no
	// better one lies in the stretch: the first such is kept meanwhile.
	var rangeAt, rangeRA uint64
	var rangeEv wordEvidence
	start := sp
	if w.opts.Symbols != nil {
		start = w.localsEnd(cur, sp)
	}
scan:
	for base := (start + p - 1) &^ (p - 1); base < end && base >= sp; base += uint64(len(buf)) {
		chunk := buf[:min(uint64(len(buf)), end-base)&^(p-1)]
		if len(chunk) == 0 {
			break
		}
		if n, _ := w.mem.ReadMemory(chunk, base); n < len(chunk) {
			chunk = chunk[:uint64(n)&^(p-1)]
			end = base + uint64(len(chunk))
		}
		for off := uint64(0); off < uint64(len(chunk)); off += p {
			raw := getWord(chunk[off : off+p])
			ra := w.arch.CodeAddress(raw & w.pacMask)
			if ra < minValidAddress || !w.opts.Code.IsCode(ra) {
				continue
			}
			ev, ok := w.confirmsCaller(raw&w.pacMask, callee, calleeKnown, false)
			if !ok || !ev.strong && !ev.rangeOnly && (w.weakScans >= maxWeakScans || w.scanRun >= maxScanRun) {
				continue
			}
			if dup != 0 && ra == dup {
				dup = 0
				continue
			}
			if ev.rangeOnly {
				if rangeAt == 0 {
					rangeAt, rangeRA, rangeEv = base+off, ra, ev
				}
				continue
			}
			return w.addScanned(ra, base+off, ev)
		}
		if len(chunk) < len(buf) {
			break scan
		}
	}
	if rangeAt != 0 {
		return w.addScanned(rangeRA, rangeAt, rangeEv)
	}
	return false
}

// maxWeakScans is how many callers of one walk the caller scan may take
// from a call whose target is unknown (through a register, or into a
// stub): such a word may be stale, and a run of them is a guess.
const maxWeakScans = 3

// addScanned adds the caller whose return address ra the caller scan found
// at addr, with the evidence ev. It returns true: the walk goes on, or
// stopped at MaxDepth.
func (w *walk) addScanned(ra, addr uint64, ev wordEvidence) bool {
	f := Frame{ReturnAddress: ra, FoundBy: FoundByScan, Trust: ev.trust}
	f.Regs.Set(w.arch.DWARFSP, addr+w.ptrSize)
	// A function found by scanning is assumed not to have changed the
	// callee-saved registers, FP among them.
	w.keepCalleeSaved(&f.Regs)
	if fp, ok := f.Regs.Get(w.arch.DWARFFP); ok {
		f.FP = fp
	}
	if !w.add(f) {
		return true
	}
	// A confirmed direct call, or a symbol file's word, is no guess: only
	// the others count towards maxScanRun (add counted it); a word only
	// the code range checked counts towards maxRangeRun instead.
	switch {
	case ev.strong:
		w.scanRun = 0
	case !ev.rangeOnly:
		w.weakScans++
	}
	w.res.Stop, w.res.StopDetail = StopNone, ""
	return true
}

// recordConfirmed reports whether the frame record at fp holds a return
// address the code confirms as a caller of callee (confirmsCaller, strong
// or not): the record of a frame with a frame pointer. A record whose
// return address follows a direct call of another function is an outer
// one, left in FP by code without frame pointers; the marker record that
// ends the chain (return address 0) confirms nothing.
func (w *walk) recordConfirmed(fp, callee uint64, calleeKnown bool) bool {
	raw, err := w.readPtr(fp + w.ptrSize)
	if err != nil {
		return false
	}
	raw &= w.pacMask
	ra := w.arch.CodeAddress(raw)
	if ra < minValidAddress || !w.opts.Code.IsCode(ra) {
		return false
	}
	_, ok := w.confirmsCaller(raw, callee, calleeKnown, true)
	return ok
}

// confirmsCaller reports whether the code before raw (a return address,
// PAC-stripped, Thumb bit kept) is a call that could have entered callee
// (the start of the function of the frame below, when calleeKnown), and
// how: strong when it is a direct call of callee or of a function that
// tail-calls callee. A direct call of another known function, an
// instruction that is no call, or, for a call whose target is unknown, a
// call site outside every known function (an image's header) or in callee
// itself is no caller. Where the code cannot be read, the symbols weigh
// the word (withoutCode; rangeOK takes a word of an image without symbols
// whatever the caps, for recordConfirmed).
func (w *walk) confirmsCaller(raw, callee uint64, calleeKnown, rangeOK bool) (wordEvidence, bool) {
	site := w.arch.CallSite(raw)
	if !w.opts.Code.IsCode(site) {
		return wordEvidence{}, false
	}
	c := w.ai.callBefore(w, raw)
	weak := wordEvidence{trust: TrustScanCode}
	switch c.kind {
	case callNone:
		return wordEvidence{}, false
	case callUnknown:
		if w.opts.Symbols == nil {
			return wordEvidence{}, false // code that cannot be read confirms nothing
		}
		if rangeOK {
			// A frame record's return address (recordConfirmed): any
			// code of an image without symbols, and a word in a known
			// function, its own included (a recursive call), will do.
			if !w.opts.Symbols.KnowsFunctions(w.arch.CodeAddress(raw)) {
				return wordEvidence{trust: TrustScan, rangeOnly: true}, true
			}
			calleeKnown = false
		}
		return w.withoutCode(raw, w.last().LookupAddress, callee, calleeKnown, false)
	case callDirect:
		if start, ok := w.functionStart(c.target); ok && start == c.target {
			if !calleeKnown {
				return weak, true
			}
			if c.target == callee || w.tailCalls(c.target, callee) {
				return wordEvidence{trust: TrustScanCode, strong: true}, true
			}
			return wordEvidence{}, false
		}
	}
	// The target is unknown: the call site must at least be in a function,
	// and not in the callee itself. A function calls itself directly; a
	// word after its own call through a register is a stale return
	// address of that call, or a pointer to the function after it.
	if w.opts.Functions != nil {
		start, ok := w.functionStart(site)
		if !ok || calleeKnown && start == callee {
			return wordEvidence{}, false
		}
	}
	return weak, true
}
