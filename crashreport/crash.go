package crashreport

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/internal/lazyregexp"
	"github.com/stackimage/stackimage/internal/reportfield"
)

// Lines of the text format. Apple pads columns with spaces and tabs;
// image names may contain spaces ("Google Chrome Framework"), so a frame's
// image name is everything between the frame number and the first
// address.
var (
	reThread      = lazyregexp.New(`^Thread (\d+)( Crashed)?:(:?)\s*(.*)$`)
	reThreadName  = lazyregexp.New(`^Thread (\d+) name:\s*(.*)$`)
	reThreadState = lazyregexp.New(`^Thread (\d+) crashed with (.*?)Thread State\s*(?:\((\d+)-bit\))?:?\s*$`)
	reFrame       = lazyregexp.New(`^(\d+)\s+(.+?)\s+(0x[0-9a-fA-F]+)(?:\s+(.*?))?\s*$`)
	reLoadOffset  = lazyregexp.New(`^(0x[0-9a-fA-F]+) \+ (\d+)(?:\s+\((.*)\))?$`)
	reImage       = lazyregexp.New(`^\s*(0x[0-9a-fA-F]+)\s*-\s*(0x[0-9a-fA-F]+|\?\?\?)\s+(.*)$`)
	reRegister    = lazyregexp.New(`([A-Za-z][A-Za-z0-9]*):\s*(0x[0-9a-fA-F]+)`)
	reHeader      = lazyregexp.New(`^([A-Za-z][A-Za-z /]*[A-Za-z]):\s*(.*)$`)
	reStackDump   = lazyregexp.New(`^Stack Dump \((0x[0-9a-fA-F]+)-(0x[0-9a-fA-F]+)\):`)
	reFileLine    = lazyregexp.New(`\s*\(([^()]+):(\d+)(?::\d+)?\)$`)
	reSymOffset   = lazyregexp.New(`\s+\+\s+(\d+)$`)
	reInImage     = lazyregexp.New(`\s+\(in [^()]*\)$`)
)

// textParser holds the state of one text report parse.
type textParser struct {
	r       *Report
	p       *problems
	threads map[int]int // thread number -> index in r.Threads

	// Per-frame load addresses ("0x104000000 + 15844"), kept beside the
	// frames until the images are known: threadLoads[i] for r.Threads[i],
	// excLoads for the last exception backtrace.
	threadLoads [][]frameLoad
	excLoads    []frameLoad
	stack       *StackDump // the "Stack Dump" section, for the crashed thread
	// recrashFrom is the index in r.Threads of the first thread after
	// "Handler crashed while reporting:" (KSCrash), -1 before it.
	recrashFrom int

	// spans, when not nil, receives the place of every frame line's
	// description (what follows its address), for WriteSymbolicated.
	spans *[]frameSpan

	crashedNum   int // "Crashed Thread:" header; -1 when absent
	sawImages    bool
	imagesLine   int
	stackStart   uint64
	stackEnd     uint64
	stackLine    int
	pendingStack bool
}

type frameLoad struct {
	load   uint64
	ok     bool
	offset uint64
}

// ParseCrash parses a text crash report: Apple's .crash format, as
// ReportCrash, Xcode and KSCrash write it.
func ParseCrash(data []byte) (*Report, error) {
	if err := checkSize(FormatCrash, data); err != nil {
		return nil, err
	}
	tp := &textParser{
		r:           &Report{Format: FormatCrash, CrashedThread: -1},
		p:           &problems{format: FormatCrash},
		threads:     map[int]int{},
		crashedNum:  -1,
		recrashFrom: -1,
	}
	tp.parse(data)
	return tp.p.finish(tp.r)
}

// section is what the lines being read belong to.
type section int

const (
	secHeader section = iota
	secThread
	secState
	secImages
	secLastException
	secAppInfo
	secStackDump
	secOther
)

