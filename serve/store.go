package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	notfound "github.com/stackimage/stackimage/lookup"
)

// errNotFound is an object store's answer for a key it does not hold:
// lookup.ErrNotFound, the one "not found" of the module.
var errNotFound = notfound.ErrNotFound

// errExists is put's answer when the key was already written and
// onlyIfAbsent was asked: the first write wins.
var errExists = errors.New("already exists")

// objectStore is where a source's files lie, by relative key: a
// directory, an HTTP server or an S3 bucket. Keys come from layoutPaths
// alone, never from a request.
type objectStore interface {
	// get opens the object at key with its size; errNotFound when absent.
	get(ctx context.Context, key string) (io.ReadCloser, int64, error)
	// put writes the object at key; with onlyIfAbsent it returns
	// errExists, writing nothing, when the key already exists. Stores
	// that cannot be written return an error.
	put(ctx context.Context, key string, r io.Reader, size int64, onlyIfAbsent bool) error
	// describe says where key lies, for module candidates.
	describe(key string) string
	// list returns the keys under prefix (a key prefix ending in "/"),
	// sorted; stores that cannot list return an error.
	list(ctx context.Context, prefix string) ([]string, error)
	// remove deletes the object at key; a key already absent is no
	// error. Stores that cannot be written return an error.
	remove(ctx context.Context, key string) error
	// stat returns the size of the object at key and a tag that changes
	// when it does (an ETag, or a file's modification time), without
	// reading it; errNotFound when absent.
	stat(ctx context.Context, key string) (size int64, tag string, err error)
}

// dirStore is a directory read and written by relative key.
type dirStore struct{ root string }

func (d dirStore) path(key string) (string, error) {
	if !validKey(key) {
		return "", fmt.Errorf("bad key %q", key)
	}
	return filepath.Join(d.root, filepath.FromSlash(key)), nil
}

func (d dirStore) get(_ context.Context, key string) (io.ReadCloser, int64, error) {
	p, err := d.path(key)
	if err != nil {
		return nil, 0, err
	}
	f, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, 0, errNotFound
	}
	if err != nil {
		return nil, 0, err
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, 0, errNotFound
	}
	return f, st.Size(), nil
}

func (d dirStore) put(_ context.Context, key string, r io.Reader, _ int64, onlyIfAbsent bool) error {
	p, err := d.path(key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".upload-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, r); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if onlyIfAbsent {
		// A hard link fails when the name exists: the first writer wins
		// without a window in which a reader sees half a file.
		if err := os.Link(tmp.Name(), p); err != nil {
			if errors.Is(err, os.ErrExist) {
				return errExists
			}
			return err
		}
		return nil
	}
	return os.Rename(tmp.Name(), p)
}

func (d dirStore) stat(_ context.Context, key string) (int64, string, error) {
	p, err := d.path(key)
	if err != nil {
		return 0, "", err
	}
	st, err := os.Stat(p)
	if errors.Is(err, os.ErrNotExist) || err == nil && !st.Mode().IsRegular() {
		return 0, "", errNotFound
	}
	if err != nil {
		return 0, "", err
	}
	return st.Size(), fileTag(st), nil
}

// fileTag is a file's tag: its modification time.
func fileTag(st os.FileInfo) string { return strconv.FormatInt(st.ModTime().UnixNano(), 36) }

// httpTag is an HTTP answer's tag: its ETag, else its Last-Modified.
func httpTag(h http.Header) string {
	if tag := h.Get("ETag"); tag != "" {
		return tag
	}
	return h.Get("Last-Modified")
}

// taggedBody is an object store's answer with the object's tag, as get
// returns it for a download.
type taggedBody struct {
	io.ReadCloser
	tag string
}

func (d dirStore) describe(key string) string { return filepath.Join(d.root, filepath.FromSlash(key)) }

func (d dirStore) list(_ context.Context, prefix string) ([]string, error) {
	dir, err := d.path(strings.TrimSuffix(prefix, "/"))
	if err != nil {
		return nil, err
	}
	var keys []string
	err = filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil
			}
			return err
		}
		if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), ".") {
			return nil // directories, and put's temporary files
		}
		rel, err := filepath.Rel(d.root, p)
		if err != nil {
			return err
		}
		keys = append(keys, filepath.ToSlash(rel))
		return nil
	})
	sort.Strings(keys)
	return keys, err
}

