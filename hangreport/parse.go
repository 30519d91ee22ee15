package hangreport

import (
	"bytes"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/stackimage/stackimage/internal/reportfield"
	"github.com/stackimage/stackimage/uuid"
)

// section is where in a report the parser is.
type section int

const (
	secHeader    section = iota
	secCallGraph         // sample "Call graph:"
	secTotal             // sample "Total number in stack ..."
	secTop               // sample "Sort by top of stack ..."
	secImages            // "Binary Images:"
	secProcess           // spindump "Process:" fields
	secThread            // spindump thread call graph
	secTail              // after the report proper
)

type parser struct {
	r        *Report
	sec      section
	proc     *Process
	thread   *Thread
	stack    []stackEntry // open nodes of the current call graph
	lineNo   int
	lineOff  int
	errs     []error
	nErrs    int
	sawGraph bool
	lastRoot int // the current thread's last root node, -1 for none
	// blockLine is the line whose section blockCount counted.
	blockLine, blockCount int
	scanned               int // bytes countBlock read, for a test
	// arena holds every thread's nodes; used counts those given out.
	arena []Node
	used  int
}

// stackEntry is an open call-graph node: its count's column and index.
type stackEntry struct{ col, node int }

func (p *parser) errorf(format string, args ...any) {
	p.nErrs++
	if len(p.errs) < maxErrors {
		p.errs = append(p.errs, &Error{Line: p.lineNo, Offset: p.lineOff, Msg: fmt.Sprintf(format, args...)})
	}
}

func (p *parser) warnf(format string, args ...any) {
	if len(p.r.Warnings) < 100 {
		p.r.Warnings = append(p.r.Warnings, fmt.Sprintf("line %d: ", p.lineNo)+fmt.Sprintf(format, args...))
	}
}

// Parse reads a sample, spindump or microstackshot report. The Report it
// returns keeps data's text (one copy) and indexes into it. On malformed
// or truncated input it returns what could be read together with an
// error naming the line; ErrNotHangReport (wrapped) means the input had
// nothing of a report.
func Parse(data []byte) (*Report, error) {
	if len(data) > MaxInputSize {
		return nil, fmt.Errorf("hangreport: input of %d bytes is larger than %d", len(data), MaxInputSize)
	}
	return newParser(data).run()
}

func newParser(data []byte) *parser {
	r := &Report{text: string(data)}
	// A listing of spindump's processes without its header says what it
	// is by its structure alone: its first "Process:" line starts a
	// process, as it does after a header.
	window := data[:min(len(data), detectWindow)]
	if trimmed := bytes.TrimLeft(window, "\ufeff \t\r\n"); len(trimmed) > 0 && trimmed[0] == '{' {
		// An .ips report's JSON first line; the parser passes over it as
		// it does any line that is not a field.
		if bugType, _, ok := ipsHeader(trimmed); ok {
			r.BugType = bugType
		}
	}
	switch {
	case DetectMicrostackshot(window):
		r.Kind = KindMicrostackshot
	case isSpindumpListing(window) && !sampleMarkers.Match(window):
		r.Kind = KindSpindump
	}
	return &parser{r: r, arena: make([]Node, 0, countNodeLines(r.text))}
}

// run parses the whole input.
func (p *parser) run() (*Report, error) {
	r := p.r
	text := r.text
	for off := 0; off < len(text); {
		end := strings.IndexByte(text[off:], '\n')
		next := len(text)
		if end < 0 {
			end = len(text)
		} else {
			end += off
			next = end + 1
		}
		line := text[off:end]
		line = strings.TrimSuffix(line, "\r")
		p.lineNo++
		p.lineOff = off
		p.line(line, off)
		off = next
	}
	p.finish()
	p.setThread(nil)
	r.indexImages()
	var err error
	switch {
	case r.Kind == "":
		err = fmt.Errorf("%w: no sampling, call graph or spindump header lines", ErrNotHangReport)
	case !p.sawGraph:
		p.lineNo++
		p.lineOff = len(text)
		p.errorf("input ended before any call graph (truncated?)")
	}
	if len(p.errs) > 0 {
		if p.nErrs > len(p.errs) {
			p.errs = append(p.errs, fmt.Errorf("hangreport: and %d more errors", p.nErrs-len(p.errs)))
		}
		err = errors.Join(append([]error{err}, p.errs...)...)
	}
	return r, err
}