func (tp *textParser) parse(data []byte) {
	r, p := tp.r, tp.p
	sec := secHeader
	// Pointers into r.Threads go stale when it grows, so the threads being
	// read are tracked by index.
	cur := -1         // index of the thread whose frames are being read
	stateThread := -1 // index of the thread whose registers are being read
	var stateArch *archregs.Arch
	var names = map[int]string{}
	var lastExc []Frame
	var appInfo []string
	var threadStates []pendingState

	lineNo := 0
	for len(data) > 0 {
		var line []byte
		if nl := bytes.IndexByte(data, '\n'); nl >= 0 {
			line, data = data[:nl], data[nl+1:]
		} else {
			line, data = data, nil
		}
		lineNo++
		s := strings.TrimRight(string(line), "\r")
		trimmed := strings.TrimSpace(s)

		// Section headers can follow a section without a blank line.
		if m := reThread.FindStringSubmatch(s); m != nil {
			n, err := strconv.Atoi(m[1])
			if err != nil || len(r.Threads) >= MaxThreads {
				p.fail("Thread", lineNo, "thread %q: bad number or more than %d threads", m[1], MaxThreads)
				sec, cur = secOther, -1
				continue
			}
			t := newThread(n)
			t.Crashed = m[2] != ""
			if m[3] != "" || m[4] != "" {
				// "Thread 0 Crashed::  Dispatch queue: com.apple.main-thread"
				// or "Thread 3:: com.apple.NSEventThread".
				setThreadName(&t, m[4])
			}
			if nm, ok := names[n]; ok {
				setThreadName(&t, nm)
			}
			if _, dup := tp.threads[n]; dup && tp.recrashFrom < 0 {
				p.warn("line %d: thread %d listed twice", lineNo, n)
			}
			tp.threads[n] = len(r.Threads)
			r.Threads = append(r.Threads, t)
			tp.threadLoads = append(tp.threadLoads, nil)
			cur = len(r.Threads) - 1
			sec = secThread
			continue
		}
		if m := reThreadName.FindStringSubmatch(s); m != nil {
			n, _ := strconv.Atoi(m[1])
			names[n] = m[2]
			sec = secOther
			continue
		}
		if m := reThreadState.FindStringSubmatch(s); m != nil {
			n, _ := strconv.Atoi(m[1])
			threadStates = append(threadStates, pendingState{num: n, title: m[2], bits: m[3], line: lineNo})
			stateThread, stateArch = -1, nil
			sec = secState
			continue
		}
		switch {
		case strings.HasPrefix(s, "Binary Images:"):
			tp.sawImages, tp.imagesLine = true, lineNo
			sec = secImages
			continue
		case strings.HasPrefix(s, "Last Exception Backtrace:"):
			sec = secLastException
			continue
		case strings.HasPrefix(s, "Handler crashed while reporting:"):
			// KSCrash crashed while writing the report; what follows is
			// its own crash, not the app's.
			if tp.recrashFrom < 0 {
				tp.recrashFrom = len(r.Threads)
			}
			sec = secOther
			continue
		case strings.HasPrefix(s, "Application Specific Information:"):
			sec = secAppInfo
			if rest := strings.TrimSpace(strings.TrimPrefix(s, "Application Specific Information:")); rest != "" {
				appInfo = append(appInfo, rest)
			}
			continue
		}
		if m := reStackDump.FindStringSubmatch(s); m != nil {
			tp.stackStart, _ = strconv.ParseUint(m[1][2:], 16, 64)
			tp.stackEnd, _ = strconv.ParseUint(m[2][2:], 16, 64)
			tp.stackLine, tp.pendingStack = lineNo, true
			sec = secStackDump
			continue
		}

		switch sec {
		case secHeader:
			tp.header(s, lineNo)
		case secThread, secLastException:
			if trimmed == "" {
				sec = secOther
				continue
			}
			if sec == secLastException && strings.HasPrefix(trimmed, "(") {
				// An unsymbolicated last exception backtrace is one
				// parenthesized list of addresses.
				tp.addressList(trimmed, lineNo, &lastExc, &tp.excLoads)
				continue
			}
			if sec == secLastException {
				tp.frame(s, lineNo, LastExceptionBacktrace, &lastExc, &tp.excLoads)
			} else if cur >= 0 {
				tp.frame(s, lineNo, cur, &r.Threads[cur].Frames, &tp.threadLoads[cur])
			}
		case secState:
			if trimmed == "" {
				sec = secOther
				continue
			}
			if stateThread < 0 && len(threadStates) > 0 {
				st := threadStates[len(threadStates)-1]
				stateArch = tp.stateArch(st)
				if i, ok := tp.threads[st.num]; ok {
					stateThread = i
				} else {
					p.warn("line %d: registers of thread %d, which the report does not list", st.line, st.num)
					sec = secOther
					continue
				}
			}
			for _, m := range reRegister.FindAllStringSubmatch(s, -1) {
				v, err := strconv.ParseUint(m[2][2:], 16, 64)
				if err != nil {
					p.warn("line %d: register %s: %q is not a 64-bit value", lineNo, m[1], m[2])
					continue
				}
				setReg(&r.Threads[stateThread], stateArch, m[1], v)
			}
		case secImages:
			if trimmed == "" {
				sec = secOther
				continue
			}
			tp.image(s, lineNo)
		case secAppInfo:
			if trimmed == "" {
				sec = secOther
				continue
			}
			if len(appInfo) < MaxFrames {
				appInfo = append(appInfo, trimmed)
			}
		case secStackDump:
			if trimmed == "" {
				continue
			}
			tp.stackDump(trimmed, lineNo)
			sec = secOther
		}
	}

	if len(appInfo) > 0 {
		r.Exception.Reason = strings.Join(appInfo, "\n")
	}
	r.LastExceptionBacktrace = lastExc
	if tp.pendingStack {
		p.fail("Stack Dump", tp.stackLine, "no contents after the header (report truncated?)")
	}
	if !tp.sawImages {
		p.fail("Binary Images", 0, "section missing (report truncated?); frames keep the image names their lines give")
	}
	tp.finish()
}

