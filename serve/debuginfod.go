package serve

import (
	"context"
	"errors"
	"net/http"
	"os"
	"time"

	"github.com/stackimage/stackimage/image"
	notfound "github.com/stackimage/stackimage/lookup"
	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/symstore/remote"
	"github.com/stackimage/stackimage/uuid"
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
	u, err := parseDebugID(r.PathValue("id"))
	if err != nil {
		writeError(w, http.StatusNotFound, "%v", err)
		return
	}
	ctx, cancel := s.deadline(r.Context())
	defer cancel()
	for _, src := range s.sources {
		if src.scanned != nil {
			if path := scannedFile(src.scanned, u, kind); path != "" {
				serveFile(w, r, kind, path)
				return
			}
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

// serveFile answers with a file of a scanned directory.
func serveFile(w http.ResponseWriter, r *http.Request, kind remote.Kind, path string) {
	f, err := os.Open(path)
	if err != nil {
		writeError(w, http.StatusNotFound, "no %s: the scanned file is gone", kind)
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		writeError(w, http.StatusNotFound, "no %s: the scanned file is gone", kind)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("X-Debuginfod-Size", itoa(st.Size()))
	http.ServeContent(w, r, kind.String(), time.Time{}, f)
}

// scannedFile is the path of the file of a kind with the UUID that a
// scanned directory indexed: a dSYM's DWARF file for remote.KindDebug, any
// other Mach-O file for remote.KindCode; "" when it has none.
func scannedFile(syms *symstore.Symbols, u uuid.UUID, kind remote.Kind) string {
	files, err := syms.OpenSymbols(context.Background(), u, nil)
	if err != nil {
		return ""
	}
	defer func() {
		for _, sf := range files {
			if sf.Closer != nil {
				sf.Closer.Close()
			}
		}
	}()
	for _, sf := range files {
		f, ok := sf.ReaderAt.(*os.File)
		if !ok {
			continue // a zip member, read into memory
		}
		mf, err := image.NewFile(f, f.Name())
		if err != nil {
			continue
		}
		for _, im := range mf.Images {
			if im.UUID == u && (im.Type == image.TypeDSYM) == (kind == remote.KindDebug) {
				return f.Name()
			}
		}
	}
	return ""
}