// finish gives a sample's process its header fields and checks what the
// end of input left open.
func (p *parser) finish() {
	if p.r.Kind == KindSample {
		pr := p.process()
		fields := append([]Field(nil), p.r.Header...)
		for _, f := range fields {
			p.processField(pr, f.Key, f.Value)
		}
		pr.Fields = append(fields, pr.Fields...)
	}
	if t := p.thread; t != nil && len(t.Nodes) == 0 && !t.Heaviest {
		p.lineNo++
		p.lineOff = len(p.r.text)
		p.errorf("input ended in thread %q before its call graph (truncated?)", t.Heading)
	}
}

func (p *parser) process() *Process {
	if p.proc == nil {
		p.proc = &Process{}
		p.r.Processes = append(p.r.Processes, p.proc)
	}
	return p.proc
}

func (p *parser) setKind(k Kind) {
	if p.r.Kind == "" {
		p.r.Kind = k
	}
}

func (p *parser) line(line string, off int) {
	trimmed := strings.TrimSpace(line)
	// Section headings switch the parser whatever it was reading.
	switch {
	case strings.HasPrefix(line, "Analysis of sampling "), strings.HasPrefix(line, "Sampling process "):
		p.setKind(KindSample)
		if name, pid, ok := analysisLine(line); ok {
			pr := p.process()
			pr.Name, pr.PID = name, pid
		}
		p.sec = secHeader
		return
	case trimmed == "Call graph:":
		p.setKind(KindSample)
		p.sec = secCallGraph
		p.setThread(nil)
		p.process()
		return
	case strings.HasPrefix(line, "Total number in stack"):
		p.sec = secTotal
		p.setThread(nil)
		pr := p.process()
		pr.TotalInStack = grow(pr.TotalInStack, p.blockLines(off))
		return
	case strings.HasPrefix(line, "Sort by top of stack"):
		p.sec = secTop
		p.setThread(nil)
		pr := p.process()
		pr.TopOfStack = grow(pr.TopOfStack, p.blockLines(off))
		return
	case trimmed == "Binary Images:":
		p.sec = secImages
		p.setThread(nil)
		pr := p.process()
		pr.Images = grow(pr.Images, p.blockLines(off))
		return
	case strings.HasPrefix(line, "Sample analysis of process "):
		p.sec = secTail
		return
	case strings.HasPrefix(line, "Heaviest stack for "):
		// spindump's is the main thread's; a microstackshot report's the
		// target process's.
		if strings.HasPrefix(line, "Heaviest stack for the target process") {
			p.setKind(KindMicrostackshot)
		}
		p.setKind(KindSpindump)
		p.setThread(nil)
		p.r.Heaviest = &Thread{Line: p.lineNo, Heading: trimmed, Heaviest: true}
		p.setThread(p.r.Heaviest)
		p.sawGraph = true
		p.sec = secThread
		return
	case strings.HasPrefix(line, "Process:") && p.r.Kind == KindSpindump,
		strings.HasPrefix(line, "Powerstats for:") && p.r.Kind == KindMicrostackshot:
		// A process's section: a spindump's, or a microstackshot
		// report's power statistics of one process.
		p.proc = &Process{}
		p.r.Processes = append(p.r.Processes, p.proc)
		p.setThread(nil)
		p.sec = secProcess
		p.field(line)
		return
	case p.r.Kind == KindMicrostackshot && p.sec == secProcess && startsNode(line):
		// A process's call graph follows its fields, without a thread
		// heading: it holds the samples of all its threads.
		p.startThread(p.process(), Thread{Line: p.lineNo})
		p.sec = secThread
		p.nodeLine(line, off)
		return
	case (p.r.Kind == KindSpindump || p.r.Kind == KindMicrostackshot) && strings.HasPrefix(trimmed, "Thread 0x") && p.sec != secHeader:
		pr := p.process()
		th := Thread{Line: p.lineNo, Heading: trimmed}
		id := strings.TrimPrefix(trimmed, "Thread ")
		if i := strings.IndexAny(id, " \t"); i >= 0 {
			id = id[:i]
		}
		th.ID, _ = parseHex(id)
		if i := strings.Index(trimmed, " samples ("); i >= 0 {
			fs := strings.Fields(trimmed[:i])
			th.Count, _ = strconv.ParseUint(fs[len(fs)-1], 10, 64)
		}
		p.startThread(pr, th)
		p.sec = secThread
		return
	}
	if trimmed == "" {
		if p.sec == secThread {
			p.setThread(nil)
		}
		return
	}
	switch p.sec {
	case secHeader, secProcess:
		if _, _, ok := field(line); ok {
			if key, value, _ := field(line); key == "Data Source" {
				if strings.HasPrefix(value, "Microstackshots") {
					p.setKind(KindMicrostackshot)
				}
				p.setKind(KindSpindump)
			}
			p.field(line)
		}
	case secCallGraph:
		p.callGraphLine(line, off)
	case secThread:
		p.nodeLine(line, off)
	case secTotal, secTop:
		p.entryLine(line, off)
	case secImages:
		p.imageLine(line)
	}
}

