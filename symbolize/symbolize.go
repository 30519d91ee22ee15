package symbolize

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/internal/pathbase"
	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/uuid"
	"github.com/stackimage/stackimage/walker"
)

// Thread is one symbolicated thread: walked from a snapshot, or as a crash
// reporter recorded it. Like the Report that holds it, it is not modified
// after Symbolicate returns, and readers may share it freely.
type Thread struct {
	// ID is the snapshot's thread id, or the reporter's thread number.
	ID uint64
	// KernelID is the kernel's thread id when a crash report gave it.
	KernelID uint64
	Name     string
	Crashed  bool
	// StopReason and StopDetail say why the walk of a snapshot's thread
	// ended; StopNone and empty for a reporter's backtrace, unless the
	// report's bound cut it (StopMaxTotalFrames).
	StopReason StopReason
	StopDetail string
	// SetAsideLR is frame 0's link register when the walk set it aside
	// (walker.Result.AmbiguousLR): it lies in frame 0's image near PC,
	// and that image has neither code nor symbols to tell a frameless
	// leaf's caller from a stale return address, so the walk went on from
	// the frame record instead. A frame may be missing between frames 0
	// and 1, and this is its return address. Zero otherwise, for a
	// reporter's backtrace (see Walk.SetAsideLR), and when the report's
	// bound left the thread no frames.
	SetAsideLR uint64
	// SetAsideLRName names SetAsideLR as the process places it: its
	// symbol and image ("f + 12 in libfoo.dylib") or its image and offset
	// there ("libfoo.dylib + 0x1234"); empty when SetAsideLR is zero or in
	// no known image.
	SetAsideLRName string
	Frames         []symstore.Frame
	// Walk is our own walk of a reported thread, when the report held its
	// registers and stack.
	Walk *Walk
	// LastException marks the backtrace of where an uncaught exception was
	// thrown (Apple's "Last Exception Backtrace").
	LastException bool
	// Encoded is Frames as the Symbolizer's EncodeFrames wrote them, run
	// by run in order, when it has one and the frames were named by
	// several goroutines; nil otherwise, and the writer encodes Frames
	// itself. Under ReuseFrames it is reused for the next thread, as
	// Frames is.
	Encoded [][]byte
}

// A FrameEncoder appends a run of a thread's named frames to dst as a
// writer of the report writes them. thread is the thread's index in the
// dump (dump.Thread.Index); opens says the run is the first of the
// thread's frames (the encoder writes what separates it from the run
// before otherwise).
type FrameEncoder func(dst []byte, thread int, frames []symstore.Frame, opens bool) []byte

// Report is a symbolicated dump. Symbolicate makes a new one per call and
// does not touch it afterwards: readers may share it freely, and a writer
// (one appending warnings, say) must not share it meanwhile. It refers to
// the input Dump, which it does not modify.
type Report struct {
	// Format is the input's format.
	Format dump.Format
	// Dump is the input, for its header (system, process, crash).
	Dump    *dump.Dump
	Arch    *archregs.Arch
	Threads []Thread
	// Missing lists the images of the dump for which no symbol file with the
	// same UUID was found.
	Missing []MissingImage
	// Warnings lists what was read only in part: the report's own
	// warnings, and symbol files whose DWARF was damaged (their symbol
	// tables still answered).
	Warnings []string
}

// MissingImage is an image of the dump without symbols. It is a plain
// value, safe to copy and share.
type MissingImage struct {
	Name string
	UUID uuid.UUID
}

