package atos

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/stackimage/stackimage/breakpadsym"
	"github.com/stackimage/stackimage/demangle"
	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/internal/pathbase"
	"github.com/stackimage/stackimage/internal/textesc"
	"github.com/stackimage/stackimage/symstore"
)

// Kinds lists the kinds of file Open accepts, each with an example name.
var Kinds = []struct{ Name, Example string }{
	{"Mach-O binary, thin or fat", "MyApp.app/MyApp"},
	{"dSYM DWARF file or .dSYM bundle", "MyApp.app.dSYM"},
	{".app or .framework bundle (its executable)", "MyApp.app"},
	{"symindex file (stackimage index)", "STORE/UUID/arm64.symindex"},
	{"Breakpad .sym file (addresses relative to the load address)", "MyApp.sym"},
}

// ErrNeedArch is the error, wrapped, for a fat file opened without
// Options.Arch: its message names the slices to choose from.
var ErrNeedArch = errors.New("a fat file: choose a slice")

// Options say which slice to read and how to write answers.
type Options struct {
	// Arch names the slice of a fat file: arm64, arm64e, x86_64, armv7,
	// i386.
	Arch string
	// LoadAddress, when HasLoadAddress is set, is the address the binary
	// was loaded at: addresses are then taken as slid. A Breakpad file's
	// addresses are relative to it.
	LoadAddress    uint64
	HasLoadAddress bool
	// Inlines adds the functions inlined at each address, innermost
	// first, each on its own line.
	Inlines bool
	// NoDemangle prints C++, Rust and Swift names as the binary spells
	// them.
	NoDemangle bool
	// FullPath prints source files with their full path, as atos
	// -fullPath does.
	FullPath bool
	// NoDebugInfo answers from the symbol table alone, without reading
	// DWARF (faster on big binaries).
	NoDebugInfo bool
}

// An Answerer answers addresses in one image. It is not safe for
// concurrent use: it counts its answers (see printableCheckAfter) and
// reuses its buffers from one answer to the next. Goroutines take one
// each, over one shared entry (New, Example_concurrent).
type Answerer struct {
	entry       *symstore.Entry
	symbolsOnly bool   // the entry has no debug info: answers come from its symbols
	inImage     string // " (in IMAGE)", escaped once for every answer
	// printableNames is set once the entry's symbol names are known to
	// need no escaping (see printableCheckAfter).
	printableNames bool
	answers        int // addresses answered so far
	frames         []symstore.Frame
	slide          uint64
	opts           Options
	// lastFile is the source file of the last frame printed with one,
	// and lastFileText how it was printed: frames in a row nearly always
	// share a file, whose base name and escaping are then not redone.
	lastFile     string
	lastFileText []byte
}

// Open opens path as atos -o does, a bundle's binary for a bundle, and
// returns an Answerer for it; Close it when done. Nothing is opened once
// ctx has ended: the error is then ctx's.
func Open(ctx context.Context, path string, opts Options) (*Answerer, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	file, err := image.BundleFile(path)
	if err != nil {
		return nil, err
	}
	entry, im, err := openEntry(ctx, file, opts.Arch)
	if err != nil {
		return nil, err
	}
	entry.NoDebugInfo = opts.NoDebugInfo
	// atos names the image after the file it read: the executable of an
	// app bundle, the DWARF file of a dSYM (App.app.dSYM -> App).
	name := filepath.Base(file)
	switch {
	case im == nil:
		// A Breakpad .sym file: the module its MODULE line names.
		name = breakpadModuleName(file, name)
	case im.Name != "" && symstore.IsIndexFile(file):
		// An index file is named after its architecture; it keeps the
		// name of the file it was made from.
		name = filepath.Base(filepath.ToSlash(im.Name))
	}
	return New(entry, im, name, opts), nil
}

// New returns an Answerer for an entry already open, whose image (nil for
// a Breakpad file) gives the slide from Options.LoadAddress, naming the
// image name in answers. Close releases the entry.
func New(entry *symstore.Entry, im *image.Image, name string, opts Options) *Answerer {
	a := &Answerer{entry: entry, symbolsOnly: im != nil && !entry.HasDebugInfo(), inImage: inImage(name), opts: opts}
	if opts.HasLoadAddress && im != nil {
		a.slide = im.Slide(opts.LoadAddress)
	}
	return a
}

