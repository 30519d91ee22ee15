package hangreport

import (
	"strconv"
	"strings"
)

// Frame is one frame as a report wrote it. Its parts are read from the
// text; Start and End place the frame's text in the input, which is what
// Write replaces.
//
// The forms read are sample's
//
//	???  (in Image)  load address 0x103c0a000 + 0x3eb0  [0x103c0deb0]
//	symbol  (in Image) + 462  [0x1077c151e]  file.c:123
//
// and spindump's
//
//	symbol + 462 (Image + 21806) [0x115b4652e]
//	symbol + 35 (File.swift:31,1 in Image + 17460019) [0x10772db33]
//	??? (Image + 490548) [0x1030c3c34]
//
// Anything else ("<patched truncated backtrace>") is kept as Text alone.
// A frame sample collapsed over several addresses ("+ 264,516,...
// [0x100c2d17c,0x100c2d278,...]") has no Address: no one name fits it.
type Frame struct {
	// Text is the frame as written, from its first byte to the closing
	// "]" of its address (or the end of what could be read).
	Text string
	// Start and End are Text's byte offsets in the input, [Start, End).
	Start, End int
	// Symbol is the function's name; empty when the report wrote "???".
	Symbol string
	// SymbolOffset is the "+ 462" after the symbol; HasOffset says the
	// report gave one.
	SymbolOffset uint64
	HasOffset    bool
	// Image is the image's short name ("dyld", "SingleThreadHangingTest").
	Image string
	// ImageText is the image part as written: sample's "in Image", or
	// spindump's "Image + 21806" without the source position.
	ImageText string
	// ImageOffset is the address's offset in its image: spindump's
	// "Image + off", or sample's "load address L + off".
	ImageOffset    uint64
	HasImageOffset bool
	// LoadAddress is sample's "load address 0x...", 0 when not given.
	LoadAddress uint64
	// Address is the frame's address, "[0x...]"; AddressText as written.
	// HasAddress is false when there is none or it is not one number.
	Address     uint64
	HasAddress  bool
	AddressText string
	// File, Line and Column are the source position the report gave.
	File         string
	Line, Column int
}

// Named reports whether the report named the frame's function.
func (f *Frame) Named() bool { return f.Symbol != "" }

// parseFrame reads a frame from s, which starts at byte base of the input.
func parseFrame(kind Kind, s string, base int) Frame {
	if kind == KindSpindump || kind == KindMicrostackshot {
		// A microstackshot report writes its frames as spindump does.
		return parseSpindumpFrame(s, base)
	}
	return parseSampleFrame(s, base)
}

// parseHex reads "0x..." into a value.
func parseHex(s string) (uint64, bool) {
	s = strings.TrimSpace(s)
	if len(s) < 3 || s[0] != '0' || s[1] != 'x' && s[1] != 'X' {
		return 0, false
	}
	v, err := strconv.ParseUint(s[2:], 16, 64)
	return v, err == nil
}

// parseNumber reads a decimal, or hexadecimal with 0x, value.
func parseNumber(s string) (uint64, bool) {
	s = strings.TrimSpace(s)
	if v, ok := parseHex(s); ok {
		return v, true
	}
	v, err := strconv.ParseUint(s, 10, 64)
	return v, err == nil
}

// address finds the last "[0x...]" of s: the address and the offsets of
// the brackets.
func address(s string) (addr uint64, open, close int, ok bool) {
	open = strings.LastIndex(s, "[0x")
	if open < 0 {
		return 0, -1, -1, false
	}
	n := strings.IndexByte(s[open:], ']')
	if n < 0 {
		return 0, -1, -1, false
	}
	close = open + n
	addr, ok = parseHex(s[open+1 : close])
	return addr, open, close, ok
}

// symbolPart splits "symbol + 462" (or "???") into name and offset.
func symbolPart(f *Frame, s string) {
	s = strings.TrimSpace(s)
	if i := strings.LastIndex(s, " + "); i >= 0 {
		if off, err := strconv.ParseUint(strings.TrimSpace(s[i+3:]), 10, 64); err == nil {
			f.SymbolOffset, f.HasOffset = off, true
			s = strings.TrimSpace(s[:i])
		}
	}
	if s != "???" {
		f.Symbol = s
	}
}