// field records a header or process field and the facts it gives.
func (p *parser) field(line string) {
	key, value, ok := field(line)
	if !ok {
		return
	}
	f := Field{Key: key, Value: value, Line: p.lineNo}
	if p.sec == secProcess {
		pr := p.process()
		pr.Fields = append(pr.Fields, f)
		p.processField(pr, key, value)
		return
	}
	p.r.Header = append(p.r.Header, f)
}

func (p *parser) processField(pr *Process, key, value string) {
	switch key {
	case "Process", "Powerstats for":
		name, pid := reportfield.NameAndPID(value)
		pr.Name = name
		if pid != 0 {
			pr.PID = pid
		}
	case "Path":
		pr.Path = value
	case "Identifier":
		pr.Identifier = value
	case "Version":
		pr.Version = value
	case "Code Type", "Architecture":
		pr.Arch = value
	case "Load Address":
		if v, ok := parseHex(value); ok {
			pr.LoadAddress = v
		} else {
			p.warnf("Load Address %q is not a hex number", value)
		}
	}
}

// startsNode reports whether line is a call graph's node: tree
// characters, then a count (after spindump's "*" for a kernel frame) and
// a frame.
func startsNode(line string) bool {
	_, _, text, _, ok, _ := countPrefix(line)
	return ok && text < len(line)
}

// analysisLine reads "Analysis of sampling Name (pid 1828) every 1
// millisecond" or "Sampling process 1828 for 3 seconds ...".
func analysisLine(line string) (string, int, bool) {
	if rest, ok := strings.CutPrefix(line, "Analysis of sampling "); ok {
		i := strings.LastIndex(rest, " (pid ")
		if i < 0 {
			return "", 0, false
		}
		j := strings.IndexByte(rest[i:], ')')
		if j < 0 {
			return "", 0, false
		}
		pid, err := strconv.Atoi(rest[i+6 : i+j])
		if err != nil {
			return "", 0, false
		}
		return rest[:i], pid, true
	}
	return "", 0, false
}

func (p *parser) startThread(pr *Process, th Thread) {
	p.setThread(nil) // before the append moves the threads
	pr.Threads = append(grow(pr.Threads, 1), th)
	p.setThread(&pr.Threads[len(pr.Threads)-1])
	p.sawGraph = true
}

