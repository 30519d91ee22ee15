package symbolize

import (
	"fmt"
	"path"
	"strings"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/debuginfo"
	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/walker"
)

// Frame is one symbolicated frame. A machine frame whose code was inlined
// is preceded by one Frame per inlined function, innermost first, with the
// same Index and addresses and Inlined set.
type Frame struct {
	Index int
	// Address is the PC for frame 0 and the return address for callers.
	Address uint64
	// LookupAddress is the address that was symbolized: the PC for frame 0,
	// the return address minus one instruction for callers.
	LookupAddress uint64
	// Image is the image's file name ("" when the address is in no known
	// image); ImageLoadAddress and ImageOffset place the address in it.
	Image            string
	ImagePath        string
	ImageLoadAddress uint64
	ImageOffset      uint64
	// Symbol is the function's readable name, demangled unless the
	// Symbolizer says not to; empty when no symbol was found.
	Symbol string
	// MangledSymbol is the name as the binary spells it, when it differs.
	MangledSymbol string
	// Lang is the language the name's mangling shows ("C++", "Rust",
	// "Swift", "ObjC", "C").
	Lang string
	// SymbolOffset is Address minus the symbol's slid start, as Apple's
	// crash reports print it; HasOffset is false when the start is unknown
	// (inlined frames, or a name known only from DWARF).
	SymbolOffset uint64
	HasOffset    bool
	// SymbolSource says which data named the symbol: "dwarf", "symtab",
	// "exports" or "function starts".
	SymbolSource string
	// File, Line and Column give the source position from DWARF; File is
	// empty when unknown.
	File         string
	Line, Column int
	Inlined      bool
	FoundBy      string
}

// Thread is one symbolicated thread: walked from a snapshot, or as a crash
// reporter recorded it.
type Thread struct {
	// ID is the snapshot's thread id, or the reporter's thread number.
	ID uint64
	// KernelID is the kernel's thread id when a crash report gave it.
	KernelID uint64
	Name     string
	Crashed  bool
	// StopReason and StopDetail say why the walk of a snapshot's thread
	// ended; empty for a reporter's backtrace.
	StopReason string
	StopDetail string
	Frames     []Frame
	// Walk is our own walk of a reported thread, when the report held its
	// registers and stack.
	Walk *Walk
	// LastException marks the backtrace of where an uncaught exception was
	// thrown (Apple's "Last Exception Backtrace").
	LastException bool
}

// Report is a symbolicated dump.
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

// MissingImage is an image of the dump without symbols.
type MissingImage struct {
	Name string
	UUID image.UUID
}

// Symbolizer symbolicates dumps against a symbol index.
type Symbolizer struct {
	Symbols *Symbols
	// MaxDepth bounds each walk; zero means the walker's default.
	MaxDepth int
	// NoDemangle keeps C++ and Rust names as the binary spells them.
	NoDemangle bool
	// NoUnwindInfo walks by frame records, link register and scanning
	// only, ignoring the images' unwind tables: the walk as it was before
	// unwind tables were read, for comparison.
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
}

// Process holds the images of one process with their symbols attached,
// ready to answer address queries.
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
	entries        map[*image.Loaded]*Entry
	imageEnd       uint64
	Missing        []MissingImage
}

