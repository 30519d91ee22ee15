package crashreport

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/stackimage/stackimage/internal/pathbase"
)

// Thread numbers of a FrameRef that are not indexes into Report.Threads.
const (
	// LastExceptionBacktrace refers to Report.LastExceptionBacktrace.
	LastExceptionBacktrace = -1
	// RecrashThread refers to Report.RecrashThread.
	RecrashThread = -2
)

// FrameRef names one frame of the report that Parse returns for the same
// bytes: Frame indexes the Frames of Report.Threads[Thread], or of the last
// exception backtrace or the recrash thread when Thread is
// LastExceptionBacktrace or RecrashThread.
type FrameRef struct {
	Thread, Frame int
}

// FrameName is what symbolication found for one frame.
type FrameName struct {
	Symbol string
	// SymbolOffset is the frame's address minus the symbol's start; it is
	// written only when HasOffset is set.
	SymbolOffset uint64
	HasOffset    bool
	// File and Line are the source position; File may be a path, of which
	// only the last element is written, as Apple's tools write it. Line 0
	// or an empty File leaves the position out.
	File string
	Line int
	// Inlined lists the functions inlined at the frame's address,
	// innermost first. Each is written as a frame of its own before the
	// frame, marked inlined, as Apple's reports show them.
	Inlined []FrameName
}

// LookupFunc returns the name found for a frame; false keeps the frame as
// the report wrote it. It is called once for each frame line or frame
// object, in the order they appear in the input, with the reference Parse
// gives that frame; callers must not trust a reference blindly (a hostile
// report that repeats a key can repeat or misnumber one), only use it to
// look up what they hold.
type LookupFunc func(FrameRef) (FrameName, bool)

// WriteSymbolicated writes data, a report in format (.crash or .ips; ""
// detects it), back in its own layout with the frames that lookup names
// filled in:
//
//   - .crash: every line is kept byte for byte except the frame lines
//     lookup names, whose text after the address becomes
//     "symbol + offset (File.m:42)", as Xcode writes it; inlined
//     functions get lines of their own before the frame's, numbered as
//     it is and ending in "[inlined]".
//   - .ips: the metadata line and every byte of the report are kept
//     except the frame objects lookup names, whose "symbol",
//     "symbolLocation", "sourceFile" and "sourceLine" are replaced or
//     added (after the frame's other keys); inlined functions become
//     frame objects of their own before the frame's, with "inline": true.
//     An .ips whose payload is a text report (bug_type 109) keeps its
//     metadata line and has its text written as a .crash.
//
// A damaged or truncated report is written whole: the frames that could
// be read are filled in and the rest is copied as it is. WriteSymbolicated
// returns an error only when w fails or the format is not one it writes
// (KSCrash JSON is not). It is safe for concurrent use if lookup is.
func WriteSymbolicated(w io.Writer, data []byte, format Format, lookup LookupFunc) error {
	if w == nil {
		return errors.New("crashreport: nil writer")
	}
	if lookup == nil {
		// No names: every frame is kept as the report wrote it.
		lookup = func(FrameRef) (FrameName, bool) { return FrameName{}, false }
	}
	if format == "" {
		f, ok := Detect(data)
		if !ok {
			return ErrUnknownFormat
		}
		format = f
	}
	if err := checkSize(format, data); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	var err error
	switch format {
	case FormatCrash:
		err = writeCrash(bw, data, lookup)
	case FormatIPS:
		err = writeIPS(bw, data, lookup)
	default:
		return &Error{Format: format, Msg: "writing a symbolicated report in this format is not supported (only .crash and .ips are)"}
	}
	if err != nil {
		return err
	}
	return bw.Flush()
}

// frameSpan is where a text report's frame line describes its frame: the
// bytes [start, end) of line number line (1-based), after the address.
type frameSpan struct {
	line, owner, frame int
	start, end         int
}

