package walker

// This file holds what the walker asks of an image's symbol files and code
// when it weighs a stack word as a return address, and when it decides
// whether the end of the frame-record chain is the end of the stack: the
// symbols of an image whose code cannot be read (a dSYM alone, a Breakpad
// file), and whether a function keeps a frame record at all.

// SymbolCoverage tells whether an image's symbol files list its functions:
// a dSYM's DWARF, a symbol table, a Breakpad file's FUNC and PUBLIC
// records. Where they do, FunctionStart answers for every function of the
// image, and an address in none of them (a constant in __TEXT, the image's
// header) is no code a call returns to; where they do not (a system
// library without symbols), only the image's code range can be checked.
type SymbolCoverage interface {
	KnowsFunctions(addr uint64) bool
	// SameImage reports whether a and b lie in one image.
	SameImage(a, b uint64) bool
}

// CallSites tells, from an image's DWARF call sites (DW_TAG_call_site's
// DW_AT_call_return_pc), whether addr is the return address of a call:
// known is false where the image's symbols describe no call site of
// addr's function. Options.Symbols may implement it (symbolize.Process
// does); withoutCode then takes an exact match and refuses any other word
// of a function whose calls are all described.
type CallSites interface {
	CallReturn(addr uint64) (known, isReturn bool)
}

// CallTargets tells, from an image's DWARF call sites, what the call
// returning to ret calls (DW_AT_call_origin, DW_AT_call_target,
// DW_AT_call_tail_call): whether it can have entered the function
// starting at entry, directly or through tail calls. known is false where
// the symbols do not say (no call site returns to ret, a call through a
// register). Options.Symbols may implement it (symbolize.Process does);
// withoutCode then refuses a word whose call cannot reach the function
// of the frame below: a stale return address of a call to another
// function, which the other checks take.
type CallTargets interface {
	CallReaches(ret, entry uint64) (known, reaches bool)
}

// FrameLocals tells, from an image's DWARF, the register a function's
// frame base is (DW_AT_frame_base, as a DWARF register number) and how
// many bytes above it the function's variables reach (their DW_OP_fbreg
// offsets plus their sizes: an array whole). Where the frame base is SP,
// no return address of the function's caller lies below SP plus that
// many bytes: the words there are its own locals.
type FrameLocals interface {
	FrameLocals(pc uint64) (reg int, end int64, known bool)
}

// FrameRecordKeeper tells whether the function holding addr keeps a frame
// record (pushes FP and the return address and points FP at them), as its
// unwind table shows: a rule whose CFA is FP's, or a frameless one. known
// is false where no table describes the function.
type FrameRecordKeeper interface {
	KeepsFrameRecord(addr uint64) (keeps, known bool)
}

// maxRangeRun is how many frames in a row a scan may find in images
// without code bytes or symbols, where nothing but the code range checks
// a word: a guess each, and a run of them is likelier junk than a stack.
const maxRangeRun = 2

// wordEvidence is how a stack word passed as a return address.
type wordEvidence struct {
	trust Trust
	// strong: a direct call of the frame's function, or a symbol file's
	// word; neither counts towards the caps of weak guesses.
	strong bool
	// rangeOnly: only the image's code range checked the word.
	rangeOnly bool
}

// withoutCode weighs a stack word (raw: PAC-stripped, Thumb bit kept)
// whose code cannot be read, by what the symbol files say: a word inside
// a known function, past its first instruction (a function pointer is no
// return address), and not in the frame's own function (callee, when
// calleeKnown: a word there is a stale return address of a call the frame
// made) is TrustScanSymbols; in an image without symbols, a word in its
// code range is TrustScan, at most maxRangeRun in a row, never a return
// address the walk already holds (a stale copy of it), and never in the
// image of the frame below (at below): nothing tells that image's
// functions apart, and a word there is as likely a stale return address
// of the frame's own function as its caller's. Without Options.Symbols
// nothing says more than the code range: ok is rangeOK.
func (w *walk) withoutCode(raw, below, callee uint64, calleeKnown, rangeOK bool) (wordEvidence, bool) {
	ra := w.arch.CodeAddress(raw)
	if w.opts.Symbols == nil {
		return wordEvidence{trust: TrustScan, rangeOnly: true}, rangeOK
	}
	if w.opts.Symbols.KnowsFunctions(ra) {
		reachKnown, reaches := w.callReaches(ra, callee, calleeKnown)
		if reachKnown && !reaches {
			return wordEvidence{}, false
		}
		if cs, ok := w.opts.Symbols.(CallSites); ok {
			if known, isReturn := cs.CallReturn(ra); known {
				// The DWARF lists the function's calls: a word that is
				// none of their returns is no return address, and one
				// that is needs no more than the callee check.
				// A word after a call in the frame's own function is a
				// stale return address of a call it made, but where the
				// call sites say that call is of the function itself (a
				// recursive call).
				siteStart, ok := w.functionStart(w.arch.CallSite(raw))
				if !isReturn || calleeKnown && ok && siteStart == callee && !reaches {
					return wordEvidence{}, false
				}
				return wordEvidence{trust: TrustScanSymbols, strong: true}, true
			}
		}
		start, ok := w.functionStart(ra)
		if !ok || start == ra {
			return wordEvidence{}, false
		}
		if siteStart, ok := w.functionStart(w.arch.CallSite(raw)); !ok || siteStart != start {
			return wordEvidence{}, false
		}
		if calleeKnown && start == callee {
			return wordEvidence{}, false
		}
		return wordEvidence{trust: TrustScanSymbols, strong: true}, true
	}
	if w.rangeRun >= maxRangeRun || w.holdsReturnAddress(ra) || w.opts.Symbols.SameImage(ra, below) {
		return wordEvidence{}, false
	}
	return wordEvidence{trust: TrustScan, rangeOnly: true}, true
}

