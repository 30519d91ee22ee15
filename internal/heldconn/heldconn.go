package heldconn

import (
	"context"
	"net"
)

// Conn is a TCP connection that can hold what is written to it, so that
// an answer goes out in one write. net/http
// writes an answer's header into a 4 KB buffer and, when the body does
// not fit beside it, sends the buffer filled up with the body's start,
// then the rest: two writes, and over loopback the client is woken for
// the first and again for the second, on the cores the service needs.
// While an answer written whole with its Content-Length is written (Hold),
// the connection keeps small writes (net/http's buffer) and
// sends them with the next large one (the rest of the body, written past
// the buffer) in one writev, or at Release: on 1,000 answers of 44 KB
// one after another, the writes took about two thirds of the time
// (docs/serve.md).
//
// Only the request's own goroutine writes to the connection, so holding
// needs no lock.
type Conn struct {
	*net.TCPConn
	holding bool
	// held is what is kept, in a buffer made at the first hold and kept
	// for the connection (as net/http keeps its own).
	held []byte
}

// MaxHeld is the most a Conn keeps: net/http's buffer. A larger
// write is sent at once, with what was kept before it.
const MaxHeld = 4 << 10

// contextKey is the context key of a request's Conn.
type contextKey struct{}

// ConnContext is http.Server's ConnContext for a Listener: it puts a
// Conn in its requests' contexts, for Hold.
func ConnContext(ctx context.Context, c net.Conn) context.Context {
	if hc, ok := c.(*Conn); ok {
		return context.WithValue(ctx, contextKey{}, hc)
	}
	return ctx
}

// Listener makes the TCP connections it accepts Conns; others
// (TLS, a test's pipe) are left as they are.
type Listener struct{ net.Listener }

func (l Listener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		return &Conn{TCPConn: tc}, nil
	}
	return c, err
}

func (c *Conn) Write(p []byte) (int, error) {
	switch {
	case !c.holding:
		return c.TCPConn.Write(p)
	case len(c.held)+len(p) <= MaxHeld:
		c.held = append(c.held, p...)
		return len(p), nil
	}
	if len(c.held) == 0 {
		return c.TCPConn.Write(p)
	}
	// What was kept and p in one writev, p not copied.
	held := len(c.held)
	bufs := net.Buffers{c.held, p}
	n, err := bufs.WriteTo(c.TCPConn)
	c.held = c.held[:0]
	return max(int(n)-held, 0), err
}

// Hold keeps small writes until a large one or release.
func (c *Conn) Hold() {
	c.holding = true
	if c.held == nil {
		c.held = make([]byte, 0, MaxHeld)
	}
}

// Release sends what is still kept and writes through again.
func (c *Conn) Release() error {
	c.holding = false
	if len(c.held) == 0 {
		return nil
	}
	_, err := c.TCPConn.Write(c.held)
	c.held = c.held[:0]
	return err
}

// Hold holds the writes of the connection of a request's context (see
// ConnContext) until the returned function is called, when the request
// came over a Conn.
func Hold(ctx context.Context) (release func() error) {
	c, _ := ctx.Value(contextKey{}).(*Conn)
	if c == nil {
		return func() error { return nil }
	}
	c.Hold()
	return c.Release
}
