package serve

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/stackimage/stackimage/aggregate/chunkstore"
	"github.com/stackimage/stackimage/symbolicator"
	"github.com/stackimage/stackimage/symstore/indexcache"
	"github.com/stackimage/stackimage/symstore/remote"
)

// Server is the symbolication service: an http.Handler answering
// symbolicator's endpoints and our own (see doc.go). Build it with New and
// Close it when done.
type Server struct {
	cfg     Config
	sources []*source
	byName  map[string]*source
	store   *source
	cache   *indexcache.Cache
	// tmpDir holds downloads, request bodies and held answers.
	tmpDir   string
	metrics  *metrics
	mux      *http.ServeMux
	slots    chan struct{}
	pending  *pendingRequests
	cacheDir string
	ownsDir  bool
	closed   sync.Once
	// chunks are the aggregates, kept in the store; nil without one.
	chunks *chunkstore.Chunks
}

// New builds a Server from a checked configuration: it opens the sources
// (a scanned directory is indexed now, within ctx: once ctx ends New stops
// and returns its error) and the local cache.
func New(ctx context.Context, cfg Config) (*Server, error) {
	cfg.setDefaults()
	if err := cfg.check(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, metrics: newMetrics(), byName: map[string]*source{},
		slots: make(chan struct{}, cfg.Limits.MaxConcurrent)}
	s.cacheDir = cfg.Cache.Dir
	if s.cacheDir == "" {
		d, err := os.MkdirTemp("", "stackimage-serve-")
		if err != nil {
			return nil, err
		}
		s.cacheDir, s.ownsDir = d, true
	}
	tmp := filepath.Join(s.cacheDir, "tmp")
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return nil, err
	}
	s.tmpDir = tmp
	for _, sc := range cfg.Sources {
		src, err := newSource(ctx, sc, tmp, s.metrics, cfg.Limits.MaxFetches)
		if err != nil {
			s.Close()
			return nil, err
		}
		s.sources = append(s.sources, src)
		s.byName[sc.Name] = src
	}
	for i, src := range cfg.InProcessSources {
		if src == nil {
			continue
		}
		name := fmt.Sprintf("in-process-%d", i+1)
		s.sources = append(s.sources, &source{cfg: SourceConfig{Name: name},
			origin: &indexcache.Origin{Name: name, Local: src, Location: "in process"}})
	}
	var shared *remote.Source
	if cfg.Store != "" {
		s.store = s.byName[cfg.Store]
		s.chunks = s.newChunks()
		if *cfg.Cache.Shared {
			shared = s.store.remote
		}
	}
	cache, err := indexcache.New(indexcache.Config{
		Dir: s.cacheDir, MaxBytes: int64(cfg.Cache.MaxBytes), MissTTL: cfg.Cache.MissTTL, FailedTTL: cfg.Cache.FailedTTL,
		MaxFetches: cfg.Limits.MaxFetches, Sources: origins(s.sources), Shared: shared,
		Metrics: s.metrics.cache, Log: s.logger(), RequestID: requestIDOf,
	})
	if err != nil {
		s.Close()
		return nil, err
	}
	s.cache = cache
	s.pending = newPendingRequests(cfg.Limits.MaxPending)
	s.routes()
	return s, nil
}

// Close closes the open indexes and removes a cache directory the server
// made itself. Requests must have finished (http.Server.Shutdown).
func (s *Server) Close() error {
	s.closed.Do(func() {
		if s.chunks != nil {
			s.chunks.Close()
		}
		if s.cache != nil {
			s.cache.Close()
		}
		if s.ownsDir {
			os.RemoveAll(s.cacheDir)
		}
	})
	return nil
}

