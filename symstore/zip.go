package symstore

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/uuid"
)

// Symbols take .zip archives of dSYMs and binaries as they come from
// build servers and App Store Connect. Each Mach-O member is indexed by the
// UUIDs of its slices, read from its load commands alone: only the first
// bytes of a thin member are inflated, and of a fat one the bytes up to its
// last slice's load commands. A member is inflated whole only when its UUID
// is looked up.
//
// Archives are hostile input like any other: a member whose declared size
// is far beyond what its compressed bytes can honestly hold is skipped, the
// bytes inflated while indexing an archive are bounded by a budget relative
// to the archive's size, and a member inflated for a lookup is bounded by
// its declared size and by maxZipMember.

// Limits on zip archives; variables so that tests can lower them.
var (
	// maxZipRatio is the largest declared-to-compressed size ratio a
	// member may have. Deflate cannot exceed about 1032:1; Mach-O files
	// and DWARF compress 3 to 10 times.
	maxZipRatio uint64 = 100
	// zipRatioFloor is the size below which the ratio is not checked:
	// small files of zeros are honest.
	zipRatioFloor uint64 = 1 << 20
	// zipIndexBudget returns how many bytes may be inflated to index an
	// archive of the given size: the load commands of thin members cost
	// little; a fat member costs its slices before the last.
	zipIndexBudget = func(size int64) uint64 { return 64<<20 + 8*uint64(max(size, 0)) }
	// maxZipMember bounds a member inflated into memory for a lookup.
	maxZipMember uint64 = 4 << 30
)

// maxFatArchs is the most slices image.ReadFatArchs reads from a fat
// header.
const maxFatArchs = 64

// sideFiles is what Symbols indexes besides Mach-O files on disk.
type sideFiles struct {
	// members maps the names zip members are indexed under ("ARCHIVE.zip/
	// member/path") to where they are.
	members map[string]zipMember
	// symbolMaps maps a UUID to its .bcsymbolmap file.
	symbolMaps map[uuid.UUID]string
	// symFiles maps a UUID to the Breakpad .sym files that describe it
	// (breakpad.go).
	symFiles map[uuid.UUID][]string
}

// zipMember is a Mach-O file inside a zip archive.
type zipMember struct {
	archive string // the archive's path
	name    string // the member's name in the archive
}

// addSideFile indexes path when it is a zip archive (.zip, or an app's
// .ipa) or a UUID.bcsymbolmap file, and reports whether it was one of
// those.
func (s *Symbols) addSideFile(path string) (bool, error) {
	if u, ok := symbolMapUUID(path); ok {
		s.addSymbolMap(path, u)
		return true, nil
	}
	// Only names ending in .zip or .ipa are opened to check: a symbols
	// tree holds many files, and each is opened once already.
	if ext := strings.ToLower(filepath.Ext(path)); ext != ".zip" && ext != ".ipa" {
		return false, nil
	}
	if ok, err := looksLikeZip(path); err != nil || !ok {
		return false, err
	}
	return true, s.addZip(path)
}

// looksLikeZip reports whether a file starts as a zip archive does.
func looksLikeZip(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	var magic [4]byte
	if _, err := io.ReadFull(f, magic[:]); err != nil {
		return false, nil
	}
	return string(magic[:]) == "PK\x03\x04", nil
}

// addZip indexes the Mach-O members of a zip archive by UUID. Members that
// cannot be indexed are listed in Skipped.
func (s *Symbols) addZip(path string) error {
	zr, err := zip.OpenReader(path)
	if err != nil {
		return fmt.Errorf("symbols: %s: %w", path, err)
	}
	defer zr.Close()
	st, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("symbols: %w", err)
	}
	budget := &budgetReader{left: zipIndexBudget(st.Size())}
	for i, zf := range zr.File {
		where := path + "/" + zf.Name
		if zf.FileInfo().IsDir() || zf.UncompressedSize64 < 4 {
			continue
		}
		if err := checkZipRatio(zf); err != nil {
			s.skip(where, err)
			continue
		}
		uuids, err := zipMemberUUIDs(zf, budget)
		if errors.Is(err, errBudget) {
			s.skip(path, fmt.Errorf("zip: stopped indexing at member %d of %d (%s): %w", i+1, len(zr.File), zf.Name, err))
			return nil
		}
		if err != nil {
			s.skip(where, err)
			continue
		}
		if len(uuids) == 0 {
			continue
		}
		var stale []*load
		s.mu.Lock()
		if s.side.members == nil {
			s.side.members = map[string]zipMember{}
		}
		s.side.members[where] = zipMember{archive: path, name: zf.Name}
		for _, u := range uuids {
			if !contains(s.byUUID[u], where) {
				s.byUUID[u] = append(s.byUUID[u], where)
				if ld := s.forgetLoad(u); ld != nil {
					stale = append(stale, ld)
				}
			}
		}
		s.mu.Unlock()
		for _, ld := range stale {
			ld.refs.release()
		}
	}
	return nil
}

