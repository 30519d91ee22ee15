package symbolize

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/debuginfo"
	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/symtab"
	"github.com/stackimage/stackimage/uuid"
	"github.com/stackimage/stackimage/walker"
)

// Frame is one symbolicated frame. A machine frame whose code was inlined
// is preceded by one Frame per inlined function, innermost first, with the
// same Index and addresses and Inlined set. A Frame is a plain value, safe
// to copy and share; it does not refer to the symbol files.
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
	// SymbolSource says which data named the symbol; SourceNone when no
	// symbol was found.
	SymbolSource SymbolSource
	// File, Line and Column give the source position from DWARF; File is
	// empty when unknown.
	File         string
	Line, Column int
	Inlined      bool
	// FoundBy says how the frame was found: by which of the walker's
	// strategies, or taken from a reporter's backtrace (FoundByReport).
	FoundBy FoundBy
}

// FoundBy says how a frame was found. Its values are the walker's
// strategies, converted (FoundBy(walker.FoundByFramePointer)), and
// FoundByReport for a frame a crash reporter recorded: the walker knows
// nothing of reporters, so that value lives here, outside walker's range.
// String gives the walker's names and "report"; it is also the text form
// (encoding.TextMarshaler), so JSON shows the same strings. A FoundBy is a
// plain value, safe to share.
type FoundBy walker.FoundBy

// FoundByReport marks a frame taken from a reporter's backtrace.
const FoundByReport FoundBy = -1

// Walker returns the walker's strategy, and false for FoundByReport.
func (f FoundBy) Walker() (walker.FoundBy, bool) {
	if f == FoundByReport {
		return 0, false
	}
	return walker.FoundBy(f), true
}

// String returns "report" for FoundByReport, else the walker's name of the
// strategy ("context", "link register", "frame pointer", ...).
func (f FoundBy) String() string {
	if w, ok := f.Walker(); ok {
		return w.String()
	}
	return "report"
}

// MarshalText returns String's text.
func (f FoundBy) MarshalText() ([]byte, error) { return []byte(f.String()), nil }

// UnmarshalText reads what MarshalText writes.
func (f *FoundBy) UnmarshalText(text []byte) error {
	if string(text) == "report" {
		*f = FoundByReport
		return nil
	}
	// walker names its strategies from 0 up, and unknown values
	// "FoundBy(n)".
	for w := walker.FoundBy(0); !strings.HasPrefix(w.String(), "FoundBy("); w++ {
		if w.String() == string(text) {
			*f = FoundBy(w)
			return nil
		}
	}
	return fmt.Errorf("symbolize: unknown found-by %q", text)
}

// SymbolSource says which data named a frame's symbol. Its String is the
// name the command prints ("symtab", "dwarf", ...), and its text form.
// A SymbolSource is a plain value, safe to share.
type SymbolSource int

const (
	SourceNone           SymbolSource = iota // no symbol was found
	SourceSymtab                             // LC_SYMTAB (symtab.SourceSymtab)
	SourceExports                            // the export trie (symtab.SourceExports)
	SourceFunctionStarts                     // LC_FUNCTION_STARTS: a synthetic name (symtab.SourceFunctionStarts)
	SourceDWARF                              // DWARF debug info
	SourceReport                             // the crash reporter's own symbol
	SourceBreakpad                           // a Breakpad .sym file
)

var symbolSourceNames = [...]string{
	SourceNone:           "",
	SourceSymtab:         "symtab",
	SourceExports:        "exports",
	SourceFunctionStarts: "function-starts",
	SourceDWARF:          "dwarf",
	SourceReport:         "report",
	SourceBreakpad:       "breakpad",
}

// SymbolSourceOf returns the SymbolSource of a symbol table's answer.
func SymbolSourceOf(s symtab.Source) SymbolSource {
	switch s {
	case symtab.SourceSymtab:
		return SourceSymtab
	case symtab.SourceExports:
		return SourceExports
	case symtab.SourceFunctionStarts:
		return SourceFunctionStarts
	}
	return SourceNone
}