func (s *Server) routes() {
	s.mux = http.NewServeMux()
	handle := func(pattern, endpoint string, h http.HandlerFunc, opts ...routeOption) {
		s.mux.Handle(pattern, s.wrap(endpoint, h, opts...))
	}
	handle("GET /healthcheck", "healthcheck", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintln(w, "ok")
	}, public, unlimited)
	handle("GET /metrics", "metrics", promhttp.HandlerFor(s.metrics.registry, promhttp.HandlerOpts{}).ServeHTTP, unlimited)
	handle("POST /symbolicate", "symbolicate", s.handleSymbolicate)
	handle("POST /minidump", "minidump", s.handleMinidump)
	handle("POST /applecrashreport", "applecrashreport", s.handleAppleCrashReport)
	handle("GET /requests/{id}", "requests", s.handleRequest)
	handle("POST /v1/symbolicate", "v1_symbolicate", s.handleNative)
	handle("PUT /v1/symbols", "v1_symbols", s.handleUpload, uploadAuth)
	handle("GET /buildid/{id}/{kind}", "debuginfod", s.handleBuildID)
	handle("POST /v1/stacks", "v1_stacks", s.handleStacks)
	handle("GET /v1/groups", "v1_groups", s.handleGroups)
	handle("GET /v1/aggregate", "v1_aggregate", s.handleAggregate)
	handle("GET /ui/", "ui", s.handleUI, unlimited)
	handle("GET /ready", "ready", s.handleReady, public, unlimited)
	s.mux.Handle("/", s.wrap("other", func(w http.ResponseWriter, r *http.Request) {
		if allow := s.allowedMethods(r); len(allow) > 0 {
			w.Header().Set("Allow", strings.Join(allow, ", "))
			writeError(w, http.StatusMethodNotAllowed, "%s %s: this endpoint takes %s", r.Method, r.URL.Path, strings.Join(allow, " or "))
			return
		}
		writeError(w, http.StatusNotFound, "no such endpoint: %s %s", r.Method, r.URL.Path)
	}, public, unlimited))
}

// allowedMethods lists the methods the path has an endpoint for, when
// the request's is not one of them.
func (s *Server) allowedMethods(r *http.Request) []string {
	var allow []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut} {
		probe := r.Clone(r.Context())
		probe.Method = m
		if _, pattern := s.mux.Handler(probe); pattern != "/" && pattern != "" {
			allow = append(allow, m)
		}
	}
	return allow
}

// handleReady is GET /ready, for a load balancer's readiness check: 503
// while every slot of limits.max_concurrent is taken, so that requests
// go to another instance rather than get 503 here.
func (s *Server) handleReady(w http.ResponseWriter, r *http.Request) {
	if busy := len(s.slots); busy >= cap(s.slots) {
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusServiceUnavailable, "saturated: %d of %d requests in flight", busy, cap(s.slots))
		return
	}
	w.Header().Set("Content-Type", "text/plain")
	fmt.Fprintln(w, "ready")
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

type routeOption int

const (
	public     routeOption = iota // no token needed
	unlimited                     // not counted against max_concurrent
	uploadAuth                    // the upload token, not the service token
)

// statusWriter remembers the status code for the request metrics, and
// the message of an error answer for the log.
type statusWriter struct {
	http.ResponseWriter
	code    int
	message string
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// wrap adds what every endpoint shares: a request ID, metrics, logs,
// authentication, the body read ahead, the cap on concurrent requests
// and the request deadline.
func (s *Server) wrap(endpoint string, h http.HandlerFunc, opts ...routeOption) http.Handler {
	has := func(o routeOption) bool {
		for _, x := range opts {
			if x == o {
				return true
			}
		}
		return false
	}
	isPublic, isUnlimited, isUpload := has(public), has(unlimited), has(uploadAuth)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := requestID(r)
		w.Header().Set("X-Request-ID", id)
		r = r.WithContext(withRequestID(r.Context(), id))
		sw := &statusWriter{ResponseWriter: w}
		defer func() {
			code := sw.code
			if code == 0 {
				code = http.StatusOK
			}
			s.metrics.requests.WithLabelValues(endpoint, strconv.Itoa(code)).Inc()
			s.metrics.latency.WithLabelValues(endpoint).Observe(time.Since(start).Seconds())
			s.logAnswer(r, endpoint, code, sw.message, time.Since(start))
		}()
		switch {
		case isUpload:
			if s.cfg.Auth.UploadToken == "" {
				writeError(sw, http.StatusForbidden, "uploads are disabled: auth.upload_token is not set")
				return
			}
			if !tokenMatches(r, s.cfg.Auth.UploadToken) {
				sw.Header().Set("WWW-Authenticate", `Bearer realm="stackimage upload"`)
				writeError(sw, http.StatusUnauthorized, "PUT /v1/symbols needs the upload token")
				return
			}
		case !isPublic && s.cfg.Auth.Token != "":
			if !tokenMatches(r, s.cfg.Auth.Token) {
				sw.Header().Set("WWW-Authenticate", `Bearer realm="stackimage"`)
				writeError(sw, http.StatusUnauthorized, "missing or wrong bearer token")
				return
			}
		}
		if !isUnlimited {
			// The body first, without a slot: a slow client must not
			// hold one (body.go).
			if r.ContentLength != 0 || r.Body != http.NoBody {
				if !s.readBodyFirst(sw, r, endpoint) {
					return
				}
				defer r.Body.Close()
			}
			select {
			case s.slots <- struct{}{}:
				defer func() { <-s.slots }()
			default:
				s.metrics.rejected.Inc()
				sw.Header().Set("Retry-After", "1")
				writeError(sw, http.StatusServiceUnavailable, "busy: %d requests in flight", cap(s.slots))
				return
			}
			s.metrics.inFlight.Inc()
			defer s.metrics.inFlight.Dec()
		}
		h(sw, r)
	})
}

