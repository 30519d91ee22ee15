package metrickit

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/stackimage/stackimage/internal/jsonscan"
	"github.com/stackimage/stackimage/uuid"
)

// maxErrors bounds the field errors joined into Parse's error; more are
// counted.
const maxErrors = 10

// maxWarnings bounds Input.Warnings; more are counted in the last.
const maxWarnings = 20

// Error is an error about one place of the input: the JSON path of the
// field ("crashDiagnostics[0].callStackTree.callStacks[1].callStackRootFrames[0].address"),
// the byte offset where its value starts, and what is wrong.
type Error struct {
	Path   string
	Offset int
	Msg    string
}

func (e *Error) Error() string {
	path := e.Path
	if path == "" {
		path = "the document"
	}
	return fmt.Sprintf("metrickit: %s: %s (byte %d)", path, e.Msg, e.Offset)
}

// Parse reads a MetricKit input: a payload, an array of payloads, or a
// bare call stack tree. Fields it does not know are skipped; a field of
// the wrong type is an error naming it, the rest being read; malformed
// JSON stops the reading there. Whatever could be read comes back with
// the error: the Input is nil only when nothing was.
func Parse(data []byte) (*Input, error) {
	if len(data) > MaxInputSize {
		return nil, fmt.Errorf("metrickit: input of %d bytes is larger than %d", len(data), MaxInputSize)
	}
	r := &reader{s: jsonscan.Scanner{B: data}, in: &Input{}, binaries: map[binaryKey]int32{}, names: map[string]string{}}
	r.document()
	in := r.in
	if r.warned > maxWarnings {
		in.Warnings = append(in.Warnings, fmt.Sprintf("%d more warnings", r.warned-maxWarnings))
	}
	errs := r.errs
	if r.nerrs > len(errs) {
		errs = append(errs, fmt.Errorf("metrickit: %d more errors", r.nerrs-len(errs)))
	}
	err := errors.Join(errs...)
	if r.fatal != nil {
		err = errors.Join(append(errs, r.fatal)...)
	}
	if in.Shape == "" {
		return nil, err
	}
	return in, err
}

// reader is Parse's state: the cursor, the JSON path to the value being
// read, and what has been read.
type reader struct {
	s    jsonscan.Scanner
	path []step
	in   *Input

	binaries map[binaryKey]int32
	names    map[string]string // binary names, each kept once
	nframes  int               // frames read so far

	errs    []error
	nerrs   int
	fatal   error // malformed JSON: nothing after it is read
	warned  int
	unknown map[string]bool // unknown field names already warned of
	cutDeep bool            // frames deeper than MaxDepth were left out
	cutMany bool            // frames past MaxFrames were left out
	clamped bool            // a sampleCount above MaxSampleCount was clamped
}

type binaryKey struct {
	id   uuid.UUID
	name string
}

// step is one step of a JSON path: an object's key, or an array's index
// when key is empty.
type step struct {
	key   string
	index int
}

func (r *reader) pushKey(k string) { r.path = append(r.path, step{key: k}) }
func (r *reader) pushIndex(i int)  { r.path = append(r.path, step{index: i}) }
func (r *reader) pop()             { r.path = r.path[:len(r.path)-1] }

// pathString spells the current path.
func (r *reader) pathString() string {
	var b strings.Builder
	for _, s := range r.path {
		if s.key != "" {
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.key)
		} else {
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(s.index))
			b.WriteByte(']')
		}
	}
	return b.String()
}

// failSyntax records malformed JSON at the cursor; reading stops.
func (r *reader) failSyntax(msg string) {
	if r.fatal == nil {
		r.fatal = &Error{Path: r.pathString(), Offset: r.s.I, Msg: msg}
	}
}

// fieldError records a value of the wrong kind at offset; the reading
// goes on.
func (r *reader) fieldError(offset int, format string, args ...any) {
	r.nerrs++
	if len(r.errs) < maxErrors {
		r.errs = append(r.errs, &Error{Path: r.pathString(), Offset: offset, Msg: fmt.Sprintf(format, args...)})
	}
}

func (r *reader) warn(format string, args ...any) {
	r.warned++
	if r.warned <= maxWarnings {
		r.in.Warnings = append(r.in.Warnings, fmt.Sprintf(format, args...))
	}
}

func (r *reader) ok() bool { return r.fatal == nil }