// String returns "symtab", "exports", "function-starts" (as symtab.Source
// names them), "dwarf", "report" or "breakpad"; "" for SourceNone.
func (s SymbolSource) String() string {
	if s >= 0 && int(s) < len(symbolSourceNames) {
		return symbolSourceNames[s]
	}
	return "SymbolSource(" + strconv.Itoa(int(s)) + ")"
}

// MarshalText returns String's text.
func (s SymbolSource) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads what MarshalText writes.
func (s *SymbolSource) UnmarshalText(text []byte) error {
	for i, name := range symbolSourceNames {
		if name == string(text) {
			*s = SymbolSource(i)
			return nil
		}
	}
	return fmt.Errorf("symbolize: unknown symbol source %q", text)
}

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
	Symbols *Symbols
	// MaxDepth bounds each walk; zero means the walker's default.
	MaxDepth int
	// MaxTotalFrames bounds the frames of one report, all threads
	// together; zero means DefaultMaxTotalFrames. At the bound, threads
	// are cut with StopReason StopMaxTotalFrames and the report says so
	// in a warning (see SymbolicateEach).
	MaxTotalFrames int
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
	entries        map[*image.Loaded]*Entry
	// held lists the entries taken from Symbols, one per Lookup, for Close
	// to release.
	held     []*Entry
	heldMu   sync.Mutex
	imageEnd uint64
	Missing  []MissingImage
	// named caches Frames' answers by address: a dump names the same
	// return addresses over and over (threads parked in the same calls).
	namedMu sync.Mutex
	named   map[namedKey][]Frame
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
	p := &Process{Arch: arch, entries: map[*image.Loaded]*Entry{}, NoDemangle: z.NoDemangle,
		NoUnwindInfo: z.NoUnwindInfo, Async: z.Async, ExactAddresses: z.ExactAddresses}
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
	return p, nil
}

// entryFor finds the symbols of a loaded image: the image the caller
// attached, else the files with its UUID, else, for an image without a
// UUID, the files without one that have its name. fromSymbols says the
// entry came from Symbols and holds a reference to release.
func (z *Symbolizer) entryFor(arch *archregs.Arch, l *image.Loaded) (e *Entry, fromSymbols bool, err error) {
	switch {
	case l.Image != nil:
		e, err = NewEntry(l.Image)
		return e, false, err
	case z.Symbols == nil:
		return nil, false, nil
	case !l.UUID.IsZero():
		// No entry is a missing image, not a failure: Warnings says why
		// files could not be read.
		e, _ = z.Symbols.Lookup(l.UUID)
		return e, true, nil
	case l.Name != "":
		e, _ = z.Symbols.LookupNoUUID(l.Name, arch)
		return e, true, nil
	}
	return nil, false, nil
}

// Close releases the process's hold on the entries it took from Symbols
// (see Symbols.Close). The process must not be used afterwards. Calling
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
func (p *Process) Frames(index int, addr, lookup uint64, foundBy FoundBy) []Frame {
	return p.appendFrames(nil, index, addr, lookup, foundBy)
}