func (d dirStore) remove(_ context.Context, key string) error {
	p, err := d.path(key)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}

// validKey accepts the keys layoutPaths and the index cache build: clean
// relative slash paths without "..", empty or dot segments.
func validKey(key string) bool {
	if key == "" || strings.HasPrefix(key, "/") || strings.ContainsAny(key, "\\\x00") {
		return false
	}
	for _, seg := range strings.Split(key, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	return true
}

// httpStore is a symbol server read over HTTP GET.
type httpStore struct {
	base    *url.URL
	headers map[string]string
	client  *http.Client
}

// boundedTransport is http.DefaultTransport's settings with at most
// maxConns connections per host, idle ones included.
func boundedTransport(maxConns int) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxConnsPerHost, t.MaxIdleConnsPerHost = maxConns, maxConns
	return t
}

func newHTTPStore(s SourceConfig, maxConns int) (*httpStore, error) {
	u, err := url.Parse(strings.TrimSuffix(s.URL, "/") + "/")
	if err != nil {
		return nil, fmt.Errorf("source %s: url: %w", s.Name, err)
	}
	return &httpStore{base: u, headers: s.Headers, client: &http.Client{
		Transport: boundedTransport(maxConns),
		// Redirects stay on the configured server's scheme; a symbol
		// server redirecting to a CDN is common, so they are followed.
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 5 {
				return errors.New("too many redirects")
			}
			return nil
		},
	}}, nil
}