// checkZipRatio refuses a member whose declared size its compressed bytes
// cannot honestly hold.
func checkZipRatio(zf *zip.File) error {
	if zf.UncompressedSize64 <= zipRatioFloor {
		return nil
	}
	if zf.UncompressedSize64/max(zf.CompressedSize64, 1) > maxZipRatio {
		return fmt.Errorf("zip: member declares %d bytes from %d compressed (more than %d:1): skipped as a likely zip bomb",
			zf.UncompressedSize64, zf.CompressedSize64, maxZipRatio)
	}
	return nil
}

// errBudget says the bytes allowed for indexing an archive are spent.
var errBudget = errors.New("zip: indexing budget of inflated bytes spent")

// budgetReader counts what is inflated while an archive is indexed.
type budgetReader struct {
	r    io.Reader
	left uint64
}

func (b *budgetReader) Read(p []byte) (int, error) {
	if b.left == 0 {
		return 0, errBudget
	}
	if uint64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= uint64(n)
	return n, err
}

// zipMemberUUIDs returns the UUIDs of a member's slices, or none when it is
// not Mach-O. It reads forward only, from the start of the member to the
// last slice's load commands, through budget.
func zipMemberUUIDs(zf *zip.File, budget *budgetReader) ([]uuid.UUID, error) {
	rc, err := zf.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	budget.r = io.LimitReader(rc, int64(min(zf.UncompressedSize64, 1<<62)))
	r := &offsetReader{r: budget}
	var magic [8]byte
	if err := r.readFull(magic[:4]); err != nil {
		return nil, err
	}
	switch image.Sniff(magic[:4]) {
	case image.KindThin:
		u, ok, err := readSliceUUID(r, magic[:4])
		if err != nil || !ok {
			return nil, err
		}
		return []uuid.UUID{u}, nil
	case image.KindFat:
		return readFatUUIDs(r, magic[:4], zf.UncompressedSize64)
	}
	return nil, nil
}

// offsetReader reads forward, knowing where it is.
type offsetReader struct {
	r   io.Reader
	off uint64
}

func (o *offsetReader) readFull(p []byte) error {
	n, err := io.ReadFull(o.r, p)
	o.off += uint64(n)
	if err != nil {
		return fmt.Errorf("zip member: at offset %#x: %w", o.off, err)
	}
	return nil
}

// readUpTo reads n bytes, growing its buffer only as they come.
func (o *offsetReader) readUpTo(n uint64) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(o.r, int64(n)))
	o.off += uint64(len(data))
	if err == nil && uint64(len(data)) < n {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return nil, fmt.Errorf("zip member: at offset %#x: %w", o.off, err)
	}
	return data, nil
}

// skipTo discards up to off.
func (o *offsetReader) skipTo(off uint64) error {
	if off < o.off {
		return fmt.Errorf("zip member: offset %#x is behind the reader (%#x)", off, o.off)
	}
	n, err := io.CopyN(io.Discard, o.r, int64(off-o.off))
	o.off += uint64(n)
	if err != nil {
		return fmt.Errorf("zip member: skipping to offset %#x: %w", off, err)
	}
	return nil
}

// streamAt presents the bytes of a forward-only reader as an io.ReaderAt
// for image's readers of headers and load commands: it keeps what it has
// read, and reads no further than the furthest byte asked for, so that the
// reader is where a caller next skips from. Memory grows with the bytes
// read, never with what a header declares.
type streamAt struct {
	r   *offsetReader
	buf []byte // the bytes from where the stream was when streamAt was made
	err error  // the reader's first error, which image reports only as text
}

func (s *streamAt) ReadAt(p []byte, off int64) (int, error) {
	if end := off + int64(len(p)); end > int64(len(s.buf)) {
		more, err := s.r.readUpTo(uint64(end - int64(len(s.buf))))
		s.buf = append(s.buf, more...)
		if err != nil {
			if s.err == nil {
				s.err = err
			}
			return 0, err
		}
	}
	return copy(p, s.buf[off:]), nil
}

