package serve

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path"
	"strings"

	"github.com/minio/minio-go/v7"

	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/symstore/remote"
	"github.com/stackimage/stackimage/uuid"
)

// uploaded is one symbol file stored by PUT /v1/symbols.
type uploaded struct {
	UUID     string `json:"uuid"`
	Arch     string `json:"arch,omitempty"`
	Kind     string `json:"kind"`
	Name     string `json:"name,omitempty"`
	Location string `json:"location"`
	// Index is "built", or why the index could not be built.
	Index string `json:"index"`
}

type uploadAnswer struct {
	// Status is "partial" when a file could not be stored (the store
	// failed): the answer is then 502 or 503, and the upload is worth
	// sending again whole.
	Status  string     `json:"status,omitempty"`
	Stored  []uploaded `json:"stored"`
	Skipped []string   `json:"skipped,omitempty"`
	Failed  []string   `json:"failed,omitempty"`
	// storeErr is the first of the store's failures behind Failed.
	storeErr error
}

// storeError is a failure of the store, not of the uploaded bytes: the
// client may send them again later.
type storeError struct{ err error }

func (e *storeError) Error() string { return e.err.Error() }
func (e *storeError) Unwrap() error { return e.err }

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

// zip members are bounded like the symbol loader bounds them: a member
// whose declared size its compressed bytes cannot honestly hold is
// skipped (deflate reaches about 1032:1; Mach-O files compress 3 to 10
// times).
const (
	maxZipRatio   = 100
	zipRatioFloor = 1 << 20
)

