package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/internal/textesc"
	"github.com/stackimage/stackimage/open"
	"github.com/stackimage/stackimage/symbolize"
	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/walker"
)

// NewText returns a Writer of the text summary: a header of what the input
// says of the process and the crash, each thread's frames as a crash
// report lists them, our walk beside a reporter's backtrace, warnings and
// the images without symbols. Every name in it is escaped for a terminal
// (control characters, bidirectional overrides, bytes that are not
// UTF-8): names come from the inputs. Write errors are left to the
// caller's final flush of w.
func NewText(w io.Writer) Writer { return &textWriter{w: w} }

// WriteText writes a symbolicated report as text.
func WriteText(w io.Writer, rep *symbolize.Report) error {
	return WriteReport(NewText(w), rep)
}

type textWriter struct {
	w       io.Writer
	ptrSize int
	dumps   int
}

func writeLine(w io.Writer, format string, args ...any) { textesc.WriteLine(w, format, args...) }

func (t *textWriter) Begin(d *dump.Dump) error {
	t.ptrSize = 8
	if d.Arch != nil {
		t.ptrSize = d.Arch.PtrSize
	}
	if t.dumps > 0 {
		// The next process of the same report (a spindump's): its own
		// header.
		fmt.Fprintln(t.w)
		fmt.Fprintln(t.w)
	} else {
		writeLine(t.w, "Format: %s", open.FormatName(d.Format))
	}
	t.dumps++
	if d.Format != dump.FormatSnapshot {
		writeReportHeader(t.w, d)
	}
	if d.Format.IsCallGraph() || d.CallGraph {
		// A call graph is a tree: its frames are listed each before the
		// frames it calls, not innermost first as a stack is.
		writeLine(t.w, "%-*s%s", headerIndent, "Order:", callGraphOrder)
	}
	return nil
}

func (t *textWriter) Thread(th symbolize.Thread) error {
	w, ptrSize := t.w, t.ptrSize
	fmt.Fprintln(w)
	writeLine(w, "%s:", threadHeading(th))
	for _, f := range th.Frames {
		writeLine(w, "%s", frameLine(f, ptrSize))
	}
	if th.StopReason != symbolize.StopNone {
		writeLine(w, "%s", stopLine(th.StopReason, th.StopDetail))
	}
	if th.SetAsideLR != 0 {
		writeLine(w, "%s", setAsideLine(th.SetAsideLR, th.SetAsideLRName))
	}
	if wk := th.Walk; wk != nil {
		fmt.Fprintf(w, "\nOur walk of this thread from its registers and stack dump:\n")
		for _, f := range wk.Frames {
			writeLine(w, "%s", frameLine(f, ptrSize))
		}
		writeLine(w, "%s", stopLine(wk.StopReason, wk.StopDetail))
		if wk.SetAsideLR != 0 {
			writeLine(w, "%s", setAsideLine(wk.SetAsideLR, wk.SetAsideLRName))
		}
		writeComparison(w, wk)
	}
	return nil
}

func (t *textWriter) End(rep *symbolize.Report) error {
	w := t.w
	if len(rep.Warnings) > 0 {
		fmt.Fprintln(w, "\nWarnings:")
		for _, warning := range rep.Warnings {
			writeLine(w, "  %s", warning)
		}
	}
	if len(rep.Missing) > 0 {
		fmt.Fprintln(w, "\nImages without symbols (no file with their UUID under --symbols):")
		for _, m := range rep.Missing {
			writeLine(w, "  %s %s", m.UUID, m.Name)
		}
	}
	return nil
}

func (t *textWriter) Close() error { return nil }

// frameLine formats a frame as a crash report line, and says how a walked
// caller was found: the trust a reader gives it differs between a frame an
// unwind table gave and one a stack scan guessed.
func frameLine(f symstore.Frame, ptrSize int) string {
	line := f.Format(ptrSize)
	if f.Index == 0 || f.Inlined || f.FoundBy == symstore.FoundByReport {
		return line
	}
	if f.Trust == walker.TrustNone {
		return line + "  [found by " + f.FoundBy.String() + "]"
	}
	return line + "  [found by " + f.FoundBy.String() + ", trust " + f.Trust.String() + "]"
}

// ruleNames describe symbolize.AddressRule values for people.
var ruleNames = map[symbolize.AddressRule]string{
	symbolize.RuleReturnAddress:        "return addresses",
	symbolize.RuleRoundedReturnAddress: "return addresses rounded down to a multiple of twice the pointer size (KSCrash 2.x)",
}

