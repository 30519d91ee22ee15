package symbolize

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"sync"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/demangle"
	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/internal/parallel"
	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/walker"
)

// Walk is our own walk of a reported thread, made when the report holds
// the thread's registers and a dump of its stack, and how it compares with
// the reporter's backtrace.
//
// The two are compared frame by frame after putting our return addresses
// in the reporter's terms (AddressRule). A frame one side has and the
// other lacks is listed as an explained difference and does not shift the
// comparison of the frames after it. A walk and a report may still differ
// in length: a reporter's walker has its own stop rules, and a stack dump
// may hold only the first few frame records.
//
// A Walk is a result: it is not modified after Symbolicate returns, and
// readers may share it freely.
type Walk struct {
	Frames     []symstore.Frame
	StopReason StopReason
	StopDetail string
	// SetAsideLR and SetAsideLRName are frame 0's link register set
	// aside by this walk and its name, as Thread's are: a frame of ours
	// may be missing between frames 0 and 1 at that return address.
	SetAsideLR     uint64
	SetAsideLRName string
	// AddressRule says how the reporter wrote its callers' addresses and
	// so how ours were compared with them (see docs/crashreports.md).
	AddressRule AddressRule
	// Compared counts the frames paired with one of the reporter's;
	// Agrees says every pair names the same instruction under AddressRule.
	// Differences lists every place where the two part, including frames
	// one side lacks, which leave Agrees true: they are explained.
	Compared    int
	Agrees      bool
	Differences []Difference
}

// AddressRule says what a reporter's caller addresses are. Its values are
// constants, safe to share.
type AddressRule string

const (
	// RuleReturnAddress: callers are return addresses, as Apple's
	// reporters and KSCrash 3.x write them (armv7's Thumb bit, when
	// present, is ignored in comparisons).
	RuleReturnAddress AddressRule = "return_address"
	// RuleRoundedReturnAddress: callers are return addresses rounded down
	// to a multiple of twice the pointer size (8 on 32-bit, 16 on 64-bit),
	// as KSCrash 2.x's walker wrote them (KSBacktrace.c,
	// DETAG_FRAME_CALLER_ADDRESS): it took the pointer-tag mask for frame
	// pointers and applied it to return addresses too.
	RuleRoundedReturnAddress AddressRule = "rounded_return_address"
)

// DifferenceKind classifies a Difference. Its values are constants, safe
// to share.
type DifferenceKind string

const (
	// DiffAddress: a paired frame names a different instruction in the walk
	// and in the report, even under the reporter's AddressRule.
	DiffAddress DifferenceKind = "address"
	// DiffReportOmitsLinkRegister: our frame came from the link register
	// (the caller of a frameless leaf, or of a function stopped in its
	// prologue or epilogue) and the report lacks it, while the frames after
	// it agree: the reporter read frame records only.
	DiffReportOmitsLinkRegister DifferenceKind = "report_omits_lr_frame"
	// DiffStaleLinkRegister: our frame came from the link register but LR
	// lies inside frame 0's own function (between its start, as the report
	// gives it, and PC): it is the return address of a call frame 0 made
	// and returned from, not its caller. The walker drops such an LR when
	// it knows function starts; for an image without symbols it cannot.
	// The report is right here.
	DiffStaleLinkRegister DifferenceKind = "stale_lr_frame"
	// DiffReportExtraFrame: the report has a frame our walk lacks, while the
	// frames after it agree (a reporter that always takes LR as frame 1
	// names a stale LR, or repeats a caller frame 0 had already saved).
	DiffReportExtraFrame DifferenceKind = "report_extra_frame"
)

