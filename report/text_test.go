package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/symbolize"
	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/walker"
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

// TestSetAsideLROutput: a link register the walk set aside is named in
// the JSON (set_aside_lr, of the thread or of our walk beside a
// reporter's backtrace) and in the text, below the stop line, with its
// name when it has one; a walk that set none aside says nothing of it.
func TestSetAsideLROutput(t *testing.T) {
	frame := symstore.Frame{Address: 0x100002010, LookupAddress: 0x100002010, Image: "Lib"}
	stop := symbolize.StopReason(walker.StopFramePointerZero)
	walked := symbolize.Thread{ID: 1, Frames: []symstore.Frame{frame}, StopReason: stop,
		SetAsideLR: 0x100001fc0, SetAsideLRName: "Lib + 0x1fc0"}
	kept := symbolize.Thread{ID: 2, Frames: []symstore.Frame{frame}, StopReason: stop}
	reported := symbolize.Thread{ID: 3, Frames: []symstore.Frame{frame},
		Walk: &symbolize.Walk{Frames: []symstore.Frame{frame}, StopReason: stop, AddressRule: symbolize.RuleReturnAddress,
			SetAsideLR: 0x100001fc4}}
	rep := &symbolize.Report{Format: dump.FormatSnapshot, Dump: &dump.Dump{Format: dump.FormatSnapshot},
		Threads: []symbolize.Thread{walked, kept, reported}}

	var b bytes.Buffer
	if err := WriteJSON(&b, rep); err != nil {
		t.Fatal(err)
	}
	var doc JSON
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	got := []string{doc.Threads[0].SetAsideLR, doc.Threads[1].SetAsideLR, doc.Threads[2].SetAsideLR, doc.Threads[2].Walk.SetAsideLR}
	if diff := cmp.Diff([]string{"0x100001fc0", "", "", "0x100001fc4"}, got); diff != "" {
		t.Errorf("set_aside_lr of threads 1, 2, 3 and 3's walk (-want +got):\n%s", diff)
	}
	if n := bytes.Count(b.Bytes(), []byte(`"set_aside_lr"`)); n != 2 {
		t.Errorf("JSON holds set_aside_lr %d times, want 2 (omitted when zero):\n%s", n, b.String())
	}

	b.Reset()
	if err := WriteText(&b, rep); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	const why = " set aside: in frame 0's image near PC, without code or symbols to tell a caller from a stale return address"
	for _, want := range []string{
		"Walk stopped: " + stop.String() + "\nLink register 0x100001fc0 (Lib + 0x1fc0)" + why,
		"Walk stopped: " + stop.String() + "\nLink register 0x100001fc4" + why,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("text output lacks %q:\n%s", want, text)
		}
	}
	if n := strings.Count(text, "Link register"); n != 2 {
		t.Errorf("text names a set-aside link register %d times, want 2:\n%s", n, text)
	}
}
