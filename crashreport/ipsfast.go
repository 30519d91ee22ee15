package crashreport

import (
	"github.com/stackimage/stackimage/internal/jsonscan"
)

// readFast fills b from body, the payload object of an .ips report, in
// one pass over the bytes. The token stream (jsonStream) costs about two
// microseconds per frame, through encoding/json's tokens and one
// json.Unmarshal per frame object; a report of 100 threads of 30 frames
// took 7 ms. Here frames and images are read by hand straight into the
// model, and the other fields through json.Unmarshal of their value, as
// the stream decodes them.
//
// It reports false for anything it is not sure to read exactly as the
// stream does (invalid JSON, a value of another type, a null, a string
// with escapes in a key, a key that matches a field only without regard
// to case, a frame without an in-range imageIndex, anything over the
// limits): b is then thrown away, and the stream reads body again and
// words what is wrong. A report read here has no problem the stream would
// have recorded, so the two give the same Report (TestIPSFastMatchesStream,
// FuzzIPSFastMatchesStream).
func (b *ipsBody) readFast(body []byte) bool {
	s := ipsScanner{jsonscan.Scanner{B: body}}
	if s.Space(); !s.Eat('{') {
		return false
	}
	for first := true; ; first = false {
		key, done, ok := s.nextKey(first)
		if !ok {
			return false
		}
		if done {
			break
		}
		if !b.fastField(&s, key) {
			return false
		}
	}
	s.Space()
	if s.I != len(s.B) || !b.haveImages {
		return false
	}
	for _, t := range b.threads {
		for _, f := range t.fastFrames {
			if f.ImageIndex < 0 || f.ImageIndex >= len(b.images) {
				return false // the stream words the error
			}
		}
	}
	if b.stacks != nil {
		for _, k := range b.stacks.imageIndex {
			if int(k) >= len(b.images) {
				return false
			}
		}
	}
	b.fast = true
	return true
}

// fastField reads the value of one top-level key; the keys are those of
// ipsBody.field, matched exactly as there.
func (b *ipsBody) fastField(s *ipsScanner, key []byte) bool {
	ok := true
	switch string(key) {
	case "procName":
		b.procName, ok = s.str()
	case "procPath":
		b.procPath, ok = s.str()
	case "pid":
		ok = s.Decode(&b.pid)
	case "cpuType":
		b.cpuType, ok = s.str()
	case "captureTime":
		b.captureTime, ok = s.str()
	case "incident":
		b.incident, ok = s.str()
	case "modelCode":
		b.modelCode, ok = s.str()
	case "osVersion":
		var v struct{ Train, Build string }
		ok = s.Decode(&v)
		b.osTrain, b.osBuild = v.Train, v.Build
	case "bundleInfo":
		var v struct {
			Short   string `json:"CFBundleShortVersionString"`
			Version string `json:"CFBundleVersion"`
			ID      string `json:"CFBundleIdentifier"`
		}
		ok = s.Decode(&v)
		b.bundleShortVersion, b.bundleVersion, b.bundleID = v.Short, v.Version, v.ID
	case "exception":
		ok = s.Decode(&b.exception)
	case "asi":
		ok = s.Decode(&b.asi)
	case "faultingThread":
		v := new(int64)
		if ok = s.Decode(v); ok {
			b.faultingThread = v
		}
	case "threads":
		ok = b.fastThreads(s)
	case "usedImages":
		b.haveImages = true
		ok = b.fastImages(s)
	case "lastExceptionBacktrace":
		if !s.Eat('[') {
			return false
		}
		for first := true; ; first = false {
			if done, ok := s.nextElement(first, len(b.lastException), MaxFrames); !ok || done {
				return ok
			}
			raw, ok := s.Value()
			if !ok {
				return false
			}
			b.lastException = append(b.lastException, raw)
		}
	default:
		_, ok = s.Value()
	}
	return ok
}

