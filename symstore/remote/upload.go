package remote

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/stackimage/stackimage/breakpadsym"
	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/internal/ctxio"
	"github.com/stackimage/stackimage/uuid"
)

// Upload stores uploaded symbol files in a source's store, each under
// its UUIDs at the first path its layout gives: a Mach-O binary or dSYM
// file (thin or fat), a zip archive of them (a zipped .dSYM bundle), or a
// Breakpad .sym file.
type Upload struct {
	// Dest is the source written to.
	Dest *Source
	// TempDir receives zip members as they are inflated ("" for the
	// system's temporary directory).
	TempDir string
	// MaxMember bounds one zip member's size; MaxInflateRatio and
	// MaxInflated a zip's inflated bytes: at most MaxInflateRatio times
	// the archive's size, and at most MaxInflated.
	MaxMember       int64
	MaxInflateRatio int64
	MaxInflated     int64
	// Stored, when set, is called with each UUID once its file is
	// stored (to build its index again); what it returns is the file's
	// StoredFile.Index.
	Stored func(ctx context.Context, id uuid.UUID) string
}

// StoredFile is one symbol file stored.
type StoredFile struct {
	UUID     string `json:"uuid"`
	Arch     string `json:"arch,omitempty"`
	Kind     string `json:"kind"`
	Name     string `json:"name,omitempty"`
	Location string `json:"location"`
	// Index is what Upload.Stored said ("built", or why the index could
	// not be built).
	Index string `json:"index"`
}

// UploadResult is what an upload stored, skipped and failed to store.
type UploadResult struct {
	Stored  []StoredFile
	Skipped []string
	// Failed are the files the store failed to take (or a deadline
	// cut); StoreErr is the first of the store's failures behind them.
	Failed   []string
	StoreErr error
}

// StoreError is a failure of the store, not of the uploaded bytes: the
// client may send them again later.
type StoreError struct{ Err error }

func (e *StoreError) Error() string { return e.Err.Error() }
func (e *StoreError) Unwrap() error { return e.Err }

// ErrInflateBound is the error of a zip upload that inflates more than
// its bound (Upload.MaxInflateRatio, Upload.MaxInflated).
var ErrInflateBound = errors.New("the archive inflates to more than its bound")

// ErrNotSymbols is the error of an upload that is none of the files
// Upload takes.
var ErrNotSymbols = errors.New("not a Mach-O file, a zip archive of them or a Breakpad .sym file")

// zip members are bounded like the symbol loader bounds them: a member
// whose declared size its compressed bytes cannot honestly hold is
// skipped (deflate reaches about 1032:1; Mach-O files compress 3 to 10
// times).
const (
	maxZipRatio   = 100
	zipRatioFloor = 1 << 20
)