// writeCrash writes a text report with the frames lookup names filled in.
func writeCrash(w *bufio.Writer, data []byte, lookup LookupFunc) error {
	var spans []frameSpan
	tp := &textParser{
		r:           &Report{Format: FormatCrash, CrashedThread: -1},
		p:           &problems{format: FormatCrash},
		threads:     map[int]int{},
		crashedNum:  -1,
		recrashFrom: -1,
		spans:       &spans,
	}
	tp.parse(data)

	lineNo := 0
	for len(data) > 0 {
		var line []byte
		if nl := bytes.IndexByte(data, '\n'); nl >= 0 {
			line, data = data[:nl+1], data[nl+1:]
		} else {
			line, data = data, nil
		}
		lineNo++
		if len(spans) == 0 || spans[0].line != lineNo {
			w.Write(line)
			continue
		}
		sp := spans[0]
		spans = spans[1:]
		ref, ok := tp.frameRef(sp)
		var name FrameName
		if ok {
			name, ok = lookup(ref)
		}
		if !ok {
			w.Write(line)
			continue
		}
		head, tail := line[:sp.start], line[sp.end:]
		sep := ""
		if sp.start == sp.end {
			sep = " " // the line had nothing after its address
		}
		for _, in := range name.Inlined {
			w.Write(head)
			w.WriteString(sep)
			w.WriteString(crashFrameText(in))
			w.WriteString(" [inlined]")
			w.Write(lineEnd(tail))
		}
		w.Write(head)
		w.WriteString(sep)
		w.WriteString(crashFrameText(name))
		w.Write(tail)
	}
	return nil
}

// frameRef turns a span's thread, numbered as the parse read it, into the
// reference Parse's report uses: threads after KSCrash's "Handler crashed
// while reporting:" are the recrash thread (the first) or dropped.
func (tp *textParser) frameRef(sp frameSpan) (FrameRef, bool) {
	t := sp.owner
	switch rf := tp.recrashFrom; {
	case t == LastExceptionBacktrace || rf < 0 || t < rf:
	case t == rf:
		t = RecrashThread
	default:
		return FrameRef{}, false
	}
	return FrameRef{Thread: t, Frame: sp.frame}, true
}

// lineEnd returns the line ending that tail, the rest of a line, ends in.
func lineEnd(tail []byte) []byte {
	if bytes.HasSuffix(tail, []byte("\r\n")) {
		return []byte("\r\n")
	}
	return []byte("\n")
}

// crashFrameText formats a name as a text report's frame line shows it:
// "symbol + 4 (main.m:21)".
func crashFrameText(n FrameName) string {
	s := oneLine(n.Symbol)
	if n.HasOffset {
		s += " + " + strconv.FormatUint(n.SymbolOffset, 10)
	}
	if loc := sourceLocation(n); loc != "" {
		s += " (" + loc + ")"
	}
	return s
}

// sourceLocation returns "file:line" with the file's last path element.
func sourceLocation(n FrameName) string {
	if n.File == "" || n.Line <= 0 {
		return ""
	}
	return oneLine(sourceFile(n.File)) + ":" + strconv.Itoa(n.Line)
}

func sourceFile(file string) string {
	return pathbase.Base(file)
}

// oneLine keeps a name from breaking a text report's line structure.
func oneLine(s string) string {
	if strings.ContainsAny(s, "\r\n") {
		return strings.NewReplacer("\r", " ", "\n", " ").Replace(s)
	}
	return s
}

// jsonSpan is a frame object's place in an .ips payload, [start, end).
type jsonSpan struct {
	ref        FrameRef
	start, end int
}