// fastThreads reads the threads array, each thread's frames converted.
func (b *ipsBody) fastThreads(s *ipsScanner) bool {
	if !s.Eat('[') {
		return false
	}
	lastLen := 0 // frames of the last thread read
	for first := true; ; first = false {
		if done, ok := s.nextElement(first, len(b.threads), MaxThreads); !ok || done {
			return ok
		}
		b.threads = append(b.threads, ipsThread{})
		t := &b.threads[len(b.threads)-1]
		if !s.Eat('{') {
			return false
		}
		for first := true; ; first = false {
			key, done, ok := s.nextKey(first)
			if !ok {
				return false
			}
			if done {
				break
			}
			// The keys of ipsThread.field, matched exactly as there.
			switch string(key) {
			case "id":
				var v uint64
				v, ok = s.num()
				t.ID = num(v)
			case "name":
				t.Name, ok = s.str()
			case "queue":
				t.Queue, ok = s.str()
			case "triggered":
				t.Triggered, ok = s.boolean()
			case "threadState":
				ok = s.Decode(&t.ThreadState)
			case "frames":
				if b.stacks != nil {
					t.stackFrames.start = len(b.stacks.frames)
					ok = s.stackFrames(b.stacks)
					t.stackFrames.end = len(b.stacks.frames)
					break
				}
				// Frames are read into the slice the report keeps, made
				// as long as the last thread's: threads of one report
				// tend to be alike, and copying frames, which hold
				// pointers, cost a fifth of the time.
				t.fastFrames, ok = s.frames(make([]Frame, 0, max(lastLen, 16)))
				lastLen = len(t.fastFrames)
				if lastLen == 0 {
					t.fastFrames = nil
				}
			default:
				_, ok = s.Value()
			}
			if !ok {
				return false
			}
		}
	}
}

// fastImages reads the usedImages array.
func (b *ipsBody) fastImages(s *ipsScanner) bool {
	if !s.Eat('[') {
		return false
	}
	for first := true; ; first = false {
		if done, ok := s.nextElement(first, len(b.images), MaxImages); !ok || done {
			return ok
		}
		var im ipsImage
		if !s.image(&im) {
			return false
		}
		b.images = append(b.images, im)
	}
}

// ipsFrameFields are the JSON names of ipsFrame's fields.
var ipsFrameFields = []string{"imageIndex", "imageOffset", "symbol", "symbolLocation", "sourceFile", "sourceLine", "inline"}

// frames reads an array of frame objects, appending them to out.
func (s *ipsScanner) frames(out []Frame) ([]Frame, bool) {
	if !s.Eat('[') {
		return out, false
	}
	for first := true; ; first = false {
		if done, ok := s.nextElement(first, len(out), MaxFrames); !ok || done {
			return out, ok
		}
		if offset, index, ok := s.plainFrame(); ok {
			out = append(out, Frame{ImageIndex: index, ImageOffset: offset})
			continue
		}
		out = append(out, Frame{ImageIndex: -1})
		if !s.frame(&out[len(out)-1]) {
			return out, false
		}
	}
}

// stackFrames reads an array of frame objects into st.frames, each
// frame's image in st.imageIndex.
func (s *ipsScanner) stackFrames(st *Stacks) bool {
	if !s.Eat('[') {
		return false
	}
	for first, n := true, 0; ; first, n = false, n+1 {
		if done, ok := s.nextElement(first, n, MaxFrames); !ok || done {
			return ok
		}
		// The offset becomes an address once the images are known.
		if offset, index, ok := s.plainFrame(); ok {
			st.frames = append(st.frames, StackFrame{Address: offset})
			st.imageIndex = append(st.imageIndex, int32(index))
			continue
		}
		f := Frame{ImageIndex: -1}
		if !s.frame(&f) {
			return false
		}
		st.frames = append(st.frames, StackFrame{Address: f.ImageOffset, Symbol: f.Symbol, Inlined: f.Inlined})
		st.imageIndex = append(st.imageIndex, int32(f.ImageIndex))
	}
}

// plainFrame reads a frame written as most are when the reporter names
// no function, {"imageOffset":N,"imageIndex":M} with nothing else and no
// space, as frame reads it; for any other it reports false, the cursor
// where it was, and frame reads it. It spares the frames of hang reports
// by the thousand frame's loop over their keys.
func (s *ipsScanner) plainFrame() (offset uint64, index int, ok bool) {
	start := s.I
	if !s.literal(`{"imageOffset":`) {
		return 0, 0, false
	}
	offset, ok = s.uint()
	if ok && s.literal(`,"imageIndex":`) {
		var v uint64
		v, ok = s.uint()
		if ok && v <= MaxImages && s.Eat('}') {
			return offset, int(v), true
		}
	}
	s.I = start
	return 0, 0, false
}

