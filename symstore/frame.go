package symstore

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/stackimage/stackimage/debuginfo"
	"github.com/stackimage/stackimage/demangle"
	"github.com/stackimage/stackimage/internal/pathbase"
	"github.com/stackimage/stackimage/symtab"
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
	// Symbol is the function's readable name, demangled unless
	// ResolveOptions.NoDemangle says not to; empty when no symbol was
	// found.
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
	// Trust is the check the walked frame passed (walker.Trust: for a
	// scanned frame, whether the image's code, its symbols or only its
	// code range confirmed it); walker.TrustNone for a reporter's frame.
	Trust walker.Trust
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
	return fmt.Errorf("symstore: unknown found-by %q", text)
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
	return fmt.Errorf("symstore: unknown symbol source %q", text)
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
	return e.AppendResolve(nil, f, unslid, opts)
}

// AppendResolve is Resolve appending the frames to dst and returning the
// extended slice: a caller naming many addresses (atos's batches) reuses
// one slice instead of allocating one per address.
func (e *Entry) AppendResolve(dst []Frame, f Frame, unslid uint64, opts ResolveOptions) []Frame {
	sym, ok := e.Symbol(unslid)
	return e.appendResolved(dst, f, unslid, sym, ok, opts)
}

// ResolveBatch names many frames of the entry's image, as AppendResolve
// names each: for each k below len(unslid), the frame frame(k) at the
// unslid address unslid[k]. It calls add with k and the frames, innermost
// first, in a slice add may not keep (it is reused for the next k). The
// symbol tables are searched in one batch (SymbolBatch), which costs
// less than a search per address when unslid is ascending.
func (e *Entry) ResolveBatch(unslid []uint64, frame func(k int) Frame, opts ResolveOptions, add func(k int, frames []Frame)) {
	syms := make([]symtab.Symbol, len(unslid))
	found := make([]bool, len(unslid))
	e.SymbolBatch(unslid, syms, found)
	var buf []Frame
	for k, addr := range unslid {
		buf = e.appendResolved(buf[:0], frame(k), addr, syms[k], found[k], opts)
		add(k, buf)
	}
}

// appendResolved is AppendResolve with the symbol table's answer at
// unslid (sym, found) given.
func (e *Entry) appendResolved(dst []Frame, f Frame, unslid uint64, sym symtab.Symbol, found bool, opts ResolveOptions) []Frame {
	start := len(dst)
	dst = e.appendNamed(dst, f, unslid, sym, found, opts.NoDemangle)
	if last := &dst[len(dst)-1]; len(e.sym.paths) > 0 && len(dst) == start+1 &&
		(last.SymbolSource == SourceNone || last.SymbolSource == SourceFunctionStarts) {
		if bp, ok := e.resolveBreakpad(f, f.LookupAddress-f.ImageLoadAddress, opts.NoDemangle); ok {
			return append(dst[:start], bp...)
		}
	}
	return dst
}

// appendNamed names f from the Mach-O files: the symbol tables' answer at
// unslid (sym, ok) and DWARF's functions and lines there.
func (e *Entry) appendNamed(dst []Frame, f Frame, unslid uint64, sym symtab.Symbol, ok, noDemangle bool) []Frame {
	if ok {
		e.setName(&f, sym.RawName, sym.Name, noDemangle)
		// The offset is taken from the address itself, not the lookup
		// address, as Apple's reports do; both lie in the same function.
		f.SymbolOffset = f.Address - (f.LookupAddress - sym.Offset)
		f.HasOffset = true
		f.SymbolSource = SymbolSourceOf(sym.Source)
	}
	var src []debuginfo.Frame
	switch {
	case e.stored != nil && e.NoDebugInfo:
	case e.stored != nil && noDemangle:
		// The names are printed as linkage names: the index need not
		// read the demangled ones (setDebugName prints the same). The
		// frames are only read here: they stay on the stack.
		var buf [8]debuginfo.Frame
		src, _ = e.stored.AppendSourceMangled(buf[:0], unslid)
	case e.stored != nil:
		var buf [8]debuginfo.Frame
		src, _ = e.stored.AppendSource(buf[:0], unslid)
	default:
		src = e.Source(unslid)
	}
	if len(src) == 0 {
		return append(dst, f)
	}
	start := len(dst)
	frames := slices.Grow(dst, len(src))
	for _, sf := range src[:len(src)-1] {
		// Filled in place: a Frame is a few hundred bytes.
		frames = append(frames, f)
		in := &frames[len(frames)-1]
		in.HasOffset, in.SymbolOffset, in.SymbolSource = false, 0, SourceDWARF
		setDebugName(in, sf, noDemangle)
		in.Inlined = true
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
	if e.SymbolMap != nil {
		for i := start; i < len(frames); i++ {
			e.unhideFrame(&frames[i])
		}
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
		f.Lang = string(demangle.Language(raw))
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
func (e *Entry) demangle(raw string) (string, demangle.Lang) {
	lang := demangle.Language(raw)
	if lang != demangle.LangCPP && lang != demangle.LangRust && lang != demangle.LangSwift {
		return raw, lang
	}
	e.namesMu.Lock()
	readable, ok := e.demangled[raw]
	e.namesMu.Unlock()
	if ok {
		return readable, lang
	}
	if e.stored != nil {
		// An index file keeps the demangled names of its DWARF's
		// functions: finding one costs a fraction of demangling it.
		readable, _ = e.stored.Demangle(raw)
	} else {
		readable, _ = demangle.Demangle(raw)
	}
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
	return fmt.Sprintf("%s:%d", pathbase.Base(f.File), f.Line)
}
