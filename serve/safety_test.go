package serve

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stackimage/stackimage/symstore/remote"
)

// TestAuth: with a token, every endpoint but /healthcheck needs it;
// uploads need their own token, and the service token does not do.
func TestAuth(t *testing.T) {
	cfg := DefaultConfig("")
	cfg.Sources = []SourceConfig{{Name: "store", Type: "filesystem", Path: t.TempDir()}}
	cfg.Store = "store"
	cfg.Auth = AuthConfig{Token: "service-token", UploadToken: "upload-token"}
	_, ts := newTestServer(t, cfg)
	bearer := func(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }
	dsym := readFile(t, fixtureDSYM)
	tests := []struct {
		method, path string
		header       map[string]string
		body         []byte
		want         int
	}{
		{"GET", "/healthcheck", nil, nil, 200},
		{"GET", "/metrics", nil, nil, 401},
		{"GET", "/metrics", bearer("service-token"), nil, 200},
		{"POST", "/symbolicate", nil, []byte(`{}`), 401},
		{"POST", "/symbolicate", bearer("wrong"), []byte(`{}`), 401},
		{"POST", "/symbolicate", bearer("service-token"), []byte(`{"stacktraces":[],"modules":[]}`), 200},
		{"GET", "/buildid/4c4c444c55553144a1173e15af6b6cff/debuginfo", nil, nil, 401},
		{"PUT", "/v1/symbols", bearer("service-token"), dsym, 401},
		{"PUT", "/v1/symbols", bearer("upload-token"), dsym, 201},
		{"GET", "/buildid/4c4c444c55553144a1173e15af6b6cff/debuginfo", bearer("service-token"), nil, 200},
	}
	for _, tt := range tests {
		resp, data := do(t, tt.method, ts.URL+tt.path, bytes.NewReader(tt.body), tt.header)
		if resp.StatusCode != tt.want {
			t.Errorf("%s %s with %v: status %d, want %d: %s", tt.method, tt.path, tt.header, resp.StatusCode, tt.want, data)
		}
	}
}