// document reads the top-level value.
func (r *reader) document() {
	if len(r.s.B) >= 3 && string(r.s.B[:3]) == "\ufeff" {
		r.s.I = 3 // a byte order mark some editors write
	}
	r.s.Space()
	if r.s.I < len(r.s.B) && r.s.B[r.s.I] == '[' {
		r.in.Shape = ShapePayloads
		r.s.I++
		for i := 0; r.element(i); i++ {
			r.pushIndex(i)
			r.in.Payloads = append(r.in.Payloads, Payload{})
			if r.peek() != '{' {
				r.fieldError(r.s.I, "want a payload (an object), got %s", r.describe())
				r.skip()
			} else {
				r.payloadOrTree(&r.in.Payloads[len(r.in.Payloads)-1], false)
			}
			r.pop()
		}
	} else if r.peek() == '{' {
		r.in.Shape = ShapePayload
		r.in.Payloads = []Payload{{}}
		r.payloadOrTree(&r.in.Payloads[0], true)
	} else {
		r.failSyntax("want a MetricKit payload (an object) or an array of payloads")
		return
	}
	if !r.ok() {
		return
	}
	r.s.Space()
	if r.s.I < len(r.s.B) {
		r.failSyntax("data after the document")
	}
}

// peek returns the next byte after whitespace, 0 at the end.
func (r *reader) peek() byte {
	r.s.Space()
	if r.s.I >= len(r.s.B) {
		return 0
	}
	return r.s.B[r.s.I]
}

// describe names the kind of value at the cursor, for an error.
func (r *reader) describe() string {
	switch c := r.peek(); {
	case c == '{':
		return "an object"
	case c == '[':
		return "an array"
	case c == '"':
		return "a string"
	case c == 't' || c == 'f':
		return "a boolean"
	case c == 'n':
		return "null"
	case c == '-' || c >= '0' && c <= '9':
		end, ok := jsonscan.ValueEnd(r.s.B, r.s.I)
		if !ok || end < r.s.I {
			end = len(r.s.B)
		}
		return "the number " + string(r.s.B[r.s.I:min(end, r.s.I+32)])
	case c == 0:
		return "the end of the input"
	}
	return fmt.Sprintf("%q", r.s.B[r.s.I])
}

// member reads the next key of an object whose '{' was read (first) or
// whose previous value was: false at its '}' or on malformed JSON.
func (r *reader) member(first bool) (key []byte, more bool) {
	if !r.ok() {
		return nil, false
	}
	c := r.peek()
	if c == '}' {
		r.s.I++
		return nil, false
	}
	if c == 0 {
		r.failSyntax("the input ends inside an object")
		return nil, false
	}
	if !first {
		if c != ',' {
			r.failSyntax("want ',' or '}' after an object's member")
			return nil, false
		}
		r.s.I++
		r.s.Space()
	}
	key, ok := r.stringValue()
	if !ok {
		r.failSyntax("want an object key (a string)")
		return nil, false
	}
	if r.peek() != ':' {
		r.failSyntax("want ':' after an object key")
		return nil, false
	}
	r.s.I++
	r.s.Space()
	return key, true
}

// element reads up to the next element of an array whose '[' was read:
// false at its ']' or on malformed JSON. i is the element's index.
func (r *reader) element(i int) bool {
	if !r.ok() {
		return false
	}
	c := r.peek()
	if c == ']' {
		r.s.I++
		return false
	}
	if c == 0 {
		r.failSyntax("the input ends inside an array")
		return false
	}
	if i > 0 {
		if c != ',' {
			r.failSyntax("want ',' or ']' after an array's element")
			return false
		}
		r.s.I++
		r.s.Space()
	}
	if r.s.I >= len(r.s.B) {
		r.failSyntax("the input ends inside an array")
		return false
	}
	return true
}

// stringValue reads a string, unescaped; false (the cursor unmoved) for
// any other value.
func (r *reader) stringValue() ([]byte, bool) {
	if raw, _, ok := r.s.PlainString(); ok {
		return raw, true
	}
	if r.s.I >= len(r.s.B) || r.s.B[r.s.I] != '"' {
		return nil, false
	}
	end, ok := jsonscan.ValueEnd(r.s.B, r.s.I)
	if !ok {
		return nil, false
	}
	var s string
	if json.Unmarshal(r.s.B[r.s.I:end], &s) != nil {
		return nil, false
	}
	r.s.I = end
	return []byte(s), true
}

// skip passes over one JSON value, checking it is valid JSON.
func (r *reader) skip() {
	start := r.s.I
	end, ok := jsonscan.ValueEnd(r.s.B, start)
	if !ok || end == start || !json.Valid(r.s.B[start:end]) {
		r.failSyntax("malformed JSON value")
		return
	}
	r.s.I = end
}