// writeIPS writes an .ips report with the frames lookup names filled in.
func writeIPS(w *bufio.Writer, data []byte, lookup LookupFunc) error {
	lead := len(data) - len(bytes.TrimLeft(data, "\ufeff \t\r\n"))
	nl := bytes.IndexByte(data[lead:], '\n')
	if nl < 0 {
		w.Write(data) // the metadata line alone: nothing to fill in
		return nil
	}
	bodyStart := lead + nl + 1
	bodyStart += len(data[bodyStart:]) - len(bytes.TrimLeft(data[bodyStart:], " \t\r\n"))
	body := data[bodyStart:]
	if len(body) > 0 && body[0] != '{' {
		// bug_type 109: a text report after the metadata line.
		w.Write(data[:bodyStart])
		return writeCrash(w, body, lookup)
	}

	w.Write(data[:bodyStart])
	pos := 0
	for _, sp := range ipsFrameSpans(body) {
		name, ok := lookup(sp.ref)
		if !ok {
			continue
		}
		raw := body[sp.start:sp.end]
		w.Write(body[pos:sp.start])
		for _, in := range name.Inlined {
			w.Write(patchIPSFrame(raw, in, true))
			w.WriteByte(',')
		}
		w.Write(patchIPSFrame(raw, name, false))
		pos = sp.end
	}
	w.Write(body[pos:])
	return nil
}

// ipsFrameSpans finds the frame objects of an .ips payload: those of
// threads[i].frames and lastExceptionBacktrace, numbered as ParseIPS
// numbers them. A damaged payload yields the frames before the damage.
func ipsFrameSpans(body []byte) []jsonSpan {
	s := newJSONStream(body, 0, &problems{format: FormatIPS})
	var spans []jsonSpan
	frames := func(path string, thread int) error {
		return s.array(path, MaxFrames, func(j int) error {
			var raw json.RawMessage
			if err := s.dec.Decode(&raw); err != nil {
				return errStream
			}
			end := int(s.dec.InputOffset())
			if len(raw) > 0 && raw[0] == '{' {
				spans = append(spans, jsonSpan{ref: FrameRef{Thread: thread, Frame: j}, start: end - len(raw), end: end})
			}
			return nil
		})
	}
	_ = s.object("", func(key string) error {
		switch key {
		case "threads":
			return s.array(key, MaxThreads, func(i int) error {
				path := fmt.Sprintf("threads[%d]", i)
				return s.object(path, func(k string) error {
					if k == "frames" {
						return frames(path+".frames", i)
					}
					return s.skip(path + "." + k)
				})
			})
		case "lastExceptionBacktrace":
			return frames(key, LastExceptionBacktrace)
		}
		return s.skip(key)
	})
	return spans
}

// ipsFrameKeys are the keys symbolication fills in, in the order they are
// added to a frame object that lacks them.
var ipsFrameKeys = []string{"symbol", "symbolLocation", "sourceFile", "sourceLine", "inline"}

