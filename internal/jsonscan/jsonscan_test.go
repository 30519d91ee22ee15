package jsonscan

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestValueEnd(t *testing.T) {
	for _, c := range []struct {
		name, in string
		i, want  int
		ok       bool
	}{
		{"number", `12`, 0, 2, true},
		{"number before comma", `12,3`, 0, 2, true},
		{"number before space", `12 }`, 0, 2, true},
		{"number closing its object", `{"a":12}`, 5, 7, true},
		{"number closing its array", `[12]`, 1, 3, true},
		{"scalar running on", `1x,`, 0, 2, true},
		{"literal", `true]`, 0, 4, true},
		{"string", `"a,b" x`, 0, 5, true},
		{"string with escaped quote", `"a\"b",`, 0, 6, true},
		{"string ending in a backslash", `"a\\",`, 0, 5, true},
		{"object", `{"a":[1,{"b":"}"}]} ,`, 0, 19, true},
		{"array", `[[],[1]],`, 0, 8, true},
		{"at the end", `[1]`, 3, 3, true},
		{"string not closed", `"abc`, 0, 0, false},
		{"string escaping its quote", `"abc\"`, 0, 0, false},
		{"object not closed", `{"a":1`, 0, 0, false},
		{"array not closed", `[[1]`, 0, 0, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, ok := ValueEnd([]byte(c.in), c.i)
			if got != c.want || ok != c.ok {
				t.Errorf("ValueEnd(%q, %d) = %d, %v, want %d, %v", c.in, c.i, got, ok, c.want, c.ok)
			}
		})
	}
}

func TestPlainString(t *testing.T) {
	for _, c := range []struct {
		name, in  string
		want      string
		ascii, ok bool
		wantI     int // the cursor after
	}{
		{"ascii", `"abc",`, "abc", true, true, 5},
		{"empty", `""`, "", true, true, 2},
		{"utf-8", "\"\u00e9t\u00e9\"", "\u00e9t\u00e9", false, true, 7},
		{"not utf-8", "\"a\xffb\"", "", false, false, 0},
		{"escape", `"a\nb"`, "", false, false, 0},
		{"control character", "\"a\tb\"", "", false, false, 0},
		{"not closed", `"abc`, "", false, false, 0},
		{"not a string", `12`, "", false, false, 0},
		{"empty input", ``, "", false, false, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := Scanner{B: []byte(c.in)}
			raw, ascii, ok := s.PlainString()
			if string(raw) != c.want || ascii != c.ascii || ok != c.ok || s.I != c.wantI {
				t.Errorf("PlainString() on %q = %q, %v, %v at %d, want %q, %v, %v at %d",
					c.in, raw, ascii, ok, s.I, c.want, c.ascii, c.ok, c.wantI)
			}
		})
	}
}

func TestSpaceAndEat(t *testing.T) {
	s := Scanner{B: []byte(" \t\r\n:x")}
	if s.Eat(':') {
		t.Error("Eat(':') read past whitespace")
	}
	s.Space()
	if s.I != 4 {
		t.Errorf("Space() stopped at %d, want 4", s.I)
	}
	if !s.Eat(':') || s.I != 5 {
		t.Errorf("Eat(':') failed, or left the cursor at %d, want 5", s.I)
	}
	if s.Eat(':') || s.I != 5 {
		t.Errorf("Eat(':') read 'x', or moved the cursor to %d", s.I)
	}
	s.I = len(s.B)
	if s.Space(); s.Eat('x') || s.I != len(s.B) {
		t.Error("Space or Eat moved past the end")
	}
}

func TestValueAndDecode(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     string // the value read, "" for none
	}{
		{"object", `{"a":[1,"]"]},`, `{"a":[1,"]"]}`},
		{"number", `-1.5e3]`, `-1.5e3`},
		{"null", `null}`, `null`},
		{"scalar running on", `12x,`, ``},
		{"invalid object", `{"a" 1},`, ``},
		{"not closed", `[1,2`, ``},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := Scanner{B: []byte(c.in)}
			raw, ok := s.Value()
			if string(raw) != c.want || ok != (c.want != "") || s.I != len(raw) {
				t.Errorf("Value() on %q = %q, %v at %d, want %q", c.in, raw, ok, s.I, c.want)
			}
			s = Scanner{B: []byte(c.in)}
			var v any
			ok = s.Decode(&v)
			if ok != (c.want != "") || s.I != len(raw) {
				t.Errorf("Decode() on %q = %v at %d, want %v at %d", c.in, ok, s.I, c.want != "", len(raw))
			}
		})
	}
}

// ValueEnd agrees with encoding/json's Decoder on where a value ends.
// When the Decoder reads a string, object or array, or a scalar followed
// by whitespace, ',', '}', ']' or nothing, ValueEnd ends it at the same
// byte. A scalar running into other bytes may end elsewhere, or nowhere,
// but never as a valid value, so that encoding/json refuses it. And when
// ValueEnd's value is valid, the Decoder reads that very value.
func FuzzValueEnd(f *testing.F) {
	for _, s := range []string{`12,`, ` {"a":[1,"}"]}x`, `"a\"b"1`, `[1]]`, `1x`, `10"`, `true false`, `"abc`, `[{]`, `-0.5e+3}`, `nul`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s := Scanner{B: data}
		s.Space()
		end, ok := ValueEnd(data, s.I)
		valid := ok && json.Valid(data[s.I:end])

		dec := json.NewDecoder(bytes.NewReader(data))
		var raw json.RawMessage
		decoded := dec.Decode(&raw) == nil
		off := int(dec.InputOffset())

		if valid && (!decoded || off != end) {
			t.Fatalf("ValueEnd(%q, %d) = %d, a valid value, but the Decoder read %v up to %d", data, s.I, end, decoded, off)
		}
		if !decoded {
			return
		}
		exact := off == len(data)
		if !exact {
			switch data[off] {
			case ' ', '\t', '\r', '\n', ',', '}', ']':
				exact = true
			}
		}
		switch data[s.I] {
		case '"', '{', '[':
			exact = true
		}
		// A scalar running on is covered by the first check: its end is
		// not valid, or it is where the Decoder's is.
		if exact && (!ok || end != off) {
			t.Fatalf("ValueEnd(%q, %d) = %d, %v; the Decoder read a value up to %d", data, s.I, end, ok, off)
		}
	})
}
