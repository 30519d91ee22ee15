// Package hangreport reads the text reports macOS writes about a hung or
// busy process: the output of /usr/bin/sample, spindump reports, and the
// microstackshot resource reports macOS and iOS write for a process that
// used too much CPU, wrote too much to disk or woke too often (.ips with
// bug_type 145 or 202, .diag). All are call graphs, not stacks: each
// thread (each process, in a microstackshot report) is a tree of frames,
// every node counting the samples in which that frame was on the stack.
//
// Parse keeps every byte of the input and the position of every frame in
// it, so that Write can print the report back in its own layout with names
// filled in for the frames the report left as "???". Dump turns one
// process into the common dump model for symbolize. See docs/hangreports.md.
//
// Parsing is pure: nothing is symbolized or read from disk. A report that is
// malformed or truncated still yields everything that could be read: Parse
// returns a non-nil *Report together with an error naming the line that
// stopped it. A Report is not modified by its methods and is safe for
// concurrent use once Parse has returned.
package hangreport

import (
	"errors"
	"fmt"
	"strings"

	"github.com/stackimage/stackimage/uuid"
)

// Kind tells the two report layouts apart.
type Kind string

// The layouts this package reads.
const (
	KindSample   Kind = "sample"   // /usr/bin/sample output ("Analysis of sampling ...")
	KindSpindump Kind = "spindump" // spindump text report ("Data Source: Stackshots")
	// KindMicrostackshot is a resource report ("Data Source:
	// Microstackshots"): a header naming the event, the heaviest stack of
	// the target process, then a "Powerstats for:" section per process
	// with one call graph of all its threads' samples.
	KindMicrostackshot Kind = "microstackshot"
)

// MaxInputSize is the largest input Parse accepts. A spindump of a whole
// system is a few MiB; the limit leaves room while bounding memory.
const MaxInputSize = 256 << 20

// maxErrors bounds the errors joined into Parse's error; more are counted.
const maxErrors = 10

// Report is one parsed sample or spindump report.
type Report struct {
	Kind Kind
	// Header holds the "Key: value" lines before the first process's own
	// section (for a sample, before "Call graph:"), in order.
	Header []Field
	// Processes are the sampled processes: one for a sample, one per
	// "Process:" section for a spindump, one per "Powerstats for:"
	// section for a microstackshot report.
	Processes []*Process
	// Heaviest is a spindump's "Heaviest stack for the main thread of the
	// target process", or a microstackshot report's "Heaviest stack for
	// the target process": a single path, in the target's address space
	// (see Target); nil when absent.
	Heaviest *Thread
	// BugType is the bug_type of an .ips report's JSON first line ("145"
	// disk writes, "202" CPU usage); empty for a report without one.
	BugType string
	// Warnings lists what could not be read but did not stop the rest.
	Warnings []string

	// text is the whole input; every Span indexes it.
	text string
}

// Field is one "Key: value" line.
type Field struct {
	Key, Value string
	Line       int // 1-based line number
}

// Process is one sampled process.
type Process struct {
	Name        string
	PID         int // 0 when not given
	Path        string
	Identifier  string
	Version     string
	Arch        string // "X86-64", "arm64e": as the report wrote it
	LoadAddress uint64 // sample's "Load Address", 0 when not given
	// Fields are the process's own "Key: value" lines (a spindump's
	// process section; for a sample the header fields are in
	// Report.Header and repeated here).
	Fields []Field
	// Threads are the call graphs, in the report's order.
	Threads []Thread
	// TotalInStack and TopOfStack are sample's summary sections "Total
	// number in stack" and "Sort by top of stack".
	TotalInStack []Entry
	TopOfStack   []Entry
	Images       []Image

	// imageStarts maps Images' names to their load addresses
	// (Report.FrameAddress).
	imageStarts map[string]uint64
}

// Thread is one thread's call graph. A microstackshot report's process
// has one Thread, without a heading, holding the samples of all its
// threads.
type Thread struct {
	Line int // the heading's line number
	// Heading is the thread's line as written, without the sample count:
	// "Thread_16614993   DispatchQueue_1: com.apple.main-thread  (serial)"
	// or "Thread 0x2ca9e    DispatchQueue ...".
	Heading string
	// ID is the thread ID the heading gives (Thread_<decimal> in a sample,
	// Thread 0x<hex> in a spindump); 0 when none.
	ID uint64
	// Count is the samples the heading counts; 0 when it gives none.
	Count uint64
	// Heaviest marks Report.Heaviest: a single path, each node the child
	// of the one before.
	Heaviest bool
	// Nodes are the call graph's nodes in the report's (pre-)order: a
	// node's children follow it. Use Roots and Children to walk the tree.
	Nodes []Node
}