// setThread closes the current thread and makes t (nil for none) the one
// nodes are added to. A thread's nodes are the next part of the report's
// node arena: threads never interleave, so each one's nodes lie together.
func (p *parser) setThread(t *Thread) {
	if old := p.thread; old != nil {
		// The arena has room for every node line, so appends stayed in
		// it; min keeps the next slice of it in bounds all the same.
		n := len(old.Nodes)
		old.Nodes = old.Nodes[:n:n]
		p.used = min(p.used+n, cap(p.arena))
	}
	p.thread = t
	p.stack = p.stack[:0]
	p.lastRoot = -1
	if t != nil {
		t.Nodes = p.arena[p.used:p.used]
	}
}

// grow makes room for n more elements: exactly n when s is full, since
// n is counted from the input (an upper bound), else doubling. Go's own
// growth by a quarter would allocate five times a large slice's size in
// all.
func grow[T any](s []T, n int) []T {
	if cap(s)-len(s) >= n {
		return s
	}
	if len(s) == 0 {
		return make([]T, 0, n)
	}
	out := make([]T, len(s), max(len(s)+n, 2*cap(s)))
	copy(out, s)
	return out
}

// blockLines counts the non-blank lines after the line at off (the
// current line), up to the next blank line: the lines of a section. A
// heading inside a block counted before takes its count from that one,
// so that a run of headings does not rescan the rest each time.
func (p *parser) blockLines(off int) int {
	if p.blockLine > 0 && p.lineNo <= p.blockLine+p.blockCount {
		return p.blockCount - (p.lineNo - p.blockLine)
	}
	n := p.countBlock(off)
	p.blockLine, p.blockCount = p.lineNo, n
	return n
}

func (p *parser) countBlock(off int) int {
	text := p.r.text[off:]
	defer func(before int) { p.scanned += before - len(text) }(len(text))
	if nl := strings.IndexByte(text, '\n'); nl >= 0 {
		text = text[nl+1:]
	} else {
		return 0
	}
	n := 0
	for text != "" {
		line := text
		if nl := strings.IndexByte(text, '\n'); nl >= 0 {
			line, text = text[:nl], text[nl+1:]
		} else {
			text = ""
		}
		if strings.TrimSpace(line) == "" {
			break
		}
		n++
	}
	return n
}

// countNodeLines counts the lines of text that could be call-graph nodes:
// a count and something after it. It bounds the node arena.
func countNodeLines(text string) int {
	n := 0
	for text != "" {
		line := text
		if nl := strings.IndexByte(text, '\n'); nl >= 0 {
			line, text = text[:nl], text[nl+1:]
		} else {
			text = ""
		}
		if _, _, start, _, ok, _ := countPrefix(strings.TrimSuffix(line, "\r")); ok && start < len(strings.TrimSuffix(line, "\r")) {
			n++
		}
	}
	return n
}

// countPrefix reads a call-graph line's tree characters and count: the
// count's column, the count, where the text after it starts, whether a
// "*" marked it, and whether the line has a count at all.
func countPrefix(line string) (col int, count uint64, text int, kernel, ok, overflow bool) {
	i := 0
	for i < len(line) {
		c := line[i]
		if c == ' ' || c == '+' || c == '!' || c == ':' || c == '|' || c == '\t' {
			i++
			continue
		}
		break
	}
	if i < len(line) && line[i] == '*' {
		kernel = true
		i++
	}
	col = i
	j := i
	for j < len(line) && line[j] >= '0' && line[j] <= '9' {
		j++
	}
	if j == i || j < len(line) && line[j] != ' ' {
		return 0, 0, 0, false, false, false
	}
	v, err := strconv.ParseUint(line[i:j], 10, 64)
	overflow = err != nil
	for j < len(line) && line[j] == ' ' {
		j++
	}
	return col, v, j, kernel, true, overflow
}

// callGraphLine reads a line of sample's call graph: a thread heading or
// a node.
func (p *parser) callGraphLine(line string, off int) {
	col, count, text, _, ok := p.countedLine(line)
	if !ok {
		return
	}
	rest := line[text:]
	if strings.HasPrefix(rest, "Thread_") || p.thread == nil {
		th := Thread{Line: p.lineNo, Heading: rest, Count: count}
		id := strings.TrimPrefix(rest, "Thread_")
		if i := strings.IndexAny(id, " :\t"); i >= 0 {
			id = id[:i]
		}
		th.ID, _ = strconv.ParseUint(id, 10, 64)
		if !strings.HasPrefix(rest, "Thread_") {
			p.warnf("call graph starts with %.40q, not a Thread_ heading", rest)
		}
		p.startThread(p.process(), th)
		p.stack = append(p.stack, stackEntry{col: col, node: -1})
		return
	}
	p.addNode(col, count, false, rest, off+text, "")
}