// writeComparison says how our walk compares with the reporter's frames:
// the disagreements first, then the frames one side lacks, each explained.
func writeComparison(w io.Writer, wk *symbolize.Walk) {
	fmt.Fprintf(w, "The report's callers are %s.\n", ruleNames[wk.AddressRule])
	var mismatches, explained []symbolize.Difference
	for _, d := range wk.Differences {
		if d.Kind == symbolize.DiffAddress {
			mismatches = append(mismatches, d)
		} else {
			explained = append(explained, d)
		}
	}
	both := fmt.Sprintf("%d frames both have", wk.Compared)
	switch {
	case wk.Agrees && wk.Compared == 1:
		fmt.Fprintln(w, "The walk agrees with the report in the one frame both have.")
	case wk.Agrees:
		fmt.Fprintf(w, "The walk agrees with the report in all %s.\n", both)
	default:
		fmt.Fprintf(w, "The walk differs from the report in %d of %s:\n", len(mismatches), both)
		for _, d := range mismatches {
			writeLine(w, "  %s", d)
		}
	}
	for _, d := range explained {
		writeLine(w, "Note: %s.", d)
	}
}

func threadHeading(th symbolize.Thread) string {
	if th.LastException || th.Name == "Last Exception Backtrace" {
		return "Last Exception Backtrace"
	}
	head := fmt.Sprintf("Thread %d", th.ID)
	if th.Crashed {
		head += " Crashed"
	}
	if th.Name != "" {
		head += fmt.Sprintf(" (%s)", th.Name)
	}
	return head
}

func stopLine(reason symbolize.StopReason, detail string) string {
	if detail == "" {
		return "Walk stopped: " + reason.String()
	}
	return fmt.Sprintf("Walk stopped: %s (%s)", reason, detail)
}

// setAsideLine says that the walk set frame 0's link register aside
// (symbolize.Thread.SetAsideLR): a reader learns that a frame may be
// missing between frames 0 and 1, and at which address.
func setAsideLine(lr uint64, name string) string {
	if name != "" {
		name = " (" + name + ")"
	}
	return fmt.Sprintf("Link register %#x%s set aside: in frame 0's image near PC, "+
		"without code or symbols to tell a caller from a stale return address; "+
		"a frame may be missing between frames 0 and 1", lr, name)
}

// callGraphOrder says in what order a sample's or spindump's frames are
// listed.
const callGraphOrder = "call graph, outermost first: each frame before the frames it calls"

// headerIndent is where a header field's value starts.
const headerIndent = 12

func writeReportHeader(w io.Writer, d *dump.Dump) {
	field := func(name, value string) {
		if value == "" {
			return
		}
		// A value of several lines (an exception's reason) is printed as
		// lines, each indented under the first, keeping its own
		// indentation; each line is escaped on its own.
		lines := strings.Split(strings.TrimRight(strings.ReplaceAll(value, "\r\n", "\n"), "\n"), "\n")
		writeLine(w, "%-*s%s", headerIndent, name+":", lines[0])
		for _, l := range lines[1:] {
			writeLine(w, "%*s%s", headerIndent, "", l)
		}
	}
	pr := d.Process
	process := pr.Name
	if process != "" && pr.PID != 0 {
		process += fmt.Sprintf(" [%d]", pr.PID)
	}
	field("Process", process)
	field("Identifier", pr.Identifier)
	field("Version", pr.Version)
	field("OS", d.System.OS)
	field("CPU", d.System.CPU)
	field("Hardware", d.System.Hardware)
	field("Time", pr.Time)
	if d.Arch != nil {
		field("Arch", d.Arch.Name)
	}
	if ex := d.Crash; ex != nil {
		exception := strings.TrimSpace(strings.Join([]string{ex.Type, paren(ex.Signal)}, " "))
		field("Exception", exception)
		field("Codes", ex.Codes)
		if ex.HasAddress && !strings.Contains(ex.Codes, "0x") {
			field("Address", fmt.Sprintf("%#x", ex.Address))
		}
		field("Name", ex.Name)
		field("Reason", ex.Reason)
		field("Diagnosis", ex.Diagnosis)
	}
	if len(d.Annotations) > 0 {
		writeLine(w, "Annotations:")
		for _, a := range d.Annotations {
			what := a.Key
			if a.Module != "" {
				what = a.Module + ": " + a.Key
			}
			if a.Key == "" {
				what = a.Module
			}
			writeLine(w, "  %s = %s", what, a.Value)
		}
	}
}

func paren(s string) string {
	if s == "" {
		return ""
	}
	return "(" + s + ")"
}
