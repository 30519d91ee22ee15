package breakpadsym

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/stackimage/stackimage/internal/hexnum"
)

// FormatError describes a malformed record: the 1-based line it is on,
// the byte offset where that line starts, the record kind and what is
// wrong. Line is 0 for a problem found after reading, across records.
type FormatError struct {
	Line   int
	Offset int64
	Record string // "MODULE", "FUNC", "line", "STACK CFI", ...
	Msg    string
}

func (e *FormatError) Error() string {
	if e.Line == 0 {
		return fmt.Sprintf("breakpadsym: %s records: %s", e.Record, e.Msg)
	}
	return fmt.Sprintf("breakpadsym: line %d (byte %d): %s record: %s", e.Line, e.Offset, e.Record, e.Msg)
}

// Func is a FUNC record with the line and INLINE records that follow it.
// Addresses are module-relative (see the package documentation).
type Func struct {
	Address   uint64
	Size      uint64
	ParamSize uint64
	Multiple  bool // the "m" flag: identical code folding gave it several names
	Name      string
	Lines     []Line   // sorted by Address; read-only
	Inlines   []Inline // one per address range, sorted by Depth then Address; read-only
}

// Line is a line record: Size bytes from Address come from Line of the
// source file numbered File.
type Line struct {
	Address uint64
	Size    uint32
	Line    uint32
	File    uint32
}

// Inline is one address range of an INLINE record: code inlined at nesting
// Depth (0: directly into the FUNC), whose call site is CallLine of file
// CallFile in the enclosing function, and whose function is the
// INLINE_ORIGIN numbered Origin.
type Inline struct {
	Depth    uint32
	CallLine uint32
	CallFile uint32
	Origin   uint32
	Address  uint64
	Size     uint64
}

// Public is a PUBLIC record: a linker symbol without a size, taken to
// extend to the next FUNC or PUBLIC.
type Public struct {
	Address   uint64
	ParamSize uint64
	Multiple  bool
	Name      string
}

// named is a FILE or INLINE_ORIGIN record.
type named struct {
	id   uint32
	name string
}

// cfiInit is a STACK CFI INIT record and the STACK CFI records that follow
// it, whose addresses increase and lie inside [Address, Address+Size).
type cfiInit struct {
	address, size uint64
	rules         string
	deltas        []cfiDelta
}

type cfiDelta struct {
	address uint64
	rules   string
}

// Stats counts what a File holds.
type Stats struct {
	Files, InlineOrigins, Funcs, Lines, Inlines, Publics int
	CFIInits, CFIDeltas, StackWin                        int
	Skipped                                              int // malformed records skipped, with or without a stored warning
}

// File is a parsed Breakpad symbol file. Its methods are safe for
// concurrent use: nothing changes it after Parse returns.
type File struct {
	Module Module
	// Warnings describe skipped records, the first 1000 of them;
	// Stats().Skipped counts all.
	Warnings []*FormatError

	files, origins []named  // sorted by id
	funcs          []Func   // sorted by Address, not overlapping
	funcAddrs      []uint64 // funcs[i].Address: the binary search touches only these
	publics        []Public
	cfi            []cfiInit // sorted by address, not overlapping
	stats          Stats
}

// maxWarnings bounds the warnings a File keeps.
const maxWarnings = 1000

// Limits on single values, beyond which a record is rejected as absurd.
const (
	maxInlineDepth = 1024    // deeper INLINE nesting than any compiler emits
	maxLineSize    = 1 << 32 // a line record's size must fit in 32 bits
)

// Stats returns counts of the records the file holds.
func (f *File) Stats() Stats { return f.stats }

// Funcs returns the FUNC records sorted by address. The slice is a copy;
// the Lines and Inlines it points to are shared and must not be modified.
func (f *File) Funcs() []Func { return slices.Clone(f.funcs) }

// Publics returns the PUBLIC records sorted by address (a copy).
func (f *File) Publics() []Public { return slices.Clone(f.publics) }