// Warnings says what of the file could not be used (damaged symbol table
// parts, DWARF), as atos warns once the answers are out.
func (a *Answerer) Warnings() []string { return a.entry.Warnings() }

// Close releases the entry.
func (a *Answerer) Close() error {
	a.entry.Release()
	return nil
}

// printableCheckAfter is how many answers an Answerer gives before it
// checks all of the entry's symbol names for bytes to escape, once, rather
// than each answer's name: measured with cachegrind, the check of cmd/go's
// 760 KB string table costs what about 23,000 answers' own checks do, so
// only a large batch gains from it.
const printableCheckAfter = 16384

// AppendAnswer appends the lines for one address to buf, as atos prints
// them: "main (in App) + 16", or "main (in App) (main.c:28)" with debug
// info, or the address itself when nothing covers it. With inlines, the
// inlined functions come first, each on its own line.
func (a *Answerer) AppendAnswer(buf []byte, addr uint64) []byte {
	a.answers++
	if a.answers == printableCheckAfter && a.symbolsOnly {
		a.printableNames = a.entry.SymbolNamesPrintable()
	}
	if a.symbolsOnly {
		// Without DWARF only the symbol table can answer: skip building
		// frames.
		if sym, ok := a.entry.Symbol(addr - a.slide); ok && (a.opts.NoDemangle || !demangle.MayBeMangled(sym.RawName)) {
			if a.printableNames {
				buf = append(append(buf, sym.Name...), a.inImage...)
			} else {
				buf = a.appendName(buf, sym.Name)
			}
			buf = append(buf, " + "...)
			buf = appendDecimal(buf, sym.Offset)
			return append(buf, '\n')
		}
	}
	f := symstore.Frame{Address: addr, LookupAddress: addr}
	if a.opts.HasLoadAddress {
		f.ImageLoadAddress = a.opts.LoadAddress
	}
	frames := a.entry.AppendResolve(a.frames[:0], f, addr-a.slide, symstore.ResolveOptions{NoDemangle: a.opts.NoDemangle})
	a.frames = frames // reused by the next answer
	if !a.opts.Inlines {
		frames = frames[len(frames)-1:]
	}
	for _, f := range frames {
		buf = a.appendFrame(buf, f, addr)
	}
	return buf
}

// appendFrame appends one frame's line: "name (in Image) (file:line)" when
// the source file is known, even at line 0 ("(File.swift:0)", as atos
// prints Swift's thunks and compiler-generated code), else "name (in
// Image) + offset", else the address.
func (a *Answerer) appendFrame(buf []byte, f symstore.Frame, addr uint64) []byte {
	switch {
	case f.Symbol == "":
		buf = append(buf, "0x"...)
		buf = strconv.AppendUint(buf, addr, 16)
	case f.File != "":
		buf = a.appendName(buf, f.Symbol)
		buf = append(buf, " ("...)
		if f.File != a.lastFile || a.lastFileText == nil {
			file := f.File
			if !a.opts.FullPath {
				file = pathbase.Base(file)
			}
			a.lastFile, a.lastFileText = f.File, textesc.Append(a.lastFileText[:0], file)
		}
		buf = append(buf, a.lastFileText...)
		buf = append(buf, ':')
		if f.Line >= 0 {
			buf = appendDecimal(buf, uint64(f.Line))
		} else {
			buf = strconv.AppendInt(buf, int64(f.Line), 10)
		}
		buf = append(buf, ')')
	case f.HasOffset:
		buf = a.appendName(buf, f.Symbol)
		buf = append(buf, " + "...)
		buf = appendDecimal(buf, f.SymbolOffset)
	default:
		buf = a.appendName(buf, f.Symbol)
	}
	return append(buf, '\n')
}

// appendDecimal appends v in decimal, as strconv.AppendUint does, with a
// fast path for the offsets into functions atos prints: nearly all below
// 10,000.
func appendDecimal(buf []byte, v uint64) []byte {
	if v >= 10000 {
		return strconv.AppendUint(buf, v, 10)
	}
	hi, lo := 2*(v/100), 2*(v%100)
	switch {
	case v >= 1000:
		return append(buf, decimalPairs[hi], decimalPairs[hi+1], decimalPairs[lo], decimalPairs[lo+1])
	case v >= 100:
		return append(buf, decimalPairs[hi+1], decimalPairs[lo], decimalPairs[lo+1])
	case v >= 10:
		return append(buf, decimalPairs[lo], decimalPairs[lo+1])
	}
	return append(buf, byte('0'+v))
}

