package objstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/stackimage/stackimage/internal/ctxio"
	"github.com/stackimage/stackimage/lookup"
)

// ErrExists is Put's answer when the key was already written and
// onlyIfAbsent was asked: the first write wins.
var ErrExists = errors.New("already exists")

// Store is where objects lie, by relative key: a directory, an HTTP
// server or an S3 bucket. Its methods are safe for concurrent use.
type Store interface {
	// Get opens the object at key with its size (-1 when the store does
	// not say); lookup.ErrNotFound when absent. The body's tag (Stat's)
	// is TagOf(body).
	Get(ctx context.Context, key string) (io.ReadCloser, int64, error)
	// Put writes the object at key; with onlyIfAbsent it returns
	// ErrExists, writing nothing, when the key already exists. Stores
	// that cannot be written return an error.
	Put(ctx context.Context, key string, r io.Reader, size int64, onlyIfAbsent bool) error
	// Stat returns the size of the object at key and a tag that changes
	// when it does (an ETag, or a file's modification time), without
	// reading it; lookup.ErrNotFound when absent.
	Stat(ctx context.Context, key string) (size int64, tag string, err error)
	// List returns the keys under prefix (a key prefix ending in "/"),
	// sorted; stores that cannot list return an error.
	List(ctx context.Context, prefix string) ([]string, error)
	// Remove deletes the object at key; a key already absent is no
	// error. Stores that cannot be written return an error.
	Remove(ctx context.Context, key string) error
	// Describe says where key lies (a path, a URL), for messages.
	Describe(key string) string
}

// ValidKey accepts clean relative slash paths without "..", empty or dot
// segments, NUL or backslash: the only keys a Store reads or writes.
func ValidKey(key string) bool {
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

func badKey(key string) error { return fmt.Errorf("bad key %q", key) }

// taggedBody is a Get's answer with the object's tag.
type taggedBody struct {
	io.ReadCloser
	tag string
}

// TagOf returns the tag of an object a Get opened (its ETag, or its
// file's modification time), "" when the store gave none.
func TagOf(body io.ReadCloser) string {
	if t, ok := body.(taggedBody); ok {
		return t.tag
	}
	return ""
}

// httpTag is an HTTP answer's tag: its ETag, else its Last-Modified.
func httpTag(h http.Header) string {
	if tag := h.Get("ETag"); tag != "" {
		return tag
	}
	return h.Get("Last-Modified")
}

// CopyAtMost copies at most max bytes from r to w, failing when r holds
// more, and gives up once ctx is done. The error of a copy cut at max
// says "larger than the download limit".
func CopyAtMost(ctx context.Context, w io.Writer, r io.Reader, max int64) (int64, error) {
	n, err := io.Copy(w, ctxio.Reader(ctx, io.LimitReader(r, max+1)))
	if err != nil {
		return n, err
	}
	if n > max {
		return n, fmt.Errorf("larger than the download limit of %d bytes", max)
	}
	return n, nil
}

// errNotFound is a store's answer for a key it does not hold.
var errNotFound = lookup.ErrNotFound
