package hangreport

import (
	"bytes"
	"encoding/json"

	"github.com/stackimage/stackimage/internal/lazyregexp"
)

// detectWindow is how much of the input Detect reads: a sample's header
// and a spindump's header are well within it.
const detectWindow = 64 << 10

var (
	// sampleMarkers are lines only /usr/bin/sample writes.
	sampleMarkers = lazyregexp.New(`(?m)^(Analysis of sampling .* \(pid \d+\)|Sampling process \d+ for |Call graph:\r?$)`)
	// spindumpMarkers: spindump's header has a data source and steps.
	spindumpSource = lazyregexp.New(`(?m)^Data Source:\s`)
	spindumpSteps  = lazyregexp.New(`(?m)^(Steps|Duration):\s`)
	// A spindump listing without spindump's header (processes pasted from
	// spindump -stdout): a process's "Process:" line, then one of its
	// threads' headings, "  Thread 0x1a2b ... 10 samples (1-10) ...".
	listingProcess = lazyregexp.New(`(?m)^Process:[ \t]+\S`)
	listingThread  = lazyregexp.New(`(?m)^[ \t]+Thread 0x[0-9a-fA-F]+[ \t].*\b\d+ samples? \(`)
	// microstackshotMarkers are the lines only a microstackshot report
	// has: its data source, or its heaviest stack's heading.
	microstackshotMarkers = lazyregexp.New(`(?m)^(Data Source:[ \t]+Microstackshots\b|Heaviest stack for the target process:)`)
	// reportFirstLine is a line a report can start with: a sample's
	// opening lines, its call graph, or a header field ("Date/Time:",
	// "Process:"). A document that quotes a report (Markdown, an e-mail)
	// starts otherwise.
	reportFirstLine = lazyregexp.New(`^(Analysis of sampling |Sampling process \d|Call graph:\r?$|[A-Za-z][A-Za-z0-9 /()_.-]{0,40}:([ \t]|\r?$))`)
)

// Detect reports whether head, the first bytes of an input, is a sample
// or spindump report: sample's header or call graph, spindump's header, or
// a listing of spindump's processes without the header. The input must
// start as a report does (a header line or field), so that a document
// quoting a few lines of one is not taken for one. JSON (.ips, KSCrash) is
// never claimed, nor a .crash, which has none of these lines.
func Detect(head []byte) bool {
	head = bytes.TrimLeft(head, "\ufeff \t\r\n")
	if len(head) == 0 || head[0] == '{' || head[0] == '[' {
		return false
	}
	if DetectMicrostackshot(head) {
		return false
	}
	if len(head) > detectWindow {
		head = head[:detectWindow]
	}
	first := head
	if nl := bytes.IndexByte(head, '\n'); nl >= 0 {
		first = head[:nl]
	}
	if !reportFirstLine.Match(first) {
		return false
	}
	return sampleMarkers.Match(head) || spindumpSource.Match(head) && spindumpSteps.Match(head) || isSpindumpListing(head)
}

// DetectMicrostackshot reports whether head, the first bytes of an input,
// is a microstackshot resource report: a .diag's text, or an .ips whose
// JSON first line is followed by that text (a crash .ips continues with
// JSON). The text must start as a report does and have "Data Source:
// Microstackshots" or "Heaviest stack for the target process:".
func DetectMicrostackshot(head []byte) bool {
	head = bytes.TrimLeft(head, "\ufeff \t\r\n")
	if len(head) > detectWindow {
		head = head[:detectWindow]
	}
	if len(head) > 0 && head[0] == '{' {
		if _, body, ok := ipsHeader(head); ok {
			head = bytes.TrimLeft(body, " \t\r\n")
		} else {
			return false
		}
	}
	if len(head) == 0 || head[0] == '{' || head[0] == '[' {
		return false
	}
	first := head
	if nl := bytes.IndexByte(head, '\n'); nl >= 0 {
		first = head[:nl]
	}
	return reportFirstLine.Match(first) && microstackshotMarkers.Match(head)
}

// ipsHeader splits an .ips report's JSON first line from the rest: the
// header's bug_type, and the body after the line. ok is false when the
// first line is not a JSON object with a bug_type.
func ipsHeader(data []byte) (bugType string, body []byte, ok bool) {
	line, body, _ := bytes.Cut(data, []byte("\n"))
	var meta struct {
		BugType json.RawMessage `json:"bug_type"`
	}
	if json.Unmarshal(line, &meta) != nil || meta.BugType == nil {
		return "", nil, false
	}
	// bug_type is a string ("145") in every report seen; a number is
	// read too.
	var s string
	if json.Unmarshal(meta.BugType, &s) != nil {
		s = string(meta.BugType)
	}
	return s, body, true
}

// isSpindumpListing reports whether head lists spindump's processes: a
// "Process:" line followed by a spindump thread heading.
func isSpindumpListing(head []byte) bool {
	p := listingProcess.FindIndex(head)
	if p == nil {
		return false
	}
	return listingThread.Match(head[p[1]:])
}