// literal reads text when the input has exactly that next.
func (s *ipsScanner) literal(text string) bool {
	if len(s.B)-s.I < len(text) || string(s.B[s.I:s.I+len(text)]) != text {
		return false
	}
	s.I += len(text)
	return true
}

// keyImageOffset and keyImageIndex are the keys literalKey finds.
var keyImageOffset, keyImageIndex = []byte("imageOffset"), []byte("imageIndex")

// frame reads one frame object into f, a Frame{ImageIndex: -1}, as
// json.Unmarshal reads it into an ipsFrame and ipsBody.frames converts
// that, for a frame with an imageIndex (checked against the images once
// they are known).
func (s *ipsScanner) frame(f *Frame) bool {
	if !s.Eat('{') {
		return false
	}
	var symbolLocation uint64
	haveIndex, haveLocation := false, false
	for first := true; ; first = false {
		done, ok := s.nextMember(first)
		if !ok {
			return false
		}
		if done {
			break
		}
		var key []byte
		switch {
		case s.literalKey(`"imageOffset":`):
			key = keyImageOffset
		case s.literalKey(`"imageIndex":`):
			key = keyImageIndex
		default:
			if key, ok = s.key(); !ok {
				return false
			}
		}
		switch string(key) {
		case "imageIndex":
			var v uint64
			v, ok = s.uint()
			// A negative index is out of range whatever the images.
			f.ImageIndex, haveIndex = int(v), true
			ok = ok && v <= MaxImages
		case "imageOffset":
			f.ImageOffset, ok = s.num()
		case "symbol":
			f.Symbol, ok = s.str()
		case "symbolLocation":
			symbolLocation, ok = s.num()
			haveLocation = true
		case "sourceFile":
			f.File, ok = s.str()
		case "sourceLine":
			var v uint64
			v, ok = s.uint()
			f.Line = int(v)
		case "inline":
			f.Inlined, ok = s.boolean()
		default:
			ok = s.otherKey(key, ipsFrameFields)
		}
		if !ok {
			return false
		}
	}
	if f.Symbol != "" && haveLocation {
		f.SymbolOffset, f.HasSymbolOffset = symbolLocation, true
	}
	return haveIndex
}

// ipsImageFields are the JSON names of ipsImage's fields.
var ipsImageFields = []string{"uuid", "base", "size", "arch", "name", "path"}

// image reads a usedImages entry as json.Unmarshal reads it into an
// ipsImage.
func (s *ipsScanner) image(im *ipsImage) bool {
	if !s.Eat('{') {
		return false
	}
	for first := true; ; first = false {
		key, done, ok := s.nextKey(first)
		if !ok {
			return false
		}
		if done {
			return true
		}
		var v uint64
		switch string(key) {
		case "uuid":
			im.UUID, ok = s.str()
		case "base":
			v, ok = s.num()
			im.Base = num(v)
		case "size":
			v, ok = s.num()
			im.Size = num(v)
		case "arch":
			im.Arch, ok = s.str()
		case "name":
			im.Name, ok = s.str()
		case "path":
			im.Path, ok = s.str()
		default:
			ok = s.otherKey(key, ipsImageFields)
		}
		if !ok {
			return false
		}
	}
}

// ipsScanner reads an .ips payload with the shared JSON primitives.
// Each method reports false when the input is not what it reads, leaving
// the cursor anywhere.
type ipsScanner struct{ jsonscan.Scanner }

// nextKey reads the next key of an object, and the colon after it,
// leaving the scanner at the key's value; first says the object's '{'
// was just read. done is true at the object's '}'. Keys must be ASCII
// without escapes: encoding/json unescapes keys and matches struct
// fields by Unicode case folding, which the scanner does not.
func (s *ipsScanner) nextKey(first bool) (key []byte, done, ok bool) {
	if done, ok := s.nextMember(first); !ok || done {
		return nil, done, ok
	}
	key, ok = s.key()
	return key, false, ok
}