// TestNoPathOrURLFromRequests: a request's sources may only name
// configured sources; debuginfod paths that try to climb out, with dots,
// encoded slashes or absolute paths, find nothing; a file beside the
// store is never served.
func TestNoPathOrURLFromRequests(t *testing.T) {
	root := t.TempDir()
	store := filepath.Join(root, "store")
	secret := filepath.Join(root, "secret")
	if err := os.WriteFile(secret, []byte("SECRET"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig("../fixtures/bin")
	cfg.Sources = append(cfg.Sources, SourceConfig{Name: "store", Type: "filesystem", Path: store})
	cfg.Store = "store"
	cfg.AllowSources = []string{"local"}
	_, ts := newTestServer(t, cfg)
	u := fixtureUUID(t)
	body := func(sources string) []byte {
		return []byte(`{"sources":` + sources + `,"stacktraces":[{"frames":[{"instruction_addr":"0x100000400"}]}],"modules":[{"type":"macho","debug_id":"` +
			u.Hex() + `","image_addr":"0x100000000","image_size":16384}]}`)
	}
	for _, tt := range []struct {
		sources string
		want    int
	}{
		{`[{"id":"local"}]`, 200},
		{`[{"id":"local","type":"filesystem"}]`, 200},
		{`[{"id":"store"}]`, 400}, // configured, but not in allow_sources
		{`[{"id":"evil","type":"http","url":"http://127.0.0.1:1/"}]`, 400},
		{`[{"id":"local","type":"filesystem","path":"/etc"}]`, 400},
		{`[{"id":"../../etc"}]`, 400},
	} {
		resp, data := do(t, "POST", ts.URL+"/symbolicate", bytes.NewReader(body(tt.sources)), nil)
		if resp.StatusCode != tt.want {
			t.Errorf("sources %s: status %d, want %d: %s", tt.sources, resp.StatusCode, tt.want, data)
		}
	}
	for _, p := range []string{
		"/buildid/../secret/debuginfo",
		"/buildid/..%2fsecret/debuginfo",
		"/buildid/%2e%2e%2f%2e%2e%2fsecret/debuginfo",
		"/buildid/%2Fetc%2Fpasswd/debuginfo",
		"/buildid/" + u.Hex() + "/..%2f..%2f..%2fsecret",
		"/buildid/" + u.Hex() + "/source",
		"/buildid//etc/passwd/executable",
	} {
		resp, data := do(t, "GET", ts.URL+p, nil, nil)
		if resp.StatusCode == 200 || bytes.Contains(data, []byte("SECRET")) {
			t.Errorf("GET %s: status %d, body %q: want nothing served", p, resp.StatusCode, data)
		}
	}
}

// slowSource is a symbol server holding the fixture that answers only
// once release is closed.
func slowSource(t *testing.T) (*symbolServer, SourceConfig) {
	u := fixtureUUID(t)
	src := newSymbolServer(t, u, map[remote.Kind][]byte{remote.KindCode: readFile(t, fixtureBin), remote.KindDebug: readFile(t, fixtureDSYM)})
	src.release = make(chan struct{})
	return src, SourceConfig{Name: "slow", Type: "http", URL: src.URL}
}

// TestConcurrencyCap: beyond limits.max_concurrent requests, the next
// gets 503 with Retry-After at once; /healthcheck still answers.
func TestConcurrencyCap(t *testing.T) {
	src, sc := slowSource(t)
	cfg := DefaultConfig("")
	cfg.Sources = []SourceConfig{sc}
	cfg.Limits.MaxConcurrent = 1
	s, ts := newTestServer(t, cfg)
	u := fixtureUUID(t)
	done := make(chan answer)
	go func() {
		_, data := postJSON(t, ts.URL+"/symbolicate", symbolicateBody(u.Hex(), 0x100000000, 0x100000400, 0x100000484))
		done <- decode(t, data)
	}()
	for metric(t, s, "stackimage_requests_in_flight") < 1 {
		runtimeGosched()
	}
	resp, data := postJSON(t, ts.URL+"/symbolicate", symbolicateBody(u.Hex(), 0x100000000, 0x100000400, 0x100000484))
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("second request: status %d, Retry-After %q, want 503 with Retry-After: %s", resp.StatusCode, resp.Header.Get("Retry-After"), data)
	}
	if resp, _ := do(t, "GET", ts.URL+"/healthcheck", nil, nil); resp.StatusCode != 200 {
		t.Errorf("healthcheck while busy: %d", resp.StatusCode)
	}
	close(src.release)
	if a := <-done; a.Modules[0].DebugStatus != "found" {
		t.Errorf("first request: %+v", a)
	}
}

// TestBodyCaps: each endpoint refuses a body above its cap with 413.
func TestBodyCaps(t *testing.T) {
	cfg := DefaultConfig("")
	cfg.Sources = []SourceConfig{{Name: "store", Type: "filesystem", Path: t.TempDir()}}
	cfg.Store = "store"
	cfg.Auth.UploadToken = "up"
	cfg.Limits.MaxSymbolicateBody = 1 << 10
	cfg.Limits.MaxDumpBody = 1 << 10
	cfg.Limits.MaxUploadBody = 1 << 10
	_, ts := newTestServer(t, cfg)
	big := []byte(`{"modules":[],"stacktraces":[],"platform":"` + strings.Repeat("x", 4<<10) + `"}`)
	for _, tt := range []struct{ method, path string }{
		{"POST", "/symbolicate"}, {"POST", "/v1/symbolicate"}, {"PUT", "/v1/symbols"},
	} {
		resp, data := do(t, tt.method, ts.URL+tt.path, bytes.NewReader(big), map[string]string{"Authorization": "Bearer up"})
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Errorf("%s %s with 4 KiB: status %d, want 413: %s", tt.method, tt.path, resp.StatusCode, data)
		}
	}
}

// TestPendingRequests: an answer slower than ?timeout= is "pending" with
// a request id; GET /requests/{id} returns it once it is done, once.
func TestPendingRequests(t *testing.T) {
	src, sc := slowSource(t)
	cfg := DefaultConfig("")
	cfg.Sources = []SourceConfig{sc}
	_, ts := newTestServer(t, cfg)
	u := fixtureUUID(t)
	_, data := postJSON(t, ts.URL+"/symbolicate?timeout=0.05", symbolicateBody(u.Hex(), 0x100000000, 0x100000400, 0x100000484))
	a := decode(t, data)
	if a.Status != "pending" || a.RequestID == "" {
		t.Fatalf("answer %s, want pending with a request id", data)
	}
	_, data = do(t, "GET", ts.URL+"/requests/"+a.RequestID+"?timeout=0.05", nil, nil)
	if b := decode(t, data); b.Status != "pending" || b.RequestID != a.RequestID {
		t.Errorf("poll before the answer: %s, want pending with the same id", data)
	}
	close(src.release)
	_, data = do(t, "GET", ts.URL+"/requests/"+a.RequestID+"?timeout=10", nil, nil)
	if b := decode(t, data); b.Status != "completed" || b.Stacktraces[0].Frames[0].Status != "symbolicated" {
		t.Errorf("poll after: %s, want the completed answer", data)
	}
	if resp, _ := do(t, "GET", ts.URL+"/requests/"+a.RequestID, nil, nil); resp.StatusCode != http.StatusNotFound {
		t.Errorf("second fetch of a delivered answer: %d, want 404", resp.StatusCode)
	}
}

