//go:build faults

package serve

// The service under faults, run by `make faults` (and so by `make
// test`): slow and dead HTTP sources (in-test servers that sleep or
// reset, counting the connections they see), versitygw stopped and
// restarted mid-traffic, objects truncated and flipped in the bucket's
// directory, clients sending a byte a second, and hostile dumps and zips
// made here. Every process is started and stopped by the test, on
// loopback, and every scenario is bounded in time. docs/serve.md's
// "Under faults" gives what each scenario measures.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stackimage/stackimage/symstore/indexcache"
	"github.com/stackimage/stackimage/symstore/remote"
)

// faultSource is an in-test HTTP symbol server that answers every
// request after delay with 404 (or, when reset, by closing the
// connection), counting requests and the connections open at once.
type faultSource struct {
	*httptest.Server
	requests       atomic.Int64
	open, peakOpen atomic.Int64
}

func newFaultSource(t *testing.T, delay time.Duration, reset bool) *faultSource {
	t.Helper()
	fs := &faultSource{}
	fs.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fs.requests.Add(1)
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
		if reset {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				if tc, ok := conn.(*net.TCPConn); ok {
					tc.SetLinger(0) // RST, not FIN
				}
				conn.Close()
			}
			return
		}
		http.NotFound(w, r)
	}))
	fs.Config.ConnState = func(c net.Conn, st http.ConnState) {
		switch st {
		case http.StateNew:
			n := fs.open.Add(1)
			for p := fs.peakOpen.Load(); n > p && !fs.peakOpen.CompareAndSwap(p, n); p = fs.peakOpen.Load() {
			}
		case http.StateClosed, http.StateHijacked:
			fs.open.Add(-1)
		}
	}
	fs.Start()
	t.Cleanup(fs.Close)
	return fs
}

// manyModules is a /symbolicate request naming n modules of unknown
// UUIDs, one frame in each.
func manyModules(n int) map[string]any {
	frames := make([]any, n)
	modules := make([]any, n)
	for i := range n {
		base := uint64(0x100000000 + i*0x10000)
		frames[i] = map[string]any{"instruction_addr": fmt.Sprintf("%#x", base+0x10)}
		modules[i] = map[string]any{"type": "macho", "debug_id": fmt.Sprintf("%08x-0000-4000-8000-%012x", i+1, i+1),
			"image_addr": fmt.Sprintf("%#x", base), "image_size": 0x10000}
	}
	return map[string]any{"stacktraces": []any{map[string]any{"frames": frames}}, "modules": modules}
}

