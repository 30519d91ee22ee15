package serve

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync"

	"github.com/stackimage/stackimage/internal/spill"
)

// maxHeldInMemory is the largest answer kept in memory for GET
// /requests/{id}; a larger one is spooled to a temporary file of the
// cache. (A variable for the tests.)
var maxHeldInMemory = 1 << 20

// heldAnswer is an answer kept for GET /requests/{id}, written as it is
// encoded: in memory up to maxHeldInMemory bytes, in a temporary file
// past that (spill), so that an answer kept costs a bounded amount of
// memory whatever its size. It is handed out, then discarded.
type heldAnswer struct {
	mu   sync.Mutex
	buf  *spill.Buffer
	err  error // the first error writing it
	gone bool  // discarded
}

var errAnswerGone = errors.New("the answer was handed out already")

func (h *heldAnswer) Write(b []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.err != nil {
		return 0, h.err
	}
	var n int
	n, h.err = h.buf.Write(b)
	return n, h.err
}

func (h *heldAnswer) last(b []byte) error {
	_, err := h.Write(b)
	return err
}

// writeTo answers r with the answer kept, with its Content-Length.
func (h *heldAnswer) writeTo(w http.ResponseWriter, code int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.gone:
		writeError(w, http.StatusNotFound, "%v", errAnswerGone)
		return
	case h.err != nil:
		writeError(w, http.StatusInternalServerError, "keeping the answer: %v", h.err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.FormatInt(h.buf.Size(), 10))
	w.WriteHeader(code)
	io.Copy(w, h.buf.Reader())
}

// discard lets go of the answer and removes its file.
func (h *heldAnswer) discard() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.gone = true
	h.buf.Close()
}

// discardAnswer discards a job's answer once it is handed out or
// forgotten, when it is one that holds a file.
func discardAnswer(answer any) {
	if h, ok := answer.(*heldAnswer); ok {
		h.discard()
	}
}
