package symbolicator

import (
	"bytes"
	"encoding/json"

	"github.com/stackimage/stackimage/internal/hexnum"
	"github.com/stackimage/stackimage/internal/jsonscan"
)

// Reading a /symbolicate request through encoding/json's reflection was a
// fifth of a warm request's time: encoding/json scans the body once to
// check it, again to find where the frames end, and the frames a third
// time. A request of the usual shape is read here by hand, in one pass:
// objects of the fields below, spelled as symbolicator spells them, with
// plain strings (no escapes), addresses as "0x…" strings or digits, and
// any other field skipped once checked. Anything else (an escape in a key,
// a key spelled in another case, a field given twice where encoding/json
// would merge the two, a value of another type) is read by encoding/json
// as before, which then also says what is wrong. TestRequestDecodeAsJSON,
// TestFramesDecodeAsJSON, FuzzRequest and FuzzFrames hold the two to the
// same answers.
//
// Unlike the frames inside a body encoding/json has checked, a body read
// here is checked by this reader alone: it accepts only valid JSON.

// DecodeRequest reads a POST /symbolicate body into req. As
// json.Decoder.Decode does, it reads the first JSON value and ignores
// whatever follows it. Nothing in req refers to body afterwards.
func DecodeRequest(body []byte, req *Request) error {
	r := newRequestReader(body)
	if r.request(req) {
		return nil
	}
	*req = Request{}
	return json.NewDecoder(bytes.NewReader(body)).Decode(req)
}

// Frames are a stack trace's frames.
type Frames []Frame

// UnmarshalJSON reads the frames of a request encoding/json reads: by
// hand when they have the usual shape.
func (fs *Frames) UnmarshalJSON(b []byte) error {
	if out, ok := parseFrames(b); ok {
		*fs = out
		return nil
	}
	var plain []Frame
	if err := json.Unmarshal(b, &plain); err != nil {
		return err
	}
	*fs = plain
	return nil
}

// parseFrames reads a JSON array of frames and nothing after it; ok is
// false when it holds anything but the usual shape.
func parseFrames(b []byte) (Frames, bool) {
	r := newRequestReader(b)
	r.Space()
	out, ok := r.frames()
	r.Space()
	return out, ok && r.I == len(b)
}

// requestReader reads a request by hand; each method reports false at the
// first thing it does not read, and the caller leaves the whole request
// to encoding/json.
type requestReader struct {
	jsonscan.Scanner
	// frameSlab has room for every frame of the input: the stack traces'
	// frames are read into it one after another, so that a request's
	// frames take one allocation rather than a growing slice each. It is
	// made at the first frame.
	frameSlab Frames
}

func newRequestReader(b []byte) requestReader {
	return requestReader{Scanner: jsonscan.Scanner{B: b}}
}

// slab returns a slice with room for the rest of the input's frames.
func (r *requestReader) slab() Frames {
	if r.frameSlab == nil {
		// Every frame is an object, so the count of opening braces is
		// enough (counting one byte is vectorized, and several times as
		// fast as counting the frames' key); where a brace is not a
		// frame's (another object, a string holding one), it gives a few
		// bytes of room per byte of input, no more.
		r.frameSlab = make(Frames, 0, bytes.Count(r.B, []byte{'{'}))
	}
	return r.frameSlab[len(r.frameSlab):]
}

// The fields each object of a request has, as symbolicator spells them.
var (
	requestFields    = []string{"stacktraces", "modules", "threads", "platform", "signal", "sources", "options"}
	stacktraceFields = []string{"frames", "registers"}
	frameFields      = []string{"instruction_addr", "addr_mode", "trust", "adjust_instruction_addr"}
	moduleFields     = []string{"type", "debug_id", "code_id", "debug_file", "code_file", "image_addr", "image_size"}
)