type pendingState struct {
	num   int
	title string // "ARM ", "X86 "
	bits  string // "64", "32" or ""
	line  int
}

// stateArch returns the architecture of a "Thread N crashed with ... Thread
// State" block.
func (tp *textParser) stateArch(st pendingState) *archregs.Arch {
	title := strings.ToUpper(strings.TrimSpace(st.title))
	var flavor string
	switch {
	case strings.HasPrefix(title, "ARM") && st.bits == "64":
		flavor = "ARM_THREAD_STATE64"
	case strings.HasPrefix(title, "ARM"):
		flavor = "ARM_THREAD_STATE"
	case strings.HasPrefix(title, "X86") && st.bits == "64":
		flavor = "X86_THREAD_STATE64"
	case strings.HasPrefix(title, "X86") && st.bits == "32":
		flavor = "X86_THREAD_STATE32"
	case strings.HasPrefix(title, "X86"):
		flavor = "X86_THREAD_STATE"
	}
	a := flavorArch(flavor, tp.r.Arch)
	if a == nil {
		tp.p.warn("line %d: unknown thread state %q; registers kept by name only", st.line, strings.TrimSpace(st.title))
	}
	return a
}

// header reads one "Key: value" line of the report's header.
func (tp *textParser) header(s string, lineNo int) {
	m := reHeader.FindStringSubmatch(s)
	if m == nil {
		return
	}
	r := tp.r
	key, val := m[1], strings.TrimSpace(m[2])
	switch key {
	case "Incident Identifier":
		r.IncidentID = val
	case "Hardware Model":
		r.Hardware = val
	case "Process":
		// "CrashingTest [1710]"
		r.Process, r.PID = reportfield.NameAndPID(val)
	case "Path":
		r.Path = val
	case "Identifier":
		r.Identifier = val
	case "Version":
		r.Version = val
	case "Code Type":
		// "X86-64 (Native)", "ARM-64", "ARM"
		ct := val
		if i := strings.IndexByte(ct, '('); i >= 0 {
			ct = strings.TrimSpace(ct[:i])
		}
		r.Arch = archByName(ct)
		if r.Arch == nil {
			tp.p.warn("line %d: Code Type %q is not an architecture this package knows", lineNo, val)
		}
	case "OS Version":
		r.OS = val
	case "Date/Time":
		r.Time = val
	case "Exception Type":
		// "EXC_BAD_ACCESS (SIGSEGV)"
		r.Exception.Type = val
		if i := strings.IndexByte(val, '('); i >= 0 && strings.HasSuffix(val, ")") {
			r.Exception.Type = strings.TrimSpace(val[:i])
			r.Exception.Signal = val[i+1 : len(val)-1]
		}
	case "Exception Codes", "Exception Subtype":
		// Reports write both the symbolic subtype and the raw codes,
		// sometimes under the same key; the symbolic one is more useful.
		if r.Exception.Codes == "" || strings.HasPrefix(r.Exception.Codes, "0x") && !strings.HasPrefix(val, "0x") {
			r.Exception.Codes = val
		}
	case "Crashed Thread", "Triggered by Thread":
		f := strings.Fields(val)
		if len(f) > 0 {
			if n, err := strconv.Atoi(f[0]); err == nil {
				tp.crashedNum = n
			}
		}
	}
}

