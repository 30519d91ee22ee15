// Package textesc escapes names from symbol files, dumps and paths for a
// terminal: see String.
package textesc

import (
	"fmt"
	"io"
	"strconv"
	"unicode"
	"unicode/utf8"
)

// Names in symbol files, dumps and paths come from whoever made them. Text
// output shows them with every byte a terminal could act on escaped:
// control characters (C0, DEL and C1, including the NUL, ESC and CSI that
// start escape sequences, and newlines that would forge lines of output),
// bidirectional overrides that reorder what is shown, line and paragraph
// separators, and bytes that are not UTF-8. The rest, including any
// printable Unicode, is shown as is. JSON output needs none of this:
// encoding/json escapes control characters and replaces invalid UTF-8.

// needsEscape reports whether r must be shown escaped.
func needsEscape(r rune) bool {
	switch {
	case unicode.IsControl(r):
		return true
	case r >= '\u202a' && r <= '\u202e', r >= '\u2066' && r <= '\u2069', r == '\u200e', r == '\u200f', r == '\u061c':
		return true // bidirectional embeddings, overrides, isolates and marks
	case r == '\u2028', r == '\u2029':
		return true // line and paragraph separators
	}
	return false
}

// Append appends s to b with what needsEscape finds, and bytes that
// are not UTF-8, written as Go escapes: \x1b, \u009b, \u202e. It does not
// allocate when s needs nothing escaped and b has room.
func Append(b []byte, s string) []byte {
	if printableASCII(s) {
		// Nearly every name: one copy.
		return append(b, s...)
	}
	for i := 0; i < len(s); {
		// Names are nearly always printable ASCII: copy each run of it
		// at once.
		j := i
		for j+8 <= len(s) && PrintableASCII8(load64(s, j)) {
			j += 8
		}
		for j < len(s) && s[j] >= 0x20 && s[j] < 0x7f {
			j++
		}
		b = append(b, s[i:j]...)
		if i = j; i == len(s) {
			break
		}
		c := s[i]
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b = append(b, `\x`...)
			b = appendHex(b, uint64(c), 2)
		case r < 0x80 && needsEscape(r):
			b = append(b, `\x`...)
			b = appendHex(b, uint64(r), 2)
		case needsEscape(r):
			b = append(b, `\u`...)
			b = appendHex(b, uint64(r), 4)
		default:
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return b
}

// printableASCII reports whether every byte of s is in 0x20-0x7e, testing
// eight at a time; the last word may overlap the one before it.
func printableASCII(s string) bool {
	if len(s) < 8 {
		for i := 0; i < len(s); i++ {
			if s[i] < 0x20 || s[i] >= 0x7f {
				return false
			}
		}
		return true
	}
	for i := 0; i+8 < len(s); i += 8 {
		if !PrintableASCII8(load64(s, i)) {
			return false
		}
	}
	return PrintableASCII8(load64(s, len(s)-8))
}

// load64 returns the 8 bytes of s at i as a little-endian word (the
// compiler makes this one load).
func load64(s string, i int) uint64 {
	w := s[i : i+8]
	return uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
		uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
}

// PrintableASCII8 reports whether all 8 bytes of w are in 0x20-0x7e.
func PrintableASCII8(w uint64) bool { return OutsideASCII8(w, 0x20) == 0 }

// OutsideASCII8 returns 0 when all 8 bytes of w are in lo-0x7e (lo at
// least 1). Otherwise it sets the high bit of the lowest byte outside that
// range, and maybe of higher ones: a borrow or carry between bytes starts
// only at a byte outside the range, which the lowest such byte's own test
// already reports.
func OutsideASCII8(w uint64, lo byte) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	below := (w - uint64(lo)*ones) & ^w & highs // a byte < lo
	above := ((w + ones) | w) & highs           // a byte >= 0x7f
	return below | above
}

func appendHex(b []byte, v uint64, digits int) []byte {
	for i := len(strconv.FormatUint(v, 16)); i < digits; i++ {
		b = append(b, '0')
	}
	return strconv.AppendUint(b, v, 16)
}

// String returns s with what a terminal could act on escaped; s itself
// when nothing is.
func String(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return string(Append(make([]byte, 0, len(s)+16), s))
		}
	}
	return s
}

// WriteLine writes one line of text output, formatted as fmt.Sprintf does,
// with everything in it escaped by String: a name holding a newline
// stays on its line.
func WriteLine(w io.Writer, format string, args ...any) {
	fmt.Fprintln(w, String(fmt.Sprintf(format, args...)))
}
