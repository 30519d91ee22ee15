package aggregate

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/stackimage/stackimage/internal/jsonscan"
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
	d := scanner{jsonscan.Scanner{B: line}}
	d.Space()
	if !d.Eat('{') {
		return errSlowPath
	}
	d.Space()
	if d.Eat('}') {
		d.Space()
		if d.I != len(d.B) {
			return errSlowPath
		}
		return nil
	}
	for {
		d.Space()
		key, ok := d.plainString()
		if !ok {
			return errSlowPath
		}
		d.Space()
		if !d.Eat(':') {
			return errSlowPath
		}
		d.Space()
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
			if _, ok := d.Value(); !ok {
				err = errSlowPath
			}
		}
		if err != nil {
			return errSlowPath
		}
		d.Space()
		if d.Eat(',') {
			continue
		}
		if !d.Eat('}') {
			return errSlowPath
		}
		d.Space()
		if d.I != len(d.B) {
			return errSlowPath
		}
		return nil
	}
}

var recordKeys = []string{"frames", "image_set", "thread", "device", "os_version", "app_version", "timestamp", "weight", "images", "labels"}

// scanner reads a record with the shared JSON primitives.
type scanner struct{ jsonscan.Scanner }

// plainString reads a string as jsonscan's PlainString does.
func (d *scanner) plainString() (string, bool) {
	raw, _, ok := d.PlainString()
	return string(raw), ok
}

func (d *scanner) stringValue() (string, error) {
	raw, _, ok := d.PlainString()
	if !ok {
		return "", errSlowPath
	}
	return string(raw), nil
}

// frames reads the frames array: numbers or "0x…" strings.
func (d *scanner) frames(rec *Record) error {
	if !d.Eat('[') {
		return errSlowPath
	}
	out := rec.Frames[:0]
	d.Space()
	if d.Eat(']') {
		rec.Frames = out
		return nil
	}
	for {
		d.Space()
		if len(out) == MaxFrames {
			return errSlowPath // the slow path words the error
		}
		var v uint64
		if d.I < len(d.B) && d.B[d.I] == '"' {
			s, ok := d.plainString()
			if !ok || len(s) < 3 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X') {
				return errSlowPath
			}
			var err error
			if v, err = strconv.ParseUint(s[2:], 16, 64); err != nil {
				return errSlowPath
			}
		} else {
			start := d.I
			for d.I < len(d.B) && d.B[d.I] >= '0' && d.B[d.I] <= '9' {
				v1 := v*10 + uint64(d.B[d.I]-'0')
				if v1/10 != v || d.I-start >= 20 {
					return errSlowPath // overflow
				}
				v = v1
				d.I++
			}
			if d.I == start || (d.B[start] == '0' && d.I-start > 1) {
				return errSlowPath
			}
		}
		out = append(out, v)
		d.Space()
		if d.Eat(',') {
			continue
		}
		if d.Eat(']') {
			rec.Frames = out
			return nil
		}
		return errSlowPath
	}
}

func (d *scanner) weight(rec *Record) error {
	start := d.I
	if d.I < len(d.B) && d.B[d.I] == '-' {
		d.I++
	}
	for d.I < len(d.B) && d.B[d.I] >= '0' && d.B[d.I] <= '9' {
		d.I++
	}
	v, err := strconv.ParseInt(string(d.B[start:d.I]), 10, 64)
	if err != nil {
		return errSlowPath
	}
	rec.Weight = v
	return nil
}

// labels reads an object of plain strings; anything else goes to
// encoding/json.
func (d *scanner) labels(rec *Record) error {
	start := d.I
	if !d.Eat('{') {
		return d.viaJSON(&rec.Labels)
	}
	m := map[string]string{}
	d.Space()
	if d.Eat('}') {
		rec.Labels = m
		return nil
	}
	for {
		d.Space()
		k, ok := d.plainString()
		d.Space()
		if !ok || !d.Eat(':') {
			break
		}
		d.Space()
		v, ok := d.plainString()
		if !ok || len(m) == MaxLabels {
			break
		}
		m[k] = v
		d.Space()
		if d.Eat(',') {
			continue
		}
		if d.Eat('}') {
			rec.Labels = m
			return nil
		}
		break
	}
	d.I = start
	return d.viaJSON(&rec.Labels)
}

// viaJSON decodes the value at the cursor with encoding/json.
func (d *scanner) viaJSON(v any) error {
	if !d.Decode(v) {
		return errSlowPath
	}
	return nil
}