// sourcePosition reads "file.c:123" or "File.swift:31,1" (or a bare file
// name, as spindump writes when it knows no line).
func sourcePosition(f *Frame, s string) {
	s = strings.TrimSpace(s)
	if s == "" {
		return
	}
	f.File = s
	i := strings.LastIndexByte(s, ':')
	if i <= 0 {
		return
	}
	pos := s[i+1:]
	col := ""
	if j := strings.IndexByte(pos, ','); j >= 0 {
		pos, col = pos[:j], pos[j+1:]
	}
	line, err := strconv.Atoi(pos)
	if err != nil || line < 0 {
		return
	}
	f.File, f.Line = s[:i], line
	if c, err := strconv.Atoi(col); err == nil && c >= 0 {
		f.Column = c
	}
}

func parseSampleFrame(s string, base int) Frame {
	f := Frame{Text: s, Start: base, End: base + len(s)}
	addr, open, close, ok := address(s)
	if open >= 0 {
		f.Address, f.HasAddress, f.AddressText = addr, ok, s[open+1:close]
		f.Text, f.End = s[:close+1], base+close+1
		// sample writes a source position two spaces after the address.
		sourcePosition(&f, s[close+1:])
	} else {
		open = len(s)
	}
	head := s[:open]
	// sample puts two spaces before "(in Image)"; a C++ name may hold
	// "(in " of its own with one.
	in := strings.Index(head, "  (in ")
	if in >= 0 {
		in += 2
	} else {
		in = strings.Index(head, "(in ")
	}
	if in < 0 {
		symbolPart(&f, head)
		return f
	}
	end := strings.IndexByte(head[in:], ')')
	if end < 0 {
		symbolPart(&f, head)
		return f
	}
	end += in
	f.ImageText = head[in+1 : end]
	f.Image = head[in+4 : end]
	f.Symbol = strings.TrimSpace(head[:in])
	if f.Symbol == "???" {
		f.Symbol = ""
	}
	rest := strings.TrimSpace(head[end+1:])
	switch {
	case strings.HasPrefix(rest, "load address "):
		la, off, found := strings.Cut(rest[len("load address "):], " + ")
		if v, ok := parseHex(la); ok {
			f.LoadAddress = v
		}
		if found {
			if v, ok := parseNumber(off); ok {
				f.ImageOffset, f.HasImageOffset = v, true
			}
		}
	case strings.HasPrefix(rest, "+ "):
		if v, ok := parseNumber(rest[2:]); ok {
			f.SymbolOffset, f.HasOffset = v, true
		}
	}
	return f
}

func parseSpindumpFrame(s string, base int) Frame {
	f := Frame{Text: s, Start: base, End: base + len(s)}
	head := s
	if addr, open, close, ok := address(s); open >= 0 {
		f.Address, f.HasAddress, f.AddressText = addr, ok, s[open+1:close]
		f.Text, f.End = s[:close+1], base+close+1
		head = strings.TrimRight(s[:open], " ")
	}
	if !strings.HasSuffix(head, ")") {
		if f.HasAddress {
			symbolPart(&f, head)
		}
		return f
	}
	// The image part is the last balanced parenthesis group; a C++ or
	// Swift symbol may hold parentheses of its own.
	depth, open := 0, -1
	for i := len(head) - 1; i >= 0; i-- {
		switch head[i] {
		case ')':
			depth++
		case '(':
			depth--
		}
		if depth == 0 {
			open = i
			break
		}
	}
	if open < 0 {
		return f
	}
	inner := head[open+1 : len(head)-1]
	img := inner
	if i := strings.LastIndex(inner, " in "); i >= 0 {
		sourcePosition(&f, inner[:i])
		img = inner[i+4:]
	}
	f.ImageText = img
	f.Image = img
	if i := strings.LastIndex(img, " + "); i >= 0 {
		if v, ok := parseNumber(img[i+3:]); ok {
			f.Image, f.ImageOffset, f.HasImageOffset = img[:i], v, true
		}
	}
	symbolPart(&f, head[:open])
	return f
}