// FileName returns the name of the FILE record numbered id.
func (f *File) FileName(id uint32) (string, bool) { return findNamed(f.files, id) }

// InlineOrigin returns the name of the INLINE_ORIGIN record numbered id.
func (f *File) InlineOrigin(id uint32) (string, bool) { return findNamed(f.origins, id) }

func findNamed(list []named, id uint32) (string, bool) {
	// The ids are usually 0..n-1 in order: try the direct index first.
	if uint64(id) < uint64(len(list)) && list[id].id == id {
		return list[id].name, true
	}
	i, ok := slices.BinarySearchFunc(list, id, func(n named, id uint32) int { return cmp.Compare(n.id, id) })
	if !ok {
		return "", false
	}
	return list[i].name, true
}

// ParseReader reads a whole symbol file from r and parses it (see Parse).
func ParseReader(r io.Reader) (*File, error) {
	if r == nil {
		return nil, errors.New("breakpadsym: nil reader")
	}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	return Parse(data)
}

// Parse parses a Breakpad text symbol file. A malformed record is skipped
// with a warning (File.Warnings) and the rest of the file is still read.
// Parse always returns a File; the error is a *FormatError when the first
// line is not a valid MODULE record, and the File then holds every other
// record that could be read.
//
// The strings the File holds share one copy of data; data is not retained.
func Parse(data []byte) (*File, error) {
	p := parser{f: &File{}, src: string(data), curFunc: -1, curCFI: -1}
	p.presize()
	err := p.run()
	p.finish()
	if len(data) == 0 {
		err = &FormatError{Line: 1, Record: "MODULE", Msg: "no MODULE record: the file is empty"}
	}
	return p.f, err
}

type parser struct {
	f   *File
	src string

	line   int   // current line number, 1-based
	offset int64 // byte offset of the current line

	funcs     []Func
	funcSpans []funcSpan // where each FUNC's records are in lineBuf and inlBuf
	curFunc   int        // index in funcs of the FUNC that line and INLINE records attach to; -1 when none is valid
	lineBuf   []Line
	inlBuf    []Inline

	cfi        []cfiInit
	deltaSpans [][2]int // where each STACK CFI INIT's deltas are in deltaBuf
	curCFI     int      // index in cfi of the STACK CFI INIT that deltas attach to; -1 when none is valid
	deltaBuf   []cfiDelta
}

// funcSpan locates a FUNC's line and INLINE records while the buffers
// still grow; the slices are cut once reading is done, so that no FUNC
// keeps an outgrown buffer alive.
type funcSpan struct{ line0, line1, inl0, inl1 int }

// presize counts the records of each kind by their first bytes and sizes
// the tables to match, so that reading a large file does not grow them
// by copying. Every count is bounded by the number of lines.
func (p *parser) presize() {
	var funcs, lines, inlines, publics, files, origins, inits, deltas int
	for rest := p.src; rest != ""; {
		line := rest
		if i := strings.IndexByte(rest, '\n'); i >= 0 {
			line, rest = rest[:i], rest[i+1:]
		} else {
			rest = ""
		}
		if line == "" {
			continue
		}
		switch c := line[0]; {
		case '0' <= c && c <= '9' || 'a' <= c && c <= 'f':
			lines++
		case strings.HasPrefix(line, "FUNC "):
			funcs++
		case strings.HasPrefix(line, "STACK CFI INIT "):
			inits++
		case strings.HasPrefix(line, "STACK CFI "):
			deltas++
		case strings.HasPrefix(line, "INLINE "):
			inlines++
		case strings.HasPrefix(line, "INLINE_ORIGIN "):
			origins++
		case strings.HasPrefix(line, "FILE "):
			files++
		case strings.HasPrefix(line, "PUBLIC "):
			publics++
		}
	}
	p.funcs = make([]Func, 0, funcs)
	p.funcSpans = make([]funcSpan, 0, funcs)
	p.lineBuf = make([]Line, 0, lines)
	p.inlBuf = make([]Inline, 0, inlines)
	p.f.publics = make([]Public, 0, publics)
	p.f.files = make([]named, 0, files)
	p.f.origins = make([]named, 0, origins)
	p.cfi = make([]cfiInit, 0, inits)
	p.deltaSpans = make([][2]int, 0, inits)
	p.deltaBuf = make([]cfiDelta, 0, deltas)
}