// peakGoroutines samples the process's goroutines until stop is closed.
func peakGoroutines(stop <-chan struct{}) *atomic.Int64 {
	var peak atomic.Int64
	go func() {
		for {
			if n := int64(runtime.NumGoroutine()); n > peak.Load() {
				peak.Store(n)
			}
			select {
			case <-stop:
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
	}()
	return &peak
}

// TestFaultsFanOut (issue item 1): one request naming 20,000 unknown
// UUIDs, against a source that takes 100 ms per answer, keeps the open
// connections to the source within limits.max_fetches, its goroutines
// few, and starts no fetch once its deadline has passed.
func TestFaultsFanOut(t *testing.T) {
	const maxFetches = 8
	src := newFaultSource(t, 100*time.Millisecond, false)
	cfg := DefaultConfig("")
	cfg.Sources = []SourceConfig{{Name: "slow", Type: "http", URL: src.URL}}
	cfg.Limits.RequestTimeout = 2 * time.Second
	cfg.Limits.MaxFetches = maxFetches
	_, ts := newTestServer(t, cfg)

	stop := make(chan struct{})
	peak := peakGoroutines(stop)
	start := time.Now()
	resp, data := postJSON(t, ts.URL+"/symbolicate", manyModules(20000))
	took := time.Since(start)
	close(stop)
	atAnswer := src.requests.Load()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %.300s", resp.StatusCode, data)
	}
	a := decode(t, data)
	statuses := map[string]int{}
	for _, m := range a.Modules {
		statuses[m.DebugStatus]++
	}
	t.Logf("answered in %v; modules by status %v; %d requests to the source, at most %d connections open at once; peak goroutines %d",
		took, statuses, atAnswer, src.peakOpen.Load(), peak.Load())
	if took > cfg.Limits.RequestTimeout+3*time.Second { // reading and decoding 3 MB of JSON on a busy machine
		t.Errorf("answered after %v, want within the request timeout of %v", took, cfg.Limits.RequestTimeout)
	}
	if statuses[indexcache.StatusTimeout] == 0 {
		t.Errorf("no module says %q: every lookup was done in 2 s?", indexcache.StatusTimeout)
	}
	if p := src.peakOpen.Load(); p > maxFetches {
		t.Errorf("%d connections open at once to the source, want at most limits.max_fetches = %d", p, maxFetches)
	}
	if p := peak.Load(); p > 1000 {
		t.Errorf("%d goroutines at the peak, want a few hundred at most", p)
	}
	// The lookups in flight at the deadline finish (3 kinds of file
	// each); no other starts.
	time.Sleep(1500 * time.Millisecond)
	if after := src.requests.Load() - atAnswer; after > 3*maxFetches {
		t.Errorf("%d requests to the source after the answer, want at most %d: fetches started past the deadline", after, 3*maxFetches)
	}
}

// TestFaultsDeadSource (item 1, 9): a source that resets every
// connection costs its modules "fetching_failed", within the deadline,
// and each failed fetch is logged with the request's ID.
func TestFaultsDeadSource(t *testing.T) {
	src := newFaultSource(t, 0, true)
	var logs syncBuffer
	cfg := DefaultConfig("")
	cfg.Sources = []SourceConfig{{Name: "dead", Type: "http", URL: src.URL}}
	cfg.Log = slog.New(slog.NewJSONHandler(&logs, nil))
	_, ts := newTestServer(t, cfg)
	body, _ := json.Marshal(manyModules(3))
	resp, data := do(t, "POST", ts.URL+"/symbolicate", bytes.NewReader(body), map[string]string{"X-Request-ID": "dead-source-1"})
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, data)
	}
	for _, m := range decode(t, data).Modules {
		if m.DebugStatus != indexcache.StatusFetchingFailed {
			t.Errorf("module %s: status %q, want %q (%s)", m.DebugID, m.DebugStatus, indexcache.StatusFetchingFailed, m.Error)
		}
	}
	if got := logs.String(); !strings.Contains(got, `"msg":"fetch failed"`) || !strings.Contains(got, `"request_id":"dead-source-1"`) {
		t.Errorf("the log has no failed fetch with the request's ID:\n%s", got)
	}
}

// syncBuffer is a bytes.Buffer safe for a logger and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// slowClient opens a connection to addr and sends a request whose body
// of n bytes goes a byte a second, until ctx ends.
func slowClient(ctx context.Context, addr, path string, n int) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", path, addr, n)
	for range n {
		if _, err := conn.Write([]byte(" ")); err != nil {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
}

// TestFaultsSlowClients (item 2): 64 clients sending their bodies a byte
// a second, as many as limits.max_concurrent, leave ordinary requests
// answered; /ready says 503 while the slots are all taken, and a body
// that does not arrive within limits.body_timeout is cut with 408.
func TestFaultsSlowClients(t *testing.T) {
	cfg := DefaultConfig("../fixtures/bin")
	cfg.Limits.MaxConcurrent = 64
	cfg.Limits.BodyTimeout = 3 * time.Second
	s, ts := newTestServer(t, cfg)
	addr := strings.TrimPrefix(ts.URL, "http://")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for range 64 {
		wg.Add(1)
		go func() { defer wg.Done(); slowClient(ctx, addr, "/symbolicate", 100) }()
	}
	time.Sleep(500 * time.Millisecond) // every slow client has sent its header
	u := fixtureUUID(t)
	req := map[string]any{"stacktraces": []any{map[string]any{"frames": []any{map[string]any{"instruction_addr": "0x100003f10"}}}},
		"modules": []any{map[string]any{"type": "macho", "debug_id": u.String(), "image_addr": "0x100000000"}}}
	for i := range 10 {
		resp, data := postJSON(t, ts.URL+"/symbolicate", req)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("ordinary request %d among 64 slow clients: status %d: %s", i, resp.StatusCode, data)
		}
	}
	if resp, data := do(t, "GET", ts.URL+"/ready", nil, nil); resp.StatusCode != http.StatusOK {
		t.Errorf("/ready with free slots: %d %s", resp.StatusCode, data)
	}
	// Saturated: every slot taken.
	for range cap(s.slots) {
		s.slots <- struct{}{}
	}
	resp, data := do(t, "GET", ts.URL+"/ready", nil, nil)
	for range cap(s.slots) {
		<-s.slots
	}
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("/ready with every slot taken: %d %s, want 503", resp.StatusCode, data)
	}
	// A body still arriving after body_timeout is cut.
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /symbolicate HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
	conn.SetReadDeadline(time.Now().Add(cfg.Limits.BodyTimeout + 5*time.Second))
	buf := make([]byte, 64)
	n, _ := conn.Read(buf)
	if !bytes.HasPrefix(buf[:n], []byte("HTTP/1.1 408")) {
		t.Errorf("a body that stopped arriving: answer %q, want 408 after limits.body_timeout", buf[:n])
	}
	cancel()
	wg.Wait()
}

