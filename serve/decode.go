package serve

import (
	"bytes"
	"encoding/json"
)

// Frames are most of a /symbolicate request, and reading them through
// encoding/json's reflection was a sixth of a warm request's time: a
// stack trace's frames are read by hand when they have the usual shape
// (objects of the fields below, spelled as symbolicator spells them, with
// plain strings, numbers, booleans or null), and through encoding/json
// otherwise, which then also says what is wrong. TestFramesDecodeAsJSON
// and FuzzFrames hold the two to the same answers.

// rawFrames are a stack trace's frames.
type rawFrames []rawFrame

func (fs *rawFrames) UnmarshalJSON(b []byte) error {
	if out, ok := parseFrames(b); ok {
		*fs = out
		return nil
	}
	var plain []rawFrame
	if err := json.Unmarshal(b, &plain); err != nil {
		return err
	}
	*fs = plain
	return nil
}

// frameParser reads JSON bytes from the start; ok turns false at the first
// thing it does not read, and the caller falls back to encoding/json.
type frameParser struct {
	b  []byte
	i  int
	ok bool
}

func (p *frameParser) space() {
	for p.i < len(p.b) {
		switch p.b[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// byte consumes c, after white space.
func (p *frameParser) byte(c byte) bool {
	p.space()
	if p.ok && p.i < len(p.b) && p.b[p.i] == c {
		p.i++
		return true
	}
	return false
}

// plainString reads a string without escapes or control characters and
// returns its bytes (aliasing the input).
func (p *frameParser) plainString() []byte {
	if !p.byte('"') {
		p.ok = false
		return nil
	}
	start := p.i
	for p.i < len(p.b) {
		c := p.b[p.i]
		switch {
		case c == '"':
			p.i++
			return p.b[start : p.i-1]
		case c == '\\' || c < 0x20 || c >= 0x80:
			p.ok = false // escapes and UTF-8 checks are encoding/json's
			return nil
		}
		p.i++
	}
	p.ok = false
	return nil
}

// number reads a JSON number made of digits alone.
func (p *frameParser) number() []byte {
	p.space()
	start := p.i
	for p.i < len(p.b) && p.b[p.i] >= '0' && p.b[p.i] <= '9' {
		p.i++
	}
	if p.i == start || p.i < len(p.b) && bytes.IndexByte([]byte(".eE-+"), p.b[p.i]) >= 0 {
		p.ok = false
	}
	return p.b[start:p.i]
}

// literal reads true, false or null.
func (p *frameParser) literal() string {
	p.space()
	for _, lit := range []string{"true", "false", "null"} {
		if bytes.HasPrefix(p.b[p.i:], []byte(lit)) {
			p.i += len(lit)
			return lit
		}
	}
	p.ok = false
	return ""
}

// parseFrames reads a JSON array of frames; ok is false when it holds
// anything but the usual shape.
func parseFrames(b []byte) (rawFrames, bool) {
	p := &frameParser{b: b, ok: true}
	if !p.byte('[') {
		return nil, false
	}
	out := rawFrames{}
	if p.byte(']') {
		p.space()
		return out, p.i == len(b)
	}
	for p.ok {
		f, ok := p.frame()
		if !ok {
			return nil, false
		}
		out = append(out, f)
		if p.byte(',') {
			continue
		}
		if !p.byte(']') {
			return nil, false
		}
		p.space()
		return out, p.ok && p.i == len(b)
	}
	return nil, false
}

// frame reads one frame object.
func (p *frameParser) frame() (rawFrame, bool) {
	var f rawFrame
	if !p.byte('{') {
		return f, false
	}
	if p.byte('}') {
		return f, true
	}
	for p.ok {
		key := p.plainString()
		if !p.byte(':') {
			return f, false
		}
		p.space()
		if p.i >= len(p.b) {
			return f, false
		}
		switch string(key) {
		case "instruction_addr":
			var v uint64
			var ok bool
			if p.b[p.i] == '"' {
				v, ok = parseAddress(p.plainString())
			} else {
				v, ok = parseAddress(p.number())
			}
			if !ok {
				return f, false
			}
			f.InstructionAddr = hexValue(v)
		case "addr_mode":
			f.AddrMode = string(p.plainString())
		case "trust":
			f.Trust = string(p.plainString())
		case "adjust_instruction_addr":
			switch p.literal() {
			case "true":
				yes := true
				f.AdjustInstructionAddr = &yes
			case "false":
				no := false
				f.AdjustInstructionAddr = &no
			default:
				f.AdjustInstructionAddr = nil
			}
		default:
			return f, false // other fields, other spellings: encoding/json's
		}
		if p.byte(',') {
			continue
		}
		if p.byte('}') {
			return f, p.ok
		}
		return f, false
	}
	return f, false
}

// parseAddress reads an address as hexValue does: "0x…" in hex, else
// decimal.
func parseAddress(s []byte) (uint64, bool) {
	base := 10
	if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		s, base = s[2:], 16
	}
	if len(s) == 0 {
		return 0, false
	}
	var v uint64
	for _, c := range s {
		var d uint64
		switch {
		case c >= '0' && c <= '9':
			d = uint64(c - '0')
		case base == 16 && c >= 'a' && c <= 'f':
			d = uint64(c-'a') + 10
		case base == 16 && c >= 'A' && c <= 'F':
			d = uint64(c-'A') + 10
		default:
			return 0, false
		}
		if v > (^uint64(0)-d)/uint64(base) {
			return 0, false // overflow
		}
		v = v*uint64(base) + d
	}
	return v, true
}