func (p *parser) warn(record, format string, args ...any) {
	p.f.stats.Skipped++
	if len(p.f.Warnings) < maxWarnings {
		p.f.Warnings = append(p.f.Warnings, &FormatError{Line: p.line, Offset: p.offset, Record: record, Msg: fmt.Sprintf(format, args...)})
	}
}

func (p *parser) run() error {
	var moduleErr error
	rest := p.src
	for off := 0; off < len(p.src); {
		end := strings.IndexByte(rest, '\n')
		var line string
		if end < 0 {
			line, rest = rest, ""
			end = len(line)
		} else {
			line, rest = rest[:end], rest[end+1:]
		}
		p.line++
		p.offset = int64(off)
		off += end + 1
		line = trimEOL(line)
		if p.line == 1 {
			m, msg := parseModule(line)
			if msg == "" {
				p.f.Module = m
				continue
			}
			moduleErr = &FormatError{Line: 1, Record: "MODULE", Msg: msg}
		}
		if line == "" {
			continue
		}
		p.record(line)
	}
	return moduleErr
}

// record parses one non-empty line.
func (p *parser) record(line string) {
	kw, rest := cut(line)
	switch kw {
	case "":
		p.warn("unknown", "line starts with a space")
	case "FUNC":
		p.funcRecord(rest)
	case "FILE":
		p.namedRecord("FILE", rest, &p.f.files)
	case "INLINE_ORIGIN":
		p.namedRecord("INLINE_ORIGIN", rest, &p.f.origins)
	case "INLINE":
		p.inlineRecord(rest)
	case "PUBLIC":
		p.publicRecord(rest)
	case "STACK":
		p.stackRecord(rest)
	case "INFO":
		p.infoRecord(rest)
	case "MODULE":
		p.warn("MODULE", "MODULE record after the first line")
	default:
		// Record names are upper case; line records start with an address
		// in lower-case hex.
		if c := kw[0]; '0' <= c && c <= '9' || 'a' <= c && c <= 'f' {
			p.lineRecord(line)
			return
		}
		p.warn(kw, "unknown record type")
	}
}

func (p *parser) infoRecord(rest string) {
	kind, rest := cut(rest)
	if kind != "CODE_ID" {
		return // INFO GENERATOR and others carry nothing we use
	}
	id, file := cut(rest)
	if id == "" {
		p.warn("INFO CODE_ID", "no code id")
		return
	}
	p.f.Module.CodeID, p.f.Module.CodeFile = id, file
}

func (p *parser) namedRecord(kind, rest string, list *[]named) {
	idText, name := cut(rest)
	id, ok := parseDec32(idText)
	if !ok {
		p.warn(kind, "id %q is not a 32-bit decimal number", idText)
		return
	}
	*list = append(*list, named{id, name})
}

// endFunc closes the current FUNC: the line and INLINE records read since
// it belong to it.
func (p *parser) endFunc() {
	if p.curFunc < 0 {
		return
	}
	s := &p.funcSpans[p.curFunc]
	s.line1, s.inl1 = len(p.lineBuf), len(p.inlBuf)
	p.curFunc = -1
}