// setThreadName files a thread header's trailing text as a queue or name.
func setThreadName(t *Thread, s string) {
	s = strings.TrimSpace(s)
	if q, ok := strings.CutPrefix(s, "Dispatch queue:"); ok {
		t.Queue = strings.TrimSpace(q)
		return
	}
	if s != "" {
		t.Name = s
	}
}

// frame reads one backtrace line into frames, which belong to thread
// owner (an index into r.Threads as read so far, or
// LastExceptionBacktrace).
func (tp *textParser) frame(s string, lineNo, owner int, frames *[]Frame, loads *[]frameLoad) {
	mi := reFrame.FindStringSubmatchIndex(s)
	if mi == nil {
		tp.p.warn("line %d: not a frame line: %.80q", lineNo, s)
		return
	}
	m := submatches(s, mi)
	if len(*frames) >= MaxFrames {
		tp.p.fail("", lineNo, "more than %d frames", MaxFrames)
		return
	}
	addr, err := strconv.ParseUint(m[3][2:], 16, 64)
	if err != nil {
		tp.p.fail("", lineNo, "frame address %q is not a 64-bit value", m[3])
		return
	}
	if n, _ := strconv.Atoi(m[1]); n != len(*frames) {
		tp.p.warn("line %d: frame numbered %d is frame %d of its thread", lineNo, n, len(*frames))
	}
	f := Frame{Address: addr, ImageIndex: -1, ImageName: strings.TrimSpace(m[2])}
	var fl frameLoad
	rest := m[4]
	if lm := reLoadOffset.FindStringSubmatch(rest); lm != nil {
		// "0x104000000 + 15844", optionally followed by "(symbol + 36)".
		load, err1 := strconv.ParseUint(lm[1][2:], 16, 64)
		off, err2 := strconv.ParseUint(lm[2], 10, 64)
		if err1 == nil && err2 == nil {
			fl = frameLoad{load: load, ok: true, offset: off}
			if load+off != addr {
				tp.p.warn("line %d: %#x + %d is not the frame address %#x", lineNo, load, off, addr)
			}
		}
		rest = lm[3]
	}
	if rest != "" {
		parseSymbol(&f, rest)
	}
	*frames = append(*frames, f)
	*loads = append(*loads, fl)
	if tp.spans != nil {
		// What follows the address is what symbolication rewrites.
		sp := frameSpan{line: lineNo, owner: owner, frame: len(*frames) - 1, start: mi[7], end: mi[7]}
		if mi[8] >= 0 {
			sp.start, sp.end = mi[8], mi[9]
		}
		*tp.spans = append(*tp.spans, sp)
	}
}

