package serve

import (
	"bufio"
	"bytes"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/hangreport"
	"github.com/stackimage/stackimage/internal/testcorpus"
	"github.com/stackimage/stackimage/report"
)

// multipartBody builds a multipart body with one file field.
func multipartBody(t *testing.T, field, filename string, data []byte, sources string) (*bytes.Buffer, string) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	fw, err := mw.CreateFormFile(field, filename)
	if err != nil {
		t.Fatal(err)
	}
	fw.Write(data)
	if sources != "" {
		mw.WriteField("sources", sources)
	}
	mw.Close()
	return &buf, mw.FormDataContentType()
}

// TestMinidumpEndpoint posts symbolicator's own macOS minidump with its
// dSYM as the source: the crashed thread's frame 0 is what symbolicator's
// snapshot of this dump says (minidump/symbolicator-macos.expected.snap):
// two inlined functions in main, at main.cpp:21, 25 and 32.
func TestMinidumpEndpoint(t *testing.T) {
	corpus := testcorpus.Dir(t)
	dmp := readFile(t, filepath.Join(corpus, "minidump", "symbolicator-macos.dmp"))
	_, ts := newTestServer(t, DefaultConfig(filepath.Join(corpus, "symbolic", "symbolic-testutils", "fixtures", "macos", "crash.dSYM")))
	body, ct := multipartBody(t, "upload_file_minidump", "crash.dmp", dmp, `[{"id":"local"}]`)
	resp, data := do(t, "POST", ts.URL+"/minidump", body, map[string]string{"Content-Type": ct})
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, data)
	}
	a := decode(t, data)
	if a.Status != "completed" || len(a.Stacktraces) != 1 {
		t.Fatalf("answer %s: want one completed stack trace", data)
	}
	frames := a.Stacktraces[0].Frames
	type fn struct {
		function string
		line     int
		inlined  bool
	}
	want := []fn{{"(anonymous namespace)::crash()", 21, true}, {"(anonymous namespace)::start()", 25, true}, {"main", 32, false}}
	for i, w := range want {
		if i >= len(frames) {
			t.Fatalf("only %d frames", len(frames))
		}
		f := frames[i]
		if f.Function != w.function || f.Lineno != w.line || f.Inlined != w.inlined || f.InstructionAddr != "0x109ba8c15" || f.Trust != "context" {
			t.Errorf("frame %d = %+v, want %s at line %d, inlined %v, at 0x109ba8c15 found by context", i, f, w.function, w.line, w.inlined)
		}
	}
	found := 0
	for _, m := range a.Modules {
		if m.DebugStatus == "found" {
			found++
			if m.DebugID != "67e9247c-814e-392b-a027-dbde6748fcbf" {
				t.Errorf("found module %s, want crash's UUID", m.DebugID)
			}
		}
	}
	if found != 1 || len(a.Modules) < 10 {
		t.Errorf("%d of %d modules found, want crash's alone of the dump's many", found, len(a.Modules))
	}
}

