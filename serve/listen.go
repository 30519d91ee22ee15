package serve

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"
)

// shutdownGrace is how long requests in flight may finish once shutdown
// starts.
const shutdownGrace = 30 * time.Second

// Serve answers HTTP on ln until ctx is done, then stops accepting,
// lets requests in flight finish (up to the request timeout, at most
// shutdownGrace) and returns nil. The http.Server bounds what a slow or
// idle client may hold.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{
		Handler:           s,
		ReadHeaderTimeout: 10 * time.Second,
		// Bodies (uploads of large dSYMs) may take a while; a request's
		// work is bounded by its own deadline.
		ReadTimeout:    s.cfg.Limits.RequestTimeout + 5*time.Minute,
		WriteTimeout:   s.cfg.Limits.RequestTimeout + time.Minute,
		IdleTimeout:    2 * time.Minute,
		MaxHeaderBytes: 64 << 10,
		BaseContext:    func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			if hc, ok := c.(*heldConn); ok {
				return context.WithValue(ctx, heldConnKey{}, hc)
			}
			return ctx
		},
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(heldListener{ln}) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	grace := min(s.cfg.Limits.RequestTimeout, shutdownGrace)
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	err := hs.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		// Requests still running past the grace are cut.
		hs.Close()
		err = nil
	}
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = serr
	}
	return err
}

// heldConn is a TCP connection of the service that can hold what is
// written to it, so that an answer goes out in one write. net/http
// writes an answer's header into a 4 KB buffer and, when the body does
// not fit beside it, sends the buffer filled up with the body's start,
// then the rest: two writes, and over loopback the client is woken for
// the first and again for the second, on the cores the service needs.
// While an answer written whole with its Content-Length (writeCompleted)
// is written, the connection keeps small writes (net/http's buffer) and
// sends them with the next large one (the rest of the body, written past
// the buffer) in one writev, or at release: on 1,000 answers of 44 KB
// one after another, the writes took about two thirds of the time
// (docs/serve.md).
//
// Only the request's own goroutine writes to the connection, so holding
// needs no lock.
type heldConn struct {
	*net.TCPConn
	holding bool
	// held is what is kept, in a buffer made at the first hold and kept
	// for the connection (as net/http keeps its own).
	held []byte
}

// maxHeld is the most a heldConn keeps: net/http's buffer. A larger
// write is sent at once, with what was kept before it.
const maxHeld = 4 << 10

// heldConnKey is the context key of a request's heldConn.
type heldConnKey struct{}

// heldListener makes the TCP connections it accepts heldConns; others
// (TLS, a test's pipe) are left as they are.
type heldListener struct{ net.Listener }

func (l heldListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		return &heldConn{TCPConn: tc}, nil
	}
	return c, err
}

func (c *heldConn) Write(p []byte) (int, error) {
	switch {
	case !c.holding:
		return c.TCPConn.Write(p)
	case len(c.held)+len(p) <= maxHeld:
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

// hold keeps small writes until a large one or release.
func (c *heldConn) hold() {
	c.holding = true
	if c.held == nil {
		c.held = make([]byte, 0, maxHeld)
	}
}

// release sends what is still kept and writes through again.
func (c *heldConn) release() error {
	c.holding = false
	if len(c.held) == 0 {
		return nil
	}
	_, err := c.TCPConn.Write(c.held)
	c.held = c.held[:0]
	return err
}

// holdWrites holds the writes of r's connection until the returned
// function is called, when r came over a heldConn.
func holdWrites(r *http.Request) (release func() error) {
	c, _ := r.Context().Value(heldConnKey{}).(*heldConn)
	if c == nil {
		return func() error { return nil }
	}
	c.hold()
	return c.release
}