// bodyLimit is the most an endpoint's body may hold: its limit, and room
// for a multipart body's framing and "sources" field.
func (s *Server) bodyLimit(endpoint string) int64 {
	l := s.cfg.Limits
	switch endpoint {
	case "symbolicate":
		return int64(l.MaxSymbolicateBody)
	case "minidump":
		return int64(l.MaxDumpBody) + 2<<20
	case "applecrashreport":
		return int64(l.MaxReportBody) + 2<<20
	case "v1_symbolicate", "v1_stacks":
		return int64(l.MaxDumpBody)
	case "v1_symbols":
		return int64(l.MaxUploadBody)
	}
	return 64 << 10 // endpoints that take no body
}

// readBodyFirst reads r's body (body.go) and makes it r.Body. A declared
// length over the endpoint's limit is refused before anything is read,
// so that a client asking "Expect: 100-continue" is not told to send.
// It answers and reports false when the body is refused.
func (s *Server) readBodyFirst(w *statusWriter, r *http.Request, endpoint string) bool {
	max := s.bodyLimit(endpoint)
	if r.ContentLength > max {
		writeError(w, http.StatusRequestEntityTooLarge, "%s: a body of %d bytes, larger than the limit of %d bytes", endpoint, r.ContentLength, max)
		return false
	}
	body, err := readBody(w, r, max, s.cfg.Limits.BodyTimeout, int64(s.cfg.Limits.MinBodyRate), s.tmpDir)
	switch {
	case errors.Is(err, errBodyTimeout):
		w.Header().Set("Connection", "close")
		writeError(w, http.StatusRequestTimeout, "%s: %v", endpoint, err)
		return false
	case err != nil:
		bodyError(w, err, endpoint)
		return false
	}
	r.Body = body
	return true
}

func tokenMatches(r *http.Request, token string) bool {
	// The scheme is case-insensitive (RFC 9110, section 11.1).
	scheme, got, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	return ok && strings.EqualFold(scheme, "Bearer") && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(token)) == 1
}

// writeError answers with a JSON error, as symbolicator does.
func writeError(w http.ResponseWriter, code int, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	if sw, ok := w.(*statusWriter); ok {
		sw.message = msg
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]string{"status": "failed", "message": msg})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	writeJSONBody(w, v)
}

// bodyError answers a body that could not be read: too large (413) or
// cut short (400).
func bodyError(w http.ResponseWriter, err error, what string) {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		writeError(w, http.StatusRequestEntityTooLarge, "%s: larger than the limit of %d bytes", what, tooLarge.Limit)
		return
	}
	writeError(w, http.StatusBadRequest, "%s: %v", what, err)
}

// requestSources picks the configured sources a request names
// (symbolicator.SourceIDs): only names of configured sources (in
// allow_sources, when set) are accepted, never a URL or a path. nil means
// every configured source.
func (s *Server) requestSources(raw []json.RawMessage) ([]*source, error) {
	ids, err := symbolicator.SourceIDs(raw)
	if err != nil || ids == nil {
		return nil, err
	}
	out := make([]*source, len(ids))
	for i, id := range ids {
		out[i] = s.byName[id]
		if out[i] == nil || len(s.cfg.AllowSources) > 0 && !slices.Contains(s.cfg.AllowSources, id) {
			return nil, fmt.Errorf("sources[%d]: %q is not a configured source this service lets requests pick; a request cannot add sources of its own", i, id)
		}
	}
	return out, nil
}

// deadline returns the context a request's work runs under.
func (s *Server) deadline(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.cfg.Limits.RequestTimeout)
}

// writeAnswer answers r with a status code and v in JSON; a completed
// symbolication by its own writer.
func writeAnswer(w http.ResponseWriter, r *http.Request, code int, v any) {
	switch a := v.(type) {
	case *heldAnswer:
		a.writeTo(w, code)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	writeJSONBody(w, v)
}

// writeJSONBody writes v in JSON, once the header is written.
func writeJSONBody(w http.ResponseWriter, v any) {
	json.NewEncoder(w).Encode(v)
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// timeNow is time.Now, replaced by tests of expiry.
var timeNow = time.Now
