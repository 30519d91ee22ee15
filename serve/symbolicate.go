package serve

import (
	"bytes"
	"context"
	"net/http"
	"sync"

	"github.com/stackimage/stackimage/symbolicator"
)

// handleSymbolicate is POST /symbolicate: the request becomes a dump
// (symbolicator.NewInput) and is answered as /minidump's dumps are.
func (s *Server) handleSymbolicate(w http.ResponseWriter, r *http.Request) {
	body := http.MaxBytesReader(w, r.Body, int64(s.cfg.Limits.MaxSymbolicateBody))
	buf := bodyPool.Get().(*bytes.Buffer)
	if _, err := buf.ReadFrom(body); err != nil {
		putBody(buf)
		bodyError(w, err, "request body")
		return
	}
	var req symbolicator.Request
	err := symbolicator.DecodeRequest(buf.Bytes(), &req)
	putBody(buf) // req holds nothing of it
	if err != nil {
		writeError(w, http.StatusBadRequest, "request body: %v", err)
		return
	}
	in := symbolicator.NewInput(&req)
	if total := in.Frames(); total > s.cfg.Limits.MaxFrames {
		writeError(w, http.StatusRequestEntityTooLarge, "%d frames: more than the limit of %d", total, s.cfg.Limits.MaxFrames)
		return
	}
	only, err := s.requestSources(req.Sources)
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	s.runStreamed(w, r, func(ctx context.Context, out answerOut) {
		s.answerDump(ctx, in.Dump, nil, only, in, out)
	})
}

// bodyPool holds the buffers request bodies are read into: a body is read
// whole before it is decoded, and a new buffer per request would be a
// good part of what a request allocates.
var bodyPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledBuffer is the largest buffer (of a body or an answer) kept for
// the next request: a rare huge one is left to the garbage collector.
const maxPooledBuffer = 1 << 20

func putBody(b *bytes.Buffer) {
	if b.Cap() <= maxPooledBuffer {
		b.Reset()
		bodyPool.Put(b)
	}
}
