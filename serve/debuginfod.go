package serve

import (
	"errors"
	"net/http"
	"time"

	notfound "github.com/stackimage/stackimage/lookup"
	"github.com/stackimage/stackimage/symbolicator"
	"github.com/stackimage/stackimage/symstore/remote"
)

// handleBuildID is GET /buildid/{id}/{kind}: the debuginfod protocol,
// which serves a file by build ID. For Mach-O the build ID is the UUID
// (32 hex digits); "debuginfo" is the dSYM's DWARF file and "executable"
// the binary, as stored by PUT /v1/symbols or found in the sources that
// have a layout, or a file a scanned directory holds with the UUID
// (found through the scan's UUID → file map, never by a path the
// request names).
func (s *Server) handleBuildID(w http.ResponseWriter, r *http.Request) {
	var kind remote.Kind
	switch r.PathValue("kind") {
	case "debuginfo":
		kind = remote.KindDebug
	case "executable":
		kind = remote.KindCode
	default:
		writeError(w, http.StatusNotFound, "%q: this server has debuginfo and executable files only", r.PathValue("kind"))
		return
	}
	u, err := symbolicator.ParseDebugID(r.PathValue("id"))
	if err != nil {
		writeError(w, http.StatusNotFound, "%v", err)
		return
	}
	ctx, cancel := s.deadline(r.Context())
	defer cancel()
	for _, src := range s.sources {
		f, err := src.Open(ctx, u, kind, "")
		if errors.Is(err, notfound.ErrNotFound) {
			continue
		}
		if err != nil {
			writeError(w, http.StatusBadGateway, "%v", err)
			return
		}
		defer f.Close()
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("X-Debuginfod-Size", itoa(f.Size))
		http.ServeContent(w, r, kind.String(), time.Time{}, f.File)
		return
	}
	writeError(w, http.StatusNotFound, "no %s for %s", kind, u)
}