// decimalPairs holds "00" to "99".
const decimalPairs = "00010203040506070809" +
	"10111213141516171819" +
	"20212223242526272829" +
	"30313233343536373839" +
	"40414243444546474849" +
	"50515253545556575859" +
	"60616263646566676869" +
	"70717273747576777879" +
	"80818283848586878889" +
	"90919293949596979899"

// inImage returns " (in IMAGE)" for the image's name, escaped: it comes
// from a path.
func inImage(name string) string {
	return string(textesc.Append([]byte(" (in "), name)) + ")"
}

// appendName appends "name (in image)", both escaped: they come from the
// file and its path.
func (a *Answerer) appendName(buf []byte, name string) []byte {
	buf = textesc.Append(buf, name)
	return append(buf, a.inImage...)
}

// openEntry opens a symindex file, a Breakpad .sym file, or a Mach-O
// file's slice, as the entry to answer from; the image is nil for a .sym
// file, which has none. Release the entry when done.
func openEntry(ctx context.Context, path, arch string) (*symstore.Entry, *image.Image, error) {
	if isBreakpadFile(path) {
		return openBreakpadEntry(ctx, path)
	}
	if symstore.IsIndexFile(path) {
		e, err := symstore.NewIndexEntry(path)
		if err != nil {
			return nil, nil, err
		}
		return e, e.Image(), nil
	}
	im, err := openSlice(path, arch)
	if err != nil {
		return nil, nil, err
	}
	e, err := symstore.NewEntry(im)
	return e, im, err
}

// openSlice opens a Mach-O file and picks the slice: the only one of a thin
// file, or the named one of a fat file.
func openSlice(path, arch string) (*image.Image, error) {
	f, err := image.Open(path)
	if err != nil {
		return nil, err
	}
	if arch != "" {
		return f.ByArch(arch)
	}
	if len(f.Images) == 1 {
		return f.Images[0], nil
	}
	var names []string
	for _, im := range f.Images {
		names = append(names, im.ArchName())
	}
	return nil, fmt.Errorf("%s has slices %s: %w", path, strings.Join(names, ", "), ErrNeedArch)
}

// ParseAddress reads an address in hex, with or without 0x, as atos does.
func ParseAddress(s string) (uint64, error) {
	t := strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	v, err := strconv.ParseUint(t, 16, 64)
	if err != nil {
		return 0, fmt.Errorf("bad address %q: want hex such as 0x100003f60", s)
	}
	return v, nil
}

// isBreakpadFile reports whether path is a Breakpad symbol file: its first
// line is a MODULE record.
func isBreakpadFile(path string) bool {
	if image.CheckRegular(path) != nil {
		return false // a FIFO is not opened: image.Open says what it is
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	_, err = breakpadsym.ReadModuleLine(f)
	return err == nil
}

// breakpadModuleName returns the module name of a Breakpad file's MODULE
// line, or fallback.
func breakpadModuleName(path, fallback string) string {
	f, err := os.Open(path)
	if err != nil {
		return fallback
	}
	defer f.Close()
	m, err := breakpadsym.ReadModuleLine(f)
	if err != nil || m.Name == "" {
		return fallback
	}
	return m.Name
}

// openBreakpadEntry opens a Breakpad .sym file as symbolicate --symbols
// does: indexed by the UUID of its MODULE line.
func openBreakpadEntry(ctx context.Context, path string) (*symstore.Entry, *image.Image, error) {
	syms := symstore.NewSymbols()
	defer syms.Close() // the entry holds its own reference
	if err := syms.AddFile(ctx, path); err != nil {
		return nil, nil, err
	}
	uuids := syms.UUIDs()
	if len(uuids) != 1 {
		return nil, nil, fmt.Errorf("%s: not a Breakpad symbol file of a Mach-O module: %s", path, strings.Join(syms.Skipped, "; "))
	}
	e, err := syms.Lookup(uuids[0])
	if err != nil {
		return nil, nil, err
	}
	if e == nil {
		return nil, nil, fmt.Errorf("%s: no symbols could be read", path)
	}
	return e, nil, nil
}