// skipUnchecked passes over one value by its brackets alone: frames left
// out (too deep, too many) are not read, so a hostile subtree costs one
// scan.
func (r *reader) skipUnchecked() {
	end, ok := jsonscan.ValueEnd(r.s.B, r.s.I)
	if !ok || end == r.s.I {
		r.failSyntax("malformed JSON value")
		return
	}
	r.s.I = end
}

// unknownField skips the value of a key no reader here knows, warning
// once per name.
func (r *reader) unknownField(key []byte) {
	if !r.unknown[string(key)] {
		if r.unknown == nil {
			r.unknown = map[string]bool{}
		}
		name := string(key)
		r.unknown[name] = true
		r.pushKey(name)
		r.warn("unknown field %q ignored (first at %s)", name, r.pathString())
		r.pop()
	}
	r.skip()
}

// null reads a null, if it is next: a field given as null is taken as
// absent.
func (r *reader) null() bool {
	if len(r.s.B)-r.s.I >= 4 && string(r.s.B[r.s.I:r.s.I+4]) == "null" {
		r.s.I += 4
		return true
	}
	return false
}

// uintValue reads a non-negative integer; a value of another kind is a
// field error and is skipped. ok is false for an absent (null) or bad
// value.
func (r *reader) uintValue() (v uint64, ok bool) {
	start := r.s.I
	b := r.s.B
	i := start
	for ; i < len(b) && b[i] >= '0' && b[i] <= '9'; i++ {
		d := uint64(b[i] - '0')
		if v > (1<<64-1-d)/10 {
			r.fieldError(start, "integer larger than 2⁶⁴-1")
			r.skip()
			return 0, false
		}
		v = v*10 + d
	}
	if i > start && (i == len(b) || !isNumberByte(b[i])) {
		if b[start] == '0' && i-start > 1 {
			r.failSyntax("a number with a leading zero")
			return 0, false
		}
		r.s.I = i
		return v, true
	}
	if r.null() {
		return 0, false
	}
	r.fieldError(start, "want a non-negative integer, got %s", r.describe())
	r.skip()
	return 0, false
}

func isNumberByte(c byte) bool {
	return c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-'
}

// boolValue reads true or false; any other value is a field error.
func (r *reader) boolValue() (v, ok bool) {
	b := r.s.B[r.s.I:]
	switch {
	case len(b) >= 4 && string(b[:4]) == "true":
		r.s.I += 4
		return true, true
	case len(b) >= 5 && string(b[:5]) == "false":
		r.s.I += 5
		return false, true
	case r.null():
		return false, false
	}
	r.fieldError(r.s.I, "want true or false, got %s", r.describe())
	r.skip()
	return false, false
}

// textValue reads a string; any other value is a field error.
func (r *reader) textValue() (string, bool) {
	if s, ok := r.stringValue(); ok {
		return string(s), true
	}
	if r.null() {
		return "", false
	}
	r.fieldError(r.s.I, "want a string, got %s", r.describe())
	r.skip()
	return "", false
}

// anyText reads any value as text: a string unescaped, anything else as
// the input wrote it.
func (r *reader) anyText() string {
	if s, ok := r.stringValue(); ok {
		return string(s)
	}
	start := r.s.I
	r.skip()
	if !r.ok() {
		return ""
	}
	return string(r.s.B[start:r.s.I])
}

// payloadOrTree reads an object that is a payload or, at the top of the
// input (top), a bare call stack tree: the keys say which.
func (r *reader) payloadOrTree(p *Payload, top bool) {
	r.s.I++    // '{'
	tree := -1 // the bare tree's index in p.Diagnostics
	sawPayload := false
	for first := true; ; first = false {
		key, more := r.member(first)
		if !more {
			break
		}
		switch k := string(key); k {
		case "timeStampBegin", "timeStampEnd":
			r.pushKey(k)
			s, _ := r.textValue()
			r.pop()
			if k == "timeStampBegin" {
				p.TimeStampBegin = s
			} else {
				p.TimeStampEnd = s
			}
			sawPayload = true
		case "crashDiagnostics", "hangDiagnostics", "cpuExceptionDiagnostics", "diskWriteExceptionDiagnostics", "appLaunchDiagnostics":
			r.diagnostics(p, k)
			sawPayload = true
		case "callStacks", "callStackPerThread":
			if !top {
				r.unknownField(key)
				continue
			}
			if tree < 0 {
				tree = len(p.Diagnostics)
				p.Diagnostics = append(p.Diagnostics, Diagnostic{Kind: KindCallStackTree})
			}
			r.treeMember(&p.Diagnostics[tree].Tree, k)
		default:
			r.unknownField(key)
		}
	}
	if tree >= 0 {
		r.in.Shape = ShapeTree
		if sawPayload {
			r.warn("the document has both a payload's and a call stack tree's fields; read as a tree")
		}
	}
	// The kinds in the documented order, each in its array's order: the
	// arrays may come in any order in the object.
	orderDiagnostics(p.Diagnostics)
}