// submatches returns the submatches of s that FindStringSubmatchIndex
// located at loc, "" for a group that did not take part.
func submatches(s string, loc []int) []string {
	m := make([]string, len(loc)/2)
	for i := range m {
		if loc[2*i] >= 0 {
			m[i] = s[loc[2*i]:loc[2*i+1]]
		}
	}
	return m
}

// parseSymbol reads "symbol + 36", "main + 20 (main.m:28)",
// "-[C m] (in Image) (main.m:21)", "f + 8 [inlined]" into f.
func parseSymbol(f *Frame, s string) {
	s = strings.TrimSpace(s)
	if t, ok := strings.CutSuffix(s, "[inlined]"); ok {
		f.Inlined = true
		s = strings.TrimSpace(t)
	}
	if m := reFileLine.FindStringSubmatchIndex(s); m != nil {
		f.File = s[m[2]:m[3]]
		f.Line, _ = strconv.Atoi(s[m[4]:m[5]])
		s = s[:m[0]]
	}
	if m := reSymOffset.FindStringSubmatchIndex(s); m != nil {
		f.SymbolOffset, _ = strconv.ParseUint(s[m[2]:m[3]], 10, 64)
		f.HasSymbolOffset = true
		s = s[:m[0]]
	}
	if m := reInImage.FindStringIndex(s); m != nil {
		s = s[:m[0]]
	}
	f.Symbol = strings.TrimSpace(s)
	if f.Symbol == "" {
		f.SymbolOffset, f.HasSymbolOffset = 0, false
	}
}

// addressList reads "(0x1 0x2 ...)", an unsymbolicated last exception
// backtrace.
func (tp *textParser) addressList(s string, lineNo int, frames *[]Frame, loads *[]frameLoad) {
	for _, w := range strings.Fields(strings.Trim(s, "()")) {
		if len(*frames) >= MaxFrames {
			tp.p.fail("Last Exception Backtrace", lineNo, "more than %d frames", MaxFrames)
			return
		}
		v, err := strconv.ParseUint(strings.TrimPrefix(strings.ToLower(w), "0x"), 16, 64)
		if err != nil {
			tp.p.warn("line %d: %q is not an address", lineNo, w)
			continue
		}
		*frames = append(*frames, Frame{Address: v, ImageIndex: -1})
		*loads = append(*loads, frameLoad{})
	}
}

// image reads one line of the Binary Images section:
//
//	0x104cc8000 - 0x104ccbfff CrashingTest arm64 <uuid> /path
//	0x5a000 - 0x9efff +Crash-Tester armv7  <5425b875...> /path
//	0x7ff8... - 0x7ff8... com.apple.AppKit (6.9 - 2113) <uuid> /path
func (tp *textParser) image(s string, lineNo int) {
	m := reImage.FindStringSubmatch(s)
	if m == nil {
		tp.p.warn("line %d: not a binary image line: %.80q", lineNo, s)
		return
	}
	if len(tp.r.Images) >= MaxImages {
		tp.p.fail("Binary Images", lineNo, "more than %d images", MaxImages)
		return
	}
	start, err := strconv.ParseUint(m[1][2:], 16, 64)
	if err != nil {
		tp.p.fail("Binary Images", lineNo, "start address %q is not a 64-bit value", m[1])
		return
	}
	im := Image{LoadAddress: start}
	if end, err := strconv.ParseUint(strings.TrimPrefix(m[2], "0x"), 16, 64); err == nil && end >= start && end != ^uint64(0) {
		im.Size = end - start + 1 // the end address is inclusive
	}
	middle, uuid, path, ok := reportfield.ImageTail(m[3])
	if ok {
		if im.Path = path; im.Path == "???" {
			im.Path = ""
		}
		if uuid != "(null)" && uuid != "" {
			im.UUID = tp.p.uuid(fmt.Sprintf("line %d", lineNo), uuid)
		}
	}
	middle = strings.TrimSpace(middle)
	middle = strings.TrimPrefix(middle, "+") // "+" marks an image outside the OS
	if strings.HasSuffix(middle, ")") {
		if i := strings.LastIndexByte(middle, '('); i >= 0 {
			if v := middle[i+1 : len(middle)-1]; v != "*" {
				im.Version = v
			}
			middle = strings.TrimSpace(middle[:i])
		}
	}
	if i := strings.LastIndexAny(middle, " \t"); i >= 0 {
		if last := middle[i+1:]; isArchName(last) {
			im.Arch = last
			middle = strings.TrimSpace(middle[:i])
		}
	}
	im.Name = middle
	if im.Name == "" {
		im.Name = shortName(im.Path)
	}
	tp.r.Images = append(tp.r.Images, im)
}