func (p *parser) funcRecord(rest string) {
	p.endFunc()
	multiple := false
	if strings.HasPrefix(rest, "m ") {
		multiple, rest = true, rest[2:]
	}
	addrText, rest := cut(rest)
	sizeText, rest := cut(rest)
	paramText, name := cut(rest)
	addr, ok1 := hexnum.Parse(addrText)
	size, ok2 := hexnum.Parse(sizeText)
	param, ok3 := hexnum.Parse(paramText)
	switch {
	case !ok1 || !ok2 || !ok3:
		// The line records that follow have no FUNC: skip them too, or
		// they would be attributed to the previous function.
		p.warn("FUNC", "address %q, size %q or parameter size %q is not a hex number", addrText, sizeText, paramText)
		return
	case addr+size < addr:
		p.warn("FUNC", "address %#x + size %#x overflows", addr, size)
		return
	}
	p.funcs = append(p.funcs, Func{Address: addr, Size: size, ParamSize: param, Multiple: multiple, Name: name})
	p.funcSpans = append(p.funcSpans, funcSpan{line0: len(p.lineBuf), inl0: len(p.inlBuf)})
	p.curFunc = len(p.funcs) - 1
}

func (p *parser) lineRecord(line string) {
	addrText, rest := cut(line)
	sizeText, rest := cut(rest)
	lineText, rest := cut(rest)
	fileText, extra := cut(rest)
	addr, ok1 := hexnum.Parse(addrText)
	size, ok2 := hexnum.Parse(sizeText)
	num, ok3 := parseDec32(lineText)
	file, ok4 := parseDec32(fileText)
	switch {
	case !ok1 || !ok2 || !ok3 || !ok4 || extra != "":
		p.warn("line", "want hex address and size, decimal line and file number")
	case p.curFunc < 0:
		p.warn("line", "line record without a valid FUNC record before it")
	case size >= maxLineSize || addr+size < addr:
		p.warn("line", "size %#x is absurd", size)
	case size == 0:
		// Files converted from PDB hold many empty line records; they
		// cover nothing and would only hide the record they share an
		// address with.
	default:
		p.lineBuf = append(p.lineBuf, Line{Address: addr, Size: uint32(size), Line: num, File: file})
	}
}

func (p *parser) inlineRecord(rest string) {
	if p.curFunc < 0 {
		p.warn("INLINE", "INLINE record without a valid FUNC record before it")
		return
	}
	var head [4]uint32
	for i := range head {
		var field string
		field, rest = cut(rest)
		v, ok := parseDec32(field)
		if !ok {
			p.warn("INLINE", "field %d (%q) is not a decimal number", i+2, field)
			return
		}
		head[i] = v
	}
	if head[0] > maxInlineDepth {
		p.warn("INLINE", "nesting depth %d is absurd", head[0])
		return
	}
	start := len(p.inlBuf)
	sawRange := false
	for rest != "" {
		sawRange = true
		var addrText, sizeText string
		addrText, rest = cut(rest)
		sizeText, rest = cut(rest)
		addr, ok1 := hexnum.Parse(addrText)
		size, ok2 := hexnum.Parse(sizeText)
		if !ok1 || !ok2 || addr+size < addr {
			p.inlBuf = p.inlBuf[:start]
			p.warn("INLINE", "range %q %q is not a hex address and size", addrText, sizeText)
			return
		}
		if size == 0 {
			continue // covers nothing (see lineRecord)
		}
		p.inlBuf = append(p.inlBuf, Inline{Depth: head[0], CallLine: head[1], CallFile: head[2], Origin: head[3], Address: addr, Size: size})
	}
	if rest == "" && len(p.inlBuf) == start && !sawRange {
		p.warn("INLINE", "no address ranges")
	}
}

func (p *parser) publicRecord(rest string) {
	multiple := false
	if strings.HasPrefix(rest, "m ") {
		multiple, rest = true, rest[2:]
	}
	addrText, rest := cut(rest)
	paramText, name := cut(rest)
	addr, ok1 := hexnum.Parse(addrText)
	param, ok2 := hexnum.Parse(paramText)
	if !ok1 || !ok2 {
		p.warn("PUBLIC", "address %q or parameter size %q is not a hex number", addrText, paramText)
		return
	}
	p.f.publics = append(p.f.publics, Public{Address: addr, ParamSize: param, Multiple: multiple, Name: name})
}

