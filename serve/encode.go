package serve

import (
	"io"
	"net/http"
	"strconv"
	"sync"

	"github.com/stackimage/stackimage/internal/heldconn"
)

// maxBufferedAnswer is the largest answer written whole, with its
// Content-Length, in one write; a larger one is written as it is encoded
// (chunked), so that it is never held whole. (A variable for the tests.)
var maxBufferedAnswer = 1 << 20

// answerPool holds the buffers answers are encoded into: one per request
// would be most of what a small request allocates.
var answerPool = sync.Pool{New: func() any { return new([]byte) }}

// answerOut is where an answer goes as it is encoded: the client, or a
// copy kept for GET /requests/{id}.
type answerOut interface {
	io.Writer            // a piece of the answer; more follows
	last(b []byte) error // the answer's last piece (or all of it)
}

// answerEncoder holds the part of an answer encoded and not yet passed
// on, in a pooled buffer: at most about maxBufferedAnswer bytes, however
// large the answer.
type answerEncoder struct {
	b      []byte
	pooled *[]byte
	out    answerOut
	err    error // the first error of out; what follows is dropped
}

func newAnswerEncoder(out answerOut) *answerEncoder {
	pooled := answerPool.Get().(*[]byte)
	return &answerEncoder{b: (*pooled)[:0], pooled: pooled, out: out}
}

// passOn passes the encoded part on once it reaches maxBufferedAnswer.
func (e *answerEncoder) passOn() {
	if len(e.b) < maxBufferedAnswer {
		return
	}
	if e.err == nil {
		_, e.err = e.out.Write(e.b)
	}
	e.b = e.b[:0]
}

// end passes the rest on as the answer's last piece.
func (e *answerEncoder) end() error {
	if e.err == nil {
		e.err = e.out.last(e.b)
	}
	e.b = e.b[:0]
	return e.err
}

// close gives the buffer back to its pool.
func (e *answerEncoder) close() {
	if cap(e.b) <= maxPooledBuffer+maxPooledBuffer/2 {
		*e.pooled = e.b[:0]
		answerPool.Put(e.pooled)
	}
}

// clientAnswer writes an answer to its client: whole, with its
// Content-Length, in one write with its header when it comes in one
// piece; chunked as it comes otherwise.
type clientAnswer struct {
	w       http.ResponseWriter
	r       *http.Request
	code    int
	started bool
}

func (c *clientAnswer) start() {
	if !c.started {
		c.w.Header().Set("Content-Type", "application/json")
		c.w.WriteHeader(c.code)
		c.started = true
	}
}

func (c *clientAnswer) Write(b []byte) (int, error) {
	c.start()
	return c.w.Write(b)
}

func (c *clientAnswer) last(b []byte) error {
	if c.started {
		_, err := c.w.Write(b)
		return err
	}
	c.w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	c.start()
	release := heldconn.Hold(c.r.Context())
	_, err := c.w.Write(b)
	release()
	return err
}