// nodeLine reads a line of a spindump thread: its attributes ("<thread
// QoS ...>") or a node.
func (p *parser) nodeLine(line string, off int) {
	if p.thread == nil {
		p.errorf("call graph line outside a thread: %.80q", line)
		return
	}
	if len(p.thread.Nodes) == 0 && strings.HasPrefix(strings.TrimSpace(line), "<") {
		if _, _, _, _, ok, _ := countPrefix(line); !ok {
			return // the thread's attributes
		}
	}
	col, count, text, kernel, ok := p.countedLine(line)
	if !ok {
		return
	}
	rest := line[text:]
	samples := ""
	// The sample range after the frame: "[0x...] 1-49".
	if i := strings.LastIndexByte(rest, ' '); i >= 0 && isRange(rest[i+1:]) &&
		(strings.HasSuffix(strings.TrimRight(rest[:i], " "), "]") || strings.HasSuffix(strings.TrimRight(rest[:i], " "), ">")) {
		samples = rest[i+1:]
		rest = strings.TrimRight(rest[:i], " ")
	}
	if p.thread.Heaviest {
		// A single path: each line is the child of the one before, the
		// columns all equal.
		col = len(p.stack)
	}
	p.addNode(col, count, kernel, rest, off+text, samples)
}

// countedLine reads the count that starts a call graph line, sample's or
// spindump's: its column, the count, where the frame's text starts and
// whether spindump marked the frame as the kernel's. A line without a
// count, or without a frame after it, is an error, and ok is false.
func (p *parser) countedLine(line string) (col int, count uint64, text int, kernel, ok bool) {
	col, count, text, kernel, ok, overflow := countPrefix(line)
	if !ok {
		p.errorf("call graph line is not \"COUNT FRAME\": %.80q", line)
		return 0, 0, 0, false, false
	}
	if overflow {
		p.errorf("sample count %.40q does not fit 64 bits", line[col:])
	}
	if line[text:] == "" {
		p.errorf("call graph line has a count and no frame: %.80q", line)
		return 0, 0, 0, false, false
	}
	return col, count, text, kernel, true
}

// isRange reports whether s is a spindump sample range: "49", "1-49",
// "1-3,7-9".
func isRange(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= '0' && c <= '9' || c == '-' || c == ',') {
			return false
		}
	}
	return true
}

// addNode places a node in the current thread's tree: its parent is the
// nearest open node whose count stands left of its own. The tree is built
// with an explicit stack, so depth costs no recursion.
func (p *parser) addNode(col int, count uint64, kernel bool, text string, textOff int, samples string) {
	t := p.thread
	for len(p.stack) > 0 && p.stack[len(p.stack)-1].col >= col {
		p.stack = p.stack[:len(p.stack)-1]
	}
	parent := -1
	depth := 0
	for i := len(p.stack) - 1; i >= 0; i-- {
		if p.stack[i].node >= 0 {
			parent = p.stack[i].node
			break
		}
	}
	if parent >= 0 {
		depth = t.Nodes[parent].Depth + 1
	}
	n := Node{Count: count, Depth: depth, Line: p.lineNo, Parent: parent, FirstChild: -1, NextSibling: -1,
		Kernel: kernel, Samples: samples, Text: Span{textOff, textOff + len(text)}}
	idx := len(t.Nodes)
	t.Nodes = append(t.Nodes, n)
	switch {
	case parent >= 0 && t.Nodes[parent].FirstChild < 0:
		t.Nodes[parent].FirstChild = idx
	case parent >= 0:
		t.Nodes[t.Nodes[parent].lastChild].NextSibling = idx
	case p.lastRoot >= 0:
		t.Nodes[p.lastRoot].NextSibling = idx
	}
	if parent >= 0 {
		t.Nodes[parent].lastChild = idx
	} else {
		p.lastRoot = idx
	}
	p.stack = append(p.stack, stackEntry{col: col, node: idx})
}