// Symbolizer symbolicates dumps against a symbol index.
//
// A Symbolizer is safe for concurrent use: Symbolicate and NewProcess only
// read its fields, so one Symbolizer (and its Symbols) can serve many
// goroutines at once. Set the fields before sharing it, and do not change
// them while calls run.
type Symbolizer struct {
	Symbols *symstore.Symbols
	// MaxDepth bounds each walk; zero means the walker's default.
	MaxDepth int
	// MaxTotalFrames bounds the frames of one report, all threads
	// together; zero means DefaultMaxTotalFrames. At the bound, threads
	// are cut with StopReason StopMaxTotalFrames and the report says so
	// in a warning (see SymbolicateEach).
	MaxTotalFrames int
	// ReuseFrames lets SymbolicateEach hand each thread's named frames
	// in a slice it reuses for the next thread and the next call: set it
	// when the function given takes what it needs from a Thread before it
	// returns and keeps no Frames (a writer answering thread by thread).
	ReuseFrames bool
	// Workers bounds the goroutines that name one long backtrace (a
	// symbolicator request's); zero means GOMAXPROCS. A service whose
	// cores are taken by other requests sets 1: a backtrace's runs handed
	// to other goroutines would only add their hand-offs.
	Workers int
	// EncodeFrames, when set, is called on the goroutines that name a
	// reporter's long backtrace, each with the run of frames it named,
	// so that a writer's encoding of them takes the cores the naming
	// takes instead of following it; the runs' encodings are the
	// thread's Encoded. It is called from several goroutines at
	// once.
	EncodeFrames FrameEncoder
	// NoDemangle keeps C++ and Rust names as the binary spells them.
	NoDemangle bool
	// NoUnwindInfo walks by the functions' code, frame records, link
	// register and scanning only, ignoring the images' unwind tables: as
	// where an image has no tables, for comparison.
	NoUnwindInfo bool
	// Async follows Swift async context chains (walker.Options.Async).
	Async bool
	// ExactAddresses looks every frame up at the address the report or
	// walk gives, as atos, symbolicatecrash and MacSymbolicator do,
	// instead of looking callers up at their return address minus one
	// instruction. The default names the call site, which is what a
	// caller's frame means; a caller whose call ends its function (a
	// noreturn callee) is then named after the next function, as Apple's
	// tools name it. Set it to compare output with theirs line for line.
	ExactAddresses bool
	// Entries, when set, is asked first for an image's symbols by UUID:
	// an entry its caller holds open already (a service's cache of
	// indexes), which spares a lookup in Symbols, its files' opening and
	// the entry's lazily built tables. The entry returned is the
	// process's to release (Close does); nil leaves the image to Symbols.
	Entries func(id uuid.UUID) *symstore.Entry
}

// Process holds the images of one process with their symbols attached,
// ready to answer address queries.
//
// A Process is safe for concurrent use once NewProcess has returned: its
// fields are settings to leave as they are, its lookups and walks only
// read them, and the entries it shares with other processes synchronize
// what they build lazily. It holds references to the entries it took from
// Symbols until Close.
type Process struct {
	Arch *archregs.Arch
	List *image.List
	// NoDemangle keeps names as the binary spells them.
	NoDemangle bool
	// NoUnwindInfo, Async and ExactAddresses are the Symbolizer's options
	// of those names.
	NoUnwindInfo   bool
	Async          bool
	ExactAddresses bool
	// workers is the Symbolizer's Workers.
	workers int
	entries map[*image.Loaded]*symstore.Entry
	// held lists the entries taken from Symbols, one per Lookup, for Close
	// to release.
	held     []*symstore.Entry
	heldMu   sync.Mutex
	imageEnd uint64
	Missing  []MissingImage
	// named caches Frames' answers by address: a dump names the same
	// return addresses over and over (threads parked in the same calls).
	namedMu sync.Mutex
	named   map[namedKey][]symstore.Frame
	// unnamedCache says Frames names every address afresh: set for a dump
	// of one backtrace, whose addresses rarely repeat, where the cache
	// would cost more than it saves.
	unnamedCache bool
	// imagesArch is the architecture of every image with symbols, when
	// the process has none of its own and they agree.
	imagesArch *archregs.Arch
	// inspections keeps what the walker read from the functions' code,
	// for every walk over this process's images.
	inspections walker.InspectCache
}

// errNilSymbolizer is the error of a nil Symbolizer's methods.
var errNilSymbolizer = errors.New("symbolize: nil Symbolizer")

// namedKey is what Frames' answer depends on, besides the index and
// found-by it copies in.
type namedKey struct{ addr, lookup uint64 }

// maxNamed bounds Process.named; when full it is emptied and refilled.
const maxNamed = 4096