// object reads an object, calling member with the index in known of each
// of its keys, after the key's colon; other keys' values are skipped once
// checked. A key given twice is refused unless twice is true (the members
// are then plain values, which encoding/json too overwrites).
func (r *requestReader) object(known []string, twice bool, member func(i int) bool) bool {
	if !r.Eat('{') {
		return false
	}
	r.Space()
	if r.Eat('}') {
		return true
	}
	var seen uint64
	for {
		i, ok := r.key(known)
		if !ok {
			return false
		}
		if i < 0 {
			if _, ok := r.Value(); !ok {
				return false
			}
		} else {
			if !twice && seen&(1<<i) != 0 {
				return false
			}
			seen |= 1 << i
			if !member(i) {
				return false
			}
		}
		r.Space()
		if r.Eat(',') {
			r.Space()
			continue
		}
		return r.Eat('}')
	}
}

// key reads an object key and its colon, returning its index in known,
// or -1 for a key not there. A key encoding/json would take for a known
// one (it matches keys regardless of case, and folds some non-ASCII
// letters to ASCII ones) is refused.
func (r *requestReader) key(known []string) (int, bool) {
	raw, ascii, ok := r.PlainString()
	if !ok || !ascii {
		return 0, false
	}
	r.Space()
	if !r.Eat(':') {
		return 0, false
	}
	r.Space()
	for i, k := range known {
		if string(raw) == k {
			return i, true
		}
	}
	for _, k := range known {
		if bytes.EqualFold(raw, []byte(k)) {
			return 0, false
		}
	}
	return -1, true
}

// array reads an array, calling elem at the start of each element.
func (r *requestReader) array(elem func() bool) bool {
	if !r.Eat('[') {
		return false
	}
	r.Space()
	if r.Eat(']') {
		return true
	}
	for {
		if !elem() {
			return false
		}
		r.Space()
		if r.Eat(',') {
			r.Space()
			continue
		}
		return r.Eat(']')
	}
}

// request reads a whole request.
func (r *requestReader) request(req *Request) bool {
	r.Space()
	return r.object(requestFields, false, func(i int) bool {
		switch requestFields[i] {
		case "stacktraces":
			return r.stacktraces(&req.Stacktraces)
		case "modules":
			req.Modules = []Module{}
			return r.array(func() bool {
				var m Module
				ok := r.module(&m)
				req.Modules = append(req.Modules, m)
				return ok
			})
		case "threads":
			return r.stacktraces(&req.Threads)
		case "platform":
			return r.Decode(&req.Platform)
		case "signal":
			return r.Decode(&req.Signal)
		case "sources":
			return r.Decode(&req.Sources) // json.RawMessage copies
		case "options":
			return r.Decode(&req.Options)
		}
		return false
	})
}

func (r *requestReader) stacktraces(out *[]Stacktrace) bool {
	*out = []Stacktrace{}
	return r.array(func() bool {
		var st Stacktrace
		ok := r.object(stacktraceFields, false, func(i int) bool {
			if i == 0 {
				fs, ok := r.frames()
				st.Frames = fs
				return ok
			}
			return r.registers(&st.Registers)
		})
		*out = append(*out, st)
		return ok
	})
}

// registers reads an object of register names and addresses.
func (r *requestReader) registers(out *map[string]Hex) bool {
	if !r.Eat('{') {
		return false
	}
	regs := map[string]Hex{}
	*out = regs
	r.Space()
	if r.Eat('}') {
		return true
	}
	for {
		name, _, ok := r.PlainString()
		if !ok {
			return false
		}
		r.Space()
		if !r.Eat(':') {
			return false
		}
		r.Space()
		v, ok := r.address()
		if !ok {
			return false
		}
		regs[string(name)] = Hex(v)
		r.Space()
		if r.Eat(',') {
			r.Space()
			continue
		}
		return r.Eat('}')
	}
}