// Node is one line of a call graph. Its frame is read from the input
// when asked for (Report.Frame), which keeps a node small: a call graph
// can have a node for every few bytes of input.
type Node struct {
	Count uint64 // samples in which this frame was on the stack
	Depth int    // 0 for a root
	Line  int    // 1-based line number
	// Parent, FirstChild and NextSibling index Thread.Nodes; -1 for none.
	Parent, FirstChild, NextSibling int
	// Kernel marks a spindump kernel frame ("*" before the count).
	Kernel bool
	// Samples is a spindump's trailing sample range ("1-49"); empty when
	// absent.
	Samples string
	// Text is where the frame's text lies in the input.
	Text Span

	lastChild int // the last child linked so far, while parsing
}

// Entry is one line of sample's "Total number in stack" or "Sort by top of
// stack" sections.
type Entry struct {
	Count uint64
	Line  int
	Text  Span // the frame's text, without the count
}

// Span is a range of the input's bytes, [Start, End).
type Span struct{ Start, End int }

// Image is one line of "Binary Images:".
type Image struct {
	Line  int
	Start uint64
	// End is the last byte of the image as written (inclusive); HasEnd is
	// false when the report wrote "???".
	End    uint64
	HasEnd bool
	// Name is the name the list gives (a bundle identifier for bundles:
	// "com.apple.CoreFoundation"); Version as written ("6.9 - 1863",
	// "0").
	Name    string
	Version string
	UUID    uuid.UUID
	Path    string
	// Main marks sample's "+" (an image not in the shared cache) and
	// Kernel spindump's "*" (a kernel image).
	Main, Kernel bool
}

// Roots returns the indices of the thread's root nodes.
func (t *Thread) Roots() []int {
	var out []int
	for i := range t.Nodes {
		if t.Nodes[i].Parent < 0 {
			out = append(out, i)
		}
	}
	return out
}

// Children returns the indices of node i's children, in order.
func (t *Thread) Children(i int) []int {
	var out []int
	for c := t.Nodes[i].FirstChild; c >= 0; c = t.Nodes[c].NextSibling {
		out = append(out, c)
	}
	return out
}

// Text returns the input the report was parsed from.
func (r *Report) Text() string { return r.text }

// String returns the input's text in s; empty when s is not within it.
func (r *Report) String(s Span) string {
	if s.Start < 0 || s.Start > s.End || s.End > len(r.text) {
		return ""
	}
	return r.text[s.Start:s.End]
}

// Frame reads the frame whose text is s (a Node's or Entry's Text).
func (r *Report) Frame(s Span) Frame {
	return parseFrame(r.Kind, r.String(s), s.Start)
}

// Error is a problem with one line of the input.
type Error struct {
	Line   int // 1-based
	Offset int // byte offset of the line's start
	Msg    string
}

// Error formats the error with its line and byte offset.
func (e *Error) Error() string {
	return fmt.Sprintf("hangreport: line %d (byte %d): %s", e.Line, e.Offset, e.Msg)
}

// ErrNotHangReport is returned (wrapped) when the input has none of the
// lines of a sample, spindump or microstackshot report.
var ErrNotHangReport = errors.New("hangreport: not a sample, spindump or microstackshot report")

// field splits a "Key:  value" line. The key is what a report's header
// keys look like: starts with a letter, no more than a few words.
func field(line string) (key, value string, ok bool) {
	s := strings.TrimLeft(line, " ")
	i := strings.Index(s, ":")
	if i <= 0 || i > 48 {
		return "", "", false
	}
	key = s[:i]
	if c := key[0]; !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z') {
		return "", "", false
	}
	rest := s[i+1:]
	if rest != "" && rest[0] != ' ' && rest[0] != '\t' {
		return "", "", false // "0x1:" or a URL, not a field
	}
	return key, strings.TrimSpace(rest), true
}