// nextMember moves to the next member of an object, its key; first says
// the object's '{' was just read. done is true at the object's '}'.
func (s *ipsScanner) nextMember(first bool) (done, ok bool) {
	return s.next('}', first)
}

// next moves past the ',' before the next member or element of an object
// or array that ends at end; first says its opening bracket was just
// read. done is true at end, which is read.
func (s *ipsScanner) next(end byte, first bool) (done, ok bool) {
	s.Space()
	if s.I >= len(s.B) {
		return false, false
	}
	if s.B[s.I] == end {
		s.I++
		return true, true
	}
	if !first {
		if s.B[s.I] != ',' {
			return false, false
		}
		s.I++
		s.Space()
	}
	return false, true
}

// key reads a key, as nextKey, and the colon after it.
func (s *ipsScanner) key() ([]byte, bool) {
	key, ascii, ok := s.PlainString()
	if !ok || !ascii {
		return nil, false
	}
	if s.Space(); !s.Eat(':') {
		return nil, false
	}
	s.Space()
	return key, true
}

// literalKey reads quotedKey, a key in its quotes and the colon after
// them, when the input has exactly that next, and the space after it.
// Frames are written by the thousand with the same few keys, which it
// finds with one comparison where key would scan the string and the
// caller match it.
func (s *ipsScanner) literalKey(quotedKey string) bool {
	if !s.literal(quotedKey) {
		return false
	}
	s.Space()
	return true
}

// nextElement moves to the next element of an array of at most max
// elements, n of which were read; first says the array's '[' was just
// read. done is true at the array's ']'.
func (s *ipsScanner) nextElement(first bool, n, max int) (done, ok bool) {
	done, ok = s.next(']', first)
	return done, ok && (done || n < max)
}

// otherKey skips the value of key, which is none of fields, the JSON
// names of a struct's fields. A key matching one of them without regard
// to case, which encoding/json would fill, is not read.
func (s *ipsScanner) otherKey(key []byte, fields []string) bool {
	for _, f := range fields {
		if asciiEqualFold(f, key) {
			return false
		}
	}
	_, ok := s.Value()
	return ok
}

func asciiEqualFold(a string, b []byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range len(a) {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// str reads a string. One with escapes or bytes that are not UTF-8 goes
// through json.Unmarshal, which unescapes and replaces them.
func (s *ipsScanner) str() (string, bool) {
	if raw, _, ok := s.PlainString(); ok {
		return string(raw), true
	}
	if s.I >= len(s.B) || s.B[s.I] != '"' {
		return "", false
	}
	return s.strViaJSON()
}

func (s *ipsScanner) strViaJSON() (string, bool) {
	var v string
	ok := s.Decode(&v)
	return v, ok
}

// uint reads a non-negative integer of at most 18 digits, which fits the
// integer types of every field, as JSON writes it (no leading zeros).
// A fraction or exponent makes the number a float, which integer fields
// refuse: the caller then finds the '.' or 'e' where it wants a ',' and
// gives up.
//
// It reads a local slice, not the cursor, which keeps it small enough to
// be inlined: it reads every frame's numbers.
func (s *ipsScanner) uint() (uint64, bool) {
	b := s.B[s.I:]
	var v uint64
	n := 0
	for n < len(b) && b[n] >= '0' && b[n] <= '9' {
		v = v*10 + uint64(b[n]-'0')
		n++
	}
	s.I += n
	return v, n > 0 && n <= 18 && (n == 1 || b[0] != '0')
}

// num reads a num field: a plain integer here, anything else (a hex
// string, a negative or large number, null) by num.UnmarshalJSON through
// json.Unmarshal.
func (s *ipsScanner) num() (uint64, bool) {
	start := s.I
	if v, ok := s.uint(); ok {
		return v, true
	}
	s.I = start
	var v num
	ok := s.Decode(&v)
	return uint64(v), ok
}

func (s *ipsScanner) boolean() (bool, bool) {
	rest := s.B[s.I:]
	switch {
	case len(rest) >= 4 && string(rest[:4]) == "true":
		s.I += 4
		return true, true
	case len(rest) >= 5 && string(rest[:5]) == "false":
		s.I += 5
		return false, true
	}
	return false, false
}
