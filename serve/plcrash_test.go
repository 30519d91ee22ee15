package serve

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
)

// TestPLCrashInputs: the service takes a PLCrashReporter report as it
// takes any report: /v1/symbolicate names its frames (text and JSON), and
// /v1/stacks counts its stacks, named at query time.
func TestPLCrashInputs(t *testing.T) {
	report := readFile(t, "../plcrash/testdata/chain-arm64-O1-deepest.plcrash")
	_, ts := newTestServer(t, aggregateConfig(t.TempDir()))

	resp, text := do(t, "POST", ts.URL+"/v1/symbolicate?format=text", bytes.NewReader(report), nil)
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(text), "Format: PLCrashReporter report") ||
		!strings.Contains(string(text), "deepest + 12 (chain.c:65)") {
		t.Fatalf("/v1/symbolicate?format=text: %d\n%s", resp.StatusCode, text)
	}
	resp, js := do(t, "POST", ts.URL+"/v1/symbolicate", bytes.NewReader(report), nil)
	if resp.StatusCode != http.StatusOK || !json.Valid(js) || !strings.Contains(string(js), `"deepest"`) {
		t.Fatalf("/v1/symbolicate: %d\n%s", resp.StatusCode, js)
	}

	resp, body := do(t, "POST", ts.URL+"/v1/stacks", bytes.NewReader(report), nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /v1/stacks: %d %s", resp.StatusCode, body)
	}
	var ans stacksAnswer
	if err := json.Unmarshal(body, &ans); err != nil || ans.Records == 0 {
		t.Fatalf("answer %s (%v), want the report's stacks counted", body, err)
	}
	doc := groupsOf(t, ts.URL+"/v1/groups")
	found := false
	for _, g := range doc.Groups {
		found = found || slices.Contains(g.Fingerprint, "deepest")
	}
	if !found {
		t.Errorf("no group of the crashed thread's stack (deepest): %+v", doc.Groups)
	}
}
