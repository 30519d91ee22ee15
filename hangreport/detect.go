package hangreport

import (
	"bytes"
	"regexp"
)

// detectWindow is how much of the input Detect reads: a sample's header
// and a spindump's header are well within it.
const detectWindow = 64 << 10

var (
	// sampleMarkers are lines only /usr/bin/sample writes.
	sampleMarkers = regexp.MustCompile(`(?m)^(Analysis of sampling .* \(pid \d+\)|Sampling process \d+ for |Call graph:\r?$)`)
	// spindumpMarkers: spindump's header has a data source and steps.
	spindumpSource = regexp.MustCompile(`(?m)^Data Source:\s`)
	spindumpSteps  = regexp.MustCompile(`(?m)^(Steps|Duration):\s`)
)

// Detect reports whether head, the first bytes of an input, is a sample
// or spindump report. JSON (.ips, KSCrash) is never claimed, nor a .crash,
// which has none of these lines.
func Detect(head []byte) bool {
	head = bytes.TrimLeft(head, "\ufeff \t\r\n")
	if len(head) == 0 || head[0] == '{' || head[0] == '[' {
		return false
	}
	if len(head) > detectWindow {
		head = head[:detectWindow]
	}
	return sampleMarkers.Match(head) || spindumpSource.Match(head) && spindumpSteps.Match(head)
}
