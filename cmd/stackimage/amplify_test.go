package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/internal/hostile"
	"github.com/stackimage/stackimage/symbolize"
	"github.com/stackimage/stackimage/uuid"
)

// tailWriter counts what is written and keeps its last bytes, so that a
// huge output costs the test nothing and its end can still be checked.
type tailWriter struct {
	n    int64
	tail []byte
}

func (w *tailWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	w.tail = append(w.tail, p...)
	if len(w.tail) > 64<<10 {
		w.tail = append(w.tail[:0], w.tail[len(w.tail)-32<<10:]...)
	}
	return len(p), nil
}

// TestSharedStackAmplification symbolicates thousands of threads walking
// one deep stack, as text and JSON: the run ends within the allocation
// budget of its input, the output is bounded by Symbolizer.MaxTotalFrames
// and says where the bound cut the report.
func TestSharedStackAmplification(t *testing.T) {
	for _, distinct := range []bool{false, true} {
		data := hostile.SharedStackSnapshot(hostile.SharedStackThreads, hostile.SharedStackFrames, distinct)
		dump := writeFile(t, filepath.Join(t.TempDir(), "dump.json"), data)
		for _, format := range []string{"text", "json"} {
			t.Run(fmt.Sprintf("distinct=%v/%s", distinct, format), func(t *testing.T) {
				var status int
				var out tailWriter
				var errOut bytes.Buffer
				var allocated uint64
				start := time.Now()
				hostile.Returns(t, 120*time.Second, nil, func() {
					allocated = hostile.Budget(t, int64(len(data)), func() {
						status = run([]string{"symbolicate", dump, "--format", format}, nil, &out, &errOut)
					})
				})
				t.Logf("%d bytes of input: %v, %d bytes allocated, %d bytes of output",
					len(data), time.Since(start).Round(time.Millisecond), allocated, out.n)
				if status != 0 {
					t.Fatalf("status %d, stderr %q; want 0", status, errOut.String())
				}
				warning := fmt.Sprintf("the report holds at most %d frames (MaxTotalFrames)", symbolize.DefaultMaxTotalFrames)
				if tail := string(out.tail); !strings.Contains(tail, warning) || !strings.Contains(tail, "max_total_frames") {
					t.Errorf("output does not end with threads cut at max_total_frames and a warning %q:\n...%s", warning, tail[max(0, len(tail)-2000):])
				}
			})
		}
	}
}

// encodeWholeJSON is how the JSON report was written before it was
// streamed: the whole jsonReport built, then encoded at once.
func encodeWholeJSON(rep *symbolize.Report) string {
	out := jsonReport{Format: string(rep.Format), Header: jsonHeaderOf(rep.Dump), Threads: []jsonThread{}, Modules: jsonModulesOf(rep)}
	for _, th := range rep.Threads {
		jt := jsonThread{ID: th.ID, KernelID: th.KernelID, Name: th.Name, Crashed: th.Crashed, LastException: th.LastException,
			StopReason: th.StopReason, StopDetail: th.StopDetail, Frames: jsonFrames(nil, th.Frames)}
		if wk := th.Walk; wk != nil {
			jt.Walk = &jsonWalk{StopReason: wk.StopReason, StopDetail: wk.StopDetail, AddressRule: string(wk.AddressRule),
				Compared: wk.Compared, Agrees: wk.Agrees, Differences: jsonDifferences(wk.Differences), Frames: jsonFrames(nil, wk.Frames)}
		}
		out.Threads = append(out.Threads, jt)
	}
	for _, m := range rep.Missing {
		out.MissingImages = append(out.MissingImages, jsonImage{Name: m.Name, UUID: m.UUID.String()})
	}
	out.Warnings = rep.Warnings
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		panic(err)
	}
	return b.String()
}

// TestStreamedJSONIsTheWholeDocument checks that the JSON written thread
// by thread is byte for byte the document encoding the whole report makes,
// with and without threads, walks, missing images and warnings.
func TestStreamedJSONIsTheWholeDocument(t *testing.T) {
	frame := symbolize.Frame{Index: 0, Address: 0x100001000, LookupAddress: 0x100001000, Image: "App<&>",
		Symbol: "main", HasOffset: true, SymbolOffset: 8, SymbolSource: symbolize.SourceSymtab}
	walked := symbolize.Thread{ID: 2, Name: "worker \x1b", Frames: []symbolize.Frame{frame, frame}, StopReason: "fp_zero"}
	reported := symbolize.Thread{ID: 3, Crashed: true, Frames: []symbolize.Frame{frame},
		Walk: &symbolize.Walk{Frames: []symbolize.Frame{frame}, StopReason: "max_depth", AddressRule: symbolize.RuleReturnAddress,
			Compared: 1, Agrees: true, Differences: []symbolize.Difference{{Kind: symbolize.DiffReportExtraFrame, WalkIndex: -1, ReportIndex: 1, Report: 0x10}}}}
	missing := []symbolize.MissingImage{{Name: "/usr/lib/dyld", UUID: uuid.UUID{1}}}
	tests := []struct {
		name string
		rep  symbolize.Report
	}{
		{"empty", symbolize.Report{Format: dump.FormatSnapshot}},
		{"no frames", symbolize.Report{Format: dump.FormatSnapshot, Threads: []symbolize.Thread{{ID: 1}}}},
		{"threads", symbolize.Report{Format: dump.FormatIPS, Threads: []symbolize.Thread{walked, reported, {ID: 4, LastException: true}}}},
		{"missing", symbolize.Report{Format: dump.FormatSnapshot, Threads: []symbolize.Thread{walked}, Missing: missing}},
		{"warnings", symbolize.Report{Format: dump.FormatSnapshot, Warnings: []string{"a <warning>"}}},
		{"all", symbolize.Report{Format: dump.FormatCrash, Threads: []symbolize.Thread{reported, walked}, Missing: missing,
			Warnings: []string{"one", "two"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := writeJSON(&b, &tt.rep); err != nil {
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
				th.Frames = append(th.Frames, symbolize.Frame{Index: j, Address: uint64(j) << 40, Image: name, Symbol: symbol, File: warning, Line: j})
			}
			if walk && i%2 == 0 {
				th.Walk = &symbolize.Walk{Frames: th.Frames, StopReason: name}
			}
			rep.Threads = append(rep.Threads, th)
		}
		var b bytes.Buffer
		if err := writeJSON(&b, rep); err != nil {
			t.Fatal(err)
		}
		if want := encodeWholeJSON(rep); b.String() != want {
			t.Errorf("streamed JSON differs from the whole document's:\n%s", cmp.Diff(want, b.String()))
		}
	})
}