// Difference is one place where our walk and the reporter's backtrace part.
// It is a plain value, safe to copy and share.
type Difference struct {
	Kind DifferenceKind
	// WalkIndex is the frame's index in our walk, -1 when only the report
	// has it; ReportIndex is its index in the reporter's backtrace
	// (counting skipped frames), -1 when only our walk has it.
	WalkIndex, ReportIndex int
	// Walk is our frame's address (PC or return address) and Report the
	// reporter's as written; each is 0 when that side lacks the frame.
	Walk, Report uint64
	// Detail explains the difference for people.
	Detail string
}

// String returns the Detail.
func (d Difference) String() string { return d.Detail }

// addressRuleOf tells how the reporter wrote one thread's caller addresses,
// from what the dump says of them (dump.CallerAddresses, which the parser
// sets: KSCrash before report format 3 may round them).
//
// Even a reporter that rounds does not round every backtrace (KSCrash 2.x
// writes an NSException's callStackReturnAddresses unrounded). So a thread
// is taken as rounded when every caller address is a multiple of twice the
// pointer size: a raw return address on armv7 Thumb code is odd, and n
// unrounded ones all being multiples of 8 has odds of about 4^-n.
func addressRuleOf(d *dump.Dump, th dump.Thread) AddressRule {
	if d.CallerAddresses != dump.MaybeRoundedReturnAddresses || d.Arch == nil {
		return RuleReturnAddress
	}
	callers := th.Frames
	if th.SkippedFrames == 0 && len(callers) > 0 {
		callers = callers[1:] // frame 0 is the PC, never rounded
	}
	if len(callers) == 0 {
		return RuleReturnAddress
	}
	align := 2 * uint64(d.Arch.PtrSize)
	for _, f := range callers {
		if f.Address%align != 0 {
			return RuleReturnAddress
		}
	}
	return RuleRoundedReturnAddress
}

// reportedLookupAddress returns the address at which to symbolize a
// reporter's frame. Frame 0 is the PC and is looked up as it is. A return
// address is looked up one instruction back, so that a call that ends its
// function (a noreturn callee) is attributed to it. Apple's tools look the
// return address itself up (Symbolizer.ExactAddresses does the same).
//
// A KSCrash 2.x caller address A is the return address R rounded down: A
// lies in [R − (2·ptr − 1), R]. On 32-bit targets it is still looked up one
// instruction back: A may be R itself (the noreturn case above), while A
// is the caller's first byte only when a call ends within 7 bytes of an
// 8-byte aligned function start — after a frame-pointer prologue (push
// {r7, lr}; mov r7, sp) only a 2-byte Thumb blx fits. On 64-bit targets
// the rounding is to 16, and a call right after an arm64 or x86_64
// prologue returns within 16 bytes of a 16-byte aligned function start,
// so A is often the caller's first byte: A itself is looked up, as
// KSCrash's own dladdr did. Only a noreturn call ending its function with
// R a multiple of 16 is then misnamed, as KSCrash named it.
func reportedLookupAddress(arch *archregs.Arch, rule AddressRule, index int, addr uint64) uint64 {
	switch {
	case index == 0:
		return addr
	case rule == RuleRoundedReturnAddress && arch != nil && arch.PtrSize == 8:
		return addr
	default:
		return walker.CallerLookupAddress(arch, addr)
	}
}

// exactLookupAddress returns the address at which Apple's tools (atos,
// symbolicatecrash, MacSymbolicator) look a reporter's frame up: the
// address as given, for callers too, only without armv7's Thumb bit.
func exactLookupAddress(arch *archregs.Arch, index int, addr uint64) uint64 {
	if index == 0 || arch == nil {
		return addr
	}
	return arch.CodeAddress(addr)
}

