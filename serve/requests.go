package serve

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/stackimage/stackimage/internal/spill"
)

// pendingRequests keeps the answers of requests that outlived their
// ?timeout=, for GET /requests/{id}. An answer is handed out once, then
// forgotten, as symbolicator does; state is per instance and ephemeral
// (clients treat a 404 as "send the request again").
type pendingRequests struct {
	mu   sync.Mutex
	max  int
	jobs map[string]*job
}

// job is a request's work running on after its caller stopped waiting.
type job struct {
	done   chan struct{}
	status int
	answer any
}

func newPendingRequests(max int) *pendingRequests {
	return &pendingRequests{max: max, jobs: map[string]*job{}}
}

// pendingAnswer is symbolicator's backoff response.
type pendingAnswer struct {
	Status     string `json:"status"`
	RequestID  string `json:"request_id"`
	RetryAfter int    `json:"retry_after"`
}

// queryTimeout reads ?timeout= (seconds); ok is false when absent.
func queryTimeout(r *http.Request) (time.Duration, bool, error) {
	v := r.URL.Query().Get("timeout")
	if v == "" {
		return 0, false, nil
	}
	secs, err := strconv.ParseFloat(v, 64)
	if err != nil || secs < 0 || secs > 3600 {
		return 0, false, err
	}
	return time.Duration(secs * float64(time.Second)), true, nil
}

// run runs work under the request deadline. Without ?timeout= it answers
// when the work is done; with one, it answers "pending" with a request id
// when the work takes longer, and keeps the answer for GET /requests/{id}.
func (s *Server) run(w http.ResponseWriter, r *http.Request, work func(ctx context.Context) (int, any)) {
	wait, async, err := queryTimeout(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, "timeout %q: want seconds", r.URL.Query().Get("timeout"))
		return
	}
	if !async {
		ctx, cancel := s.deadline(r.Context())
		defer cancel()
		code, answer := work(ctx)
		writeAnswer(w, r, code, answer)
		return
	}
	s.runAsync(w, r, wait, work)
}

// runAsync runs work on after the HTTP request, under its own deadline
// rather than the request's context, and answers after wait: with the
// answer, or "pending" and a request id.
func (s *Server) runAsync(w http.ResponseWriter, r *http.Request, wait time.Duration, work func(ctx context.Context) (int, any)) {
	j := &job{done: make(chan struct{})}
	go func() {
		ctx, cancel := s.deadline(context.Background())
		defer cancel()
		j.status, j.answer = work(ctx)
		close(j.done)
	}()
	s.answerJob(w, r, "", j, wait)
}

// runStreamed runs work that writes its answer (JSON, status 200) as it
// makes it: to the client as it comes, or, with ?timeout=, to a copy
// kept for GET /requests/{id} (heldAnswer) when the work takes longer.
func (s *Server) runStreamed(w http.ResponseWriter, r *http.Request, work func(ctx context.Context, out answerOut)) {
	wait, async, err := queryTimeout(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, "timeout %q: want seconds", r.URL.Query().Get("timeout"))
		return
	}
	if !async {
		ctx, cancel := s.deadline(r.Context())
		defer cancel()
		work(ctx, &clientAnswer{w: w, r: r, code: http.StatusOK})
		return
	}
	s.runAsync(w, r, wait, func(ctx context.Context) (int, any) {
		held := &heldAnswer{buf: spill.New(s.tmpDir, maxHeldInMemory)}
		work(ctx, held)
		return http.StatusOK, held
	})
}

// answerJob waits up to wait for j, then answers it or registers it as
// pending.
func (s *Server) answerJob(w http.ResponseWriter, r *http.Request, id string, j *job, wait time.Duration) {
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-j.done:
		if id != "" {
			s.pending.remove(id)
		}
		writeAnswer(w, r, j.status, j.answer)
		discardAnswer(j.answer)
	case <-t.C:
		if id == "" {
			var ok bool
			if id, ok = s.pending.add(j); !ok {
				writeError(w, http.StatusServiceUnavailable, "too many pending requests")
				go func() {
					<-j.done
					discardAnswer(j.answer)
				}()
				return
			}
		}
		writeJSON(w, pendingAnswer{Status: "pending", RequestID: id, RetryAfter: 1})
	case <-r.Context().Done():
		if id == "" {
			// Nobody will ask for it.
			go func() {
				<-j.done
				discardAnswer(j.answer)
			}()
		}
	}
}

// handleRequest is GET /requests/{id}.
func (s *Server) handleRequest(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	j := s.pending.get(id)
	if j == nil {
		writeError(w, http.StatusNotFound, "no pending request %q (answers are kept once, on the instance that took the request)", id)
		return
	}
	wait, _, err := queryTimeout(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, "timeout: want seconds")
		return
	}
	s.answerJob(w, r, id, j, wait)
}

func (p *pendingRequests) add(j *job) (string, bool) {
	var b [16]byte
	rand.Read(b[:])
	id := hex.EncodeToString(b[:])
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.jobs) >= p.max {
		return "", false
	}
	p.jobs[id] = j
	go func() {
		// An answer nobody fetches is dropped after a while.
		<-j.done
		time.Sleep(5 * time.Minute)
		if p.remove(id) {
			discardAnswer(j.answer)
		}
	}()
	return id, true
}

func (p *pendingRequests) get(id string) *job {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.jobs[id]
}

// remove forgets a request; it reports whether it was still there.
func (p *pendingRequests) remove(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, ok := p.jobs[id]
	delete(p.jobs, id)
	return ok
}
