package report

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/symbolize"
	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/uuid"
	"github.com/stackimage/stackimage/walker"
)

// encodeWholeJSON is how the JSON report was written before it was
// streamed: the whole JSON document built, then encoded at once; reps
// after the first are the input's other processes.
func encodeWholeJSON(rep *symbolize.Report, more ...*symbolize.Report) string {
	out := JSON{SchemaVersion: SchemaVersion, Format: string(rep.Format), JSONProcess: wholeProcess(rep)}
	for _, r := range more {
		out.Processes = append(out.Processes, wholeProcess(r))
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		panic(err)
	}
	return b.String()
}

func wholeProcess(rep *symbolize.Report) JSONProcess {
	out := JSONProcess{Header: jsonHeaderOf(rep.Dump), Threads: []JSONThread{}, Modules: jsonModulesOf(rep)}
	for _, th := range rep.Threads {
		jt := JSONThread{ID: th.ID, KernelID: th.KernelID, Name: th.Name, Crashed: th.Crashed, LastException: th.LastException,
			StopReason: th.StopReason, StopDetail: th.StopDetail, SetAsideLR: hexOrEmpty(th.SetAsideLR), Frames: jsonFrames(nil, th.Frames)}
		if wk := th.Walk; wk != nil {
			jt.Walk = &JSONWalk{StopReason: wk.StopReason, StopDetail: wk.StopDetail, SetAsideLR: hexOrEmpty(wk.SetAsideLR), AddressRule: string(wk.AddressRule),
				Compared: wk.Compared, Agrees: wk.Agrees, Differences: jsonDifferences(wk.Differences), Frames: jsonFrames(nil, wk.Frames)}
		}
		out.Threads = append(out.Threads, jt)
	}
	for _, m := range rep.Missing {
		out.MissingImages = append(out.MissingImages, JSONImage{Name: m.Name, UUID: m.UUID.String()})
	}
	out.Warnings = rep.Warnings
	return out
}

// writeJSONAll writes reports as the processes of one input.
func writeJSONAll(b *bytes.Buffer, reps ...*symbolize.Report) error {
	w := NewJSON(b)
	for _, rep := range reps {
		if err := WriteReport(w, rep); err != nil {
			return err
		}
	}
	return w.Close()
}