// reportedFrames symbolicates a reporter's backtrace, looking each frame up
// as reportedLookupAddress says. When the reporter skipped frames, even the
// first frame given is a caller. A backtrace of many frames is named by
// up to GOMAXPROCS goroutines (the process is safe for concurrent
// lookups), so that one large backtrace (a symbolicator request's) uses
// the cores an idle machine has; on a busy one the request's own
// goroutine takes what the others have not started.
func (p *Process) reportedFrames(dst []symstore.Frame, frames []dump.Frame, skipped int, rule AddressRule, enc *encodedRuns) []symstore.Frame {
	workers := p.workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, len(frames)/framesPerNamer)
	if workers <= 1 {
		return p.appendReported(dst, frames, skipped, rule)
	}
	chunks := (len(frames) + namerChunk - 1) / namerChunk
	parts := make([]*namedPart, chunks)
	parallel.ForEach(context.Background(), chunks, workers, func(c int) {
		lo := c * namerChunk
		part := namedParts.Get().(*namedPart)
		part.frames = p.appendReported(part.frames[:0], frames[lo:min(lo+namerChunk, len(frames))], skipped+lo, rule)
		if enc != nil {
			part.encoded = enc.encode(part.encoded[:0], enc.thread, part.frames, c == 0)
		}
		parts[c] = part
	})
	total := 0
	for _, part := range parts {
		total += len(part.frames)
	}
	out := slices.Grow(dst, total)
	for _, part := range parts {
		out = append(out, part.frames...)
		if enc != nil {
			enc.runs = append(enc.runs, part.encoded)
		}
	}
	if enc != nil {
		// The runs' encodings are the thread's until the writer is done
		// with it (encodedRuns.release).
		enc.held = append(enc.held, parts...)
	} else {
		for _, part := range parts {
			namedParts.Put(part)
		}
	}
	return out
}

// encodedRuns asks reportedFrames to encode a thread's frames where they
// are named (Symbolizer.EncodeFrames): runs are the encodings, in order,
// and held the parts that hold them.
type encodedRuns struct {
	encode FrameEncoder
	thread int
	runs   [][]byte
	held   []*namedPart
}

// release lets go of the last thread's runs: back to the pool when the
// writer keeps nothing of a thread (reuse), else to the writer.
func (e *encodedRuns) release(reuse bool) {
	for _, part := range e.held {
		if reuse && cap(part.encoded) <= 64<<10 {
			namedParts.Put(part)
		}
	}
	clear(e.held)
	e.held, e.runs = e.held[:0], e.runs[:0]
	if !reuse {
		e.runs = nil // the writer may keep the last thread's
	}
}

// namedPart is one goroutine's run of a long backtrace: its named frames,
// and their encoding when the Symbolizer encodes frames. A part kept in
// namedParts still refers to the names it held until it is reused or the
// pool is emptied at a collection: clearing each would cost more than
// naming takes.
type namedPart struct {
	frames  []symstore.Frame
	encoded []byte
}

// namedParts keeps the slices the namers of a long backtrace fill, each
// copied into the backtrace's frames once all are done.
var namedParts = sync.Pool{New: func() any { return new(namedPart) }}

// framesPerNamer is the fewest frames worth another goroutine: naming one
// takes microseconds, starting a goroutine far less.
const framesPerNamer = 25

// namerChunk is how many frames a goroutine takes at a time: small enough
// that the goroutines finish together, large enough that taking them
// costs nothing.
const namerChunk = 8