// NewProcess matches the loaded images with symbol files by UUID. It sets
// the Image of each loaded image it finds symbols for. Call Close when done
// with the process, so that the symbol files it uses can be closed once the
// Symbols is.
func (z *Symbolizer) NewProcess(arch *archregs.Arch, loaded []*image.Loaded) (*Process, error) {
	if z == nil {
		return nil, errNilSymbolizer
	}
	if slices.Contains(loaded, nil) {
		loaded = slices.DeleteFunc(slices.Clone(loaded), func(l *image.Loaded) bool { return l == nil })
	}
	p := &Process{Arch: arch, entries: map[*image.Loaded]*symstore.Entry{}, NoDemangle: z.NoDemangle,
		NoUnwindInfo: z.NoUnwindInfo, Async: z.Async, ExactAddresses: z.ExactAddresses, workers: z.Workers}
	for _, l := range loaded {
		e, fromSymbols, err := z.entryFor(arch, l)
		if err != nil {
			p.Close()
			return nil, err
		}
		if fromSymbols && e != nil {
			p.held = append(p.held, e)
		}
		if e == nil {
			if l.Name != "" || !l.UUID.IsZero() {
				p.Missing = append(p.Missing, MissingImage{Name: l.Name, UUID: l.UUID})
			}
			continue
		}
		l.Image = e.Image()
		p.entries[l] = e
	}
	p.List = image.NewList(loaded)
	p.imageEnd = p.ImageEnd()
	if arch == nil {
		p.imagesArch = soleArch(p.entries)
	}
	return p, nil
}

// soleArch returns the architecture every image with symbols has, nil
// when they differ or none has one.
func soleArch(entries map[*image.Loaded]*symstore.Entry) *archregs.Arch {
	var arch *archregs.Arch
	for l := range entries {
		if l.Image == nil || l.Image.Arch == nil || arch != nil && l.Image.Arch != arch {
			return nil
		}
		arch = l.Image.Arch
	}
	return arch
}

// entryFor finds the symbols of a loaded image: the image the caller
// attached, else the files with its UUID, else, for an image without a
// UUID, the files without one that have its name. fromSymbols says the
// entry came from Symbols and holds a reference to release.
func (z *Symbolizer) entryFor(arch *archregs.Arch, l *image.Loaded) (e *symstore.Entry, fromSymbols bool, err error) {
	switch {
	case l.Image != nil:
		e, err = symstore.NewEntry(l.Image)
		return e, false, err
	case z.Entries != nil && !l.UUID.IsZero():
		if e := z.Entries(l.UUID); e != nil {
			return e, true, nil
		}
	}
	switch {
	case z.Symbols == nil:
		return nil, false, nil
	case !l.UUID.IsZero():
		// No entry is a missing image, not a failure: Warnings says why
		// files could not be read. The name is for sources that find
		// files by it (a Breakpad symbol server).
		e, _ = z.Symbols.LookupImage(context.Background(), l.UUID, l.Name)
		return e, true, nil
	case l.Name != "":
		e, _ = z.Symbols.LookupNoUUID(l.Name, arch)
		return e, true, nil
	}
	return nil, false, nil
}

