package report

import (
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/internal/textesc"
	"github.com/stackimage/stackimage/symbolize"
)

// NewCrash returns a Writer of Apple's text crash report layout (.crash),
// as PLCrashReporter's own text formatter (plcrashutil convert
// --format=iphone) writes it: the header (process, code type, date, OS,
// exception, crashed thread), the uncaught exception's reason, the Last
// Exception Backtrace, every thread's frames, the crashed thread's
// registers, and the Binary Images. It serves every input whose threads
// hold frames: a reporter's backtraces (.plcrash, KSCrash, .ips, .crash)
// or our walk of a memory dump (minidump, core, snapshot). Frames are
// written as the text summary writes them (symstore.Frame.Format: Apple's
// columns), inlined functions on lines of their own ending "[inlined]".
// What the input does not say is "???", as PLCrashReporter writes it.
// Names are escaped for a terminal. A sample's call graph has no such
// layout: CanWriteCrash says which inputs it writes.
//
// The report of one dump is written at its End: Apple's layout puts the
// Last Exception Backtrace, which is symbolicated last, before the
// threads.
func NewCrash(w io.Writer) Writer { return &crashWriter{w: w} }

// CanWriteCrash reports whether NewCrash's layout fits inputs of format f:
// every format whose threads are stacks, not a sample's call graph.
func CanWriteCrash(f dump.Format) bool { return !f.IsCallGraph() }

// WriteCrash writes a symbolicated report in Apple's .crash layout.
func WriteCrash(w io.Writer, rep *symbolize.Report) error {
	return WriteReport(NewCrash(w), rep)
}

type crashWriter struct {
	w         io.Writer
	d         *dump.Dump
	threads   []symbolize.Thread
	exception *symbolize.Thread
	dumps     int
}

func (c *crashWriter) Begin(d *dump.Dump) error {
	c.d, c.threads, c.exception = d, nil, nil
	return nil
}

func (c *crashWriter) Thread(th symbolize.Thread) error {
	if th.LastException {
		c.exception = &th
		return nil
	}
	c.threads = append(c.threads, th)
	return nil
}

func (c *crashWriter) Close() error { return nil }

// unknown is what PLCrashReporter's formatter writes for a value the
// report lacks.
const unknown = "???"

func orUnknown(s string) string {
	if s == "" {
		return unknown
	}
	return s
}

func (c *crashWriter) End(rep *symbolize.Report) error {
	w, d := c.w, c.d
	if d == nil {
		return ErrNilDump
	}
	if c.dumps > 0 {
		fmt.Fprintln(w) // the next process's report
	}
	c.dumps++
	line := func(format string, args ...any) { textesc.WriteLine(w, format, args...) }
	ptrSize, codeType := 8, unknown
	if d.Arch != nil {
		ptrSize, codeType = d.Arch.PtrSize, d.Arch.CrashCodeType()
	}
	pr := d.Process

	line("Incident Identifier: %s", orUnknown(pr.IncidentID))
	line("Hardware Model:      %s", orUnknown(d.System.Hardware))
	line("Process:         %s [%s]", orUnknown(pr.Name), pid(pr.PID))
	line("Path:            %s", orUnknown(pr.Path))
	line("Identifier:      %s", orUnknown(pr.Identifier))
	line("Version:         %s", orUnknown(pr.Version))
	line("Code Type:       %s", codeType)
	line("Parent Process:  %s [%s]", orUnknown(pr.ParentName), pid(pr.ParentPID))
	fmt.Fprintln(w)
	line("Date/Time:       %s", orUnknown(pr.Time))
	line("OS Version:      %s", orUnknown(d.System.OS))
	line("Report Version:  104")
	fmt.Fprintln(w)

	crashed := -1
	for k, th := range c.threads {
		if th.Crashed {
			crashed = k
			break
		}
	}
	if ex := d.Crash; ex != nil {
		// Apple's "EXC_BAD_ACCESS (SIGSEGV)"; the signal alone when the
		// reporter caught no Mach exception, as PLCrashReporter writes it.
		excType := ex.Type
		switch {
		case excType == "":
			excType = ex.Signal
		case ex.Signal != "":
			excType += " (" + ex.Signal + ")"
		}
		line("Exception Type:  %s", orUnknown(excType))
		line("Exception Codes: %s", orUnknown(ex.Codes))
	}
	if crashed >= 0 {
		line("Crashed Thread:  %d", c.threadNumber(crashed))
	}
	fmt.Fprintln(w)
	if ex := d.Crash; ex != nil && (ex.Name != "" || ex.Reason != "") {
		line("Application Specific Information:")
		line("*** Terminating app due to uncaught exception '%s', reason: '%s'", ex.Name, oneLine(ex.Reason))
		fmt.Fprintln(w)
	}
	if e := c.exception; e != nil && len(e.Frames) > 0 {
		line("Last Exception Backtrace:")
		for _, f := range e.Frames {
			line("%s", f.Format(ptrSize))
		}
		fmt.Fprintln(w)
	}
	for k, th := range c.threads {
		if k >= len(d.Threads) {
			break // a reporter's own crashed thread (KSCrash): no place in Apple's layout
		}
		n := c.threadNumber(k)
		if name := th.Name; name != "" {
			line("Thread %d name:  %s", n, name)
		}
		if th.Crashed {
			line("Thread %d Crashed:", n)
		} else {
			line("Thread %d:", n)
		}
		for _, f := range th.Frames {
			line("%s", f.Format(ptrSize))
		}
		fmt.Fprintln(w)
	}
	if crashed >= 0 && crashed < len(d.Threads) {
		c.writeState(c.threadNumber(crashed), &d.Threads[crashed], codeType, ptrSize)
	}
	c.writeImages(ptrSize)
	return nil
}

