package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/symbolize"
)

// TestTextReasonLines: a crash reason of several lines prints as lines,
// each indented under the first and keeping its own indentation, not as
// one line with \x0a in it; control characters are still escaped.
func TestTextReasonLines(t *testing.T) {
	d := &dump.Dump{Format: dump.FormatIPS, Crash: &dump.Crash{Type: "EXC_CRASH",
		Reason: "*** Terminating app\n  reason: bad \x1b[31mthing\r\n\tdetail\n"}}
	var b bytes.Buffer
	if err := WriteText(&b, &symbolize.Report{Format: d.Format, Dump: d}); err != nil {
		t.Fatal(err)
	}
	want := "Reason:     *** Terminating app\n" +
		"              reason: bad \\x1b[31mthing\n" +
		"            \\x09detail\n"
	if !strings.Contains(b.String(), want) {
		t.Errorf("text output:\n%s\nwant it to hold:\n%s", b.String(), want)
	}
}

// TestTextCallGraphOrder: a sample's or spindump's frames are a call
// graph listed outermost first, and the text says so.
func TestTextCallGraphOrder(t *testing.T) {
	for _, f := range []dump.Format{dump.FormatSample, dump.FormatIPS} {
		d := &dump.Dump{Format: f, Process: dump.Process{Name: "App"}}
		var b bytes.Buffer
		if err := WriteText(&b, &symbolize.Report{Format: f, Dump: d}); err != nil {
			t.Fatal(err)
		}
		if got, want := strings.Contains(b.String(), "Order:      "+callGraphOrder+"\n"), f == dump.FormatSample; got != want {
			t.Errorf("%s: says call-graph order = %v, want %v:\n%s", f, got, want, b.String())
		}
	}
}
