package aggregate

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// errSlowPath sends a record to encoding/json, which reads every valid
// record and words the error of an invalid one.
var errSlowPath = errors.New("slow path")

// decodeFast reads the common shape of a record without reflection: the
// frames array and the string fields directly, the images and labels
// through encoding/json. A million records of 30 frames are read about
// three times as fast as json.Unmarshal reads them. Anything it is not
// sure of (escapes, unknown value types, invalid JSON) returns
// errSlowPath, and json.Unmarshal then decides.
func decodeFast(line []byte, rec *Record) error {
	d := scanner{b: line}
	d.space()
	if !d.eat('{') {
		return errSlowPath
	}
	d.space()
	if d.eat('}') {
		d.space()
		if d.i != len(d.b) {
			return errSlowPath
		}
		return nil
	}
	for {
		d.space()
		key, ok := d.plainString()
		if !ok {
			return errSlowPath
		}
		d.space()
		if !d.eat(':') {
			return errSlowPath
		}
		d.space()
		var err error
		switch key {
		case "frames":
			err = d.frames(rec)
		case "image_set":
			rec.ImageSet, err = d.stringValue()
		case "thread":
			rec.Thread, err = d.stringValue()
		case "device":
			rec.Device, err = d.stringValue()
		case "os_version":
			rec.OSVersion, err = d.stringValue()
		case "app_version":
			rec.AppVersion, err = d.stringValue()
		case "timestamp":
			var s string
			if s, err = d.stringValue(); err == nil {
				rec.Timestamp, err = time.Parse(time.RFC3339Nano, s)
			}
		case "weight":
			err = d.weight(rec)
		case "images":
			err = d.viaJSON(&rec.Images)
		case "labels":
			err = d.labels(rec)
		default:
			// encoding/json matches field names without regard to case.
			for _, k := range recordKeys {
				if strings.EqualFold(k, key) {
					return errSlowPath
				}
			}
			err = d.viaJSON(new(json.RawMessage))
		}
		if err != nil {
			return errSlowPath
		}
		d.space()
		if d.eat(',') {
			continue
		}
		if !d.eat('}') {
			return errSlowPath
		}
		d.space()
		if d.i != len(d.b) {
			return errSlowPath
		}
		return nil
	}
}

var recordKeys = []string{"frames", "image_set", "thread", "device", "os_version", "app_version", "timestamp", "weight", "images", "labels"}

type scanner struct {
	b []byte
	i int
}

func (d *scanner) space() {
	for d.i < len(d.b) && (d.b[d.i] == ' ' || d.b[d.i] == '\t' || d.b[d.i] == '\r' || d.b[d.i] == '\n') {
		d.i++
	}
}

func (d *scanner) eat(c byte) bool {
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

// plainString reads a string without escapes or control characters, in
// valid UTF-8: encoding/json replaces each bad byte with U+FFFD.
func (d *scanner) plainString() (string, bool) {
	if !d.eat('"') {
		return "", false
	}
	start := d.i
	ascii := true
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			if !ascii && !utf8.Valid(d.b[start:d.i]) {
				return "", false
			}
			s := string(d.b[start:d.i])
			d.i++
			return s, true
		case c == '\\' || c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			ascii = false
		}
		d.i++
	}
	return "", false
}

func (d *scanner) stringValue() (string, error) {
	s, ok := d.plainString()
	if !ok {
		return "", errSlowPath
	}
	return s, nil
}

// frames reads the frames array: numbers or "0x…" strings.
func (d *scanner) frames(rec *Record) error {
	if !d.eat('[') {
		return errSlowPath
	}
	out := rec.Frames[:0]
	d.space()
	if d.eat(']') {
		rec.Frames = out
		return nil
	}
	for {
		d.space()
		if len(out) == MaxFrames {
			return errSlowPath // the slow path words the error
		}
		var v uint64
		if d.i < len(d.b) && d.b[d.i] == '"' {
			s, ok := d.plainString()
			if !ok || len(s) < 3 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X') {
				return errSlowPath
			}
			var err error
			if v, err = strconv.ParseUint(s[2:], 16, 64); err != nil {
				return errSlowPath
			}
		} else {
			start := d.i
			for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
				v1 := v*10 + uint64(d.b[d.i]-'0')
				if v1/10 != v || d.i-start >= 20 {
					return errSlowPath // overflow
				}
				v = v1
				d.i++
			}
			if d.i == start || (d.b[start] == '0' && d.i-start > 1) {
				return errSlowPath
			}
		}
		out = append(out, v)
		d.space()
		if d.eat(',') {
			continue
		}
		if d.eat(']') {
			rec.Frames = out
			return nil
		}
		return errSlowPath
	}
}

func (d *scanner) weight(rec *Record) error {
	start := d.i
	if d.i < len(d.b) && d.b[d.i] == '-' {
		d.i++
	}
	for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
		d.i++
	}
	v, err := strconv.ParseInt(string(d.b[start:d.i]), 10, 64)
	if err != nil {
		return errSlowPath
	}
	rec.Weight = v
	return nil
}

// labels reads an object of plain strings; anything else goes to
// encoding/json.
func (d *scanner) labels(rec *Record) error {
	start := d.i
	if !d.eat('{') {
		return d.viaJSON(&rec.Labels)
	}
	m := map[string]string{}
	d.space()
	if d.eat('}') {
		rec.Labels = m
		return nil
	}
	for {
		d.space()
		k, ok := d.plainString()
		d.space()
		if !ok || !d.eat(':') {
			break
		}
		d.space()
		v, ok := d.plainString()
		if !ok || len(m) == MaxLabels {
			break
		}
		m[k] = v
		d.space()
		if d.eat(',') {
			continue
		}
		if d.eat('}') {
			rec.Labels = m
			return nil
		}
		break
	}
	d.i = start
	return d.viaJSON(&rec.Labels)
}

// viaJSON decodes the value at the cursor with encoding/json.
func (d *scanner) viaJSON(v any) error {
	end, ok := valueEnd(d.b, d.i)
	if !ok {
		return errSlowPath
	}
	if err := json.Unmarshal(d.b[d.i:end], v); err != nil {
		return errSlowPath
	}
	d.i = end
	return nil
}

// valueEnd finds where the JSON value at i ends, by brackets and strings;
// json.Unmarshal then checks the value itself.
func valueEnd(b []byte, i int) (int, bool) {
	depth := 0
	for ; i < len(b); i++ {
		switch c := b[i]; c {
		case '"':
			i++
			for ; i < len(b) && b[i] != '"'; i++ {
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
				return i, true // the end of the object holding a scalar
			}
			depth--
			if depth == 0 {
				return i + 1, true
			}
		case ',':
			if depth == 0 {
				return i, true
			}
		case ' ', '\t', '\r', '\n':
			if depth == 0 {
				return i, true
			}
		}
	}
	if depth == 0 {
		return i, true
	}
	return 0, false
}