// readSliceUUID reads a mach header whose magic was just read, and its load
// commands, and returns LC_UUID's value. The size is left unknown to image,
// so that its reads allocate as the bytes arrive (at most 1 MiB ahead), not
// what a header declares.
func readSliceUUID(r *offsetReader, magic []byte) (uuid.UUID, bool, error) {
	sa := &streamAt{r: r, buf: bytes.Clone(magic)}
	_, u, err := image.Peek(sa, -1)
	if errors.Is(sa.err, errBudget) {
		return u, !u.IsZero(), sa.err
	}
	return u, !u.IsZero(), err
}

// readFatUUIDs reads a fat header whose magic was just read and the UUIDs
// of its slices, in file order.
func readFatUUIDs(r *offsetReader, magic []byte, size uint64) ([]uuid.UUID, error) {
	sa := &streamAt{r: r, buf: bytes.Clone(magic)}
	arches, errs, err := image.ReadFatArchs(sa, int64(min(size, 1<<62)))
	if errors.Is(sa.err, errBudget) {
		return nil, sa.err
	}
	if err != nil {
		return nil, fmt.Errorf("zip member: fat header: %w", err)
	}
	sort.Slice(arches, func(i, j int) bool { return arches[i].Offset < arches[j].Offset })
	var uuids []uuid.UUID
	for _, a := range arches {
		off := a.Offset
		if off < r.off || off >= size {
			errs = append(errs, fmt.Errorf("zip member: fat slice at offset %#x overlaps or lies outside the member", off))
			continue
		}
		if err := r.skipTo(off); err != nil {
			return uuids, err
		}
		var magic [4]byte
		if err := r.readFull(magic[:]); err != nil {
			return uuids, err
		}
		if image.Sniff(magic[:]) != image.KindThin {
			errs = append(errs, fmt.Errorf("zip member: fat slice at offset %#x is not Mach-O", off))
			continue
		}
		u, ok, err := readSliceUUID(r, magic[:])
		if err != nil {
			if errors.Is(err, errBudget) {
				return uuids, err
			}
			errs = append(errs, err)
			continue
		}
		if ok {
			uuids = append(uuids, u)
		}
	}
	if len(uuids) == 0 {
		return nil, errors.Join(errs...)
	}
	return uuids, nil
}

// membersOf returns the zip members among paths: paths that name a
// member of an archive rather than a file. The caller holds the lock.
func (si *sideFiles) membersOf(paths []string) map[string]zipMember {
	var out map[string]zipMember
	for _, p := range paths {
		if m, ok := si.members[p]; ok {
			if out == nil {
				out = map[string]zipMember{}
			}
			out[p] = m
		}
	}
	return out
}

// openSymbolFile opens a symbol file: a file on disk, or a member of a
// zip archive (read into memory, bounded by its declared size).
func openSymbolFile(path string, members map[string]zipMember) (*image.File, error) {
	m, ok := members[path]
	if !ok {
		return image.Open(path)
	}
	data, err := readZipMember(m)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return image.NewFile(bytes.NewReader(data), path)
}

// readZipMember inflates one member, bounded by its declared size.
func readZipMember(m zipMember) ([]byte, error) {
	zr, err := zip.OpenReader(m.archive)
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	for _, zf := range zr.File {
		if zf.Name != m.name {
			continue
		}
		if err := checkZipRatio(zf); err != nil {
			return nil, err
		}
		if zf.UncompressedSize64 > maxZipMember {
			return nil, fmt.Errorf("zip: member declares %d bytes, more than the %d read into memory", zf.UncompressedSize64, maxZipMember)
		}
		rc, err := zf.Open()
		if err != nil {
			return nil, err
		}
		defer rc.Close()
		// Memory grows with what is inflated, not with what is declared.
		data, err := io.ReadAll(io.LimitReader(rc, int64(zf.UncompressedSize64)))
		if err != nil {
			return nil, fmt.Errorf("zip: inflating member: %w", err)
		}
		if uint64(len(data)) != zf.UncompressedSize64 {
			return nil, fmt.Errorf("zip: member inflates to %d bytes, declares %d", len(data), zf.UncompressedSize64)
		}
		return data, nil
	}
	return nil, fmt.Errorf("zip: no member %q in %s any more", m.name, m.archive)
}
