package serve

import (
	"context"
	"errors"
	"net/http"
	"strings"

	"github.com/minio/minio-go/v7"

	"github.com/stackimage/stackimage/symstore/remote"
	"github.com/stackimage/stackimage/uuid"
)

type uploadAnswer struct {
	// Status is "partial" when a file could not be stored (the store
	// failed): the answer is then 502 or 503, and the upload is worth
	// sending again whole.
	Status  string              `json:"status,omitempty"`
	Stored  []remote.StoredFile `json:"stored"`
	Skipped []string            `json:"skipped,omitempty"`
	Failed  []string            `json:"failed,omitempty"`
}

// storeStatus is the status of an answer the store's failure cut: 502
// when the store answered with an error, 503 (with Retry-After) when it
// could not be reached.
func storeStatus(w http.ResponseWriter, err error) int {
	if minio.ToErrorResponse(err).StatusCode != 0 {
		return http.StatusBadGateway
	}
	w.Header().Set("Retry-After", "10")
	return http.StatusServiceUnavailable
}

// handleUpload is PUT /v1/symbols: a Mach-O binary or dSYM file (thin or
// fat), a zip archive of them (a zipped .dSYM bundle), or a Breakpad .sym
// file. Each file is stored in the configured store under its UUIDs
// (remote.Upload), and their indexes are built at once (and shared).
func (s *Server) handleUpload(w http.ResponseWriter, r *http.Request) {
	if s.store == nil {
		writeError(w, http.StatusForbidden, "no store is configured for uploads (config key store)")
		return
	}
	l := s.cfg.Limits
	body, err := s.spoolRequest(w, r, int64(l.MaxUploadBody))
	if err != nil {
		bodyError(w, err, "upload")
		return
	}
	defer body.Close()
	ctx, cancel := s.deadline(r.Context())
	defer cancel()
	up := &remote.Upload{Dest: s.store.remote, TempDir: s.tmpDir, MaxMember: int64(l.MaxUploadBody),
		MaxInflateRatio: int64(l.MaxUploadInflateRatio), MaxInflated: int64(l.MaxUploadInflated),
		Stored: func(ctx context.Context, id uuid.UUID) string {
			// An upload (a dSYM after its binary, say) changes what the
			// index holds: it is built again, here and in the shared cache.
			if err := s.cache.Rebuild(ctx, id); err != nil {
				return err.Error()
			}
			return "built"
		}}
	res, err := up.Store(ctx, body, body.Size())
	var storeErr *remote.StoreError
	switch {
	case errors.Is(err, remote.ErrNotSymbols):
		writeError(w, http.StatusBadRequest, "upload: %v", err)
	case errors.As(err, &storeErr):
		writeError(w, storeStatus(w, storeErr.Err), "upload: the store failed: %v", err)
	case errors.Is(err, remote.ErrInflateBound):
		writeError(w, http.StatusRequestEntityTooLarge, "upload: %v", err)
	case errors.Is(err, context.DeadlineExceeded):
		w.Header().Set("Retry-After", "10")
		writeError(w, http.StatusServiceUnavailable, "upload: %v (limits.request_timeout)", err)
	case err != nil:
		writeError(w, http.StatusBadRequest, "upload: %v", err)
	case len(res.Failed) > 0:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(storeStatus(w, res.StoreErr))
		writeJSONBody(w, uploadAnswer{Status: "partial", Stored: res.Stored, Skipped: res.Skipped, Failed: res.Failed})
	case len(res.Stored) == 0:
		writeError(w, http.StatusBadRequest, "upload: no symbol file with a UUID found (%s)", strings.Join(res.Skipped, "; "))
	default:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		writeJSONBody(w, uploadAnswer{Stored: res.Stored, Skipped: res.Skipped})
	}
}
