package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/stackimage/stackimage/breakpadsym"
	"github.com/stackimage/stackimage/debuginfo"
	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/internal/textesc"
	"github.com/stackimage/stackimage/symstore"
)

func runAtos(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("atos", "atos -o BINARY [-arch ARCH] [-l LOADADDR] [ADDR...]", stderr)
	binary := fs.String("o", "", "the binary, dSYM DWARF file, or .app or .dSYM bundle to look addresses up in")
	arch := fs.String("arch", "", "the slice of a fat binary: arm64, arm64e, x86_64, armv7, i386")
	loadAddr := fs.String("l", "", "the address the binary was loaded at (hex); addresses are then taken as slid")
	inlines := fs.Bool("i", false, "print the functions inlined at each address too, innermost first")
	noDemangle := fs.Bool("no-demangle", false, "print C++ and Rust names as the binary spells them")
	fullPath := fs.Bool("fullPath", false, "print source files with their full path, as atos -fullPath does")
	noDebug := fs.Bool("no-debug-info", false, "answer from the symbol table alone, without reading DWARF (faster on big binaries)")
	addrs, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if *binary == "" {
		return fmt.Errorf("%w: -o BINARY is required", errUsage)
	}
	file, err := image.BundleFile(*binary)
	if err != nil {
		return err
	}
	entry, im, err := openAtosEntry(file, *arch)
	if err != nil {
		return err
	}
	defer entry.Release()
	entry.NoDebugInfo = *noDebug
	// What of the file could not be used (damaged symbol table parts,
	// DWARF) is said on stderr once the answers are out, as atos warns.
	defer func() {
		for _, w := range entry.Warnings() {
			writeLine(stderr, "stackimage atos: warning: %s", w)
		}
	}()
	var slide, load uint64
	if *loadAddr != "" {
		if load, err = parseAddress(*loadAddr); err != nil {
			return fmt.Errorf("%w: -l: %v", errUsage, err)
		}
		if im != nil {
			slide = im.Slide(load)
		}
	}
	// atos names the image after the file it read: the executable of an
	// app bundle, the DWARF file of a dSYM (App.app.dSYM -> App).
	name := filepath.Base(file)
	switch {
	case im == nil:
		// A Breakpad .sym file: the module its MODULE line names. Its
		// addresses are relative to the module's base, which -l gives.
		name = breakpadModuleName(file, name)
	case im.Name != "" && symstore.IsIndexFile(file):
		// An index file is named after its architecture; it keeps the
		// name of the file it was made from.
		name = filepath.Base(filepath.ToSlash(im.Name))
	}
	a := &atos{entry: entry, symbolsOnly: im != nil && !entry.HasDebugInfo(), inImage: inImage(name), slide: slide, base: load,
		inlines: *inlines, noDemangle: *noDemangle, fullPath: *fullPath}
	out := &batchWriter{w: stdout}
	defer out.Flush()
	// A token that is not an address is echoed on its own line and the
	// batch goes on, as llvm-symbolizer echoes input it cannot parse; like
	// llvm-symbolizer (16), the exit status stays 0.
	answer := func(text []byte) error {
		if addr, ok := parseHex(text); ok {
			out.buf = a.appendAnswer(out.buf, addr)
		} else {
			out.buf = append(textesc.Append(out.buf, string(text)), '\n')
		}
		return out.flushIfFull()
	}
	if len(addrs) > 0 {
		for _, text := range addrs {
			if err := answer([]byte(text)); err != nil {
				return err
			}
		}
		return out.Flush()
	}
	// Like atos, read whitespace-separated addresses from stdin. Answers are
	// flushed whenever reading may block, so a pipe can be used
	// interactively without paying a write per address. A batch through
	// pipes goes in fewer, larger pieces once they are enlarged.
	enlargePipe(stdin)
	enlargePipe(stdout)
	sc := bufio.NewScanner(flushingReader{stdin, out})
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	sc.Split(scanWords)
	for sc.Scan() {
		if err := answer(sc.Bytes()); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	return out.Flush()
}

// batchWriter collects answers in one buffer, which each answer is
// appended to in place, and writes it out when it is full or before a read
// that may block: one write per batchSize bytes of answers.
type batchWriter struct {
	w   io.Writer
	buf []byte
	err error // the first write's error; later writes are not tried
}

// batchSize is how many bytes of answers batchWriter writes at once.
const batchSize = 64 << 10

// flushIfFull writes the buffer once it holds batchSize bytes.
func (b *batchWriter) flushIfFull() error {
	if len(b.buf) < batchSize {
		return b.err
	}
	return b.Flush()
}

// Flush writes what the buffer holds.
func (b *batchWriter) Flush() error {
	if b.err == nil && len(b.buf) > 0 {
		_, b.err = b.w.Write(b.buf)
	}
	b.buf = b.buf[:0]
	return b.err
}

// scanWords is bufio.ScanWords with a fast path for ASCII: addresses are
// ASCII, and ScanWords decodes every byte as a rune. Input with other bytes
// is left to ScanWords, which also splits at Unicode spaces.
func scanWords(data []byte, atEOF bool) (int, []byte, error) {
	start := 0
	for start < len(data) && isASCIISpace(data[start]) {
		start++
	}
	i := start
	for i+8 <= len(data) {
		if m := notWordBytes8(binary.LittleEndian.Uint64(data[i:])); m != 0 {
			// The lowest flagged byte is the first not certainly of
			// the word: the byte loop decides from there.
			i += bits.TrailingZeros64(m) / 8
			break
		}
		i += 8
	}
	for ; i < len(data); i++ {
		switch c := data[i]; {
		case c >= 0x80:
			return bufio.ScanWords(data, atEOF)
		case isASCIISpace(c):
			return i + 1, data[start:i], nil
		}
	}
	if atEOF && len(data) > start {
		return len(data), data[start:], nil
	}
	return start, nil, nil
}

// notWordBytes8 returns 0 when all 8 bytes of w are in 0x21-0x7e: ASCII,
// and neither a space nor another control byte, so certainly part of a
// word; otherwise what outsideASCII8 returns.
func notWordBytes8(w uint64) uint64 { return textesc.OutsideASCII8(w, 0x21) }

// isASCIISpace reports whether c is one of the ASCII bytes
// unicode.IsSpace accepts.
func isASCIISpace(c byte) bool {
	return c == ' ' || c >= '\t' && c <= '\r'
}

// atos answers addresses in one image, appending each answer to the
// batch's output buffer: on big batches formatting, not lookup, would
// otherwise dominate.
type atos struct {
	entry       *symstore.Entry
	symbolsOnly bool   // the entry has no debug info: answers come from its symbols
	inImage     string // " (in IMAGE)", escaped once for every answer
	// printableNames is set once the entry's symbol names are known to
	// need no escaping (see printableCheckAfter).
	printableNames bool
	answers        int // addresses answered so far
	slide          uint64
	// base is the load address -l gave: a Breakpad file's addresses are
	// relative to it.
	base                uint64
	inlines, noDemangle bool
	fullPath            bool
}

// printableCheckAfter is how many answers atos gives before it checks all
// of the entry's symbol names for bytes to escape, once, rather than each
// answer's name: measured with cachegrind, the check of cmd/go's 760 KB
// string table costs what about 23,000 answers' own checks do, so only a
// large batch gains from it.
const printableCheckAfter = 16384

// appendAnswer appends the lines for one address to buf, as atos prints
// them: "main (in App) + 16", or "main (in App) (main.c:28)" with debug
// info, or the address itself when nothing covers it. With inlines, the
// inlined functions come first, each on its own line.
func (a *atos) appendAnswer(buf []byte, addr uint64) []byte {
	a.answers++
	if a.answers == printableCheckAfter && a.symbolsOnly {
		a.printableNames = a.entry.SymbolNamesPrintable()
	}
	if a.symbolsOnly {
		// Without DWARF only the symbol table can answer: skip building
		// frames.
		if sym, ok := a.entry.Symbol(addr - a.slide); ok && (a.noDemangle || !debuginfo.MayBeMangled(sym.RawName)) {
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
	f := symstore.Frame{Address: addr, LookupAddress: addr, ImageLoadAddress: a.base}
	frames := a.entry.Resolve(f, addr-a.slide, symstore.ResolveOptions{NoDemangle: a.noDemangle})
	if !a.inlines {
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
func (a *atos) appendFrame(buf []byte, f symstore.Frame, addr uint64) []byte {
	switch {
	case f.Symbol == "":
		buf = append(buf, "0x"...)
		buf = strconv.AppendUint(buf, addr, 16)
	case f.File != "":
		buf = a.appendName(buf, f.Symbol)
		buf = append(buf, " ("...)
		file := f.File
		if !a.fullPath {
			file = path.Base(strings.ReplaceAll(file, "\\", "/"))
		}
		buf = textesc.Append(buf, file)
		buf = append(buf, ':')
		buf = strconv.AppendInt(buf, int64(f.Line), 10)
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
func (a *atos) appendName(buf []byte, name string) []byte {
	buf = textesc.Append(buf, name)
	return append(buf, a.inImage...)
}

// openAtosEntry opens a symindex file, a Breakpad .sym file, or a Mach-O
// file's slice, as the entry atos answers from; the image is nil for a
// .sym file, which has none. Release the entry when done.
func openAtosEntry(path, arch string) (*symstore.Entry, *image.Image, error) {
	if isBreakpadFile(path) {
		return openBreakpadEntry(path)
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
		names = append(names, archName(im))
	}
	return nil, fmt.Errorf("%w: %s is a fat file with slices %s: choose one with -arch",
		errUsage, path, strings.Join(names, ", "))
}

func archName(im *image.Image) string {
	if im.Arch != nil {
		return im.Arch.Name
	}
	return fmt.Sprintf("cputype %d subtype %d", im.CPUType, im.CPUSubtype)
}

// parseHex reads a hex address, with or without 0x, without allocating.
func parseHex(b []byte) (uint64, bool) {
	if len(b) > 2 && b[0] == '0' && (b[1] == 'x' || b[1] == 'X') {
		b = b[2:]
	}
	if len(b) == 0 || len(b) > 16 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		d := hexDigits[c]
		if d == notHex {
			return 0, false
		}
		v = v<<4 | uint64(d)
	}
	return v, true
}

// hexDigits maps a byte to its value as a hex digit, or notHex.
var hexDigits = func() (t [256]byte) {
	for i := range t {
		t[i] = notHex
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = byte(c - '0')
	}
	for c := 'a'; c <= 'f'; c++ {
		t[c] = byte(c - 'a' + 10)
		t[c-'a'+'A'] = byte(c - 'a' + 10)
	}
	return t
}()

const notHex = 0xff

// parseAddress reads an address in hex, with or without 0x, as atos does.
func parseAddress(s string) (uint64, error) {
	t := strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	v, err := strconv.ParseUint(t, 16, 64)
	if err != nil {
		return 0, fmt.Errorf("bad address %q: want hex such as 0x100003f60", s)
	}
	return v, nil
}

// flushingReader flushes w before every read of r, that is whenever the
// scanner's buffer is exhausted and the next read may block.
type flushingReader struct {
	r io.Reader
	w interface{ Flush() error }
}

func (f flushingReader) Read(p []byte) (int, error) {
	if err := f.w.Flush(); err != nil {
		return 0, err
	}
	return f.r.Read(p)
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
func openBreakpadEntry(path string) (*symstore.Entry, *image.Image, error) {
	syms := symstore.NewSymbols()
	defer syms.Close() // the entry holds its own reference
	if err := syms.AddFile(path); err != nil {
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