// NewProcess matches the loaded images with symbol files by UUID.
func (z *Symbolizer) NewProcess(arch *archregs.Arch, loaded []*image.Loaded) (*Process, error) {
	p := &Process{Arch: arch, entries: map[*image.Loaded]*Entry{}, NoDemangle: z.NoDemangle,
		NoUnwindInfo: z.NoUnwindInfo, Async: z.Async, ExactAddresses: z.ExactAddresses}
	for _, l := range loaded {
		e, err := z.entryFor(arch, l)
		if err != nil {
			return nil, err
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
	return p, nil
}

// entryFor finds the symbols of a loaded image: the image the caller
// attached, else the files with its UUID, else, for an image without a
// UUID, the files without one that have its name.
func (z *Symbolizer) entryFor(arch *archregs.Arch, l *image.Loaded) (*Entry, error) {
	switch {
	case l.Image != nil:
		return NewEntry(l.Image)
	case z.Symbols == nil:
		return nil, nil
	case !l.UUID.IsZero():
		return z.Symbols.Lookup(l.UUID)
	case l.Name != "":
		return z.Symbols.LookupNoUUID(l.Name, arch)
	}
	return nil, nil
}

// Frames symbolizes one address: the machine frame, preceded by the
// functions inlined at that point. lookup is the address to attribute (the
// return address minus one instruction for callers).
func (p *Process) Frames(index int, addr, lookup uint64, foundBy string) []Frame {
	f := Frame{Index: index, Address: addr, LookupAddress: lookup, FoundBy: foundBy}
	loc, ok := p.List.Lookup(lookup)
	if !ok {
		return []Frame{f}
	}
	l := loc.Loaded
	f.Image = path.Base(strings.ReplaceAll(l.Name, "\\", "/"))
	f.ImagePath = l.Name
	f.ImageLoadAddress = l.LoadAddress
	f.ImageOffset = addr - l.LoadAddress
	e := p.entries[l]
	if e == nil {
		return []Frame{f}
	}
	return e.Resolve(f, loc.Unslid, p.NoDemangle)
}

// Resolve names a frame whose address lies in the entry's image at the
// unslid address: it returns the frame, preceded by the functions inlined
// at that point. f carries the addresses and image placement already.
func (e *Entry) Resolve(f Frame, unslid uint64, noDemangle bool) []Frame {
	if sym, ok := e.Symbol(unslid); ok {
		e.setName(&f, sym.RawName, sym.Name, noDemangle)
		// The offset is taken from the address itself, not the lookup
		// address, as Apple's reports do; both lie in the same function.
		f.SymbolOffset = f.Address - (f.LookupAddress - sym.Offset)
		f.HasOffset = true
		f.SymbolSource = sym.Source.String()
	}
	src := e.Source(unslid)
	if len(src) == 0 {
		return []Frame{f}
	}
	frames := make([]Frame, 0, len(src))
	for _, sf := range src[:len(src)-1] {
		in := f
		in.HasOffset, in.SymbolOffset, in.SymbolSource = false, 0, "dwarf"
		setDebugName(&in, sf, noDemangle)
		in.Inlined = true
		frames = append(frames, in)
	}
	outer := src[len(src)-1]
	if outer.Function != "" && (f.Symbol == "" || f.SymbolSource != "symtab" ||
		isHiddenName(f.Symbol) && !isHiddenName(outer.Function)) {
		// DWARF knows the function where the symbol table only had an
		// export, a bare function start or a bitcode-hidden name.
		setDebugName(&f, outer, noDemangle)
		f.SymbolSource = "dwarf"
	}
	f.File, f.Line, f.Column = outer.File, outer.Line, outer.Column
	frames = append(frames, f)
	for i := range frames {
		e.unhideFrame(&frames[i])
	}
	return frames
}

// setName fills in a symbol table name, demangled unless told not to.
func (e *Entry) setName(f *Frame, raw, name string, noDemangle bool) {
	if raw == "" {
		f.Symbol = name // a synthetic name for a bare function start
		return
	}
	f.Symbol = name
	if noDemangle {
		f.Lang = string(debuginfo.Language(raw))
		return
	}
	readable, lang := e.demangle(raw)
	f.Lang = string(lang)
	if readable != raw && readable != name {
		f.Symbol, f.MangledSymbol = readable, name
	}
}

// maxDemangledNames bounds the entry's cache of demangled names.
const maxDemangledNames = 1 << 16

// demangle demangles a symbol table name (C++, Rust, Swift), remembering
// the answer: a dump names the same functions over and over, and
// demangling costs far more than the lookup that found the name.
func (e *Entry) demangle(raw string) (string, debuginfo.Lang) {
	lang := debuginfo.Language(raw)
	if lang != debuginfo.LangCPP && lang != debuginfo.LangRust && lang != debuginfo.LangSwift {
		return raw, lang
	}
	e.namesMu.Lock()
	readable, ok := e.demangled[raw]
	e.namesMu.Unlock()
	if ok {
		return readable, lang
	}
	readable, _ = debuginfo.Demangle(raw)
	e.namesMu.Lock()
	if e.demangled == nil {
		e.demangled = map[string]string{}
	}
	if len(e.demangled) < maxDemangledNames {
		e.demangled[raw] = readable
	}
	e.namesMu.Unlock()
	return readable, lang
}

func setDebugName(f *Frame, sf debuginfo.Frame, noDemangle bool) {
	f.Symbol, f.MangledSymbol, f.Lang = sf.Function, "", string(sf.Lang)
	f.File, f.Line, f.Column = sf.File, sf.Line, sf.Column
	if sf.LinkageName == "" || sf.LinkageName == sf.Function {
		return
	}
	if noDemangle {
		f.Symbol = sf.LinkageName
		return
	}
	f.MangledSymbol = sf.LinkageName
}

// IsCode reports whether addr lies in code of a known image; it lets the
// walker judge values it stripped of pointer-authentication bits.
func (p *Process) IsCode(addr uint64) bool { return p.List.IsCode(addr) }

// FunctionStart returns the slid start of the function holding addr, when
// the image's symbols know it. The walker uses it to tell a caller in the
// link register from a stale one left by a call frame 0 already made.
func (p *Process) FunctionStart(addr uint64) (uint64, bool) {
	loc, ok := p.List.Lookup(addr)
	if !ok {
		return 0, false
	}
	e := p.entries[loc.Loaded]
	if e == nil {
		return 0, false
	}
	sym, ok := e.Symbol(loc.Unslid)
	if !ok {
		return 0, false
	}
	return addr - sym.Offset, true
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
func (p *Process) Walk(regs *archregs.Registers, mem walker.Memory, opts walker.Options) ([]Frame, walker.Result) {
	if opts.Code == nil {
		opts.Code = p
	}
	if opts.Functions == nil {
		opts.Functions = p
	}
	if opts.Instructions == nil {
		opts.Instructions = p
	}
	if opts.ImageEnd == 0 {
		opts.ImageEnd = p.imageEnd
	}
	if opts.Unwinder == nil && !p.NoUnwindInfo {
		opts.Unwinder = p
	}
	opts.Async = opts.Async || p.Async
	res := walker.Walk(regs, mem, opts)
	frames := make([]Frame, 0, len(res.Frames))
	for _, wf := range res.Frames {
		lookup := wf.LookupAddress
		if p.ExactAddresses {
			lookup = wf.ReturnAddress
		}
		frames = append(frames, p.Frames(wf.Index, wf.ReturnAddress, lookup, wf.FoundBy.String())...)
	}
	return frames, res
}

// Warnings returns what the symbol files used so far could not give: DWARF
// that could not be indexed, or only in part.
func (p *Process) Warnings() []string {
	var out []string
	seen := map[*Entry]bool{}
	for _, l := range p.List.Images() {
		e := p.entries[l]
		if e == nil || seen[e] {
			continue
		}
		seen[e] = true
		for _, err := range e.DebugErrors {
			out = append(out, err.Error())
		}
		for i, ix := range e.debug {
			for _, w := range ix.Warnings() {
				out = append(out, fmt.Sprintf("%s: DWARF: %s", e.debugNames[i], w))
			}
		}
	}
	return out
}

// Format formats a frame as an Apple crash report line:
//
//	0   App                           0x0000000104ccc074 -[ViewController viewDidLoad] + 20 (ViewController.m:42)
//
// An address without a symbol is shown as load address + offset, and one
// whose image or load address is unknown as "???". Inlined frames end in "[inlined]".
func (f Frame) Format(ptrSize int) string {
	width := 16
	if ptrSize == 4 {
		width = 8
	}
	img := f.Image
	if img == "" {
		img = "???"
	}
	var what string
	switch {
	case f.Symbol != "" && f.HasOffset:
		what = fmt.Sprintf("%s + %d", f.Symbol, f.SymbolOffset)
	case f.Symbol != "":
		what = f.Symbol
	case f.Image != "" && f.ImageLoadAddress != 0:
		what = fmt.Sprintf("%#x + %d", f.ImageLoadAddress, f.ImageOffset)
	default:
		what = "???"
	}
	if loc := f.SourceLocation(); loc != "" {
		what += " (" + loc + ")"
	}
	if f.Inlined {
		what += " [inlined]"
	}
	return fmt.Sprintf("%-4d%-30s 0x%0*x %s", f.Index, img, width, f.Address, what)
}

// SourceLocation returns "file:line" with the file's base name, as atos and
// crash reports print it; empty when the position is unknown.
func (f Frame) SourceLocation() string {
	if f.File == "" || f.Line == 0 {
		return ""
	}
	return fmt.Sprintf("%s:%d", path.Base(strings.ReplaceAll(f.File, "\\", "/")), f.Line)
}

// A Process answers the walker's questions about code.
var (
	_ walker.CodeChecker     = (*Process)(nil)
	_ walker.FunctionStarter = (*Process)(nil)
	_ walker.Memory          = (*Process)(nil) // Options.Instructions
)
