package serve

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/stackimage/stackimage/internal/heldconn"
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
		// An answer written whole is held and sent in one write
		// (writeCompleted, heldconn).
		ConnContext: heldconn.ConnContext,
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(heldconn.Listener{Listener: ln}) }()
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
