package serve

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"time"
)

// The service logs, with log/slog, what an operator looks for: each
// failed fetch from a source, each answer of 5xx and each request
// refused (4xx), with the request's ID (X-Request-ID, the client's when
// it sent a usable one) so that a client's report finds its line.
// Successful answers are counted in the metrics, not logged.

type requestIDKey struct{}

// requestID is the client's X-Request-ID when it is short and plain,
// else a new random one.
func requestID(r *http.Request) string {
	if id := r.Header.Get("X-Request-ID"); plainID(id) {
		return id
	}
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// plainID accepts IDs of up to 64 letters, digits, '-', '_' and '.':
// nothing that could forge a log line.
func plainID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for _, c := range []byte(id) {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.'
		if !ok {
			return false
		}
	}
	return true
}

func withRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// requestIDOf is the ID of the request ctx belongs to, or "".
func requestIDOf(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// logger is the configured logger, or slog's default.
func (s *Server) logger() *slog.Logger {
	if s.cfg.Log != nil {
		return s.cfg.Log
	}
	return slog.Default()
}

// logAnswer logs an answer of 4xx (a refused request) or 5xx.
func (s *Server) logAnswer(r *http.Request, endpoint string, code int, message string, took time.Duration) {
	if code < 400 {
		return
	}
	level, msg := slog.LevelWarn, "request refused"
	if code >= 500 {
		level, msg = slog.LevelError, "request failed"
	}
	s.logger().LogAttrs(r.Context(), level, msg,
		slog.String("request_id", requestIDOf(r.Context())), slog.String("endpoint", endpoint),
		slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Int("status", code),
		slog.String("message", message), slog.String("remote", r.RemoteAddr), slog.Duration("took", took))
}
