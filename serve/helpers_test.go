package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/symstore/remote"
	"github.com/stackimage/stackimage/uuid"
)

// The fixture the tests symbolicate against: a real arm64 binary and its
// dSYM, built by fixtures/build.sh.
const (
	fixtureBin  = "../fixtures/bin/chain-arm64-O1"
	fixtureDSYM = "../fixtures/bin/chain-arm64-O1.dSYM/Contents/Resources/DWARF/chain-arm64-O1"
)

func fixtureUUID(t testing.TB) uuid.UUID {
	t.Helper()
	syms := symstore.NewSymbols()
	defer syms.Close()
	if err := syms.AddFile(context.Background(), fixtureBin); err != nil {
		t.Fatal(err)
	}
	ids := syms.UUIDs()
	if len(ids) != 1 {
		t.Fatalf("%s has %d UUIDs, want 1", fixtureBin, len(ids))
	}
	return ids[0]
}

// want resolves an unslid address of the fixture with the library
// directly: the answer the service must give.
func want(t testing.TB, u uuid.UUID, unslid uint64) []symstore.Frame {
	t.Helper()
	syms := symstore.NewSymbols()
	defer syms.Close()
	if err := syms.AddDir(context.Background(), filepath.Dir(fixtureBin)); err != nil {
		t.Fatal(err)
	}
	frames, err := syms.Resolve(u, nil, unslid)
	if err != nil {
		t.Fatal(err)
	}
	return frames
}

// newTestServer builds a Server with cfg (its cache in a temporary
// directory) behind an httptest server on loopback.
func newTestServer(t testing.TB, cfg Config) (*Server, *httptest.Server) {
	t.Helper()
	if cfg.Cache.Dir == "" {
		cfg.Cache.Dir = t.TempDir()
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	cfg.setDefaults()
	s, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(func() { ts.Close(); s.Close() })
	return s, ts
}

// do sends a request and returns the response with its body read.
func do(t testing.TB, method, url string, body io.Reader, header map[string]string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, data
}

func postJSON(t testing.TB, url string, v any) (*http.Response, []byte) {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return do(t, http.MethodPost, url, bytes.NewReader(data), map[string]string{"Content-Type": "application/json"})
}

// answer is the part of a response the tests read.
type answer struct {
	Status      string `json:"status"`
	RequestID   string `json:"request_id"`
	Message     string `json:"message"`
	Stacktraces []struct {
		Frames []struct {
			Status          string `json:"status"`
			OriginalIndex   int    `json:"original_index"`
			InstructionAddr string `json:"instruction_addr"`
			Function        string `json:"function"`
			Symbol          string `json:"symbol"`
			SymAddr         string `json:"sym_addr"`
			AbsPath         string `json:"abs_path"`
			Lineno          int    `json:"lineno"`
			Inlined         bool   `json:"inlined"`
			Trust           string `json:"trust"`
			Package         string `json:"package"`
		} `json:"frames"`
	} `json:"stacktraces"`
	Modules []struct {
		DebugStatus  string `json:"debug_status"`
		UnwindStatus string `json:"unwind_status"`
		Arch         string `json:"arch"`
		DebugID      string `json:"debug_id"`
		Error        string `json:"error"`
		Candidates   []struct {
			Source string `json:"source"`
		} `json:"candidates"`
	} `json:"modules"`
}

func decode(t testing.TB, data []byte) answer {
	t.Helper()
	var a answer
	if err := json.Unmarshal(data, &a); err != nil {
		t.Fatalf("response %q: %v", data, err)
	}
	return a
}

// symbolServer is an HTTP symbol server in the unified layout holding the
// fixture's binary and dSYM, counting the GET requests for each path. Until
// release is closed (when set), it holds every answer.
type symbolServer struct {
	*httptest.Server
	files   map[string][]byte
	mu      sync.Mutex
	hits    map[string]int
	total   atomic.Int64
	release chan struct{}
}

func newSymbolServer(t testing.TB, u uuid.UUID, files map[remote.Kind][]byte) *symbolServer {
	t.Helper()
	s := &symbolServer{files: map[string][]byte{}, hits: map[string]int{}}
	for kind, data := range files {
		s.files["/"+remote.LayoutPaths(remote.Layout{Type: "unified"}, u, kind, "")[0]] = data
	}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		if r.Method == http.MethodGet {
			// Files fetched; a HEAD (a shared index's inputs checked) is
			// not one.
			s.total.Add(1)
			s.hits[r.URL.Path]++
		}
		rel := s.release
		s.mu.Unlock()
		if rel != nil {
			select {
			case <-rel:
			case <-r.Context().Done():
				return
			}
		}
		data, ok := s.files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Write(data)
	}))
	t.Cleanup(s.Close)
	return s
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// metric reads one counter of the server's registry.
func metric(t testing.TB, s *Server, name string, labels ...string) float64 {
	t.Helper()
	mfs, err := s.metrics.registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	next:
		for _, m := range mf.GetMetric() {
			for i := 0; i+1 < len(labels); i += 2 {
				found := false
				for _, lp := range m.GetLabel() {
					if lp.GetName() == labels[i] && lp.GetValue() == labels[i+1] {
						found = true
					}
				}
				if !found {
					continue next
				}
			}
			if c := m.GetCounter(); c != nil {
				return c.GetValue()
			}
			return m.GetGauge().GetValue()
		}
	}
	return 0
}

func runtimeGosched() { time.Sleep(time.Millisecond) }

// upload sends a file to PUT /v1/symbols with the upload token "up".
func upload(t *testing.T, url string, data []byte) (*http.Response, []byte) {
	t.Helper()
	return do(t, "PUT", url+"/v1/symbols", bytes.NewReader(data), map[string]string{"Authorization": "Bearer up"})
}