// TestAppleCrashReportEndpoint posts the project's sample reports, .crash
// and .ips, with their app image turned into the fixture: frame 0 gets
// the fixture's function, the system image stays missing.
func TestAppleCrashReportEndpoint(t *testing.T) {
	u := fixtureUUID(t)
	w := want(t, u, 0x100000400)
	_, ts := newTestServer(t, DefaultConfig("../fixtures/bin"))
	missing := 0 // unnamed frames in the missing image, every report's
	for _, tt := range []struct{ file, uuid, from, to string }{
		{"arm64.crash", "aaaaaaaabbbbccccddddeeeeeeeeeeee", "0x100004008 crash + 8", "0x100000400 crash + 8"},
		{"arm64.ips", "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", `"imageOffset" : 16392`, `"imageOffset" : 1024`},
	} {
		t.Run(tt.file, func(t *testing.T) {
			data := string(readFile(t, filepath.Join("..", "crashreport", "testdata", tt.file)))
			if !strings.Contains(data, tt.uuid) || !strings.Contains(data, tt.from) {
				t.Fatalf("sample %s changed", tt.file)
			}
			id := u.Hex()
			if strings.Contains(tt.uuid, "-") {
				id = strings.ToLower(u.String())
			}
			data = strings.ReplaceAll(strings.ReplaceAll(data, tt.uuid, id), tt.from, tt.to)
			body, ct := multipartBody(t, "apple_crash_report", tt.file, []byte(data), "")
			resp, out := do(t, "POST", ts.URL+"/applecrashreport", body, map[string]string{"Content-Type": ct})
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, out)
			}
			a := decode(t, out)
			var got []string
			for _, st := range a.Stacktraces {
				for _, f := range st.Frames {
					if f.InstructionAddr == "0x100000400" {
						got = append(got, f.Function)
					}
				}
			}
			if len(got) == 0 || got[len(got)-1] != w[len(w)-1].Symbol {
				t.Errorf("frames at 0x100000400: %q, want the fixture's %s: %s", got, w[len(w)-1].Symbol, out)
			}
			statuses := map[string]string{}
			for _, m := range a.Modules {
				statuses[m.DebugID] = m.DebugStatus
			}
			if statuses[strings.ToLower(u.String())] != "found" || statuses["00112233-4455-6677-8899-aabbccddeeff"] != "missing" {
				t.Errorf("module statuses %v, want the fixture found and libsystem_kernel missing", statuses)
			}
			// One conversion for every endpoint: a frame in an image whose
			// symbols were not found says so as /symbolicate's do, and a
			// report walked nowhere used no unwind tables.
			for _, st := range a.Stacktraces {
				for _, f := range st.Frames {
					if strings.Contains(f.Package, "libsystem_kernel") && f.Function == "" {
						missing++
						if f.Status != "missing" {
							t.Errorf("frame %s in libsystem_kernel, unnamed: status %q, want missing", f.InstructionAddr, f.Status)
						}
					}
				}
			}
			for _, m := range a.Modules {
				if m.DebugStatus == "found" && m.UnwindStatus != "unused" {
					t.Errorf("module %s: unwind_status %q, want unused (nothing was walked)", m.DebugID, m.UnwindStatus)
				}
			}
		})
	}
	if missing == 0 {
		t.Error("no unnamed frame in libsystem_kernel in either report")
	}
}

// TestNativeSnapshot posts a snapshot of the fixture, stopped in its
// deepest function, to /v1/symbolicate: the walk names the true call
// chain the emulator recorded beside the snapshot, in our JSON; text is
// the command's text; format=same, which a snapshot has not, and an input
// in no known format are refused with what was wrong.
func TestNativeSnapshot(t *testing.T) {
	snap := readFile(t, "../fixtures/snapshots/chain-arm64-O1-deepest.json")
	wantChain := readChain(t, "../fixtures/snapshots/chain-arm64-O1-deepest.chain")
	_, ts := newTestServer(t, DefaultConfig("../fixtures/bin"))
	resp, data := do(t, "POST", ts.URL+"/v1/symbolicate", bytes.NewReader(snap), nil)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("status %d, %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), data)
	}
	var doc report.JSON
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("answer %s: %v", data, err)
	}
	if len(doc.Threads) == 0 {
		t.Fatalf("answer %s: no thread", data)
	}
	var got []string
	for _, f := range doc.Threads[0].Frames {
		if !f.Inlined && f.Symbol != "" {
			got = append(got, f.Symbol)
		}
	}
	if diff := cmp.Diff(wantChain, got); diff != "" {
		t.Errorf("the walk differs from the true chain (-want +got):\n%s", diff)
	}
	resp, text := do(t, "POST", ts.URL+"/v1/symbolicate?format=text", bytes.NewReader(snap), nil)
	if resp.StatusCode != 200 || !strings.Contains(string(text), "deepest") || !strings.Contains(string(text), "Crashed") {
		t.Errorf("format=text: status %d:\n%s", resp.StatusCode, text)
	}
	resp, data = do(t, "POST", ts.URL+"/v1/symbolicate?format=same", bytes.NewReader(snap), nil)
	if resp.StatusCode != 400 || !strings.Contains(string(data), "a stackimage snapshot") {
		t.Errorf("format=same of a snapshot: status %d: %s; want 400 naming the format", resp.StatusCode, data)
	}
	resp, data = do(t, "POST", ts.URL+"/v1/symbolicate", strings.NewReader(`{"hello":"world"}`), nil)
	if resp.StatusCode != 400 || !strings.Contains(string(data), "not a stackimage snapshot") {
		t.Errorf("unknown input: status %d: %s; want 400 naming the formats tried", resp.StatusCode, data)
	}
}

// readChain reads a .chain file: one function per line, # comments and
// the ??? of an address in no image left out.
func readChain(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var names []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := sc.Text(); line != "" && !strings.HasPrefix(line, "#") && line != "???" {
			names = append(names, line)
		}
	}
	return names
}