func (h *httpStore) url(key string) string {
	// Each segment is escaped: a key never changes the URL's host or
	// climbs out of the base path.
	segs := strings.Split(key, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return h.base.ResolveReference(&url.URL{Path: strings.Join(segs, "/")}).String()
}

func (h *httpStore) get(ctx context.Context, key string) (io.ReadCloser, int64, error) {
	if !validKey(key) {
		return nil, 0, fmt.Errorf("bad key %q", key)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, h.url(key), nil)
	if err != nil {
		return nil, 0, err
	}
	for k, v := range h.headers {
		req.Header.Set(k, v)
	}
	resp, err := h.client.Do(req)
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
// and another opened (the source sees no more connections than
// limits.max_fetches).
func discard(body io.ReadCloser) {
	io.Copy(io.Discard, io.LimitReader(body, 64<<10))
	body.Close()
}

func (h *httpStore) stat(ctx context.Context, key string) (int64, string, error) {
	if !validKey(key) {
		return 0, "", fmt.Errorf("bad key %q", key)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, h.url(key), nil)
	if err != nil {
		return 0, "", err
	}
	for k, v := range h.headers {
		req.Header.Set(k, v)
	}
	resp, err := h.client.Do(req)
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

func (h *httpStore) put(context.Context, string, io.Reader, int64, bool) error {
	return errors.New("an http source cannot be written")
}

func (h *httpStore) remove(context.Context, string) error {
	return errors.New("an HTTP source cannot be written")
}

func (h *httpStore) describe(key string) string { return h.url(key) }

func (h *httpStore) list(context.Context, string) ([]string, error) {
	return nil, errors.New("an HTTP symbol server cannot be listed")
}

// s3Store is an S3-compatible bucket, addressed path-style so that any
// endpoint (versitygw, MinIO, Ceph, AWS) answers.
type s3Store struct {
	client *minio.Client
	bucket string
	prefix string
	desc   string
}

func newS3Store(s SourceConfig, maxConns int) (*s3Store, error) {
	var creds *credentials.Credentials
	if s.AccessKey != "" {
		creds = credentials.NewStaticV4(s.AccessKey, s.SecretKey, "")
	} else {
		creds = credentials.NewChainCredentials([]credentials.Provider{
			&credentials.EnvAWS{}, &credentials.EnvMinio{}})
	}
	endpoint := strings.TrimPrefix(strings.TrimPrefix(s.Endpoint, "http://"), "https://")
	secure := s.Secure || strings.HasPrefix(s.Endpoint, "https://")
	c, err := minio.New(endpoint, &minio.Options{
		Creds:        creds,
		Secure:       secure,
		Region:       s.Region,
		BucketLookup: minio.BucketLookupPath,
		Transport:    boundedTransport(maxConns),
	})
	if err != nil {
		return nil, fmt.Errorf("source %s: %w", s.Name, err)
	}
	prefix := strings.Trim(s.Prefix, "/")
	if prefix != "" {
		prefix += "/"
	}
	return &s3Store{client: c, bucket: s.Bucket, prefix: prefix, desc: "s3://" + s.Bucket + "/" + prefix}, nil
}

func (s *s3Store) get(ctx context.Context, key string) (io.ReadCloser, int64, error) {
	if !validKey(key) {
		return nil, 0, fmt.Errorf("bad key %q", key)
	}
	obj, err := s.client.GetObject(ctx, s.bucket, s.prefix+key, minio.GetObjectOptions{})
	if err != nil {
		return nil, 0, s3Err(err)
	}
	st, err := obj.Stat()
	if err != nil {
		obj.Close()
		return nil, 0, s3Err(err)
	}
	return taggedBody{obj, st.ETag}, st.Size, nil
}

func (s *s3Store) put(ctx context.Context, key string, r io.Reader, size int64, onlyIfAbsent bool) error {
	if !validKey(key) {
		return fmt.Errorf("bad key %q", key)
	}
	opts := minio.PutObjectOptions{ContentType: "application/octet-stream"}
	if onlyIfAbsent {
		opts.SetMatchETagExcept("*")
	}
	_, err := s.client.PutObject(ctx, s.bucket, s.prefix+key, r, size, opts)
	if err != nil {
		resp := minio.ToErrorResponse(err)
		if resp.StatusCode == http.StatusPreconditionFailed || resp.Code == "PreconditionFailed" {
			return errExists
		}
		return err
	}
	return nil
}

func (s *s3Store) stat(ctx context.Context, key string) (int64, string, error) {
	if !validKey(key) {
		return 0, "", fmt.Errorf("bad key %q", key)
	}
	info, err := s.client.StatObject(ctx, s.bucket, s.prefix+key, minio.StatObjectOptions{})
	if err != nil {
		return 0, "", s3Err(err)
	}
	return info.Size, info.ETag, nil
}

func (s *s3Store) describe(key string) string { return s.desc + key }

func (s *s3Store) list(ctx context.Context, prefix string) ([]string, error) {
	var keys []string
	for obj := range s.client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{Prefix: s.prefix + prefix, Recursive: true}) {
		if obj.Err != nil {
			return nil, s3Err(obj.Err)
		}
		keys = append(keys, strings.TrimPrefix(obj.Key, s.prefix))
	}
	sort.Strings(keys)
	return keys, nil
}

func (s *s3Store) remove(ctx context.Context, key string) error {
	if !validKey(key) {
		return fmt.Errorf("bad key %q", key)
	}
	err := s.client.RemoveObject(ctx, s.bucket, s.prefix+key, minio.RemoveObjectOptions{})
	if err != nil && s3Err(err) != errNotFound {
		return err
	}
	return nil
}

func s3Err(err error) error {
	resp := minio.ToErrorResponse(err)
	if resp.Code == "NoSuchKey" || resp.StatusCode == http.StatusNotFound {
		return errNotFound
	}
	return err
}

// limitedCopy copies at most max bytes from r to w, failing when r holds
// more, and gives up at the deadline of ctx.
func limitedCopy(ctx context.Context, w io.Writer, r io.Reader, max int64) (int64, error) {
	n, err := io.Copy(w, &ctxReader{ctx: ctx, r: io.LimitReader(r, max+1)})
	if err != nil {
		return n, err
	}
	if n > max {
		return n, fmt.Errorf("larger than the download limit of %d bytes", max)
	}
	return n, nil
}

// ctxReader stops reading once its context is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// timeNow is time.Now, replaced by tests of expiry.
var timeNow = time.Now