// Close releases the process's hold on the entries it took from Symbols
// (see symstore.Symbols.Close). The process must not be used afterwards. Calling
// Close again does nothing.
func (p *Process) Close() error {
	p.heldMu.Lock()
	held := p.held
	p.held = nil
	p.heldMu.Unlock()
	var errs []error
	for _, e := range held {
		if err := e.Release(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Frames symbolizes one address: the machine frame, preceded by the
// functions inlined at that point. lookup is the address to attribute (the
// return address minus one instruction for callers).
//
// The caller owns the frames returned: they are a fresh copy even when the
// answer came from the process's cache.
func (p *Process) Frames(index int, addr, lookup uint64, foundBy symstore.FoundBy) []symstore.Frame {
	return p.appendFrames(nil, index, addr, lookup, foundBy)
}

// appendFrames appends Frames' answer to dst.
func (p *Process) appendFrames(dst []symstore.Frame, index int, addr, lookup uint64, foundBy symstore.FoundBy) []symstore.Frame {
	return p.appendFramesNear(dst, index, addr, lookup, foundBy, nil)
}

// appendFramesNear is appendFrames with appendNameNear's last placement.
func (p *Process) appendFramesNear(dst []symstore.Frame, index int, addr, lookup uint64, foundBy symstore.FoundBy, last *image.Placement) []symstore.Frame {
	if p.unnamedCache {
		n := len(dst)
		dst = p.appendNameNear(dst, addr, lookup, last)
		for i := n; i < len(dst); i++ {
			dst[i].Index, dst[i].FoundBy = index, foundBy
		}
		return dst
	}
	key := namedKey{addr, lookup}
	p.namedMu.Lock()
	cached, ok := p.named[key]
	p.namedMu.Unlock()
	if !ok {
		cached = p.name(addr, lookup)
		p.namedMu.Lock()
		if p.named == nil || len(p.named) >= maxNamed {
			p.named = map[namedKey][]symstore.Frame{}
		}
		p.named[key] = cached
		p.namedMu.Unlock()
	}
	for _, f := range cached {
		f.Index, f.FoundBy = index, foundBy
		dst = append(dst, f)
	}
	return dst
}

// name symbolizes one address for Frames, with index and found-by left
// zero: the frames are cached and shared, and must not be modified.
func (p *Process) name(addr, lookup uint64) []symstore.Frame {
	return p.appendName(nil, addr, lookup)
}

// appendName appends name's answer to dst.
func (p *Process) appendName(dst []symstore.Frame, addr, lookup uint64) []symstore.Frame {
	return p.appendNameNear(dst, addr, lookup, nil)
}

// appendNameNear is appendName, checking the placement last (when not
// nil) before the image list and keeping the new one there.
func (p *Process) appendNameNear(dst []symstore.Frame, addr, lookup uint64, last *image.Placement) []symstore.Frame {
	f := symstore.Frame{Address: addr, LookupAddress: lookup}
	var place image.Placement
	if last != nil && last.Contains(lookup) {
		place = *last
	} else {
		var ok bool
		if place, ok = p.List.Place(lookup); !ok {
			return append(dst, f)
		}
		if last != nil {
			*last = place
		}
	}
	l, unslid := place.Image, lookup-place.Slide
	f.Image = pathbase.Base(l.Name)
	f.ImagePath = l.Name
	f.ImageLoadAddress = l.LoadAddress
	f.ImageOffset = addr - l.LoadAddress
	e := p.entries[l]
	if e == nil {
		return append(dst, f)
	}
	return e.AppendResolve(dst, f, unslid, symstore.ResolveOptions{NoDemangle: p.NoDemangle})
}

// IsCode reports whether addr lies in code of a known image; it lets the
// walker judge values it stripped of pointer-authentication bits.
func (p *Process) IsCode(addr uint64) bool { return p.List.IsCode(addr) }

// FunctionStart returns the slid start of the function holding addr, when
// the image's symbols know it. The walker uses it to tell a caller in the
// link register from a stale one left by a call frame 0 already made.
func (p *Process) FunctionStart(addr uint64) (uint64, bool) {
	loc, err := p.List.Lookup(addr)
	if err != nil {
		return 0, false
	}
	e := p.entries[loc.Loaded]
	if e == nil {
		return 0, false
	}
	off, ok := e.FunctionOffset(loc.Unslid, loc.Offset)
	if !ok {
		return 0, false
	}
	return addr - off, true
}

// KnowsFunctions reports whether the symbol files of the image holding
// addr list its functions (walker.SymbolCoverage): then FunctionStart
// answers for its every function, and the walker weighs a stack word in
// its code by them where the code cannot be read.
func (p *Process) KnowsFunctions(addr uint64) bool {
	loc, err := p.List.Lookup(addr)
	if err != nil {
		return false
	}
	e := p.entries[loc.Loaded]
	return e != nil && e.KnowsFunctions()
}

// CallReturn reports whether addr is the return address of a call that
// the DWARF of its image describes (walker.CallSites): known is false
// where the image's symbol files have no call sites for its function.
func (p *Process) CallReturn(addr uint64) (known, isReturn bool) {
	loc, err := p.List.Lookup(addr)
	if err != nil {
		return false, false
	}
	e := p.entries[loc.Loaded]
	if e == nil {
		return false, false
	}
	return e.CallReturn(loc.Unslid)
}

// CallReaches reports whether the call returning to ret can have entered
// the function starting at entry, by what the DWARF call sites of ret's
// image say it calls (walker.CallTargets). known is false where they do
// not say, and where entry lies in another image (a call there goes
// through a stub, which the call sites do not follow).
func (p *Process) CallReaches(ret, entry uint64) (known, reaches bool) {
	lr, err := p.List.Lookup(ret)
	if err != nil {
		return false, false
	}
	le, err := p.List.Lookup(entry)
	if err != nil || le.Loaded != lr.Loaded {
		return false, false
	}
	e := p.entries[lr.Loaded]
	if e == nil {
		return false, false
	}
	return e.CallReaches(lr.Unslid, le.Unslid)
}

// FrameLocals reports the frame base register of the function holding pc
// and how far above it the function's variables reach, by its image's
// DWARF (walker.FrameLocals).
func (p *Process) FrameLocals(pc uint64) (reg int, end int64, known bool) {
	loc, err := p.List.Lookup(pc)
	if err != nil {
		return 0, 0, false
	}
	e := p.entries[loc.Loaded]
	if e == nil {
		return 0, 0, false
	}
	return e.FrameLocals(loc.Unslid)
}

// SameImage reports whether a and b lie in one image (walker.SymbolCoverage).
func (p *Process) SameImage(a, b uint64) bool {
	la, err := p.List.Lookup(a)
	if err != nil {
		return false
	}
	lb, err := p.List.Lookup(b)
	return err == nil && la.Loaded == lb.Loaded
}

// ImageEnd returns one past the highest byte of any image, which bounds the
// address bits a pointer-authenticated value can carry.
func (p *Process) ImageEnd() uint64 {
	var end uint64
	for _, l := range p.List.Images() {
		top := l.LoadAddress + l.Size
		if l.Image != nil {
			for _, s := range l.Image.Segments {
				if s.Name == "__PAGEZERO" {
					continue
				}
				top = max(top, s.Addr+s.Size+l.Image.Slide(l.LoadAddress))
			}
		}
		end = max(end, top, l.LoadAddress+1)
	}
	return end
}

// Walk walks one thread over memory and symbolizes its frames.
func (p *Process) Walk(regs *archregs.Registers, mem walker.Memory, opts walker.Options) ([]symstore.Frame, walker.Result) {
	if opts.Code == nil {
		opts.Code = p
	}
	if opts.Functions == nil {
		opts.Functions = p
	}
	if opts.Instructions == nil {
		opts.Instructions = p
	}
	if opts.Symbols == nil {
		opts.Symbols = p
	}
	if opts.FrameRecords == nil {
		opts.FrameRecords = p
	}
	if opts.ImageEnd == 0 {
		opts.ImageEnd = p.imageEnd
	}
	if opts.Inspections == nil {
		opts.Inspections = &p.inspections
	}
	if opts.Unwinder == nil && !p.NoUnwindInfo {
		opts.Unwinder = p
	}
	opts.Async = opts.Async || p.Async
	res := walker.Walk(regs, mem, opts)
	frames := make([]symstore.Frame, 0, len(res.Frames))
	for _, wf := range res.Frames {
		lookup := wf.LookupAddress
		if p.ExactAddresses {
			lookup = wf.ReturnAddress
		}
		n := len(frames)
		frames = p.appendFrames(frames, wf.Index, wf.ReturnAddress, lookup, symstore.FoundBy(wf.FoundBy))
		for i := n; i < len(frames); i++ {
			frames[i].Trust = wf.Trust
		}
	}
	return frames, res
}

// setAsideLRName names a link register the walker set aside
// (Thread.SetAsideLRName), looked up as a caller's return address is: at
// its call site. Empty for zero, and for an address in no known image.
func (p *Process) setAsideLRName(lr uint64) string {
	if lr == 0 {
		return ""
	}
	lookup := lr
	if p.Arch != nil && !p.ExactAddresses && lr > p.Arch.CallSize {
		lookup = p.Arch.CallSite(lr)
	}
	f := p.name(lr, lookup)
	if len(f) == 0 {
		return ""
	}
	// The machine frame is the last: the functions inlined at the call
	// site come before it.
	m := f[len(f)-1]
	switch {
	case m.Image == "":
		return ""
	case m.Symbol != "" && m.HasOffset:
		return fmt.Sprintf("%s + %d in %s", m.Symbol, m.SymbolOffset, m.Image)
	case m.Symbol != "":
		return m.Symbol + " in " + m.Image
	}
	return fmt.Sprintf("%s + %#x", m.Image, m.ImageOffset)
}

// Warnings returns what the symbol files used so far could not give: DWARF
// that could not be indexed, or only in part, and unwind tables left out
// because a truncated file ends before them. An entry whose DWARF another
// goroutine is still indexing has nothing to say yet.
func (p *Process) Warnings() []string {
	var out []string
	seen := map[*symstore.Entry]bool{}
	for _, l := range p.List.Images() {
		e := p.entries[l]
		if e == nil || seen[e] {
			continue
		}
		seen[e] = true
		out = append(out, e.LazyWarnings()...)
	}
	return out
}

// A Process answers the walker's questions about code.
var (
	_ walker.CodeChecker     = (*Process)(nil)
	_ walker.FunctionStarter = (*Process)(nil)
	_ walker.SymbolCoverage  = (*Process)(nil)
	_ walker.CallSites       = (*Process)(nil)
	_ walker.Memory          = (*Process)(nil) // Options.Instructions
)