// TestStreamedJSONIsTheWholeDocument checks that the JSON written thread
// by thread is byte for byte the document encoding the whole report makes,
// with and without threads, walks, missing images and warnings.
func TestStreamedJSONIsTheWholeDocument(t *testing.T) {
	frame := symstore.Frame{Index: 0, Address: 0x100001000, LookupAddress: 0x100001000, Image: "App<&>",
		Symbol: "main", HasOffset: true, SymbolOffset: 8, SymbolSource: symstore.SourceSymtab}
	walked := symbolize.Thread{ID: 2, Name: "worker \x1b", Frames: []symstore.Frame{frame, frame}, StopReason: symbolize.StopReason(walker.StopFramePointerZero)}
	reported := symbolize.Thread{ID: 3, Crashed: true, Frames: []symstore.Frame{frame},
		Walk: &symbolize.Walk{Frames: []symstore.Frame{frame}, StopReason: symbolize.StopReason(walker.StopMaxDepth), AddressRule: symbolize.RuleReturnAddress,
			Compared: 1, Agrees: true, Differences: []symbolize.Difference{{Kind: symbolize.DiffReportExtraFrame, WalkIndex: -1, ReportIndex: 1, Report: 0x10}}}}
	missing := []symbolize.MissingImage{{Name: "/usr/lib/dyld", UUID: uuid.UUID{1}}}
	aside, reportedAside := walked, reported
	aside.ID, aside.SetAsideLR, aside.SetAsideLRName = 5, 0x100000fc0, "App<&> + 0xfc0"
	reportedAside.ID, reportedAside.Walk = 6, &symbolize.Walk{}
	*reportedAside.Walk = *reported.Walk
	reportedAside.Walk.SetAsideLR = 0x100000fc0
	tests := []struct {
		name string
		rep  symbolize.Report
	}{
		{"empty", symbolize.Report{Format: dump.FormatSnapshot}},
		{"no frames", symbolize.Report{Format: dump.FormatSnapshot, Threads: []symbolize.Thread{{ID: 1}}}},
		{"threads", symbolize.Report{Format: dump.FormatIPS, Threads: []symbolize.Thread{walked, reported, {ID: 4, LastException: true}}}},
		{"missing", symbolize.Report{Format: dump.FormatSnapshot, Threads: []symbolize.Thread{walked}, Missing: missing}},
		{"warnings", symbolize.Report{Format: dump.FormatSnapshot, Warnings: []string{"a <warning>"}}},
		{"set-aside LR", symbolize.Report{Format: dump.FormatSnapshot, Threads: []symbolize.Thread{aside, reportedAside}}},
		{"all", symbolize.Report{Format: dump.FormatCrash, Threads: []symbolize.Thread{reported, walked}, Missing: missing,
			Warnings: []string{"one", "two"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteJSON(&b, &tt.rep); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(encodeWholeJSON(&tt.rep), b.String()); diff != "" {
				t.Errorf("streamed JSON differs from the whole document's (-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzStreamedJSON checks that the streamed JSON is the whole document's
// for any names, warnings and counts of threads and frames.
func FuzzStreamedJSON(f *testing.F) {
	f.Add("main", "App", "warning", uint8(2), uint8(3), true)
	f.Add("\x1b[2J<\u2028>\xff", "", "", uint8(0), uint8(0), false)
	f.Fuzz(func(t *testing.T, name, symbol, warning string, threads, frames uint8, walk bool) {
		rep := &symbolize.Report{Format: dump.FormatSnapshot}
		if warning != "" {
			rep.Warnings = []string{warning, name}
		}
		if symbol != "" {
			rep.Missing = []symbolize.MissingImage{{Name: symbol}}
		}
		for i := 0; i < int(threads%16); i++ {
			th := symbolize.Thread{ID: uint64(i), Name: name, StopReason: symbolize.StopMaxTotalFrames, StopDetail: warning}
			for j := 0; j < int(frames%32); j++ {
				th.Frames = append(th.Frames, symstore.Frame{Index: j, Address: uint64(j) << 40, Image: name, Symbol: symbol, File: warning, Line: j})
			}
			if walk && i%2 == 0 {
				th.Walk = &symbolize.Walk{Frames: th.Frames, StopReason: symbolize.StopReason(int(threads)%20 - 1)}
			}
			rep.Threads = append(rep.Threads, th)
		}
		var b bytes.Buffer
		if err := WriteJSON(&b, rep); err != nil {
			t.Fatal(err)
		}
		if want := encodeWholeJSON(rep); b.String() != want {
			t.Errorf("streamed JSON differs from the whole document's:\n%s", cmp.Diff(want, b.String()))
		}
	})
}

// TestStreamedJSONOfProcesses checks the document of an input with several
// processes (a spindump's): the first at the top level, the others in
// "processes", each streamed as the whole document would encode it.
func TestStreamedJSONOfProcesses(t *testing.T) {
	frame := symstore.Frame{Index: 0, Address: 0x100001000, LookupAddress: 0x100001000, Image: "App",
		Symbol: "main", HasOffset: true, SymbolOffset: 8, SymbolSource: symstore.SourceSymtab}
	d := func(name string, pid int) *dump.Dump {
		return &dump.Dump{Format: dump.FormatSample, Process: dump.Process{Name: name, PID: pid}}
	}
	a := &symbolize.Report{Format: dump.FormatSample, Dump: d("A", 1), Threads: []symbolize.Thread{{ID: 1, Frames: []symstore.Frame{frame}}}}
	b := &symbolize.Report{Format: dump.FormatSample, Dump: d("B", 2), Warnings: []string{"w"}}
	c := &symbolize.Report{Format: dump.FormatSample, Dump: d("C", 3), Threads: []symbolize.Thread{{ID: 7}, {ID: 8, Frames: []symstore.Frame{frame, frame}}},
		Missing: []symbolize.MissingImage{{Name: "x"}}}
	for _, reps := range [][]*symbolize.Report{{a, b}, {a, b, c}, {b, c, a}} {
		var out bytes.Buffer
		if err := writeJSONAll(&out, reps...); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(encodeWholeJSON(reps[0], reps[1:]...), out.String()); diff != "" {
			t.Errorf("streamed JSON differs from the whole document's (-want +got):\n%s", diff)
		}
		var doc JSON
		if err := json.Unmarshal(out.Bytes(), &doc); err != nil || len(doc.Processes) != len(reps)-1 {
			t.Errorf("decoded %d other processes, %v; want %d", len(doc.Processes), err, len(reps)-1)
		}
	}
}