// Store stores the symbol files of r, size bytes, told by content. An
// error is what made the whole upload fail: a *StoreError (the store
// failed), ErrInflateBound, ErrNotSymbols, ctx's error, or what is wrong
// with the bytes. Files the store failed to take after others were
// stored are the result's Failed.
func (u *Upload) Store(ctx context.Context, r io.ReaderAt, size int64) (*UploadResult, error) {
	res := &UploadResult{Stored: []StoredFile{}}
	head := make([]byte, min(size, 8))
	r.ReadAt(head, 0)
	var err error
	switch {
	case bytes.HasPrefix(head, []byte("PK\x03\x04")):
		err = u.storeZip(ctx, r, size, res)
	case isMachO(head):
		err = u.storeMachO(ctx, r, size, "", res)
	case bytes.HasPrefix(head, []byte("MODULE ")):
		err = u.storeSym(ctx, r, size, res)
	default:
		err = ErrNotSymbols
	}
	return res, err
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

// stored calls Upload.Stored.
func (u *Upload) stored(ctx context.Context, id uuid.UUID) string {
	if u.Stored == nil {
		return ""
	}
	return u.Stored(ctx, id)
}

// storeMachO stores a Mach-O file under the UUID of each of its slices:
// a dSYM's as "debuginfo", anything else as "executable".
func (u *Upload) storeMachO(ctx context.Context, f io.ReaderAt, size int64, name string, res *UploadResult) error {
	mf, err := image.NewFile(io.NewSectionReader(f, 0, size), name)
	if err != nil {
		return err
	}
	for _, e := range mf.SliceErrors {
		res.Skipped = append(res.Skipped, e.Error())
	}
	for _, im := range mf.Images {
		if im.UUID.IsZero() {
			res.Skipped = append(res.Skipped, fmt.Sprintf("%s (%s): no LC_UUID", name, im.ArchName()))
			continue
		}
		kind := KindCode
		if im.Type == image.TypeDSYM {
			kind = KindDebug
		}
		sf := StoredFile{UUID: im.UUID.String(), Arch: im.ArchName(), Kind: kind.String()}
		if name != "" {
			sf.Name = path.Base(name) // a zip member's; a body alone has none
		}
		loc, err := u.Dest.Write(ctx, im.UUID, kind, "", io.NewSectionReader(f, 0, size), size)
		if err != nil {
			return &StoreError{fmt.Errorf("storing %s: %w", im.UUID, err)}
		}
		sf.Location = loc
		sf.Index = u.stored(ctx, im.UUID)
		res.Stored = append(res.Stored, sf)
	}
	return nil
}

// storeSym stores a Breakpad .sym file under the UUID of its MODULE line.
func (u *Upload) storeSym(ctx context.Context, f io.ReaderAt, size int64, res *UploadResult) error {
	line, err := bufio.NewReader(io.NewSectionReader(f, 0, min(size, 4096))).ReadString('\n')
	if err != nil && err != io.EOF {
		return err
	}
	// MODULE mac arm64 2C4F4C1E0BB63D8F9C0A1A6B7E4E5F6A0 Name
	fields := strings.Fields(line)
	if len(fields) < 5 {
		return fmt.Errorf("Breakpad file: MODULE line %q: want MODULE OS ARCH ID NAME", strings.TrimSpace(line))
	}
	id, _, err := breakpadsym.ParseDebugID(fields[3])
	if err != nil {
		return fmt.Errorf("Breakpad file: MODULE line: %w", err)
	}
	name := SafeName(strings.Join(fields[4:], " "))
	if name == "" {
		return fmt.Errorf("Breakpad file: MODULE line: no usable module name")
	}
	loc, err := u.Dest.Write(ctx, id, KindBreakpad, name, io.NewSectionReader(f, 0, size), size)
	if err != nil {
		return &StoreError{fmt.Errorf("storing %s: %w", id, err)}
	}
	res.Stored = append(res.Stored, StoredFile{UUID: id.String(), Arch: fields[2], Kind: KindBreakpad.String(),
		Name: name, Location: loc, Index: u.stored(ctx, id)})
	return nil
}

// storeZip stores every Mach-O and .sym member of a zip archive, within
// the upload's bound on inflated bytes and ctx's deadline: a central
// directory naming one member many times costs its bytes each time.
func (u *Upload) storeZip(ctx context.Context, r io.ReaderAt, size int64, res *UploadResult) error {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return fmt.Errorf("zip: %w", err)
	}
	left := min(size*u.MaxInflateRatio, u.MaxInflated)
	bound := left
	for i, m := range zr.File {
		if err := ctx.Err(); err != nil {
			if len(res.Stored) > 0 || len(res.Failed) > 0 {
				// Some were stored or failed already: a partial upload.
				res.Failed = append(res.Failed, fmt.Sprintf("%d members not stored: the request's deadline came first", len(zr.File)-i))
				return nil
			}
			return fmt.Errorf("zip: stopped at member %d of %d: %w", i, len(zr.File), err)
		}
		if left <= 0 {
			return fmt.Errorf("zip: stopped at member %d of %d: %w of %d bytes", i, len(zr.File), ErrInflateBound, bound)
		}
		if m.FileInfo().IsDir() || strings.Contains(m.Name, "__MACOSX/") {
			continue
		}
		if m.UncompressedSize64 > zipRatioFloor && m.UncompressedSize64/maxZipRatio > max(m.CompressedSize64, 1) {
			res.Skipped = append(res.Skipped, fmt.Sprintf("%s: declares %d bytes from %d compressed", m.Name, m.UncompressedSize64, m.CompressedSize64))
			continue
		}
		if m.UncompressedSize64 > uint64(u.MaxMember) {
			res.Skipped = append(res.Skipped, fmt.Sprintf("%s: larger than the upload limit", m.Name))
			continue
		}
		var storeErr *StoreError
		switch err := u.storeZipMember(ctx, m, res, &left); {
		case errors.Is(err, ErrInflateBound):
			return fmt.Errorf("zip: %s: %w of %d bytes", m.Name, err, bound)
		case errors.As(err, &storeErr):
			res.Failed = append(res.Failed, fmt.Sprintf("%s: %v", m.Name, err))
			if res.StoreErr == nil {
				res.StoreErr = storeErr.Err
			}
		case ctx.Err() != nil:
			res.Failed = append(res.Failed, fmt.Sprintf("%s: %v", m.Name, err))
		case err != nil:
			res.Skipped = append(res.Skipped, fmt.Sprintf("%s: %v", m.Name, err))
		}
	}
	return nil
}

// storeZipMember inflates and stores one member, taking its bytes from
// left.
func (u *Upload) storeZipMember(ctx context.Context, m *zip.File, res *UploadResult, left *int64) error {
	rc, err := m.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	tmp, err := os.CreateTemp(u.TempDir, "member-*")
	if err != nil {
		return err
	}
	defer func() { tmp.Close(); os.Remove(tmp.Name()) }()
	// The zip reader checks the declared size and CRC as it inflates.
	limit := min(int64(m.UncompressedSize64), *left)
	n, err := io.Copy(tmp, ctxio.Reader(ctx, io.LimitReader(rc, limit+1)))
	*left -= n
	if err != nil {
		return err
	}
	if n > limit && limit < int64(m.UncompressedSize64) {
		return ErrInflateBound
	}
	head := make([]byte, min(n, 8))
	tmp.ReadAt(head, 0)
	switch {
	case isMachO(head):
		return u.storeMachO(ctx, tmp, n, m.Name, res)
	case bytes.HasPrefix(head, []byte("MODULE ")):
		return u.storeSym(ctx, tmp, n, res)
	}
	return nil
}
