package aggregate

import (
	"encoding/binary"
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
	return decodeFastCached(line, rec, nil)
}

// decodeFastCached is decodeFast taking the strings and label sets of
// the record from cache (nil for none) when they were read before.
func decodeFastCached(line []byte, rec *Record, cache *decodeCache) error {
	d := scanner{jsonscan.Scanner{B: line}, cache}
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
			rec.ImageSet, err = d.stringValue(fieldImageSet)
		case "thread":
			rec.Thread, err = d.stringValue(fieldThread)
		case "device":
			rec.Device, err = d.stringValue(fieldDevice)
		case "os_version":
			rec.OSVersion, err = d.stringValue(fieldOSVersion)
		case "app_version":
			rec.AppVersion, err = d.stringValue(fieldAppVersion)
		case "timestamp":
			raw, _, ok := d.PlainString()
			if !ok {
				return errSlowPath
			}
			rec.Timestamp, err = d.cache.timestamp(raw)
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
type scanner struct {
	jsonscan.Scanner
	cache *decodeCache
}

// decodeCache is what one decoding goroutine keeps across records: the
// strings and label sets it read, so that records repeating them (the
// thread, the device, the versions, the labels: a stream from a fleet
// repeats few) share one copy instead of allocating their own. Records
// decoded with a cache may share their Labels maps.
type decodeCache struct {
	strings map[string]string
	labels  map[string]map[string]string
	pairs   [][2][]byte
	last    [stringFields]string
	// hourText is the hour ("2026-11-26T01") of the last timestamp read
	// in the common form, and hour its start: records in a row were
	// mostly captured within the hour.
	hourText string
	hour     time.Time
}

// timestamp reads an RFC 3339 time as parseTimestamp does; a time in
// the common form within the hour of the last one read is found from
// that hour's start, without a calendar reckoning (time.Date).
func (c *decodeCache) timestamp(raw []byte) (time.Time, error) {
	if c == nil {
		return parseTimestamp(raw)
	}
	if len(raw) == 20 && c.hourText != "" && string(raw[:13]) == c.hourText && raw[13] == ':' && raw[16] == ':' && raw[19] == 'Z' {
		minute, ok1 := digits(raw[14:16])
		sec, ok2 := digits(raw[17:19])
		if ok1 && ok2 && minute < 60 && sec < 60 {
			return c.hour.Add(time.Duration(minute*60+sec) * time.Second), nil
		}
	}
	t, err := parseTimestamp(raw)
	if err == nil && len(raw) == 20 && raw[19] == 'Z' && t.Nanosecond() == 0 {
		c.hourText, c.hour = string(raw[:13]), t.Add(-time.Duration(t.Minute()*60+t.Second())*time.Second)
	}
	return t, err
}

// maxCached bounds each of a cache's maps, and maxCachedBytes what one
// entry may hold: a cache holds at most 4,096 × 1 KiB per map however
// long a hostile stream's strings are.
const (
	maxCached      = 1 << 12
	maxCachedBytes = 1 << 10
)

func newDecodeCache() *decodeCache {
	return &decodeCache{strings: map[string]string{}, labels: map[string]map[string]string{}}
}

// str returns raw as a string, the cached copy when there is one.
func (c *decodeCache) str(raw []byte) string {
	if c == nil {
		return string(raw)
	}
	if s, ok := c.strings[string(raw)]; ok {
		return s
	}
	s := string(raw)
	if len(c.strings) < maxCached && len(raw) <= maxCachedBytes {
		c.strings[s] = s
	}
	return s
}

// plainString reads a string as jsonscan's PlainString does.
func (d *scanner) plainString() (string, bool) {
	raw, _, ok := d.PlainString()
	return string(raw), ok
}

// The string fields, for the cache's last value of each.
const (
	fieldImageSet = iota
	fieldThread
	fieldDevice
	fieldOSVersion
	fieldAppVersion
	stringFields
)

func (d *scanner) stringValue(field int) (string, error) {
	raw, _, ok := d.PlainString()
	if !ok {
		return "", errSlowPath
	}
	if d.cache == nil {
		return string(raw), nil
	}
	// Records in a row mostly repeat the thread and the versions: the
	// last value of the field is compared before the cache is looked in.
	if last := d.cache.last[field]; string(raw) == last {
		return last, nil
	}
	v := d.cache.str(raw)
	d.cache.last[field] = v
	return v, nil
}

// parseTimestamp reads an RFC 3339 time. The common form, seconds in UTC
// ("2026-11-26T01:02:03Z"), is read here; any other goes to time.Parse.
func parseTimestamp(raw []byte) (time.Time, error) {
	if len(raw) == 20 && raw[4] == '-' && raw[7] == '-' && raw[10] == 'T' && raw[13] == ':' && raw[16] == ':' && raw[19] == 'Z' {
		year, ok1 := digits(raw[0:4])
		month, ok2 := digits(raw[5:7])
		day, ok3 := digits(raw[8:10])
		hour, ok4 := digits(raw[11:13])
		minute, ok5 := digits(raw[14:16])
		sec, ok6 := digits(raw[17:19])
		if ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && month >= 1 && month <= 12 && day >= 1 &&
			day <= daysIn(time.Month(month), year) && hour < 24 && minute < 60 && sec < 60 {
			return time.Date(year, time.Month(month), day, hour, minute, sec, 0, time.UTC), nil
		}
	}
	return time.Parse(time.RFC3339Nano, string(raw))
}

// digits reads a run of decimal digits.
func digits(b []byte) (int, bool) {
	n := 0
	for _, c := range b {
		if c-'0' > 9 {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

func daysIn(m time.Month, year int) int {
	return time.Date(year, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
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
			// Up to 19 digits cannot overflow: only a longer number is
			// read again, checked.
			start := d.I
			for k := 0; k < 2 && len(d.B)-d.I >= 8; k++ {
				x := binary.LittleEndian.Uint64(d.B[d.I:])
				if !eightDigits(x) {
					break
				}
				v = v*100_000_000 + parseEightDigits(x)
				d.I += 8
			}
			for d.I < len(d.B) && d.B[d.I]-'0' <= 9 {
				v = v*10 + uint64(d.B[d.I]-'0')
				d.I++
			}
			if d.I == start || (d.B[start] == '0' && d.I-start > 1) {
				return errSlowPath
			}
			if d.I-start > 19 {
				var err error
				if v, err = strconv.ParseUint(string(d.B[start:d.I]), 10, 64); err != nil {
					return errSlowPath // more than 64 bits: the slow path words the error
				}
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

// eightDigits reports whether the 8 bytes of x, read little-endian, are
// all decimal digits; parseEightDigits reads them as a number, the first
// byte the most significant. Eight digits are read in a few
// multiplications instead of eight steps (simdjson's method).
func eightDigits(x uint64) bool {
	return (x&0xf0f0f0f0f0f0f0f0)|((x+0x0606060606060606)&0xf0f0f0f0f0f0f0f0)>>4 == 0x3333333333333333
}

func parseEightDigits(x uint64) uint64 {
	x -= 0x3030303030303030
	x = x*10 + x>>8 // pairs of digits
	x = ((x&0x000000ff000000ff)*(100+1_000_000<<32) + (x>>16&0x000000ff000000ff)*(1+10_000<<32)) >> 32
	return uint64(uint32(x))
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
// encoding/json. With a cache, records whose labels are spelled alike
// share one map.
func (d *scanner) labels(rec *Record) error {
	start := d.I
	if !d.Eat('{') {
		return d.viaJSON(&rec.Labels)
	}
	var pairs [][2][]byte
	if d.cache != nil {
		pairs = d.cache.pairs[:0]
	}
	d.Space()
	if !d.Eat('}') {
		for {
			d.Space()
			k, _, ok := d.PlainString()
			d.Space()
			if !ok || !d.Eat(':') {
				d.I = start
				return d.viaJSON(&rec.Labels)
			}
			d.Space()
			v, _, ok := d.PlainString()
			if !ok || len(pairs) == MaxLabels {
				d.I = start
				return d.viaJSON(&rec.Labels)
			}
			pairs = append(pairs, [2][]byte{k, v})
			d.Space()
			if d.Eat(',') {
				continue
			}
			if d.Eat('}') {
				break
			}
			d.I = start
			return d.viaJSON(&rec.Labels)
		}
	}
	if d.cache == nil {
		rec.Labels = labelMap(pairs, nil)
		return nil
	}
	d.cache.pairs = pairs
	raw := d.B[start:d.I]
	if m, ok := d.cache.labels[string(raw)]; ok {
		rec.Labels = m
		return nil
	}
	rec.Labels = labelMap(pairs, d.cache)
	if len(d.cache.labels) < maxCached && len(raw) <= maxCachedBytes {
		d.cache.labels[string(raw)] = rec.Labels
	}
	return nil
}

// labelMap makes a record's labels of their keys and values; a key given
// twice keeps its last value, as encoding/json does.
func labelMap(pairs [][2][]byte, cache *decodeCache) map[string]string {
	m := make(map[string]string, len(pairs))
	for _, kv := range pairs {
		m[cache.str(kv[0])] = cache.str(kv[1])
	}
	return m
}

// viaJSON decodes the value at the cursor with encoding/json.
func (d *scanner) viaJSON(v any) error {
	if !d.Decode(v) {
		return errSlowPath
	}
	return nil
}