// TestPendingLargeAnswerKeepsItsFrames: the frames of a large answer
// (written by its resolvers into pooled buffers) kept for GET
// /requests/{id} are not overwritten by the requests served meanwhile,
// which take the same buffers from the pool: it is handed out byte for
// byte as the same request answered at once.
func TestPendingLargeAnswerKeepsItsFrames(t *testing.T) {
	// Enough frames that the answer is written in several pieces.
	const largeFrames = 100
	src, sc := slowSource(t)
	cfg := DefaultConfig("")
	cfg.Sources = []SourceConfig{sc}
	s, ts := newTestServer(t, cfg)
	u := fixtureUUID(t)
	const base = 0x100000000
	large := func(shift uint64) map[string]any {
		body := symbolicateBody(u.Hex(), base, 0, 0)
		var frames []any
		for k := range uint64(largeFrames) {
			frames = append(frames, map[string]any{"instruction_addr": fmt.Sprintf("0x%x", base+0x400+shift+4*(k%40))})
		}
		body["stacktraces"] = []any{map[string]any{"frames": frames}}
		return body
	}
	_, data := postJSON(t, ts.URL+"/symbolicate?timeout=0.05", large(0))
	a := decode(t, data)
	if a.Status != "pending" || a.RequestID == "" {
		t.Fatalf("answer %.300s, want pending with a request id", data)
	}
	close(src.release)
	s.pending.mu.Lock()
	j := s.pending.jobs[a.RequestID]
	s.pending.mu.Unlock()
	if j == nil {
		t.Fatalf("no pending job %s", a.RequestID)
	}
	<-j.done
	for range 4 {
		if resp, data := postJSON(t, ts.URL+"/symbolicate", large(0x200)); resp.StatusCode != http.StatusOK {
			t.Fatalf("another request: status %d: %.300s", resp.StatusCode, data)
		}
	}
	_, kept := do(t, "GET", ts.URL+"/requests/"+a.RequestID+"?timeout=10", nil, nil)
	_, direct := postJSON(t, ts.URL+"/symbolicate", large(0))
	if b := decode(t, direct); b.Status != "completed" || len(b.Stacktraces[0].Frames) < largeFrames ||
		b.Stacktraces[0].Frames[0].Status != "symbolicated" {
		t.Fatalf("direct answer %.300s: want %d symbolicated frames or more", direct, largeFrames)
	}
	if !bytes.Equal(kept, direct) {
		t.Errorf("kept answer differs from the direct one:\n%.500s\n%.500s", kept, direct)
	}
}

// TestRequestDeadline: a module whose symbols do not arrive before
// limits.request_timeout says "timeout"; the answer keeps the rest.
func TestRequestDeadline(t *testing.T) {
	src, sc := slowSource(t)
	defer close(src.release)
	cfg := DefaultConfig("../fixtures/bin")
	cfg.Sources = append(cfg.Sources[:0:0], sc, cfg.Sources[0])
	cfg.Limits.RequestTimeout = 200 * time.Millisecond
	_, ts := newTestServer(t, cfg)
	u := fixtureUUID(t)
	body := symbolicateBody(u.Hex(), 0x100000000, 0x100000400, 0x100000484)
	start := time.Now()
	resp, data := postJSON(t, ts.URL+"/symbolicate", body)
	if resp.StatusCode != 200 || time.Since(start) > 5*time.Second {
		t.Fatalf("status %d after %v", resp.StatusCode, time.Since(start))
	}
	a := decode(t, data)
	if a.Status != "completed" || a.Modules[0].DebugStatus != "timeout" || a.Stacktraces[0].Frames[0].Status != "missing" {
		t.Errorf("answer %s, want completed with the module timed out", data)
	}
}

