package serve

import (
	"errors"
	"net/http"
	"time"

	notfound "github.com/stackimage/stackimage/lookup"
)

// handleBuildID is GET /buildid/{id}/{kind}: the debuginfod protocol,
// which serves a file by build ID. For Mach-O the build ID is the UUID
// (32 hex digits); "debuginfo" is the dSYM's DWARF file and "executable"
// the binary, as stored by PUT /v1/symbols or found in the sources that
// have a layout. A scanned directory is not served: its files are found
// by content, not by path.
func (s *Server) handleBuildID(w http.ResponseWriter, r *http.Request) {
	var kind FileKind
	switch r.PathValue("kind") {
	case "debuginfo":
		kind = KindDebug
	case "executable":
		kind = KindCode
	default:
		writeError(w, http.StatusNotFound, "%q: this server has debuginfo and executable files only", r.PathValue("kind"))
		return
	}
	u, err := parseDebugID(r.PathValue("id"))
	if err != nil {
		writeError(w, http.StatusNotFound, "%v", err)
		return
	}
	ctx, cancel := s.deadline(r.Context())
	defer cancel()
	for _, src := range s.sources {
		if src.store == nil {
			continue
		}
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