// callReaches reports whether the symbols say the call returning to ra
// can have entered the function starting at callee (CallTargets): known
// is false where they do not say, or callee is not known.
func (w *walk) callReaches(ra, callee uint64, calleeKnown bool) (known, reaches bool) {
	ct, ok := w.opts.Symbols.(CallTargets)
	if !ok || !calleeKnown {
		return false, false
	}
	return ct.CallReaches(ra, callee)
}

// holdsReturnAddress reports whether a caller found so far returns to ra.
func (w *walk) holdsReturnAddress(ra uint64) bool {
	for i := 1; i < len(w.res.Frames); i++ {
		if w.res.Frames[i].ReturnAddress == ra {
			return true
		}
	}
	return false
}

// mayLackRecord reports whether the function of frame cur may keep no
// frame record, so that a frame-record step that would end the walk there
// (FP 0, FP outside the stack or not above SP, the outermost record) says
// nothing of cur's caller: code without frame pointers leaves FP at an
// outer record, or at any value. It is false where a table or the
// function's prologue shows a record, and where the walk has neither
// Options.FrameRecords nor Options.Symbols to ask (the walk then trusts
// the chain, as before these were known).
func (w *walk) mayLackRecord(cur *Frame) bool {
	if w.opts.FrameRecords == nil && w.opts.Symbols == nil {
		return false
	}
	if w.opts.FrameRecords != nil {
		if keeps, known := w.opts.FrameRecords.KeepsFrameRecord(cur.LookupAddress); known {
			return !keeps
		}
	}
	if keeps, known := w.prologueKeepsRecord(cur.LookupAddress); known {
		return !keeps
	}
	// No table and no code: the image's tables are absent (a dSYM alone,
	// a Breakpad file without STACK CFI for the function), and nothing
	// shows the record is the function's own.
	return true
}

// prologueKeepsRecord reports whether the first instructions of the
// function holding addr set FP to a frame record: x86 `mov rbp, rsp`
// right after `push rbp`, arm64 `add x29, sp, #n` (`mov x29, sp`), armv7
// `add r7, sp, #n` or `mov r7, sp`, within the first 64 bytes (shrink-
// wrapped code tests and branches before it). known is false where the
// function's start or its code is not known.
func (w *walk) prologueKeepsRecord(addr uint64) (keeps, known bool) {
	start, ok := w.functionStart(addr)
	if !ok || w.opts.Instructions == nil {
		return false, false
	}
	start = w.arch.CodeAddress(start)
	var code [64]byte
	n, _ := w.opts.Instructions.ReadMemory(code[:], start)
	if n < 4 {
		return false, false
	}
	c := code[:n]
	switch {
	case w.ai.jumpAlign == 1: // x86
		for i := 0; i+3 < len(c); i++ {
			if c[i] != x86PushRBP {
				continue
			}
			// mov rbp, rsp: 48 89 e5 or 48 8b ec (x86_64), 89 e5 or 8b ec (i386).
			m := c[i+1:]
			if w.ptrSize == 8 && len(m) >= 3 && m[0] == 0x48 && (m[1] == 0x89 && m[2] == 0xe5 || m[1] == 0x8b && m[2] == 0xec) ||
				w.ptrSize == 4 && (m[0] == 0x89 && m[1] == 0xe5 || m[0] == 0x8b && m[1] == 0xec) {
				return true, true
			}
		}
		return false, true
	case w.ai.wordISA == arm64ISA:
		for i := 0; i+4 <= len(c); i += 4 {
			insn := uint32(c[i]) | uint32(c[i+1])<<8 | uint32(c[i+2])<<16 | uint32(c[i+3])<<24
			if insn&0xffc003ff == 0x910003fd { // add x29, sp, #imm12
				return true, true
			}
		}
		return false, true
	}
	// armv7 mixes ARM and Thumb, which the function start does not say:
	// where its code can be read, its records are trusted as before.
	return true, true
}

// localsEnd returns the lowest stack address at which the return address
// of cur's caller may lie, by the DWARF's locations of cur's variables
// relative to SP (FrameLocals), or sp where they do not say. Frame 0 is
// left alone: its PC may lie in the prologue or epilogue, where SP is not
// the SP the locations are relative to.
func (w *walk) localsEnd(cur *Frame, sp uint64) uint64 {
	fl, ok := w.opts.Symbols.(FrameLocals)
	if !ok || len(w.res.Frames) < 2 {
		return sp
	}
	reg, end, known := fl.FrameLocals(cur.LookupAddress)
	if !known || reg != int(w.arch.DWARFSP) || end <= 0 || sp+uint64(end) < sp {
		return sp
	}
	return sp + uint64(end)
}