// threadNumber is the number Apple's layout gives the k-th thread: the
// input's own (a report's "Thread 3", a .plcrash thread_number), else its
// place.
func (c *crashWriter) threadNumber(k int) int {
	if k < len(c.d.Threads) && c.d.Threads[k].Index >= 0 {
		return c.d.Threads[k].Index
	}
	return k
}

func pid(n int) string {
	if n == 0 {
		return unknown
	}
	return fmt.Sprint(n)
}

// writeState writes the crashed thread's registers four to a line, in
// the thread state's order, then those the architecture does not define
// by name.
func (c *crashWriter) writeState(n int, th *dump.Thread, codeType string, ptrSize int) {
	type reg struct {
		name  string
		value uint64
	}
	var regs []reg
	if rs := th.Registers; rs != nil {
		for _, name := range rs.Known() {
			v, _ := rs.Get(name)
			regs = append(regs, reg{name, v})
		}
	}
	others := make([]string, 0, len(th.OtherRegisters))
	for name := range th.OtherRegisters {
		others = append(others, name)
	}
	slices.Sort(others)
	for _, name := range others {
		regs = append(regs, reg{name, th.OtherRegisters[name]})
	}
	if len(regs) == 0 {
		return
	}
	w := c.w
	textesc.WriteLine(w, "Thread %d crashed with %s Thread State:", n, codeType)
	var b strings.Builder
	for i, r := range regs {
		fmt.Fprintf(&b, "%6s: 0x%0*x ", textesc.String(r.name), 2*ptrSize, r.value)
		if i%4 == 3 || i == len(regs)-1 {
			fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
			b.Reset()
		}
	}
	fmt.Fprintln(w)
}

// writeImages writes the Binary Images, by load address, as Apple's layout
// lists them: "start - end (inclusive) +name arch  <uuid> path", the "+"
// marking the main executable.
func (c *crashWriter) writeImages(ptrSize int) {
	d := c.d
	order := make([]int, len(d.Images))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		x, y := d.Images[a].LoadAddress, d.Images[b].LoadAddress
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	})
	width := 2 + 2*ptrSize
	textesc.WriteLine(c.w, "Binary Images:")
	for _, i := range order {
		im := d.Images[i]
		arch := im.Arch
		if arch == "" && d.Arch != nil {
			arch = d.Arch.Name
		}
		id := unknown
		if !im.UUID.IsZero() {
			id = strings.ToLower(strings.ReplaceAll(im.UUID.String(), "-", ""))
		}
		mark := " "
		if im.Path != "" && im.Path == d.Process.Path {
			mark = "+"
		}
		name, p := im.Name, im.Path
		if name == "" {
			name = path.Base(p)
		}
		textesc.WriteLine(c.w, "%#*x - %#*x %s%s %s  <%s> %s", width, im.LoadAddress, width, im.LoadAddress+max(1, im.Size)-1,
			mark, orUnknown(name), orUnknown(arch), id, orUnknown(p))
	}
}

// oneLine keeps a reason of several lines on the exception's one line.
func oneLine(s string) string {
	return strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
}