// appendReported appends the symbolicated frames of a reporter's frames,
// the first of which is frame first of the backtrace.
func (p *Process) appendReported(out []symstore.Frame, frames []dump.Frame, first int, rule AddressRule) []symstore.Frame {
	if out == nil {
		// Room for the functions inlined at some of the frames.
		out = make([]symstore.Frame, 0, len(frames)+len(frames)/2)
	}
	// A backtrace's frames lie mostly in one image: the last one's
	// placement is checked first.
	var last image.Placement
	for i, rf := range frames {
		index := i + first
		arch := p.Arch
		if arch == nil {
			// A dump that does not state its architecture (a symbolicator
			// request) is named by each image's own.
			arch = p.imagesArch
			if arch == nil {
				arch = p.imageArch(rf.Address)
			}
		}
		var lookup uint64
		switch {
		case rf.Lookup == dump.LookupAsGiven:
			lookup = rf.Address
		case rf.Lookup == dump.LookupCaller:
			lookup = walker.CallerLookupAddress(arch, rf.Address)
		case p.ExactAddresses:
			lookup = exactLookupAddress(arch, index, rf.Address)
		default:
			lookup = reportedLookupAddress(arch, rule, index, rf.Address)
		}
		out = p.appendFramesNear(out, index, rf.Address, lookup, symstore.FoundByReport, &last)
		last := &out[len(out)-1]
		if last.Image == "" && rf.ImageName != "" {
			// The report names an image our list cannot place (it gave no
			// size, or its Binary Images lack it): keep the reporter's
			// word, "0x7fff61bc6000 + 3114" as the frame line wrote it.
			last.Image, last.ImagePath = rf.ImageName, rf.ImageName
			if rf.ImageIndex >= 0 || rf.ImageLoadAddress != 0 {
				last.ImageLoadAddress, last.ImageOffset = rf.ImageLoadAddress, rf.ImageOffset
			}
		}
		if last.Symbol == "" && rf.Symbol != "" {
			p.setReportName(last, rf.Symbol, rf.SymbolOffset, rf.HasSymbolOffset)
			if rf.File != "" {
				last.File, last.Line = rf.File, rf.Line
			}
		}
	}
	return out
}

// imageArch returns the architecture of the known image holding addr, nil
// when none does.
func (p *Process) imageArch(addr uint64) *archregs.Arch {
	loc, err := p.List.Lookup(addr)
	if err != nil || loc.Loaded.Image == nil {
		return nil
	}
	return loc.Loaded.Image.Arch
}

// walkReported walks a thread over its stack dump and compares the machine
// frames found with the reporter's. A walked frame paired with a reported
// one that we could not name takes the reporter's symbol.
func (p *Process) walkReported(th dump.Thread, mem walker.Memory, rule AddressRule, opts walker.Options) *Walk {
	// A reporter's stack dump holds a little of the stack around SP, and
	// its backtrace already names the frames past it: a scan there finds
	// stale words more often than callers, so ours ends where the records
	// and tables do.
	opts.NoScan = true
	frames, res := p.Walk(th.Registers, mem, opts)
	w := &Walk{Frames: frames, StopReason: StopReason(res.Stop), StopDetail: res.StopDetail, AddressRule: rule,
		SetAsideLR: res.AmbiguousLR, SetAsideLRName: p.setAsideLRName(res.AmbiguousLR)}
	c := compareBacktraces(p.Arch, rule, res.Frames, th.Frames, th.SkippedFrames)
	w.Compared, w.Differences, w.Agrees = c.compared, c.diffs, true
	lr, _ := th.Registers.LR()
	for _, pr := range c.pairs {
		p.nameFromReport(frames, pr.walk, th.Frames[pr.report])
	}
	for i := range w.Differences {
		d := &w.Differences[i]
		if d.Kind == DiffAddress {
			w.Agrees = false
		}
		d.Detail = describeDifference(*d, frames, p.Arch, rule, lr)
	}
	return w
}

// nameFromReport gives walked frame index the reporter's symbol when we
// have none (no symbol file for its image) and the symbol's start, as the
// report places it, is at or below our lookup address.
func (p *Process) nameFromReport(frames []symstore.Frame, index int, rf dump.Frame) {
	f := outerFrame(frames, index)
	if f == nil || f.Symbol != "" || rf.Symbol == "" || rf.SymbolOffset > rf.Address {
		return
	}
	if !rf.HasSymbolOffset {
		// The report gave the name alone: the symbol's start is unknown,
		// so only the very address it named takes the name.
		if f.Address == rf.Address {
			p.setReportName(f, rf.Symbol, 0, false)
		}
		return
	}
	start := rf.Address - rf.SymbolOffset
	if start > f.LookupAddress {
		return
	}
	p.setReportName(f, rf.Symbol, f.Address-start, true)
}