func (p *parser) stackRecord(rest string) {
	kind, rest := cut(rest)
	switch kind {
	case "WIN":
		// Windows x86 frame data: recognised, not used on Apple platforms.
		p.f.stats.StackWin++
		return
	case "CFI":
	default:
		p.warn("STACK", "unknown kind %q", kind)
		return
	}
	first, rest := cut(rest)
	if first == "INIT" {
		p.endCFI()
		addrText, rest := cut(rest)
		sizeText, rules := cut(rest)
		addr, ok1 := hexnum.Parse(addrText)
		size, ok2 := hexnum.Parse(sizeText)
		switch {
		case !ok1 || !ok2:
			p.warn("STACK CFI INIT", "address %q or size %q is not a hex number", addrText, sizeText)
		case addr+size < addr:
			p.warn("STACK CFI INIT", "address %#x + size %#x overflows", addr, size)
		default:
			if msg := checkRules(rules); msg != "" {
				p.warn("STACK CFI INIT", "%s", msg)
				return
			}
			p.cfi = append(p.cfi, cfiInit{address: addr, size: size, rules: rules})
			p.deltaSpans = append(p.deltaSpans, [2]int{len(p.deltaBuf), len(p.deltaBuf)})
			p.curCFI = len(p.cfi) - 1
		}
		return
	}
	addr, ok := hexnum.Parse(first)
	switch {
	case !ok:
		p.warn("STACK CFI", "address %q is not a hex number", first)
		return
	case p.curCFI < 0:
		p.warn("STACK CFI", "no valid STACK CFI INIT record before it")
		return
	}
	init := &p.cfi[p.curCFI]
	prev, hasDelta := init.address, len(p.deltaBuf) > p.deltaSpans[p.curCFI][0]
	if hasDelta {
		prev = p.deltaBuf[len(p.deltaBuf)-1].address
	}
	if addr <= prev && hasDelta || addr < prev || addr-init.address >= init.size {
		p.warn("STACK CFI", "address %#x is not after the previous record and inside [%#x, %#x)", addr, init.address, init.address+init.size)
		return
	}
	if msg := checkRules(rest); msg != "" {
		p.warn("STACK CFI", "%s", msg)
		return
	}
	p.deltaBuf = append(p.deltaBuf, cfiDelta{address: addr, rules: rest})
}

func (p *parser) endCFI() {
	if p.curCFI >= 0 {
		p.deltaSpans[p.curCFI][1] = len(p.deltaBuf)
	}
	p.curCFI = -1
}

