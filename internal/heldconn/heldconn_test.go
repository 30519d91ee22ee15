package heldconn

import (
	"errors"
	"io"
	"net"
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

// TestHeldConnSendsInOneWrite: while a Conn holds, small writes
// reach the peer only with the next large write or at release, all of
// them, in order; before hold and after release writes go straight
// through.
func TestHeldConnSendsInOneWrite(t *testing.T) {
	server, client := tcpPair(t)
	c := &Conn{TCPConn: server}
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
	c.Hold()
	head := strings.Repeat("h", MaxHeld-10) // net/http's buffer, nearly full
	write(head)
	nothingSent("a small write held")
	body := strings.Repeat("b", 40<<10)
	write(body)
	if got := read(len(head) + len(body)); got != head+body {
		t.Fatalf("after a large write: read %d bytes, not the held ones and it", len(got))
	}
	write(",tail")
	nothingSent("a small write after the large one")
	if err := c.Release(); err != nil {
		t.Fatal(err)
	}
	if got := read(5); got != ",tail" {
		t.Fatalf("after release: read %q", got)
	}
	write("after")
	if got := read(5); got != "after" {
		t.Fatalf("after release: read %q", got)
	}
	c.Hold()
	write(body) // nothing held before it
	if got := read(len(body)); got != body {
		t.Fatalf("a large write with nothing held: read %d bytes", len(got))
	}
	if err := c.Release(); err != nil {
		t.Errorf("release with nothing held: %v", err)
	}
}