// entryLine reads a line of sample's summary sections: "COUNT  FRAME" or
// "FRAME  COUNT".
func (p *parser) entryLine(line string, off int) {
	pr := p.process()
	e := Entry{Line: p.lineNo}
	lead := len(line) - len(strings.TrimLeft(line, " \t"))
	body := strings.TrimRight(line[lead:], " \t")
	if _, count, text, _, ok, overflow := countPrefix(line); ok && text > lead {
		if overflow {
			p.errorf("sample count does not fit 64 bits")
		}
		e.Count = count
		e.Text = Span{off + text, off + len(strings.TrimRight(line, " \t"))}
	} else {
		i := strings.LastIndexAny(body, " \t")
		if i < 0 {
			p.errorf("summary line is neither \"COUNT FRAME\" nor \"FRAME COUNT\": %.80q", line)
			return
		}
		v, err := strconv.ParseUint(body[i+1:], 10, 64)
		if err != nil {
			p.errorf("summary line does not end in a count: %.80q", line)
			return
		}
		e.Count = v
		e.Text = Span{off + lead, off + lead + len(strings.TrimRight(body[:i], " \t"))}
	}
	if p.sec == secTotal {
		pr.TotalInStack = append(grow(pr.TotalInStack, 1), e)
	} else {
		pr.TopOfStack = append(grow(pr.TopOfStack, 1), e)
	}
}

// imageLine reads one "Binary Images:" line:
//
//	0x103c0a000 -        0x103c0dfff +Name (0) <UUID> /path
//	*0xffffff8000210000 - 0xffffff8000c0ffff  kernel (8020.240.18) <UUID>  /path
func (p *parser) imageLine(line string) {
	s := strings.TrimSpace(line)
	im := Image{Line: p.lineNo}
	if strings.HasPrefix(s, "*") {
		im.Kernel = true
		s = s[1:]
	}
	start, rest, ok := strings.Cut(s, " - ")
	v, okStart := parseHex(start)
	if !ok || !okStart {
		p.errorf("binary image line does not start with \"START - END\": %.80q", line)
		return
	}
	im.Start = v
	rest = strings.TrimLeft(rest, " ")
	endText, rest, _ := strings.Cut(rest, " ")
	if v, ok := parseHex(endText); ok {
		im.End, im.HasEnd = v, true
	} else if endText != "???" {
		p.errorf("binary image end %.40q is not a hex address", endText)
	}
	rest = strings.TrimLeft(rest, " ")
	if strings.HasPrefix(rest, "+") {
		im.Main = true
		rest = rest[1:]
	}
	desc, uuidText, path, ok := reportfield.ImageTail(rest)
	if ok {
		if u, err := uuid.Parse(uuidText); err != nil {
			p.warnf("binary image UUID %.40q: %v", uuidText, err)
		} else {
			im.UUID = u
		}
		im.Path = path
	}
	desc = strings.TrimSpace(desc)
	// "Name (version)", or a spindump bundle's "id 6.9 (1866)": the
	// version is everything from the name's end.
	if i := strings.IndexByte(desc, ' '); i >= 0 {
		im.Name, im.Version = desc[:i], strings.TrimSpace(desc[i+1:])
		if strings.HasPrefix(im.Version, "(") && strings.HasSuffix(im.Version, ")") && strings.Count(im.Version, "(") == 1 {
			im.Version = im.Version[1 : len(im.Version)-1]
		}
	} else {
		im.Name = desc
	}
	pr := p.process()
	pr.Images = append(grow(pr.Images, 1), im)
}

// shortName is the name frames give an image: its file name.
func (im *Image) shortName() string {
	if im.Path != "" && im.Path != "???" {
		return path.Base(im.Path)
	}
	return im.Name
}
