package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestServeAnswersAsServeHTTP: answers sent by Serve, held and written
// in one piece, are byte for byte the handler's own, one request after
// another on one keep-alive connection (so the held buffers are reused),
// for answers smaller and larger than net/http's buffer.
func TestServeAnswersAsServeHTTP(t *testing.T) {
	u := fixtureUUID(t)
	s, addr := serveFixtures(t)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	r := bufio.NewReader(conn)
	const base = 0x104000000
	for _, n := range []int{1, 3, 60, 200, 5} {
		req := symbolicateBody(strings.ToLower(u.String()), base, base+0x400, base+0x484)
		st := req["stacktraces"].([]any)[0].(map[string]any)
		var frames []any
		for k := range n {
			frames = append(frames, map[string]any{"instruction_addr": fmt.Sprintf("%#x", base+0x3c0+4*k)})
		}
		st["frames"] = frames
		body, _ := json.Marshal(req)
		w := httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest("POST", "/symbolicate", bytes.NewReader(body)))
		want := w.Body.String()

		hreq, _ := http.NewRequest("POST", "http://"+addr+"/symbolicate", bytes.NewReader(body))
		if err := hreq.Write(conn); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(r, hreq)
		if err != nil {
			t.Fatalf("%d frames: %v", n, err)
		}
		got, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%d frames: status %d, %v", n, resp.StatusCode, err)
		}
		if string(got) != want {
			t.Errorf("%d frames: over TCP\n%.300s\nServeHTTP\n%.300s", n, got, want)
		}
		if n >= 60 && len(got) < 4<<10 {
			t.Errorf("%d frames: a %d-byte answer, want one larger than net/http's 4 KB buffer", n, len(got))
		}
	}
}

// serveFixtures starts Serve over the fixture binaries on a loopback
// port, returning the server and its address; the test's cleanup stops
// it and checks that Serve returned nil.
func serveFixtures(t *testing.T) (*Server, string) {
	t.Helper()
	cfg := DefaultConfig("../fixtures/bin")
	cfg.Cache.Dir = t.TempDir()
	s, err := New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		s.Close()
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error)
	go func() { served <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("Serve = %v", err)
		}
		s.Close()
	})
	return s, ln.Addr().String()
}