// setReportName gives f a name the report supplied, demangled as a symbol
// file's names are (KSCrash writes C++ names mangled) unless the process
// keeps names as spelled; an offset only when the report gave one.
func (p *Process) setReportName(f *symstore.Frame, name string, offset uint64, hasOffset bool) {
	f.Symbol, f.SymbolOffset, f.HasOffset, f.SymbolSource = name, offset, hasOffset, symstore.SourceReport
	f.MangledSymbol = ""
	switch lang := demangle.Language(name); lang {
	case demangle.LangCPP, demangle.LangRust, demangle.LangSwift:
		f.Lang = string(lang)
		if p.NoDemangle {
			return
		}
		if readable, _ := demangle.Demangle(name); readable != "" && readable != name {
			f.Symbol, f.MangledSymbol = readable, name
		}
	}
}

// outerFrame returns the frame for walk index that is not an inlined one
// (Resolve puts inlined frames first), or nil.
func outerFrame(frames []symstore.Frame, index int) *symstore.Frame {
	var out *symstore.Frame
	for i := range frames {
		if frames[i].Index == index {
			out = &frames[i]
		}
	}
	return out
}

// describeDifference writes a Difference's Detail; lr is the thread's link
// register (0 when unknown).
func describeDifference(d Difference, frames []symstore.Frame, arch *archregs.Arch, rule AddressRule, lr uint64) string {
	switch d.Kind {
	case DiffReportOmitsLinkRegister:
		return fmt.Sprintf("the report omits frame %d (%s), the caller of a frameless leaf found in LR "+
			"(or of a function stopped in its prologue or epilogue): the reporter reads frame records only",
			d.WalkIndex, frameName(outerFrame(frames, d.WalkIndex), d.Walk))
	case DiffStaleLinkRegister:
		f0 := outerFrame(frames, 0)
		return fmt.Sprintf("our frame %d (%#x) is a stale LR, not a caller: it lies inside frame 0's own function %s, "+
			"between its start and PC; without symbols for %s the walker could not tell, and the report is right to lack it",
			d.WalkIndex, d.Walk, frameName(f0, 0), imageName(f0))
	case DiffReportExtraFrame:
		s := fmt.Sprintf("the report has frame %d (%#x) that our walk lacks; the frames after it agree",
			d.ReportIndex, d.Report)
		if lr != 0 && arch != nil && arch.CodeAddress(d.Report) == arch.CodeAddress(lr) {
			s += "; it is LR, which this reporter takes as frame 1 even when it is stale or repeats the caller frame 0 had saved"
		}
		return s
	}
	s := fmt.Sprintf("frame %d: walk %#x (%s), report %#x", d.WalkIndex, d.Walk,
		frameName(outerFrame(frames, d.WalkIndex), d.Walk), d.Report)
	if rule == RuleRoundedReturnAddress && d.WalkIndex > 0 {
		s += fmt.Sprintf(" (the reporter would have written %#x)", roundReturnAddress(arch, d.Walk))
	}
	return s
}

// frameName names a walked frame for a message: its symbol, else its image
// and offset, else its address.
func frameName(f *symstore.Frame, addr uint64) string {
	switch {
	case f == nil:
		return fmt.Sprintf("%#x", addr)
	case f.Symbol != "":
		return f.Symbol
	case f.Image != "":
		return fmt.Sprintf("%s + %#x", f.Image, f.ImageOffset)
	}
	return fmt.Sprintf("%#x", f.Address)
}

func imageName(f *symstore.Frame) string {
	if f == nil || f.Image == "" {
		return "its image"
	}
	return f.Image
}

// comparison is the outcome of compareBacktraces.
type comparison struct {
	compared int
	// pairs holds the frames found to agree: our walk's index and the
	// index into the reporter's Frames slice.
	pairs []pair
	// diffs have no Detail yet.
	diffs []Difference
}