// orderDiagnostics sorts diagnostics by kind, stably.
func orderDiagnostics(ds []Diagnostic) {
	rank := func(k Kind) int {
		for i, kk := range kindKeys {
			if kk.kind == k {
				return i
			}
		}
		return len(kindKeys)
	}
	// Insertion sort: a payload holds a handful of diagnostics, and the
	// order within a kind is kept.
	for i := 1; i < len(ds); i++ {
		for j := i; j > 0 && rank(ds[j].Kind) < rank(ds[j-1].Kind); j-- {
			ds[j], ds[j-1] = ds[j-1], ds[j]
		}
	}
}

// diagnostics reads one of a payload's arrays of diagnostics.
func (r *reader) diagnostics(p *Payload, key string) {
	var kind Kind
	for _, kk := range kindKeys {
		if kk.key == key {
			kind = kk.kind
		}
	}
	r.pushKey(key)
	defer r.pop()
	if r.null() {
		return
	}
	if r.peek() != '[' {
		r.fieldError(r.s.I, "want an array of diagnostics, got %s", r.describe())
		r.skip()
		return
	}
	r.s.I++
	for i := 0; r.element(i); i++ {
		r.pushIndex(i)
		if r.peek() != '{' {
			r.fieldError(r.s.I, "want a diagnostic (an object), got %s", r.describe())
			r.skip()
		} else {
			d := Diagnostic{Kind: kind, Path: r.pathString()}
			r.diagnostic(&d)
			p.Diagnostics = append(p.Diagnostics, d)
		}
		r.pop()
	}
}

// diagnostic reads one diagnostic object.
func (r *reader) diagnostic(d *Diagnostic) {
	r.s.I++ // '{'
	for first := true; ; first = false {
		key, more := r.member(first)
		if !more {
			return
		}
		switch string(key) {
		case "version":
			r.pushKey("version")
			d.Version, _ = r.textValue()
			r.pop()
		case "callStackTree":
			r.pushKey("callStackTree")
			r.tree(&d.Tree)
			r.pop()
		case "diagnosticMetaData":
			r.pushKey("diagnosticMetaData")
			r.metadata(d)
			r.pop()
		default:
			r.unknownField(key)
		}
	}
}

// openObject steps into the object at the reader's place, or reports a
// value of another kind as the field's error (want names what the field
// should hold) and steps over it: false then.
func (r *reader) openObject(want string) bool {
	if r.peek() != '{' {
		r.fieldError(r.s.I, "want %s, got %s", want, r.describe())
		r.skip()
		return false
	}
	r.s.I++
	return true
}

// metadata reads diagnosticMetaData: every field kept, as text.
func (r *reader) metadata(d *Diagnostic) {
	if r.null() {
		return
	}
	if !r.openObject("an object") {
		return
	}
	for first := true; ; first = false {
		key, more := r.member(first)
		if !more {
			return
		}
		k := string(key)
		d.Metadata = append(d.Metadata, Field{Key: k, Value: r.anyText()})
	}
}

// tree reads an MXCallStackTree object.
func (r *reader) tree(t *Tree) {
	if r.null() {
		return
	}
	if !r.openObject("a call stack tree (an object)") {
		return
	}
	for first := true; ; first = false {
		key, more := r.member(first)
		if !more {
			return
		}
		switch k := string(key); k {
		case "callStacks", "callStackPerThread":
			r.treeMember(t, k)
		default:
			r.unknownField(key)
		}
	}
}

// treeMember reads one of a tree's known members.
func (r *reader) treeMember(t *Tree, key string) {
	r.pushKey(key)
	defer r.pop()
	if key == "callStackPerThread" {
		t.PerThread, _ = r.boolValue()
		return
	}
	if r.null() {
		return
	}
	if r.peek() != '[' {
		r.fieldError(r.s.I, "want an array of call stacks, got %s", r.describe())
		r.skip()
		return
	}
	r.s.I++
	for i := 0; r.element(i); i++ {
		r.pushIndex(i)
		t.Stacks = append(t.Stacks, Stack{})
		r.callStack(&t.Stacks[len(t.Stacks)-1])
		r.pop()
	}
}

