package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/internal/testtool"
	"github.com/stackimage/stackimage/uuid"
)

// BenchmarkSymbolicate30Frames5Images is the handler alone (no network)
// on the load test's requests: stacks of 30 frames over 5 fixture
// images, warm indexes. stacks/s = 1e9 / ns/op per core.
func BenchmarkSymbolicate30Frames5Images(b *testing.B) {
	names := []string{"chain-arm64-O1", "chain-x86_64-O1", "dwarf-arm64-O2", "chain-nofp-arm64-O1", "async-x86_64-O1"}
	rng := rand.New(rand.NewPCG(1, 2))
	type mod struct {
		id         uuid.UUID
		base, text uint64
		addrs      []uint64
	}
	var mods []mod
	for i, n := range names {
		f, err := image.Open(filepath.Join("..", "fixtures", "bin", n))
		if err != nil {
			b.Fatal(err)
		}
		im := f.Images[0]
		m := mod{id: im.UUID, base: uint64(0x200000000 + i*0x10000000)}
		t, _ := im.TextSegment()
		m.text = t.Addr
		for _, s := range im.Sections {
			if s.Name == "__text" {
				for range 64 {
					m.addrs = append(m.addrs, s.Addr+rng.Uint64N(s.Size))
				}
			}
		}
		f.Close()
		mods = append(mods, m)
	}
	var bodies [][]byte
	for k := range 64 {
		var frames []any
		for i := range 30 {
			m := mods[i%5]
			frames = append(frames, map[string]any{"instruction_addr": fmt.Sprintf("%#x", m.addrs[(k+i)%64]-m.text+m.base)})
		}
		var ms []any
		for _, m := range mods {
			ms = append(ms, map[string]any{"type": "macho", "debug_id": strings.ToLower(m.id.String()), "image_addr": fmt.Sprintf("%#x", m.base), "image_size": 1 << 28})
		}
		body, _ := json.Marshal(map[string]any{"stacktraces": []any{map[string]any{"frames": frames}}, "modules": ms})
		bodies = append(bodies, body)
	}
	cfg := DefaultConfig("../fixtures/bin")
	cfg.Cache.Dir = b.TempDir()
	s, err := New(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	serve := func(body []byte) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest("POST", "/symbolicate", bytes.NewReader(body)))
		return w
	}
	if w := serve(bodies[0]); w.Code != http.StatusOK || bytes.Count(w.Body.Bytes(), []byte(`"found"`)) != 5 {
		b.Fatalf("warm-up: %d %.300s", w.Code, w.Body.String())
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		serve(bodies[i%len(bodies)])
	}
}

// BenchmarkSymbolicate100FramesGo is the handler alone on the requests of
// make loadtest's comparison with llvm-symbolizer: 100 random __text
// addresses of the darwin cmd/go build with DWARF (make bench-bins), warm
// index. Set STACKIMAGE_GO_DWARF to the binary, else it is looked for
// where make bench-bins puts it.
func BenchmarkSymbolicate100FramesGo(b *testing.B) {
	bin := os.Getenv("STACKIMAGE_GO_DWARF")
	if bin == "" {
		home, _ := os.UserHomeDir()
		bin = filepath.Join(home, ".cache", "stackimage-bench", "go-darwin-arm64-dwarf")
	}
	if _, err := os.Stat(bin); err != nil {
		b.Skipf("no darwin cmd/go build (make bench-bins, or STACKIMAGE_GO_DWARF): %v", err)
	}
	f, err := image.Open(bin)
	if err != nil {
		b.Fatal(err)
	}
	im := f.Images[0]
	text, _ := im.TextSegment()
	var code image.Section
	for _, s := range im.Sections {
		if s.Segment == "__TEXT" && s.Name == "__text" {
			code = s
		}
	}
	f.Close()
	const base = 0x300000000
	rng := rand.New(rand.NewPCG(3, 4))
	var bodies [][]byte
	for range 100 {
		var frames []any
		for range 100 {
			frames = append(frames, map[string]any{"instruction_addr": fmt.Sprintf("%#x", code.Addr+rng.Uint64N(code.Size)-text.Addr+base)})
		}
		body, _ := json.Marshal(map[string]any{"stacktraces": []any{map[string]any{"frames": frames}},
			"modules": []any{map[string]any{"type": "macho", "debug_id": strings.ToLower(im.UUID.String()), "image_addr": fmt.Sprintf("%#x", base), "image_size": 1 << 28}}})
		bodies = append(bodies, body)
	}
	cfg := DefaultConfig(bin)
	cfg.Cache.Dir = b.TempDir()
	s, err := New(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if os.Getenv("STACKIMAGE_BENCH_LOOPBACK") != "" {
		// Over loopback, as make loadtest's client sends them, to the
		// service's own Serve: the HTTP server's and the kernel's part of
		// a request are in the profile.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		served := make(chan error)
		go func() { served <- s.Serve(ctx, ln) }()
		defer func() { cancel(); <-served }()
		url := "http://" + ln.Addr().String()
		client := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
		var answer bytes.Buffer
		post := func(body []byte) {
			resp, err := client.Post(url+"/symbolicate", "application/json", bytes.NewReader(body))
			if err != nil {
				b.Fatal(err)
			}
			answer.Reset()
			answer.ReadFrom(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				b.Fatalf("%d %.300s", resp.StatusCode, answer.Bytes())
			}
		}
		post(bodies[0])
		b.ResetTimer()
		cpu0 := testtool.CPUTime()
		for i := range b.N {
			post(bodies[i%len(bodies)])
		}
		reportCPU(b, cpu0)
		return
	}
	serve := func(body []byte) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest("POST", "/symbolicate", bytes.NewReader(body)))
		return w
	}
	if w := serve(bodies[0]); w.Code != http.StatusOK || !bytes.Contains(w.Body.Bytes(), []byte(`"found"`)) {
		b.Fatalf("warm-up: %d %.300s", w.Code, w.Body.String())
	}
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := testtool.CPUTime()
	for i := range b.N {
		serve(bodies[i%len(bodies)])
	}
	reportCPU(b, cpu0)
}

// reportCPU reports the process's CPU time per operation since cpu0: on
// a shared machine of two cores the wall time per request also counts
// other processes' turns, and a request's resolvers run on both cores.
func reportCPU(b *testing.B, cpu0 time.Duration) {
	if cpu := testtool.CPUTime() - cpu0; cpu > 0 {
		b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op")
	}
}