// patchIPSFrame returns the frame object raw with n's fields: existing
// keys keep their place and get the new value, missing ones are added at
// the end; every other byte is kept. An object that cannot be read is
// returned as it is.
func patchIPSFrame(raw []byte, n FrameName, inline bool) []byte {
	values := map[string][]byte{"symbol": jsonString(n.Symbol)}
	if n.HasOffset {
		values["symbolLocation"] = []byte(strconv.FormatUint(n.SymbolOffset, 10))
	}
	if loc := sourceLocation(n); loc != "" {
		values["sourceFile"] = jsonString(sourceFile(n.File))
		values["sourceLine"] = []byte(strconv.Itoa(n.Line))
	}
	if inline {
		values["inline"] = []byte("true")
	}
	members, closing, ok := objectMembers(raw)
	if !ok {
		return raw
	}
	// The fields of the old name that the new one lacks would describe
	// the old one: they go.
	stale := func(key string) bool {
		_, have := values[key]
		return !have && (key == "symbolLocation" || key == "sourceFile" || key == "sourceLine")
	}
	out := make([]byte, 0, len(raw)+64)
	present := map[string]bool{}
	kept := len(members)
	if slices.ContainsFunc(members, func(m jsonMember) bool { return stale(m.key) }) {
		// Rebuild the members, each as it was written or with its new
		// value; only the space between them is not kept.
		out = append(out, raw[:members[0].keyStart]...)
		n := 0
		for _, m := range members {
			if stale(m.key) {
				continue
			}
			if n > 0 {
				out = append(out, ',')
			}
			n++
			if v, ok := values[m.key]; ok {
				out = append(append(out, raw[m.keyStart:m.start]...), v...)
				present[m.key] = true
			} else {
				out = append(out, raw[m.keyStart:m.end]...)
			}
		}
		out = append(out, raw[members[len(members)-1].end:closing]...)
		kept = n
	} else {
		pos := 0
		for _, m := range members {
			v, ok := values[m.key]
			if !ok {
				continue
			}
			out = append(out, raw[pos:m.start]...)
			out = append(out, v...)
			pos = m.end
			present[m.key] = true
		}
		out = append(out, raw[pos:closing]...)
	}
	empty := kept == 0
	for _, k := range ipsFrameKeys {
		v, ok := values[k]
		if !ok || present[k] {
			continue
		}
		if !empty {
			out = append(out, ',')
		}
		empty = false
		out = append(out, jsonString(k)...)
		out = append(out, ':')
		out = append(out, v...)
	}
	return append(out, raw[closing:]...)
}

// jsonMember is one member of a JSON object: its key, where the key
// starts, and where its value lies, [start, end).
type jsonMember struct {
	key        string
	keyStart   int // offset of the key's opening quote
	start, end int
}

// objectMembers lists the members of raw, a JSON object the decoder has
// already checked, and returns the offset of its closing brace. It is a
// scanner for valid JSON only: anything unexpected returns false.
func objectMembers(raw []byte) (members []jsonMember, closing int, ok bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return nil, 0, false
	}
	i = skipSpace(raw, i+1)
	if i < len(raw) && raw[i] == '}' {
		return nil, i, true
	}
	for i < len(raw) {
		keyStart := i
		keyEnd := skipString(raw, i)
		if keyEnd < 0 {
			return nil, 0, false
		}
		key := string(raw[i+1 : keyEnd-1])
		if strings.IndexByte(key, '\\') >= 0 && json.Unmarshal(raw[i:keyEnd], &key) != nil {
			return nil, 0, false
		}
		i = skipSpace(raw, keyEnd)
		if i >= len(raw) || raw[i] != ':' {
			return nil, 0, false
		}
		start := skipSpace(raw, i+1)
		end := skipValue(raw, start)
		if end < 0 {
			return nil, 0, false
		}
		members = append(members, jsonMember{key, keyStart, start, end})
		i = skipSpace(raw, end)
		switch {
		case i < len(raw) && raw[i] == ',':
			i = skipSpace(raw, i+1)
		case i < len(raw) && raw[i] == '}':
			return members, i, true
		default:
			return nil, 0, false
		}
	}
	return nil, 0, false
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the offset past the string starting at b[i], or -1.
func skipString(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return -1
}

// skipValue returns the offset past the value starting at b[i], or -1.
// Containers are skipped by counting brackets outside strings; the depth
// is bounded by the value's length.
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				if i = skipString(b, i); i < 0 {
					return -1
				}
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return -1
	}
	for i < len(b) && !strings.ContainsRune(",}] \t\r\n", rune(b[i])) {
		i++
	}
	return i
}

// jsonString encodes s as a JSON string without HTML escaping, so that
// "operator<" stays readable.
func jsonString(s string) []byte {
	plain := true
	for i := 0; i < len(s) && plain; i++ {
		c := s[i]
		plain = c >= 0x20 && c < 0x7f && c != '"' && c != '\\'
	}
	if plain {
		return append(append(append(make([]byte, 0, len(s)+2), '"'), s...), '"')
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(s) != nil {
		return []byte(`""`)
	}
	return bytes.TrimRight(b.Bytes(), "\n")
}
