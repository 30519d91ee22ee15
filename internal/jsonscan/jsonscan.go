package jsonscan

import (
	"encoding/json"
	"unicode/utf8"
)

// Scanner reads JSON from B at I.
type Scanner struct {
	B []byte // the input
	I int    // the index in B of the next byte to read
}

// Space skips JSON whitespace.
func (s *Scanner) Space() {
	for s.I < len(s.B) {
		switch s.B[s.I] {
		case ' ', '\t', '\r', '\n':
			s.I++
		default:
			return
		}
	}
}

// Eat reads c, if it is the next byte. It does not skip whitespace
// first: the readers skip it once where JSON allows it.
func (s *Scanner) Eat(c byte) bool {
	if s.I < len(s.B) && s.B[s.I] == c {
		s.I++
		return true
	}
	return false
}

// PlainString reads a string without escapes or control characters, in
// valid UTF-8, returning the bytes between its quotes (part of B, not a
// copy) and whether they are all ASCII. It reports false for any other
// value or string: encoding/json unescapes, and replaces each byte that
// is not UTF-8 with U+FFFD, which the caller leaves to it.
func (s *Scanner) PlainString() (raw []byte, ascii, ok bool) {
	b := s.B // a local the loop keeps in a register
	if s.I >= len(b) || b[s.I] != '"' {
		return nil, false, false
	}
	start := s.I + 1
	j := start
	for j < len(b) && plainASCII[b[j]] {
		j++ // the common bytes, one test each
	}
	ascii = true
	for ; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			raw = b[start:j]
			if !ascii && !utf8.Valid(raw) {
				return nil, false, false
			}
			s.I = j + 1
			return raw, ascii, true
		case c == '\\' || c < 0x20:
			return nil, false, false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return nil, false, false
}

// plainASCII tells the bytes that continue a plain ASCII string: all but
// the quote, the backslash, control characters and non-ASCII bytes.
var plainASCII = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// Value reads any valid JSON value, returning its bytes (part of B).
func (s *Scanner) Value() ([]byte, bool) {
	end, ok := ValueEnd(s.B, s.I)
	if !ok || !json.Valid(s.B[s.I:end]) {
		return nil, false
	}
	raw := s.B[s.I:end]
	s.I = end
	return raw, true
}

// Decode decodes the value at the cursor into v with json.Unmarshal.
func (s *Scanner) Decode(v any) bool {
	end, ok := ValueEnd(s.B, s.I)
	if !ok || json.Unmarshal(s.B[s.I:end], v) != nil {
		return false
	}
	s.I = end
	return true
}

// ValueEnd finds where the JSON value starting at b[i] ends, by its
// brackets and strings alone: a string, object or array ends at its
// closing byte, and a scalar at the first whitespace, ',', '}' or ']'
// (or the end of b). It does not check the value: encoding/json does
// that once the caller has the value's bytes, so that a scalar running
// into other bytes ("1x") is refused there. It reports false when a
// string or a bracket is not closed before the end of b.
func ValueEnd(b []byte, i int) (int, bool) {
	depth := 0
	for ; i < len(b); i++ {
		switch b[i] {
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
			if i >= len(b) {
				return 0, false
			}
			if depth == 0 {
				return i + 1, true
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return i, true // the end of what holds a scalar
			}
			if depth--; depth == 0 {
				return i + 1, true
			}
		case ',', ' ', '\t', '\r', '\n':
			if depth == 0 {
				return i, true
			}
		}
	}
	if depth != 0 {
		return 0, false
	}
	return i, true
}