// TestFaultsSmallThings (item 9): what an operator trips on.
func TestFaultsSmallThings(t *testing.T) {
	var logs syncBuffer
	cfg := DefaultConfig("../fixtures/bin")
	cfg.Auth.Token = "secret"
	cfg.Auth.UploadToken = "up"
	cfg.Sources = append(cfg.Sources, SourceConfig{Name: "store", Type: "filesystem", Path: t.TempDir()})
	cfg.Store = "store"
	cfg.Limits.MaxSymbolicateBody = 1 << 10
	cfg.Log = slog.New(slog.NewJSONHandler(&logs, nil))
	_, ts := newTestServer(t, cfg)
	auth := map[string]string{"Authorization": "bearer secret"}

	t.Run("bearer in lower case", func(t *testing.T) {
		resp, data := do(t, "POST", ts.URL+"/symbolicate", strings.NewReader(`{"stacktraces":[],"modules":[]}`), auth)
		if resp.StatusCode != http.StatusOK {
			t.Errorf("status %d: %s", resp.StatusCode, data)
		}
	})
	t.Run("wrong method", func(t *testing.T) {
		resp, data := do(t, "GET", ts.URL+"/symbolicate", nil, auth)
		if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST" {
			t.Errorf("GET /symbolicate: %d (Allow %q) %s, want 405 and Allow: POST", resp.StatusCode, resp.Header.Get("Allow"), data)
		}
	})
	t.Run("over-cap Content-Length", func(t *testing.T) {
		conn, err := net.Dial("tcp", strings.TrimPrefix(ts.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		fmt.Fprintf(conn, "POST /symbolicate HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer secret\r\nContent-Length: 100000000\r\nExpect: 100-continue\r\n\r\n")
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, 64)
		n, _ := conn.Read(buf)
		if !bytes.HasPrefix(buf[:n], []byte("HTTP/1.1 413")) {
			t.Errorf("answer %q, want 413 before any body is sent (no 100 Continue)", buf[:n])
		}
	})
	t.Run("upload name", func(t *testing.T) {
		resp, data := do(t, "PUT", ts.URL+"/v1/symbols", bytes.NewReader(readFile(t, fixtureBin)), map[string]string{"Authorization": "Bearer up"})
		if resp.StatusCode != http.StatusCreated || bytes.Contains(data, []byte(`"name":"."`)) {
			t.Errorf("upload: %d %s, want 201 and no \"name\":\".\"", resp.StatusCode, data)
		}
	})
	t.Run("no cache paths in module errors", func(t *testing.T) {
		// A truncated binary from an HTTP source: its module's error names
		// the source's URL, never the cache directory's download.
		u := fixtureUUID(t)
		src := newSymbolServer(t, u, map[remote.Kind][]byte{remote.KindCode: readFile(t, fixtureBin)[:200]})
		cfg := DefaultConfig("")
		cfg.Cache.Dir = t.TempDir()
		cfg.Sources = []SourceConfig{{Name: "http", Type: "http", URL: src.URL}}
		_, ts := newTestServer(t, cfg)
		req := map[string]any{"stacktraces": []any{map[string]any{"frames": []any{map[string]any{"instruction_addr": "0x100003f10"}}}},
			"modules": []any{map[string]any{"type": "macho", "debug_id": u.String(), "image_addr": "0x100000000"}}}
		_, data := postJSON(t, ts.URL+"/symbolicate", req)
		a := decode(t, data)
		if len(a.Modules) != 1 || a.Modules[0].Error == "" || strings.Contains(a.Modules[0].Error, cfg.Cache.Dir) {
			t.Errorf("module of a truncated binary: %+v; want an error without the cache directory %s", a.Modules, cfg.Cache.Dir)
		}
	})
	t.Run("refusals logged", func(t *testing.T) {
		do(t, "POST", ts.URL+"/symbolicate", strings.NewReader("{"), map[string]string{"Authorization": "Bearer wrong", "X-Request-ID": "refused-1"})
		if got := logs.String(); !strings.Contains(got, `"request_id":"refused-1"`) || !strings.Contains(got, `"status":401`) {
			t.Errorf("no log line for the refused request:\n%s", got)
		}
	})
}
