package serve

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stackimage/stackimage/report"
)

// A MetricKit payload naming the fixture binaries, as
// internal/metrickitfixture wrote it (cmd/stackimage/testdata/metrickit).
const metricKitPayload = "../cmd/stackimage/testdata/metrickit/payload-seed1.json"

// POST /v1/symbolicate answers a MetricKit payload with one process per
// diagnostic, the fixture frames named; format=same refuses it naming the
// format.
func TestNativeMetricKit(t *testing.T) {
	payload := readFile(t, metricKitPayload)
	_, ts := newTestServer(t, DefaultConfig("../fixtures/bin"))
	resp, data := do(t, "POST", ts.URL+"/v1/symbolicate", bytes.NewReader(payload), nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, data)
	}
	var doc report.JSON
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("answer %s: %v", data, err)
	}
	if doc.Format != "metrickit" || len(doc.Processes) != 4 || doc.Header == nil || doc.Header.Crash == nil {
		t.Fatalf("format %q, %d more processes, header %+v: want a crash and four more diagnostics", doc.Format, len(doc.Processes), doc.Header)
	}
	named := 0
	for _, p := range append([]report.JSONProcess{doc.JSONProcess}, doc.Processes...) {
		for _, th := range p.Threads {
			for _, f := range th.Frames {
				if f.Symbol != "" {
					named++
				}
			}
		}
	}
	if named == 0 {
		t.Errorf("no frame named: %s", data)
	}
	resp, data = do(t, "POST", ts.URL+"/v1/symbolicate?format=same", bytes.NewReader(payload), nil)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(data), "a MetricKit diagnostic payload") {
		t.Errorf("format=same: %d %s, want 400 naming the format", resp.StatusCode, data)
	}
}

// POST /v1/stacks takes a MetricKit payload: its call trees' frames with
// their own samples as weights, each diagnostic's kind and metadata as
// labels the filters read.
func TestStacksMetricKit(t *testing.T) {
	_, ts := newTestServer(t, aggregateConfig(t.TempDir()))
	resp, body := do(t, "POST", ts.URL+"/v1/stacks", bytes.NewReader(readFile(t, metricKitPayload)), nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /v1/stacks: %d %s", resp.StatusCode, body)
	}
	all := groupsOf(t, ts.URL+"/v1/groups")
	hang := groupsOf(t, ts.URL+"/v1/groups?label=diagnostic=hang")
	duration := groupsOf(t, ts.URL+"/v1/groups?label=hangDuration=3.2+sec")
	if all.Records == 0 || hang.Records == 0 || hang.Records >= all.Records || duration.Records != hang.Records {
		t.Errorf("records: %d in all, %d of diagnostic=hang, %d of hangDuration=3.2 sec", all.Records, hang.Records, duration.Records)
	}
	var weight int64
	for _, g := range hang.Groups {
		weight += g.Weight
	}
	if weight <= hang.Records {
		t.Errorf("hang groups weigh %d for %d records: the samples are not the weights", weight, hang.Records)
	}
}