// appendFrames appends Frames' answer to dst.
func (p *Process) appendFrames(dst []Frame, index int, addr, lookup uint64, foundBy FoundBy) []Frame {
	key := namedKey{addr, lookup}
	p.namedMu.Lock()
	cached, ok := p.named[key]
	p.namedMu.Unlock()
	if !ok {
		cached = p.name(addr, lookup)
		p.namedMu.Lock()
		if p.named == nil || len(p.named) >= maxNamed {
			p.named = map[namedKey][]Frame{}
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
func (p *Process) name(addr, lookup uint64) []Frame {
	f := Frame{Address: addr, LookupAddress: lookup}
	loc, err := p.List.Lookup(lookup)
	if err != nil {
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
	return e.Resolve(f, loc.Unslid, ResolveOptions{NoDemangle: p.NoDemangle})
}

// ResolveOptions says how Entry.Resolve names a frame.
type ResolveOptions struct {
	// NoDemangle keeps names as the symbol files spell them (atos
	// -noDemangle).
	NoDemangle bool
}

// Resolve names a frame whose address lies in the entry's image at the
// unslid address: it returns the frame, preceded by the functions inlined
// at that point. f carries the addresses and image placement already. An
// address no symbol covers comes back as f, unnamed.
//
// When the Mach-O files find nothing there, or only a synthetic
// function-start name and no DWARF, the entry's Breakpad .sym file answers
// at the module-relative address f.LookupAddress − f.ImageLoadAddress.
func (e *Entry) Resolve(f Frame, unslid uint64, opts ResolveOptions) []Frame {
	noDemangle := opts.NoDemangle
	frames := e.resolveMachO(f, unslid, noDemangle)
	if last := frames[len(frames)-1]; len(e.sym.paths) > 0 && len(frames) == 1 &&
		(last.SymbolSource == SourceNone || last.SymbolSource == SourceFunctionStarts) {
		if bp, ok := e.resolveBreakpad(f, f.LookupAddress-f.ImageLoadAddress, noDemangle); ok {
			return bp
		}
	}
	return frames
}

// resolveMachO is Resolve from the Mach-O files' symbol tables and DWARF.
func (e *Entry) resolveMachO(f Frame, unslid uint64, noDemangle bool) []Frame {
	if sym, ok := e.Symbol(unslid); ok {
		e.setName(&f, sym.RawName, sym.Name, noDemangle)
		// The offset is taken from the address itself, not the lookup
		// address, as Apple's reports do; both lie in the same function.
		f.SymbolOffset = f.Address - (f.LookupAddress - sym.Offset)
		f.HasOffset = true
		f.SymbolSource = SymbolSourceOf(sym.Source)
	}
	src := e.Source(unslid)
	if len(src) == 0 {
		return []Frame{f}
	}
	frames := make([]Frame, 0, len(src))
	for _, sf := range src[:len(src)-1] {
		in := f
		in.HasOffset, in.SymbolOffset, in.SymbolSource = false, 0, SourceDWARF
		setDebugName(&in, sf, noDemangle)
		in.Inlined = true
		frames = append(frames, in)
	}
	outer := src[len(src)-1]
	if outer.Function != "" && (f.Symbol == "" || f.SymbolSource != SourceSymtab ||
		isHiddenName(f.Symbol) && !isHiddenName(outer.Function)) {
		// DWARF knows the function where the symbol table only had an
		// export, a bare function start or a bitcode-hidden name.
		setDebugName(&f, outer, noDemangle)
		f.SymbolSource = SourceDWARF
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
	loc, err := p.List.Lookup(addr)
	if err != nil {
		return 0, false
	}
	e := p.entries[loc.Loaded]
	if e == nil {
		return 0, false
	}
	sym, ok := e.Symbol(loc.Unslid)
	if !ok {
		if bf := e.breakpad(); bf != nil && len(e.Images) == 0 {
			// Only a .sym file: its addresses count from the load address.
			if start, ok := bf.FunctionStart(loc.Offset); ok {
				return loc.Loaded.LoadAddress + start, true
			}
		}
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
		frames = p.appendFrames(frames, wf.Index, wf.ReturnAddress, lookup, FoundBy(wf.FoundBy))
	}
	return frames, res
}

// Warnings returns what the symbol files used so far could not give: DWARF
// that could not be indexed, or only in part, and unwind tables left out
// because a truncated file ends before them. An entry whose DWARF another
// goroutine is still indexing has nothing to say yet.
func (p *Process) Warnings() []string {
	var out []string
	seen := map[*Entry]bool{}
	for _, l := range p.List.Images() {
		e := p.entries[l]
		if e == nil || seen[e] {
			continue
		}
		seen[e] = true
		out = append(out, e.unwindWarnings()...)
		out = append(out, e.debugWarnings()...)
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