// isArchName reports whether s is an architecture name a Binary Images
// line may carry.
func isArchName(s string) bool {
	// archcheck: the words a Binary Images line may carry, not behaviour
	// per architecture.
	switch s {
	case "arm", "armv6", "armv7", "armv7s", "armv7k", "armv7f", "arm64", "arm64e", "arm64_32",
		"i386", "x86_64", "x86_64h", "ppc", "ppc64":
		return true
	}
	return false
}

// stackDump reads the hex line after "Stack Dump (start-end):" (KSCrash's
// text reports) into the crashed thread's Stack.
func (tp *textParser) stackDump(hexText string, lineNo int) {
	tp.pendingStack = false
	if hexText == "(null)" {
		tp.p.warn("line %d: Stack Dump has no contents", lineNo)
		return
	}
	data, err := hex.DecodeString(hexText)
	if err != nil {
		tp.p.fail("Stack Dump", lineNo, "contents are not hex bytes")
		return
	}
	if tp.stackEnd < tp.stackStart || uint64(len(data)) != tp.stackEnd-tp.stackStart {
		tp.p.fail("Stack Dump", lineNo, "%d bytes of contents for the range %#x-%#x", len(data), tp.stackStart, tp.stackEnd)
		return
	}
	tp.stack = &StackDump{Start: tp.stackStart, Data: data, GrowsDown: true}
}

// finish resolves frames to images and marks the crashed thread.
func (tp *textParser) finish() {
	r := tp.r
	res := newImageResolver(r.Images)
	resolveAll := func(frames []Frame, loads []frameLoad) {
		for i := range frames {
			f := &frames[i]
			fl := loads[i]
			res.resolve(f, fl.load, fl.ok)
			if f.ImageIndex < 0 && fl.ok {
				f.ImageOffset, f.ImageLoadAddress = fl.offset, fl.load
			}
		}
	}
	for i := range r.Threads {
		resolveAll(r.Threads[i].Frames, tp.threadLoads[i])
	}
	resolveAll(r.LastExceptionBacktrace, tp.excLoads)
	if i := tp.recrashFrom; i >= 0 && i < len(r.Threads) {
		t := r.Threads[i]
		r.RecrashThread = &t
		r.Threads = r.Threads[:i]
		tp.p.warn("the crash reporter crashed while writing this report; its own crashed thread is in RecrashThread")
	}
	if tp.crashedNum >= 0 {
		if i, ok := tp.threads[tp.crashedNum]; ok {
			r.CrashedThread = i
			r.Threads[i].Crashed = true
		} else {
			tp.p.warn("Crashed Thread %d is not among the report's threads", tp.crashedNum)
		}
	}
	if r.CrashedThread < 0 {
		for i, t := range r.Threads {
			if t.Crashed {
				r.CrashedThread = i
				break
			}
		}
	}
	if st := tp.stack; st != nil {
		if r.CrashedThread < 0 {
			tp.p.warn("Stack Dump: no crashed thread to attach it to")
			return
		}
		t := &r.Threads[r.CrashedThread]
		if t.Registers != nil {
			if sp, ok := t.Registers.SP(); ok {
				st.SP = sp
			}
		}
		setStack(t, st)
	}
}