// TestNativeMicrostackshot posts a real microstackshot report to
// /v1/symbolicate: the JSON answer is the report's process, its call
// graph's every frame and its event; format=same gives the report back
// (none of its images is in the store, so no name is filled in).
func TestNativeMicrostackshot(t *testing.T) {
	data := readFile(t, "../hangreport/testdata/microstackshot-diskwrites.ips")
	parsed, err := hangreport.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	_, ts := newTestServer(t, DefaultConfig("../fixtures/bin"))
	resp, body := do(t, "POST", ts.URL+"/v1/symbolicate", bytes.NewReader(data), nil)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	var doc report.JSON
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("answer %s: %v", body, err)
	}
	want := parsed.Dump()
	if doc.Format != string(dump.FormatMicrostackshot) || doc.Header == nil || doc.Header.Process != want.Process.Name ||
		len(doc.Threads) != 1 || len(doc.Threads[0].Frames) != len(want.Threads[0].Frames) {
		t.Fatalf("answer: format %q, header %+v, %d threads; want %s of %q with %d frames", doc.Format, doc.Header, len(doc.Threads),
			dump.FormatMicrostackshot, want.Process.Name, len(want.Threads[0].Frames))
	}
	if !slices.ContainsFunc(doc.Header.Annotations, func(a report.JSONAnnotation) bool { return a.Key == "Event" && a.Value == "disk writes" }) {
		t.Errorf("annotations %+v lack the event", doc.Header.Annotations)
	}
	resp, same := do(t, "POST", ts.URL+"/v1/symbolicate?format=same", bytes.NewReader(data), nil)
	if resp.StatusCode != 200 || !bytes.Equal(same, data) {
		t.Errorf("format=same: status %d, %d bytes; want the report's %d bytes back", resp.StatusCode, len(same), len(data))
	}
}

// TestHeldAnswerSpooled: a /minidump answer kept for GET /requests/{id}
// past the bytes held in memory is spooled to a file, handed out byte for
// byte as the answer given at once, then removed; asked for again, the
// request is gone.
func TestHeldAnswerSpooled(t *testing.T) {
	corpus := testcorpus.Dir(t)
	defer func(n int) { maxHeldInMemory = n }(maxHeldInMemory)
	maxHeldInMemory = 1024
	dmp := readFile(t, filepath.Join(corpus, "minidump", "simple-crashpad.dmp"))
	s, ts := newTestServer(t, DefaultConfig(t.TempDir()))
	post := func(query string) (*http.Response, []byte) {
		body, ct := multipartBody(t, "upload_file_minidump", "crash.dmp", dmp, "")
		return do(t, "POST", ts.URL+"/minidump"+query, body, map[string]string{"Content-Type": ct})
	}
	_, now := post("")
	if len(now) <= 2*maxHeldInMemory {
		t.Fatalf("answer of %d bytes: want one past the %d held in memory", len(now), maxHeldInMemory)
	}
	_, pending := post("?timeout=0")
	var p pendingAnswer
	if err := json.Unmarshal(pending, &p); err != nil || p.Status != "pending" {
		// Done before the timer: answered at once, from the kept copy.
		if !bytes.Equal(pending, now) {
			t.Fatalf("kept answer differs from the one given at once:\n%.300s\n%.300s", pending, now)
		}
		return
	}
	resp, later := do(t, "GET", ts.URL+"/requests/"+p.RequestID+"?timeout=30", nil, nil)
	if resp.StatusCode != http.StatusOK || !bytes.Equal(later, now) {
		t.Fatalf("GET /requests/%s: %d, %d bytes; want the %d bytes answered at once", p.RequestID, resp.StatusCode, len(later), len(now))
	}
	if resp.ContentLength != int64(len(now)) {
		t.Errorf("Content-Length %d, want %d", resp.ContentLength, len(now))
	}
	// The file goes once the handler has written it, just after the
	// client has read it.
	var left []string
	for range 100 {
		if left, _ = filepath.Glob(filepath.Join(s.tmpDir, "answer-*")); len(left) == 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if len(left) > 0 {
		t.Errorf("the spooled answer is left behind: %v", left)
	}
	if resp, _ := do(t, "GET", ts.URL+"/requests/"+p.RequestID, nil, nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("asked for again: %d, want 404", resp.StatusCode)
	}
}