// TestGracefulShutdown: once Serve's context ends, a request in flight
// still gets its answer, new connections are refused, and Serve returns
// nil.
func TestGracefulShutdown(t *testing.T) {
	src, sc := slowSource(t)
	cfg := DefaultConfig("")
	cfg.Sources = []SourceConfig{sc}
	cfg.Cache.Dir = t.TempDir()
	s, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error)
	go func() { served <- s.Serve(ctx, ln) }()
	url := "http://" + ln.Addr().String()
	u := fixtureUUID(t)
	got := make(chan int)
	go func() {
		resp, _ := postJSON(t, url+"/symbolicate", symbolicateBody(u.Hex(), 0x100000000, 0x100000400, 0x100000484))
		got <- resp.StatusCode
	}()
	for metric(t, s, "stackimage_requests_in_flight") < 1 {
		runtimeGosched()
	}
	cancel()
	time.Sleep(100 * time.Millisecond)
	if _, err := http.Get(url + "/healthcheck"); err == nil {
		t.Errorf("a new request was accepted during shutdown")
	}
	close(src.release)
	if code := <-got; code != 200 {
		t.Errorf("request in flight: status %d, want 200", code)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve = %v, want nil", err)
	}
}

// TestDownloadCaps: a file above a source's max_download is not kept
// (too_large), and a fetch slower than its download_timeout fails
// (fetching_failed); both say why.
func TestDownloadCaps(t *testing.T) {
	u := fixtureUUID(t)
	big := newSymbolServer(t, u, map[remote.Kind][]byte{remote.KindDebug: readFile(t, fixtureDSYM)})
	slow, slowCfg := slowSource(t)
	defer close(slow.release)
	for _, tt := range []struct {
		name   string
		source SourceConfig
		status string
		why    string
	}{
		{"too large", SourceConfig{Name: "big", Type: "http", URL: big.URL, MaxDownload: 1000}, "too_large", "download limit"},
		{"too slow", SourceConfig{Name: slowCfg.Name, Type: "http", URL: slowCfg.URL, DownloadTimeout: 100 * time.Millisecond}, "fetching_failed", "deadline"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig("")
			cfg.Sources = []SourceConfig{tt.source}
			_, ts := newTestServer(t, cfg)
			_, data := postJSON(t, ts.URL+"/symbolicate", symbolicateBody(u.Hex(), 0x100000000, 0x100000400, 0x100000484))
			m := decode(t, data).Modules[0]
			if m.DebugStatus != tt.status || !strings.Contains(m.Error, tt.why) {
				t.Errorf("module %+v, want %s saying %q", m, tt.status, tt.why)
			}
		})
	}
}

// TestParallelLookupsBounded: a request naming 64 modules asks a source
// for at most limits.max_request_fetches files at a time.
func TestParallelLookupsBounded(t *testing.T) {
	var inFlight, peak atomic.Int64
	src := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(20 * time.Millisecond)
		inFlight.Add(-1)
		http.NotFound(w, r)
	}))
	defer src.Close()
	cfg := DefaultConfig("")
	cfg.Sources = []SourceConfig{{Name: "http", Type: "http", URL: src.URL}}
	_, ts := newTestServer(t, cfg)
	var frames, modules []any
	for i := range 64 {
		base := uint64(0x100000000 + i*0x100000)
		frames = append(frames, map[string]any{"instruction_addr": fmt.Sprintf("%#x", base+0x10)})
		modules = append(modules, map[string]any{"type": "macho", "debug_id": fmt.Sprintf("%032x", i+1), "image_addr": fmt.Sprintf("%#x", base), "image_size": 0x100000})
	}
	_, data := postJSON(t, ts.URL+"/symbolicate", map[string]any{"stacktraces": []any{map[string]any{"frames": frames}}, "modules": modules})
	if a := decode(t, data); len(a.Modules) != 64 || a.Modules[63].DebugStatus != "missing" {
		t.Fatalf("answer %.300s", data)
	}
	if p := peak.Load(); p > int64(defaultMaxRequestFetches) {
		t.Errorf("%d requests to the source at once, want at most %d", p, int64(defaultMaxRequestFetches))
	}
}

// TestSpareCores: a request alone may name its backtrace on every core;
// with as many requests in flight as cores, each names on its own.
func TestSpareCores(t *testing.T) {
	s := &Server{slots: make(chan struct{}, 64)}
	procs := runtime.GOMAXPROCS(0)
	s.slots <- struct{}{} // the request asking
	if got := s.spareCores(); got != procs {
		t.Errorf("one request in flight: %d cores; want GOMAXPROCS (%d)", got, procs)
	}
	for range procs + 3 {
		s.slots <- struct{}{}
	}
	if got := s.spareCores(); got != 1 {
		t.Errorf("%d requests in flight on %d cores: %d cores; want 1", len(s.slots), procs, got)
	}
}
