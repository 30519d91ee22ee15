package serve

import (
	"encoding/json"
	"github.com/google/go-cmp/cmp"
	"net/http"
	"strings"
	"testing"

	"github.com/stackimage/stackimage/symbolize"
	"github.com/stackimage/stackimage/walker"
)

// TestAppendFrameMatchesEncodingJSON: the hand-written encoding of stack
// traces is byte for byte what encoding/json writes for the same values,
// including strings that need escaping and omitted empty fields.
func TestAppendFrameMatchesEncodingJSON(t *testing.T) {
	addr := someHex(0x1040003c0)
	id, yes := uint64(775), true
	traces := []symbolicatedStacktrace{
		{Frames: []symbolicatedFrame{{Status: "unknown_image", InstructionAddr: 0x10}}},
		{ThreadID: &id, ThreadName: "main \"thread\"", IsRequesting: &yes, StopReason: symbolize.StopReason(walker.StopFramePointerZero),
			Registers: map[string]hexValue{"pc": 0x1234, "lr": 0},
			Frames: []symbolicatedFrame{
				{Status: "symbolicated", OriginalIndex: 3, InstructionAddr: 0xffffffffffffffff, AddrMode: "rel:1",
					Package: `C:\Apps\<x>&y`, Lang: "cpp", Symbol: "_ZN3fooEv", SymAddr: addr, Function: "foo()",
					Filename: "naïve.cc", AbsPath: "/src/naïve.cc", Lineno: 42, Trust: "cfi", Column: 7, Inlined: true,
					SymbolSource: "dwarf", FoundBy: "compact unwind"},
				{Status: "missing_symbol", InstructionAddr: 0, Function: "tab\there\x01\u2028"},
			}},
		// The encoder's shortcuts: a function named as its symbol, a
		// file name at the end of its path, with and without escapes.
		{Frames: []symbolicatedFrame{
			{Status: "symbolicated", Symbol: "main.main", SymAddr: addr, Function: "main.main", Filename: "main.go", AbsPath: "/src/main.go", Lineno: 1},
			{Status: "symbolicated", Symbol: "less<int>", Function: "less<int>", Filename: "a&b.h", AbsPath: "/src/a&b.h"},
			{Status: "symbolicated", Symbol: "_Z1fv", Function: "f()", Filename: "other.c", AbsPath: "/src/main.c"},
			{Status: "symbolicated", Symbol: "f", Function: "f", Filename: "x.c", AbsPath: "/src/<gen>/x.c"},
			{Status: "symbolicated", Function: "f", Filename: "", AbsPath: "/src/"},
			{Status: "symbolicated", Symbol: "g", Filename: "main.c", AbsPath: ""},
			{Status: "symbolicated", Symbol: "", Function: ""},
		}},
	}
	for i := range traces {
		want, err := json.Marshal(traces[i])
		if err != nil {
			t.Fatal(err)
		}
		if got := appendStacktrace(nil, &traces[i]); string(got) != string(want) {
			t.Errorf("stack trace %d:\n got %s\nwant %s", i, got, want)
		}
	}
}

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
	var resp2 completedResponse
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

// TestIsPlainJSON: looking at eight bytes at a time gives the byte
// table's answer for every byte value at every place in a word, and on
// strings of every length up to a few words.
func TestIsPlainJSON(t *testing.T) {
	byTable := func(s string) bool {
		for i := 0; i < len(s); i++ {
			if !plainJSON[s[i]] {
				return false
			}
		}
		return true
	}
	for c := range 256 {
		for at := range 8 {
			w := []byte("abcdefgh")
			w[at] = byte(c)
			if got, want := isPlainJSON(string(w)), byTable(string(w)); got != want {
				t.Errorf("isPlainJSON(%q) = %v, want %v", w, got, want)
			}
		}
	}
	// Neighbours of the bytes that are not plain, two to a word, and
	// every length.
	edges := []byte{0x00, 0x1f, 0x20, 0x21, '"', '&', '<', '>', '\\', 0x7e, 0x7f, 0x80, 0xff, 'a', '/'}
	for _, a := range edges {
		for _, b := range edges {
			for n := 0; n <= 20; n++ {
				s := []byte(strings.Repeat("x", n))
				if n > 0 {
					s[n-1] = a
					s[n/2] = b
				}
				if got, want := isPlainJSON(string(s)), byTable(string(s)); got != want {
					t.Errorf("isPlainJSON(%q) = %v, want %v", s, got, want)
				}
			}
		}
	}
}

// TestAppendModuleMatchesEncodingJSON: modules are written as
// encoding/json writes them, with every field set or left out and
// strings that need escaping.
func TestAppendModuleMatchesEncodingJSON(t *testing.T) {
	size := hexValue(0x4000)
	mods := []completeModule{
		{},
		{DebugStatus: "found", UnwindStatus: "unused", Arch: "arm64",
			Features:   moduleFeatures{HasDebugInfo: true, HasSymbols: true, HasUnwindInfo: true, HasSources: true},
			rawModule:  rawModule{Type: "macho", DebugID: "b0d7a0a8-7c5e-3b1c-9b0f-8f4b7e4f5a01", CodeID: "x", DebugFile: "App.dSYM", CodeFile: "/private/var/App", ImageAddr: 0x104000000, ImageSize: &size},
			Candidates: []candidate{{Source: "local", Location: "/srv/<App>", Download: map[string]string{"status": "ok"}}}},
		{DebugStatus: "malformed", Arch: "unknown", rawModule: rawModule{Type: "macho", DebugID: "naïve \"id\"", ImageAddr: 0xffffffffffffffff},
			Error: "debug_id \"naïve\": not a UUID <&>", Candidates: []candidate{{Source: "s3", Download: map[string]string{"status": "notfound", "details": "x"}}}},
	}
	for i := range mods {
		want, err := json.Marshal(&mods[i])
		if err != nil {
			t.Fatal(err)
		}
		if got := appendModule(nil, &mods[i]); string(got) != string(want) {
			t.Errorf("module %d:\n got %s\nwant %s", i, got, want)
		}
	}
}