// frames reads a JSON array of frames.
func (r *requestReader) frames() (Frames, bool) {
	out := Frames{}
	ok := r.array(func() bool {
		if len(out) == 0 {
			out = r.slab()
		}
		var f Frame
		ok := r.object(frameFields, true, func(i int) bool { return r.frameField(i, &f) })
		out = append(out, f)
		return ok
	})
	if len(out) > 0 && cap(out) == cap(r.frameSlab)-len(r.frameSlab) {
		// Read into the slab (a slice that outgrew it has a larger
		// capacity): the next stack trace's frames follow these.
		r.frameSlab = r.frameSlab[:len(r.frameSlab)+len(out)]
	}
	// Capped, so that appending to one stack trace's frames never
	// writes over the next one's.
	return out[:len(out):len(out)], ok
}

func (r *requestReader) frameField(i int, f *Frame) bool {
	switch i {
	case 0: // instruction_addr
		v, ok := r.address()
		f.InstructionAddr = Hex(v)
		return ok
	case 1: // addr_mode
		return r.text(&f.AddrMode)
	case 2: // trust
		return r.text(&f.Trust)
	case 3: // adjust_instruction_addr
		switch {
		case r.literal("true"):
			yes := true
			f.AdjustInstructionAddr = &yes
		case r.literal("false"):
			no := false
			f.AdjustInstructionAddr = &no
		case r.literal("null"):
			f.AdjustInstructionAddr = nil
		default:
			return false
		}
		return true
	}
	return false
}

func (r *requestReader) module(m *Module) bool {
	return r.object(moduleFields, true, func(i int) bool {
		switch i {
		case 0:
			return r.text(&m.Type)
		case 1:
			return r.text(&m.DebugID)
		case 2:
			return r.text(&m.CodeID)
		case 3:
			return r.text(&m.DebugFile)
		case 4:
			return r.text(&m.CodeFile)
		case 5:
			v, ok := r.address()
			m.ImageAddr = Hex(v)
			return ok
		case 6:
			if r.literal("null") {
				m.ImageSize = nil
				return true
			}
			v, ok := r.address()
			size := Hex(v)
			m.ImageSize = &size
			return ok
		}
		return false
	})
}

// text reads a plain string into s, as a copy.
func (r *requestReader) text(s *string) bool {
	raw, _, ok := r.PlainString()
	if ok {
		*s = string(raw)
	}
	return ok
}

// literal reads the word lit (true, false or null).
func (r *requestReader) literal(lit string) bool {
	if !bytes.HasPrefix(r.B[r.I:], []byte(lit)) {
		return false
	}
	r.I += len(lit)
	return true
}

// address reads an address as Hex does: a string, "0x…" in hex,
// else decimal, or a JSON number of digits alone.
func (r *requestReader) address() (uint64, bool) {
	if r.I < len(r.B) && r.B[r.I] == '"' {
		raw, _, ok := r.PlainString()
		if !ok {
			return 0, false
		}
		return parseAddress(raw)
	}
	return parseAddress(r.number())
}

// number reads a JSON number made of digits alone, as JSON spells it (no
// leading zero); nil for anything else.
func (r *requestReader) number() []byte {
	b, start := r.B, r.I
	i := start
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	switch {
	case i == start, b[start] == '0' && i > start+1:
		return nil
	case i < len(b) && (b[i] == '.' || b[i] == 'e' || b[i] == 'E'):
		return nil // a fraction or an exponent: encoding/json's
	}
	r.I = i
	return b[start:i]
}

// parseAddress reads an address as Hex does: "0x…" in hex, else
// decimal.
func parseAddress(s []byte) (uint64, bool) {
	if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		return hexnum.Parse(s[2:])
	}
	if len(s) == 0 {
		return 0, false
	}
	var v uint64
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > maxUint64/10 || v == maxUint64/10 && d > maxUint64%10 {
			return 0, false // overflow
		}
		v = v*10 + d
	}
	return v, true
}

const maxUint64 = ^uint64(0)