// finish sorts the tables and drops records that overlap earlier ones.
func (p *parser) finish() {
	p.endFunc()
	p.endCFI()
	f := p.f
	p.lineBuf, p.inlBuf, p.deltaBuf = slices.Clip(p.lineBuf), slices.Clip(p.inlBuf), slices.Clip(p.deltaBuf)
	for i, s := range p.deltaSpans {
		p.cfi[i].deltas = p.deltaBuf[s[0]:s[1]:s[1]]
	}
	for i, s := range p.funcSpans {
		fn := &p.funcs[i]
		if s.line1 > s.line0 {
			fn.Lines = p.lineBuf[s.line0:s.line1:s.line1]
		}
		if s.inl1 > s.inl0 {
			fn.Inlines = p.inlBuf[s.inl0:s.inl1:s.inl1]
		}
		if !slices.IsSortedFunc(fn.Lines, compareLines) {
			slices.SortStableFunc(fn.Lines, compareLines)
		}
		if !slices.IsSortedFunc(fn.Inlines, compareInlines) {
			slices.SortStableFunc(fn.Inlines, compareInlines)
		}
	}
	funcs, dropped := dropOverlaps(p.funcs, func(fn Func) (uint64, uint64) { return fn.Address, fn.Size })
	if dropped > 0 {
		f.stats.Skipped += dropped
		f.Warnings = append(f.Warnings, &FormatError{Record: "FUNC", Msg: fmt.Sprintf("%d FUNC records overlap an earlier one and were dropped", dropped)})
	}
	f.funcs = funcs
	f.funcAddrs = make([]uint64, len(funcs))
	for i := range funcs {
		f.funcAddrs[i] = funcs[i].Address
	}

	cfi, dropped := dropOverlaps(p.cfi, func(c cfiInit) (uint64, uint64) { return c.address, c.size })
	if dropped > 0 {
		f.stats.Skipped += dropped
		f.Warnings = append(f.Warnings, &FormatError{Record: "STACK CFI INIT", Msg: fmt.Sprintf("%d STACK CFI INIT records overlap an earlier one and were dropped", dropped)})
	}
	f.cfi = cfi

	slices.SortStableFunc(f.publics, func(a, b Public) int { return cmp.Compare(a.Address, b.Address) })
	f.publics = slices.CompactFunc(f.publics, func(a, b Public) bool { return a.Address == b.Address })
	byID := func(a, b named) int { return cmp.Compare(a.id, b.id) }
	sameID := func(a, b named) bool { return a.id == b.id }
	if !slices.IsSortedFunc(f.files, byID) {
		slices.SortStableFunc(f.files, byID)
	}
	f.files = slices.CompactFunc(f.files, sameID)
	if !slices.IsSortedFunc(f.origins, byID) {
		slices.SortStableFunc(f.origins, byID)
	}
	f.origins = slices.CompactFunc(f.origins, sameID)

	f.stats.Files, f.stats.InlineOrigins = len(f.files), len(f.origins)
	f.stats.Funcs, f.stats.Publics, f.stats.CFIInits = len(f.funcs), len(f.publics), len(f.cfi)
	for _, fn := range f.funcs {
		f.stats.Lines += len(fn.Lines)
		f.stats.Inlines += len(fn.Inlines)
	}
	for _, c := range f.cfi {
		f.stats.CFIDeltas += len(c.deltas)
	}
}

func compareLines(a, b Line) int { return cmp.Compare(a.Address, b.Address) }

func compareInlines(a, b Inline) int {
	if c := cmp.Compare(a.Depth, b.Depth); c != 0 {
		return c
	}
	return cmp.Compare(a.Address, b.Address)
}

// dropOverlaps sorts records by address (stably, so that of two records at
// one address the earlier in the file wins) and drops each record that
// starts inside the one kept before it, as Breakpad's range map refuses a
// conflicting range. A zero-size record overlaps nothing.
func dropOverlaps[T any](recs []T, span func(T) (addr, size uint64)) ([]T, int) {
	byAddr := func(a, b T) int {
		aa, _ := span(a)
		ba, _ := span(b)
		return cmp.Compare(aa, ba)
	}
	if !slices.IsSortedFunc(recs, byAddr) {
		slices.SortStableFunc(recs, byAddr)
	}
	kept := recs[:0]
	var end uint64 // end of the last kept record
	for i, r := range recs {
		addr, size := span(r)
		if i > 0 && len(kept) > 0 && addr < end {
			continue
		}
		kept = append(kept, r)
		if size > 0 {
			end = addr + size
		} else if addr > end {
			end = addr
		}
	}
	return kept, len(recs) - len(kept)
}

// cut returns the text before the first space and the text after it with
// any further spaces skipped.
func cut(s string) (field, rest string) {
	i := strings.IndexByte(s, ' ')
	if i < 0 {
		return s, ""
	}
	field, rest = s[:i], s[i+1:]
	for len(rest) > 0 && rest[0] == ' ' {
		rest = rest[1:]
	}
	return field, rest
}

// trimEOL drops a line's "\n" and the "\r"s before it: files written on
// Windows end lines with "\r\n", and some dump_syms versions with "\r\r\n".
func trimEOL(s string) string {
	s = strings.TrimSuffix(s, "\n")
	return strings.TrimRight(s, "\r")
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// parseDec32 parses a decimal number that fits in 32 bits.
func parseDec32(s string) (uint32, bool) {
	if len(s) == 0 || len(s) > 10 {
		return 0, false
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	if v > 1<<32-1 {
		return 0, false
	}
	return uint32(v), true
}
