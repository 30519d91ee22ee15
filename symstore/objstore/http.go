package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// HTTPConfig says where an HTTP store is.
type HTTPConfig struct {
	// URL is the base URL keys are resolved against.
	URL string
	// Headers are sent with every request.
	Headers map[string]string
	// MaxConns bounds the connections to the server (0: no bound).
	MaxConns int
}

// HTTP is a server read over HTTP GET and HEAD: a symbol server. It
// cannot be written or listed.
type HTTP struct {
	base    *url.URL
	headers map[string]string
	client  *http.Client
}

// boundedTransport is http.DefaultTransport's settings with at most
// maxConns connections per host, idle ones included.
func boundedTransport(maxConns int) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	if maxConns > 0 {
		t.MaxConnsPerHost, t.MaxIdleConnsPerHost = maxConns, maxConns
	}
	return t
}

// NewHTTP makes an HTTP store.
func NewHTTP(cfg HTTPConfig) (*HTTP, error) {
	u, err := url.Parse(strings.TrimSuffix(cfg.URL, "/") + "/")
	if err != nil {
		return nil, fmt.Errorf("url: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("url %q: want http:// or https://", cfg.URL)
	}
	return &HTTP{base: u, headers: cfg.Headers, client: &http.Client{
		Transport: boundedTransport(cfg.MaxConns),
		// A symbol server redirecting to a CDN is common, so redirects
		// are followed, a few.
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 5 {
				return errors.New("too many redirects")
			}
			return nil
		},
	}}, nil
}

func (h *HTTP) url(key string) string {
	// Each segment is escaped: a key never changes the URL's host or
	// climbs out of the base path.
	segs := strings.Split(key, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return h.base.ResolveReference(&url.URL{Path: strings.Join(segs, "/")}).String()
}

func (h *HTTP) request(ctx context.Context, method, key string) (*http.Response, error) {
	if !ValidKey(key) {
		return nil, badKey(key)
	}
	req, err := http.NewRequestWithContext(ctx, method, h.url(key), nil)
	if err != nil {
		return nil, err
	}
	for k, v := range h.headers {
		req.Header.Set(k, v)
	}
	return h.client.Do(req)
}

// Get downloads the object at key; 404 and 410 are lookup.ErrNotFound.
func (h *HTTP) Get(ctx context.Context, key string) (io.ReadCloser, int64, error) {
	resp, err := h.request(ctx, http.MethodGet, key)
	if err != nil {
		return nil, 0, err
	}
	switch {
	case resp.StatusCode == http.StatusOK:
		return taggedBody{resp.Body, httpTag(resp.Header)}, resp.ContentLength, nil
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
		discard(resp.Body)
		return nil, 0, errNotFound
	default:
		discard(resp.Body)
		return nil, 0, fmt.Errorf("GET %s: %s", h.url(key), resp.Status)
	}
}

// discard reads the short body of an answer that is not a file and
// closes it, so that its connection is used again rather than closed
// and another opened (the server sees no more than MaxConns).
func discard(body io.ReadCloser) {
	io.Copy(io.Discard, io.LimitReader(body, 64<<10))
	body.Close()
}

// Stat asks for the object's size and tag with HEAD; the size is -1 when
// the server does not say.
func (h *HTTP) Stat(ctx context.Context, key string) (int64, string, error) {
	resp, err := h.request(ctx, http.MethodHead, key)
	if err != nil {
		return 0, "", err
	}
	resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusOK:
		return resp.ContentLength, httpTag(resp.Header), nil
	case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
		return 0, "", errNotFound
	default:
		return 0, "", fmt.Errorf("HEAD %s: %s", h.url(key), resp.Status)
	}
}

// Put fails: an HTTP store is read only.
func (h *HTTP) Put(context.Context, string, io.Reader, int64, bool) error {
	return errors.New("an HTTP store cannot be written")
}

// Remove fails: an HTTP store is read only.
func (h *HTTP) Remove(context.Context, string) error {
	return errors.New("an HTTP store cannot be written")
}

// Describe is the object's URL.
func (h *HTTP) Describe(key string) string { return h.url(key) }

// List fails: an HTTP symbol server cannot be listed.
func (h *HTTP) List(context.Context, string) ([]string, error) {
	return nil, errors.New("an HTTP symbol server cannot be listed")
}