// handleUpload is PUT /v1/symbols: a Mach-O binary or dSYM file (thin or
// fat), a zip archive of them (a zipped .dSYM bundle), or a Breakpad .sym
// file. Each file is stored in the configured store under its UUIDs, and
// their indexes are built at once (and shared).
func (s *Server) handleUpload(w http.ResponseWriter, r *http.Request) {
	if s.store == nil {
		writeError(w, http.StatusForbidden, "no store is configured for uploads (config key store)")
		return
	}
	max := int64(s.cfg.Limits.MaxUploadBody)
	body, err := s.spoolRequest(w, r, max)
	if err != nil {
		bodyError(w, err, "upload")
		return
	}
	defer body.Close()
	ctx, cancel := s.deadline(r.Context())
	defer cancel()
	ans := uploadAnswer{Stored: []uploaded{}}
	head := make([]byte, min(body.size, 8))
	body.ReadAt(head, 0)
	switch {
	case bytes.HasPrefix(head, []byte("PK\x03\x04")):
		err = s.storeZip(ctx, body, &ans)
	case isMachO(head):
		err = s.storeMachO(ctx, body.File, body.size, "", &ans)
	case bytes.HasPrefix(head, []byte("MODULE ")):
		err = s.storeSym(ctx, body.File, body.size, &ans)
	default:
		writeError(w, http.StatusBadRequest, "upload: not a Mach-O file, a zip archive of them or a Breakpad .sym file")
		return
	}
	var storeErr *storeError
	switch {
	case errors.As(err, &storeErr):
		writeError(w, storeStatus(w, storeErr.err), "upload: the store failed: %v", err)
		return
	case errors.Is(err, errInflateBound):
		writeError(w, http.StatusRequestEntityTooLarge, "upload: %v", err)
		return
	case errors.Is(err, context.DeadlineExceeded):
		w.Header().Set("Retry-After", "10")
		writeError(w, http.StatusServiceUnavailable, "upload: %v (limits.request_timeout)", err)
		return
	case err != nil:
		writeError(w, http.StatusBadRequest, "upload: %v", err)
		return
	case len(ans.Failed) > 0:
		ans.Status = "partial"
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(storeStatus(w, ans.storeErr))
		writeJSONBody(w, ans)
		return
	}
	if len(ans.Stored) == 0 {
		writeError(w, http.StatusBadRequest, "upload: no symbol file with a UUID found (%s)", strings.Join(ans.Skipped, "; "))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	writeJSONBody(w, ans)
}

// isMachO tells Mach-O files, thin or fat, by their magic.
func isMachO(head []byte) bool {
	if len(head) < 4 {
		return false
	}
	switch binary.BigEndian.Uint32(head) {
	case 0xfeedface, 0xfeedfacf, 0xcefaedfe, 0xcffaedfe, 0xcafebabe, 0xcafebabf:
		return true
	}
	return false
}

// storeMachO stores a Mach-O file under the UUID of each of its slices:
// a dSYM's as "debuginfo", anything else as "executable".
func (s *Server) storeMachO(ctx context.Context, f io.ReaderAt, size int64, name string, ans *uploadAnswer) error {
	mf, err := image.NewFile(io.NewSectionReader(f, 0, size), name)
	if err != nil {
		return err
	}
	for _, e := range mf.SliceErrors {
		ans.Skipped = append(ans.Skipped, e.Error())
	}
	for _, im := range mf.Images {
		if im.UUID.IsZero() {
			ans.Skipped = append(ans.Skipped, fmt.Sprintf("%s (%s): no LC_UUID", name, im.ArchName()))
			continue
		}
		kind := remote.KindCode
		if im.Type == image.TypeDSYM {
			kind = remote.KindDebug
		}
		u := uploaded{UUID: im.UUID.String(), Arch: im.ArchName(), Kind: kind.String()}
		if name != "" {
			u.Name = path.Base(name) // a zip member's; a body alone has none
		}
		loc, err := s.store.put(ctx, im.UUID, kind, "", io.NewSectionReader(f, 0, size), size)
		if err != nil {
			return &storeError{fmt.Errorf("storing %s: %w", im.UUID, err)}
		}
		u.Location = loc
		u.Index = s.rebuild(ctx, im.UUID)
		ans.Stored = append(ans.Stored, u)
	}
	return nil
}

// storeSym stores a Breakpad .sym file under the UUID of its MODULE line.
func (s *Server) storeSym(ctx context.Context, f io.ReaderAt, size int64, ans *uploadAnswer) error {
	line, err := bufio.NewReader(io.NewSectionReader(f, 0, min(size, 4096))).ReadString('\n')
	if err != nil && err != io.EOF {
		return err
	}
	// MODULE mac arm64 2C4F4C1E0BB63D8F9C0A1A6B7E4E5F6A0 Name
	fields := strings.Fields(line)
	if len(fields) < 5 {
		return fmt.Errorf("Breakpad file: MODULE line %q: want MODULE OS ARCH ID NAME", strings.TrimSpace(line))
	}
	u, err := parseDebugID(fields[3])
	if err != nil {
		return fmt.Errorf("Breakpad file: MODULE line: %w", err)
	}
	name := remote.SafeName(strings.Join(fields[4:], " "))
	if name == "" {
		return fmt.Errorf("Breakpad file: MODULE line: no usable module name")
	}
	loc, err := s.store.put(ctx, u, remote.KindBreakpad, name, io.NewSectionReader(f, 0, size), size)
	if err != nil {
		return &storeError{fmt.Errorf("storing %s: %w", u, err)}
	}
	ans.Stored = append(ans.Stored, uploaded{UUID: u.String(), Arch: fields[2], Kind: remote.KindBreakpad.String(),
		Name: name, Location: loc, Index: s.rebuild(ctx, u)})
	return nil
}

// errInflateBound is the error of a zip upload that inflates more than
// its bound: limits.max_upload_inflate_ratio times its size, at most
// limits.max_upload_inflated.
var errInflateBound = errors.New("the archive inflates to more than its bound")

// storeZip stores every Mach-O and .sym member of a zip archive, within
// the upload's bound on inflated bytes and its deadline: a central
// directory naming one member many times costs its bytes each time.
func (s *Server) storeZip(ctx context.Context, body *spooled, ans *uploadAnswer) error {
	zr, err := zip.NewReader(body, body.size)
	if err != nil {
		return fmt.Errorf("zip: %w", err)
	}
	l := s.cfg.Limits
	left := min(body.size*int64(l.MaxUploadInflateRatio), int64(l.MaxUploadInflated))
	bound := left
	for i, m := range zr.File {
		if err := ctx.Err(); err != nil {
			if len(ans.Stored) > 0 || len(ans.Failed) > 0 {
				// Some were stored or failed already: a partial upload.
				ans.Failed = append(ans.Failed, fmt.Sprintf("%d members not stored: the request's deadline came first", len(zr.File)-i))
				return nil
			}
			return fmt.Errorf("zip: stopped at member %d of %d: %w", i, len(zr.File), err)
		}
		if left <= 0 {
			return fmt.Errorf("zip: stopped at member %d of %d: %w of %d bytes", i, len(zr.File), errInflateBound, bound)
		}
		if m.FileInfo().IsDir() || strings.Contains(m.Name, "__MACOSX/") {
			continue
		}
		if m.UncompressedSize64 > zipRatioFloor && m.UncompressedSize64/maxZipRatio > max(m.CompressedSize64, 1) {
			ans.Skipped = append(ans.Skipped, fmt.Sprintf("%s: declares %d bytes from %d compressed", m.Name, m.UncompressedSize64, m.CompressedSize64))
			continue
		}
		if m.UncompressedSize64 > uint64(s.cfg.Limits.MaxUploadBody) {
			ans.Skipped = append(ans.Skipped, fmt.Sprintf("%s: larger than the upload limit", m.Name))
			continue
		}
		var storeErr *storeError
		switch err := s.storeZipMember(ctx, m, ans, &left); {
		case errors.Is(err, errInflateBound):
			return fmt.Errorf("zip: %s: %w of %d bytes", m.Name, err, bound)
		case errors.As(err, &storeErr):
			ans.Failed = append(ans.Failed, fmt.Sprintf("%s: %v", m.Name, err))
			if ans.storeErr == nil {
				ans.storeErr = storeErr.err
			}
		case ctx.Err() != nil:
			ans.Failed = append(ans.Failed, fmt.Sprintf("%s: %v", m.Name, err))
		case err != nil:
			ans.Skipped = append(ans.Skipped, fmt.Sprintf("%s: %v", m.Name, err))
		}
	}
	return nil
}

// storeZipMember inflates and stores one member, taking its bytes from
// left.
func (s *Server) storeZipMember(ctx context.Context, m *zip.File, ans *uploadAnswer, left *int64) error {
	rc, err := m.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	tmp, err := os.CreateTemp(s.tmpDir, "member-*")
	if err != nil {
		return err
	}
	defer func() { tmp.Close(); os.Remove(tmp.Name()) }()
	// The zip reader checks the declared size and CRC as it inflates.
	limit := min(int64(m.UncompressedSize64), *left)
	n, err := io.Copy(tmp, &ctxReader{ctx: ctx, r: io.LimitReader(rc, limit+1)})
	*left -= n
	if err != nil {
		return err
	}
	if n > limit && limit < int64(m.UncompressedSize64) {
		return errInflateBound
	}
	head := make([]byte, min(n, 8))
	tmp.ReadAt(head, 0)
	switch {
	case isMachO(head):
		return s.storeMachO(ctx, tmp, n, m.Name, ans)
	case bytes.HasPrefix(head, []byte("MODULE ")):
		return s.storeSym(ctx, tmp, n, ans)
	}
	return nil
}

// rebuild builds a UUID's index now from what the sources hold, replacing
// the one this instance and the shared cache had: an upload (a dSYM after
// its binary, say) changes what the index holds.
func (s *Server) rebuild(ctx context.Context, u uuid.UUID) string {
	if err := s.cache.Rebuild(ctx, u); err != nil {
		return err.Error()
	}
	return "built"
}

// ctxReader stops reading once its context is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
