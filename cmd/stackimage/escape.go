package main

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

// appendEscaped appends s to b with what needsEscape finds, and bytes that
// are not UTF-8, written as Go escapes: \x1b, \u009b, \u202e. It does not
// allocate when s needs nothing escaped and b has room.
func appendEscaped(b []byte, s string) []byte {
	for i := 0; i < len(s); {
		// Names are nearly always printable ASCII: copy each run of it
		// at once.
		j := i
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

func appendHex(b []byte, v uint64, digits int) []byte {
	for i := len(strconv.FormatUint(v, 16)); i < digits; i++ {
		b = append(b, '0')
	}
	return strconv.AppendUint(b, v, 16)
}

// escapeText returns s with what a terminal could act on escaped; s itself
// when nothing is.
func escapeText(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return string(appendEscaped(make([]byte, 0, len(s)+16), s))
		}
	}
	return s
}

// writeLine writes one line of text output, formatted as fmt.Sprintf does,
// with everything in it escaped by escapeText: a name holding a newline
// stays on its line.
func writeLine(w io.Writer, format string, args ...any) {
	fmt.Fprintln(w, escapeText(fmt.Sprintf(format, args...)))
}