// callStack reads one call stack object.
func (r *reader) callStack(st *Stack) {
	if !r.openObject("a call stack (an object)") {
		return
	}
	for first := true; ; first = false {
		key, more := r.member(first)
		if !more {
			return
		}
		switch string(key) {
		case "threadAttributed":
			r.pushKey("threadAttributed")
			st.ThreadAttributed, _ = r.boolValue()
			r.pop()
		case "callStackRootFrames":
			r.pushKey("callStackRootFrames")
			r.frames(st, -1, 0)
			r.pop()
		default:
			r.unknownField(key)
		}
	}
}

// frames reads an array of frames (callStackRootFrames or subFrames)
// whose parent is the frame at index parent (-1 for roots), depth deep.
func (r *reader) frames(st *Stack, parent int32, depth int) {
	if r.null() {
		return
	}
	if r.peek() != '[' {
		r.fieldError(r.s.I, "want an array of frames, got %s", r.describe())
		r.skip()
		return
	}
	if depth >= MaxDepth {
		if !r.cutDeep {
			r.cutDeep = true
			r.warn("frames nested deeper than %d left out (first at %s)", MaxDepth, r.pathString())
		}
		r.skipUnchecked()
		return
	}
	r.s.I++
	for i := 0; r.element(i); i++ {
		if r.nframes >= MaxFrames {
			if !r.cutMany {
				r.cutMany = true
				r.pushIndex(i)
				r.warn("frames after the first %d left out (first at %s)", MaxFrames, r.pathString())
				r.pop()
			}
			r.skipUnchecked()
			continue
		}
		r.pushIndex(i)
		r.frame(st, parent, depth)
		r.pop()
	}
}

// frame reads one frame object and its subFrames.
func (r *reader) frame(st *Stack, parent int32, depth int) {
	if !r.openObject("a frame (an object)") {
		return
	}
	r.nframes++
	idx := int32(len(st.Frames))
	st.Frames = append(st.Frames, Frame{Binary: -1, Parent: parent})
	var id uuid.UUID
	var name []byte
	hasID, hasName := false, false
	for first := true; ; first = false {
		key, more := r.member(first)
		if !more {
			break
		}
		f := &st.Frames[idx] // subFrames below may move the slice
		switch string(key) {
		case "binaryUUID":
			r.pushKey("binaryUUID")
			start := r.s.I
			if s, ok := r.stringValue(); ok {
				u, err := uuid.Parse(string(s))
				if err != nil {
					r.fieldError(start, "%v", err)
				} else {
					id, hasID = u, true
				}
			} else if !r.null() {
				r.fieldError(start, "want a UUID string, got %s", r.describe())
				r.skip()
			}
			r.pop()
		case "binaryName":
			r.pushKey("binaryName")
			start := r.s.I
			if s, ok := r.stringValue(); ok {
				name, hasName = s, true
			} else if !r.null() {
				r.fieldError(start, "want a string, got %s", r.describe())
				r.skip()
			}
			r.pop()
		case "offsetIntoBinaryTextSegment":
			r.pushKey("offsetIntoBinaryTextSegment")
			if v, ok := r.uintValue(); ok {
				f.Offset, f.Has = v, f.Has|HasOffset
			}
			r.pop()
		case "address":
			r.pushKey("address")
			if v, ok := r.uintValue(); ok {
				f.Address, f.Has = v, f.Has|HasAddress
			}
			r.pop()
		case "sampleCount":
			r.pushKey("sampleCount")
			if v, ok := r.uintValue(); ok {
				if v > MaxSampleCount {
					if !r.clamped {
						r.clamped = true
						r.warn("sampleCount %d taken as %d (first at %s)", v, uint64(MaxSampleCount), r.pathString())
					}
					v = MaxSampleCount
				}
				f.SampleCount, f.Has = v, f.Has|HasSampleCount
			}
			r.pop()
		case "subFrames":
			r.pushKey("subFrames")
			r.frames(st, idx, depth+1)
			r.pop()
		default:
			r.unknownField(key)
		}
	}
	if hasID || hasName {
		st.Frames[idx].Binary = r.binary(id, name)
	}
}

// binary returns the index in Input.Binaries of (id, name), adding it.
func (r *reader) binary(id uuid.UUID, name []byte) int32 {
	n, ok := r.names[string(name)]
	if !ok {
		n = string(name)
		r.names[n] = n
	}
	k := binaryKey{id, n}
	if i, ok := r.binaries[k]; ok {
		return i
	}
	i := int32(len(r.in.Binaries))
	r.in.Binaries = append(r.in.Binaries, Binary{UUID: id, Name: n})
	r.binaries[k] = i
	return i
}
