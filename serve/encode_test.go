package serve

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stackimage/stackimage/symbolicator"
)

// TestAnswerLength: an answer is sent with its Content-Length, not
// chunked; one larger than maxBufferedAnswer is streamed chunked, with
// the same bytes; both are the answer encoding/json would give.
func TestAnswerLength(t *testing.T) {
	u := fixtureUUID(t)
	_, ts := newTestServer(t, DefaultConfig("../fixtures/bin"))
	const base = 0x104000000
	body := symbolicateBody(strings.ToLower(u.String()), base, base+0x400, base+0x484)
	body["signal"] = 11
	// Enough frames for an answer larger than net/http's buffer, which
	// would otherwise set the length of a short streamed answer itself.
	st := body["stacktraces"].([]any)[0].(map[string]any)
	for range 6 {
		st["frames"] = append(st["frames"].([]any), st["frames"].([]any)...)
	}
	resp, whole := postJSON(t, ts.URL+"/symbolicate", body)
	if resp.StatusCode != http.StatusOK || resp.ContentLength != int64(len(whole)) || len(resp.TransferEncoding) != 0 {
		t.Fatalf("status %d, Content-Length %d, Transfer-Encoding %v for %d bytes: want 200 and the length, not chunked",
			resp.StatusCode, resp.ContentLength, resp.TransferEncoding, len(whole))
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
	defer func(n int) { maxBufferedAnswer = n }(maxBufferedAnswer)
	maxBufferedAnswer = 64
	resp, streamed := postJSON(t, ts.URL+"/symbolicate", body)
	if resp.StatusCode != http.StatusOK || resp.ContentLength != -1 || len(resp.TransferEncoding) == 0 {
		t.Errorf("above maxBufferedAnswer: status %d, Content-Length %d, Transfer-Encoding %v: want 200, chunked",
			resp.StatusCode, resp.ContentLength, resp.TransferEncoding)
	}
	if string(streamed) != string(whole) {
		t.Errorf("streamed answer differs from the whole one:\n%s\n%s", streamed, whole)
	}
	// The same values as encoding/json writes them (whose order of the
	// top-level keys differs).
	var got, want any
	if err := json.Unmarshal(whole, &got); err != nil {
		t.Fatalf("answer is not JSON: %v: %s", err, whole)
	}
	var resp2 symbolicator.CompletedResponse
	if err := json.Unmarshal(whole, &resp2); err != nil {
		t.Fatal(err)
	}
	ref, _ := json.Marshal(&resp2)
	json.Unmarshal(ref, &want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("answer differs from encoding/json's (-json +ours):\n%s", diff)
	}
	if !strings.Contains(string(whole), `{"status":"completed","signal":11,"stacktraces":[{`) {
		t.Errorf("answer starts %.80s, want status, signal, then stack traces", whole)
	}
}