type pair struct{ walk, report int }

// compareBacktraces pairs a walk's frames with a reporter's, innermost
// first: walk frame i with reported frame i − skipped. Where a pair
// disagrees it looks one frame ahead on each side, so that a frame only
// one side has is reported once instead of shifting every later pair: an
// extra frame of ours must come from the link register (the one frame a
// frame-record walk cannot see), an extra frame of the report may be any.
func compareBacktraces(arch *archregs.Arch, rule AddressRule, walked []walker.Frame, reported []dump.Frame, skipped int) comparison {
	var c comparison
	same := func(i, j int) bool {
		return sameInstruction(arch, rule, walked[i], j+skipped, reported[j].Address)
	}
	i := max(skipped, 0)
	for j := 0; i < len(walked) && j < len(reported); {
		switch {
		case same(i, j):
			c.compared++
			c.pairs = append(c.pairs, pair{i, j})
			i++
			j++
		case walked[i].FoundBy == walker.FoundByLinkRegister && inFrame0Function(walked, reported, skipped, i):
			c.diffs = append(c.diffs, Difference{Kind: DiffStaleLinkRegister,
				WalkIndex: i, ReportIndex: -1, Walk: walked[i].ReturnAddress})
			i++
		case walked[i].FoundBy == walker.FoundByLinkRegister && i+1 < len(walked) && same(i+1, j):
			c.diffs = append(c.diffs, Difference{Kind: DiffReportOmitsLinkRegister,
				WalkIndex: i, ReportIndex: -1, Walk: walked[i].ReturnAddress})
			i++
		case j+1 < len(reported) && same(i, j+1):
			c.diffs = append(c.diffs, Difference{Kind: DiffReportExtraFrame,
				WalkIndex: -1, ReportIndex: j + skipped, Report: reported[j].Address})
			j++
		default:
			c.compared++
			c.diffs = append(c.diffs, Difference{Kind: DiffAddress,
				WalkIndex: i, ReportIndex: j + skipped, Walk: walked[i].ReturnAddress, Report: reported[j].Address})
			i++
			j++
		}
	}
	return c
}

// inFrame0Function reports whether walked frame i lies between the start
// of frame 0's function, as the reporter's symbol gives it, and PC: a
// function is contiguous, so such an address is in frame 0's own function.
func inFrame0Function(walked []walker.Frame, reported []dump.Frame, skipped, i int) bool {
	if skipped != 0 || len(reported) == 0 || len(walked) == 0 || walked[0].Index != 0 {
		return false
	}
	rf := reported[0]
	pc := walked[0].ReturnAddress
	if rf.Symbol == "" || rf.Address != pc || rf.SymbolOffset > pc {
		return false
	}
	addr := walked[i].ReturnAddress
	return pc-rf.SymbolOffset <= addr && addr <= pc
}

// sameInstruction reports whether walked frame f and the reporter's frame
// at index (counting skipped frames) with address addr name the same
// instruction under rule. Frame 0 is the PC on both sides.
func sameInstruction(arch *archregs.Arch, rule AddressRule, f walker.Frame, index int, addr uint64) bool {
	if f.Index == 0 || index == 0 {
		return f.Index == index && f.ReturnAddress == addr
	}
	if rule == RuleRoundedReturnAddress {
		return roundReturnAddress(arch, f.ReturnAddress) == addr
	}
	// Our return addresses have the Thumb bit cleared; a reporter may
	// have kept it.
	if arch != nil {
		addr = arch.CodeAddress(addr)
	}
	return f.ReturnAddress == addr
}

// roundReturnAddress rounds a return address down as KSCrash 2.x did.
func roundReturnAddress(arch *archregs.Arch, ra uint64) uint64 {
	ptr := uint64(8)
	if arch != nil {
		ptr = uint64(arch.PtrSize)
	}
	return ra &^ (2*ptr - 1)
}
