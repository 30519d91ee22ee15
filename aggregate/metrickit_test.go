package aggregate

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stackimage/stackimage/internal/hostile"
	"github.com/stackimage/stackimage/internal/testcorpus"
	"github.com/stackimage/stackimage/metrickit"
)

// sentry-cocoa's not-per-thread tree, through the loader: each frame
// counts its own samples (sampleCount less its subFrames'), the folded
// stacks keep every unnamed frame's image and offset, and the records
// carry the diagnostic's kind as a label.
func TestMetricKitCorpusWeights(t *testing.T) {
	path := testcorpus.File(t, "metrickit/sentry-cocoa/not-per-thread.json")
	l := &Loader{Aggregator: New(), Labels: map[string]string{"build": "ci"}}
	if err := l.Read(context.Background(), "tree", readFile(t, path)); err != nil {
		t.Fatal(err)
	}
	res, err := l.Aggregator.Symbolicate(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var folded bytes.Buffer
	res.WriteFolded(&folded)
	got := map[string]int64{}
	for _, line := range strings.Split(strings.TrimSpace(folded.String()), "\n") {
		i := strings.LastIndexByte(line, ' ')
		var w int64
		fmt.Sscan(line[i+1:], &w)
		got[line[:i]] += w
	}
	// The tree (offsets as the file writes them): Sentry+0x6540c (7)
	// calls iOS-Swift+0xb52c (6) and libsystem_pthread+0xbb6 (1); the
	// former calls +0xb522 (1), +0xb518 (3: +0xb4fa, two libswiftCore
	// frames), +0xb4dc (1), libsystem_pthread+0xbac (1). The second root
	// (2) calls +0xb52c (2), which calls +0xb522 (1) and a
	// libsystem_pthread frame (1).
	want := map[string]int64{
		"Sentry+0x6540c;iOS-Swift+0xb52c;iOS-Swift+0xb522":                             2,
		"Sentry+0x6540c;iOS-Swift+0xb52c;iOS-Swift+0xb518;iOS-Swift+0xb4fa":            1,
		"Sentry+0x6540c;iOS-Swift+0xb52c;iOS-Swift+0xb518;libswiftCore.dylib+0x3e460f": 1,
		"Sentry+0x6540c;iOS-Swift+0xb52c;iOS-Swift+0xb518;libswiftCore.dylib+0x3eb1b8": 1,
		"Sentry+0x6540c;iOS-Swift+0xb52c;iOS-Swift+0xb4dc":                             1,
		"Sentry+0x6540c;iOS-Swift+0xb52c;libsystem_pthread.dylib+0xbac":                1,
		"Sentry+0x6540c;libsystem_pthread.dylib+0xbb6":                                 1,
		"Sentry+0x6540c;iOS-Swift+0xb52c;libsystem_pthread.dylib+0xb518":               1,
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("folded %s: %d, want %d", k, got[k], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("folded stacks:\n%s", folded.String())
	}
	for _, s := range res.Samples {
		labels := map[string]string{}
		for _, l := range res.Attributes(s).Labels {
			labels[l.Key] = l.Value
		}
		if labels["diagnostic"] != "callStackTree" || labels["build"] != "ci" {
			t.Errorf("sample labels %v, want diagnostic=callStackTree and build=ci", labels)
		}
	}
}

func readFile(t *testing.T, path string) *bytes.Reader {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.NewReader(data)
}

// Labels: the caller's win over metadata of the same name, empty values
// are left out, and the metadata's other fields are labels of their own
// names.
func TestMetricKitLabels(t *testing.T) {
	in, err := metrickit.Parse([]byte(`{"hangDiagnostics": [{"diagnosticMetaData": {"hangDuration": "3 sec", "appVersion": "", "regionFormat": "US"},
		"callStackTree": {"callStacks": [{"callStackRootFrames": [{"binaryName": "A", "address": 4097, "offsetIntoBinaryTextSegment": 1, "sampleCount": 4}]}]}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := MetricKitRecords(in, map[string]string{"regionFormat": "mine"})
	if err != nil || len(recs) != 1 {
		t.Fatalf("%d records, %v", len(recs), err)
	}
	got := recs[0].Labels
	if got["diagnostic"] != "hang" || got["hangDuration"] != "3 sec" || got["regionFormat"] != "mine" || len(got) != 3 {
		t.Errorf("labels %v", got)
	}
	if recs[0].Weight != 4 || len(recs[0].Frames) != 1 || recs[0].Frames[0] != 4097 {
		t.Errorf("record %+v", recs[0])
	}
}

// A hostile tree: 128 call stacks 2,048 frames deep (MetricKit's limits)
// in which every frame has samples of its own, so that each is a record
// repeating its path to the root. The records stop at
// MaxMetricKitFrames frames in all, with an error saying so, within the
// hostile budget.
func TestMetricKitRecordsHostile(t *testing.T) {
	var b bytes.Buffer
	b.WriteString(`{"cpuExceptionDiagnostics": [{"callStackTree": {"callStacks": [`)
	for s := range 128 {
		if s > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"callStackRootFrames": [`)
		for d := range metrickit.MaxDepth {
			fmt.Fprintf(&b, `{"binaryName": "A", "address": %d, "offsetIntoBinaryTextSegment": %d, "sampleCount": %d, "subFrames": [`, 0x100000000+4*d, 4*d, 2*(metrickit.MaxDepth-d))
		}
		b.WriteString(strings.Repeat("]}", metrickit.MaxDepth))
		b.WriteString(`]}`)
	}
	b.WriteString(`]}}]}`)
	data := b.Bytes()
	var recs []*Record
	var err error
	alloc, took := hostile.CaseBudget(t, int64(len(data)), func() {
		in, perr := metrickit.Parse(data)
		if perr != nil {
			t.Fatal(perr)
		}
		recs, err = MetricKitRecords(in, nil)
		agg := New()
		agg.AddBatch(recs)
	})
	t.Logf("%d bytes: %d records, %v, %d MiB allocated", len(data), len(recs), took, alloc>>20)
	if err == nil || !strings.Contains(err.Error(), "left out") {
		t.Errorf("err %v, want the frames past the limit said", err)
	}
	total := 0
	for _, r := range recs {
		total += len(r.Frames)
	}
	if total > MaxMetricKitFrames || total < MaxMetricKitFrames-MaxFrames {
		t.Errorf("%d frames in the records, want up to %d", total, MaxMetricKitFrames)
	}
}

// A crash diagnostic counts its thread-attributed stack alone, as other
// crash inputs count their crashed thread; ThreadsAll counts every stack,
// and a crash that attributes none counts every stack with a warning. A
// hang diagnostic counts every stack whatever is asked.
func TestMetricKitCrashedThreadOnly(t *testing.T) {
	stack := func(addr int, attributed bool) string {
		return fmt.Sprintf(`{"threadAttributed": %v, "callStackRootFrames": [{"binaryName": "A", "address": %d, "offsetIntoBinaryTextSegment": %d}]}`, attributed, addr, addr-4096)
	}
	payload := func(kind string, attributed bool) *metrickit.Input {
		t.Helper()
		body := fmt.Sprintf(`{%q: [{"diagnosticMetaData": {}, "callStackTree": {"callStackPerThread": true, "callStacks": [%s, %s, %s]}}]}`,
			kind, stack(4097, false), stack(4098, attributed), stack(4099, false))
		in, err := metrickit.Parse([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		return in
	}
	cases := []struct {
		name       string
		in         *metrickit.Input
		threads    Threads
		want       []uint64
		warnsAbout bool
	}{
		{"crash by input", payload("crashDiagnostics", true), ThreadsByInput, []uint64{4098}, false},
		{"crash all", payload("crashDiagnostics", true), ThreadsAll, []uint64{4097, 4098, 4099}, false},
		{"crash none attributed", payload("crashDiagnostics", false), ThreadsByInput, []uint64{4097, 4098, 4099}, true},
		{"hang by input", payload("hangDiagnostics", true), ThreadsByInput, []uint64{4097, 4098, 4099}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			recs, warning, err := metricKitRecords(c.in, nil, c.threads)
			if err != nil {
				t.Fatal(err)
			}
			var got []uint64
			for _, r := range recs {
				got = append(got, r.Frames...)
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("frames %v, want %v", got, c.want)
			}
			if (warning != "") != c.warnsAbout {
				t.Errorf("warning %q, want one: %v", warning, c.warnsAbout)
			}
		})
	}
}
