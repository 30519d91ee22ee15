package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"
)

// tcpPair is a connected pair of loopback TCP connections.
func tcpPair(t *testing.T) (server *net.TCPConn, client net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, _ := ln.Accept()
		accepted <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c := <-accepted
	if c == nil {
		t.Fatal("accept failed")
	}
	t.Cleanup(func() { c.Close(); client.Close() })
	return c.(*net.TCPConn), client
}

// TestHeldConnSendsInOneWrite: while a heldConn holds, small writes
// reach the peer only with the next large write or at release, all of
// them, in order; before hold and after release writes go straight
// through.
func TestHeldConnSendsInOneWrite(t *testing.T) {
	server, client := tcpPair(t)
	c := &heldConn{TCPConn: server}
	read := func(n int) string {
		t.Helper()
		client.SetReadDeadline(time.Now().Add(5 * time.Second))
		buf := make([]byte, n)
		if _, err := io.ReadFull(client, buf); err != nil {
			t.Fatalf("reading %d bytes: %v", n, err)
		}
		return string(buf)
	}
	nothingSent := func(when string) {
		t.Helper()
		client.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		if n, err := client.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatalf("%s: read %d bytes (%v), want nothing sent", when, n, err)
		}
	}
	write := func(p string) {
		t.Helper()
		if n, err := c.Write([]byte(p)); n != len(p) || err != nil {
			t.Fatalf("Write(%d bytes) = %d, %v", len(p), n, err)
		}
	}
	write("before")
	if got := read(6); got != "before" {
		t.Fatalf("before hold: read %q", got)
	}
	c.hold()
	head := strings.Repeat("h", maxHeld-10) // net/http's buffer, nearly full
	write(head)
	nothingSent("a small write held")
	body := strings.Repeat("b", 40<<10)
	write(body)
	if got := read(len(head) + len(body)); got != head+body {
		t.Fatalf("after a large write: read %d bytes, not the held ones and it", len(got))
	}
	write(",tail")
	nothingSent("a small write after the large one")
	if err := c.release(); err != nil {
		t.Fatal(err)
	}
	if got := read(5); got != ",tail" {
		t.Fatalf("after release: read %q", got)
	}
	write("after")
	if got := read(5); got != "after" {
		t.Fatalf("after release: read %q", got)
	}
	c.hold()
	write(body) // nothing held before it
	if got := read(len(body)); got != body {
		t.Fatalf("a large write with nothing held: read %d bytes", len(got))
	}
	if err := c.release(); err != nil {
		t.Errorf("release with nothing held: %v", err)
	}
}

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
