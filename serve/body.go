package serve

import (
	"errors"
	"io"
	"net/http"
	"os"
	"time"

	"github.com/stackimage/stackimage/internal/spill"
)

// A request's body is read whole before the request takes one of the
// limits.max_concurrent slots: a client sending its body slowly then
// holds a connection and a goroutine, not a slot that ordinary requests
// need. The read has its own deadline (readBody), far shorter than the
// server's read timeout, which large uploads need.

// memoryBodyBytes is the most of a body kept in memory; a larger one
// goes to a temporary file of the cache, as a large minidump must.
const memoryBodyBytes = 1 << 20

// readBodyResult is a body read ahead of its handler: in memory, or in
// a file when larger than memoryBodyBytes. It is the request's Body for
// the handler; Close removes the file.
type readBodyResult struct {
	io.Reader
	buf *spill.Buffer
}

func (b *readBodyResult) Close() error { return b.buf.Close() }

// bodyDeadline is the deadline for reading a body: limits.body_timeout
// from its start, pushed later by each limits.min_body_rate bytes that
// arrive, so that a large upload on a fast link is never cut while a
// client sending a byte a second is cut after body_timeout.
type bodyDeadline struct {
	rc      *http.ResponseController
	start   time.Time
	timeout time.Duration
	rate    int64 // bytes a second
	n       int64
}

func (d *bodyDeadline) extend() error {
	at := d.start.Add(d.timeout)
	if d.rate > 0 {
		at = at.Add(time.Duration(float64(d.n) / float64(d.rate) * float64(time.Second)))
	}
	err := d.rc.SetReadDeadline(at)
	if errors.Is(err, http.ErrNotSupported) {
		return nil // a test's recorder: nothing to bound
	}
	return err
}

// deadlineReader reads r under a bodyDeadline.
type deadlineReader struct {
	r io.Reader
	d *bodyDeadline
}

func (r *deadlineReader) Read(p []byte) (int, error) {
	if err := r.d.extend(); err != nil {
		return 0, err
	}
	n, err := r.r.Read(p)
	r.d.n += int64(n)
	return n, err
}

// errBodyTimeout says a body did not arrive in time.
var errBodyTimeout = errors.New("the body did not arrive in time (limits.body_timeout, limits.min_body_rate)")

// readBody reads r's body, at most max bytes, under the body deadline,
// into memory or a temporary file in tmpDir. The server's read deadline
// is lifted afterwards: the request's work has a deadline of its own.
func readBody(w http.ResponseWriter, r *http.Request, max int64, timeout time.Duration, rate int64, tmpDir string) (*readBodyResult, error) {
	d := &bodyDeadline{rc: http.NewResponseController(w), start: time.Now(), timeout: timeout, rate: rate}
	defer d.rc.SetReadDeadline(time.Time{})
	src := &deadlineReader{r: http.MaxBytesReader(w, r.Body, max), d: d}
	buf := spill.New(tmpDir, memoryBodyBytes)
	if _, err := io.Copy(buf, src); err != nil {
		buf.Close()
		return nil, bodyReadError(err)
	}
	return &readBodyResult{Reader: buf.Reader(), buf: buf}, nil
}

// bodyReadError names a body read that hit its deadline.
func bodyReadError(err error) error {
	if errors.Is(err, os.ErrDeadlineExceeded) {
		return errBodyTimeout
	}
	return err
}
