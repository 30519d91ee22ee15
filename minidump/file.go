// Package minidump reads and writes minidumps: Microsoft's MINIDUMP_*
// format with the Breakpad and Crashpad extensions, as Crashpad (Chrome,
// Electron, Sentry) and Breakpad write them on macOS and iOS.
//
// Open reads only the header and the stream directory; each stream is read
// when asked for, and memory contents are read on demand through Memory, so
// that a dump of many gigabytes opens at the cost of its directory. Parse
// reads every stream this package knows into a Dump.
//
// Damaged input never panics: every problem is a *FormatError naming the
// stream (type and directory index) and the byte offset, and what could
// still be read is returned beside it. Nothing read from the file sizes an
// allocation without first being bounded by the bytes the file holds.
package minidump

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"
	"unicode/utf16"
)

var le = binary.LittleEndian

// A FormatError reports damage in a minidump: where it is and what is
// wrong. Index is the stream's position in the directory, or -1 for the
// header and the directory itself.
type FormatError struct {
	Stream StreamType
	Index  int
	Off    int64 // byte offset in the file
	Msg    string
}

func (e *FormatError) Error() string {
	if e.Index < 0 {
		return fmt.Sprintf("minidump: at byte %#x: %s", e.Off, e.Msg)
	}
	return fmt.Sprintf("minidump: stream %d (%s, type %#x) at byte %#x: %s",
		e.Index, e.Stream, uint32(e.Stream), e.Off, e.Msg)
}

// Header is the MINIDUMP_HEADER.
type Header struct {
	Version      uint32 // MINIDUMP_VERSION (0xa793) in the low 16 bits
	StreamCount  uint32
	DirectoryRVA uint32
	Checksum     uint32
	Time         time.Time // TimeDateStamp, when the dump was written
	Flags        uint64    // MINIDUMP_TYPE
}

// A Stream is one entry of the stream directory.
type Stream struct {
	Type   StreamType
	Index  int    // position in the directory
	Offset uint32 // RVA: byte offset of the stream in the file
	Size   uint32 // DataSize
	// Err is non-nil when the entry cannot be read (it points outside the
	// file); the stream is then treated as absent.
	Err error
}

// A File is an open minidump. Its methods read the streams from the
// underlying io.ReaderAt each time they are called. A File is safe for
// concurrent use when its io.ReaderAt is.
type File struct {
	r    io.ReaderAt
	size int64

	Header  Header
	Streams []Stream // in directory order
	// Errors lists the problems in the directory: entries outside the file,
	// overlapping streams, duplicate stream types.
	Errors []error
}

// Open reads the header and stream directory of a minidump of the given
// size. It returns an error only when the header or the whole directory is
// unreadable; damaged entries are listed in File.Errors.
func Open(r io.ReaderAt, size int64) (*File, error) {
	f := &File{r: r, size: size}
	hdr, err := f.readAt(0, headerSize)
	if err != nil {
		return nil, &FormatError{Index: -1, Msg: fmt.Sprintf("reading header: %v", err)}
	}
	if sig := le.Uint32(hdr); sig != headerSignature {
		return nil, &FormatError{Index: -1, Msg: fmt.Sprintf("signature %#x is not MDMP (%#x)", sig, headerSignature)}
	}
	f.Header = Header{
		Version:      le.Uint32(hdr[4:]),
		StreamCount:  le.Uint32(hdr[8:]),
		DirectoryRVA: le.Uint32(hdr[12:]),
		Checksum:     le.Uint32(hdr[16:]),
		Time:         time.Unix(int64(le.Uint32(hdr[20:])), 0).UTC(),
		Flags:        le.Uint64(hdr[24:]),
	}
	if v := f.Header.Version & 0xffff; v != headerVersion {
		return nil, &FormatError{Index: -1, Off: 4, Msg: fmt.Sprintf("version %#x is not MINIDUMP_VERSION (%#x)", v, headerVersion)}
	}

	// Read only the entries the file holds, however many the header claims.
	dirOff := int64(f.Header.DirectoryRVA)
	count := int64(f.Header.StreamCount)
	if avail := (size - dirOff) / directorySize; dirOff > size || count > avail {
		if dirOff > size {
			avail = 0
		}
		f.Errors = append(f.Errors, &FormatError{Index: -1, Off: dirOff,
			Msg: fmt.Sprintf("directory of %d entries × %d bytes runs past the end of the file (%d bytes); reading %d",
				count, directorySize, size, avail)})
		count = avail
	}
	dir, err := f.readAt(dirOff, count*directorySize)
	if err != nil {
		return nil, &FormatError{Index: -1, Off: dirOff, Msg: fmt.Sprintf("reading directory: %v", err)}
	}
	f.Streams = make([]Stream, count)
	for i := range f.Streams {
		e := dir[i*directorySize:]
		s := &f.Streams[i]
		*s = Stream{Type: StreamType(le.Uint32(e)), Index: i, Size: le.Uint32(e[4:]), Offset: le.Uint32(e[8:])}
		if end := int64(s.Offset) + int64(s.Size); end > size {
			s.Err = f.errf(s, int64(s.Offset), "stream of %d bytes ends at byte %#x, past the end of the file (%d bytes)",
				s.Size, end, size)
			f.Errors = append(f.Errors, s.Err)
		}
	}
	f.checkDirectory()
	return f, nil
}

// checkDirectory reports streams that overlap each other and stream types
// that appear twice (the first is used).
func (f *File) checkDirectory() {
	var live []*Stream
	seen := make(map[StreamType]int)
	for i := range f.Streams {
		s := &f.Streams[i]
		if s.Err != nil || s.Type == StreamUnused {
			continue
		}
		if first, dup := seen[s.Type]; dup {
			f.Errors = append(f.Errors, f.errf(s, int64(s.Offset), "second %s stream (the first, stream %d, is used)", s.Type, first))
		} else {
			seen[s.Type] = i
		}
		if s.Size > 0 {
			live = append(live, s)
		}
	}
	sort.SliceStable(live, func(i, j int) bool { return live[i].Offset < live[j].Offset })
	// Compare each stream with the one reaching furthest before it, which
	// a stream nested in a large one and following a small one needs.
	end := func(s *Stream) uint64 { return uint64(s.Offset) + uint64(s.Size) }
	var furthest *Stream
	for _, s := range live {
		if furthest != nil && uint64(s.Offset) < end(furthest) {
			f.Errors = append(f.Errors, f.errf(s, int64(s.Offset), "overlaps stream %d (%s) at bytes [%#x, %#x)",
				furthest.Index, furthest.Type, furthest.Offset, end(furthest)))
		}
		if furthest == nil || end(s) > end(furthest) {
			furthest = s
		}
	}
}

// Size returns the size of the dump in bytes, as given to Open.
func (f *File) Size() int64 { return f.size }

// Stream returns the first readable stream of the given type, or nil.
func (f *File) Stream(t StreamType) *Stream {
	for i := range f.Streams {
		if s := &f.Streams[i]; s.Type == t && s.Err == nil {
			return s
		}
	}
	return nil
}

// errf returns a FormatError for stream s (nil for the header) at off.
func (f *File) errf(s *Stream, off int64, format string, args ...any) *FormatError {
	e := &FormatError{Index: -1, Off: off, Msg: fmt.Sprintf(format, args...)}
	if s != nil {
		e.Stream, e.Index = s.Type, s.Index
	}
	return e
}

// errTruncated is returned by readAt for a range outside the file.
var errTruncated = errors.New("past the end of the file")

// readAt reads n bytes at off. The range is checked against the file size
// before anything is allocated, so n is bounded by the file's size.
func (f *File) readAt(off, n int64) ([]byte, error) {
	if off < 0 || n < 0 || off > f.size || n > f.size-off {
		return nil, fmt.Errorf("%d bytes at %#x: %w (%d bytes)", n, off, errTruncated, f.size)
	}
	b := make([]byte, n)
	if n == 0 {
		return b, nil
	}
	// io.ReaderAt may return io.EOF with a full read at the end.
	if got, err := f.r.ReadAt(b, off); got < len(b) {
		if err == nil {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("reading %d bytes at %#x: %v", n, off, err)
	}
	return b, nil
}

// A reader reads the streams of a File for one call of a public method. It
// charges every read of stream data and of what streams point at (strings,
// contexts, CodeView records, annotations) to a budget a few times the file's
// size: entries of a damaged dump may all point at the same large blob, and
// the budget keeps the allocations linear in the file's size.
type reader struct {
	*File
	budget int64

	sys     *SystemInfo // the system info stream, once read
	sysDone bool
}

// readBudgetFactor bounds the bytes a reader reads to this many times the
// file's size (plus readBudgetSlack).
const (
	readBudgetFactor = 4
	readBudgetSlack  = 1 << 16
)

func (f *File) newReader() *reader {
	return &reader{File: f, budget: readBudgetFactor*f.size + readBudgetSlack}
}

// read reads n bytes at off, charging them to the budget.
func (r *reader) read(off, n int64) ([]byte, error) {
	if n > r.budget {
		return nil, fmt.Errorf("%d bytes at %#x: the dump refers to more data than %d times its size", n, off, readBudgetFactor)
	}
	b, err := r.readAt(off, n)
	if err == nil {
		r.budget -= n
	}
	return b, err
}

// streamData reads the whole of stream s.

func (r *reader) streamData(s *Stream) ([]byte, error) {
	b, err := r.read(int64(s.Offset), int64(s.Size))
	if err != nil {
		return nil, r.errf(s, int64(s.Offset), "%v", err)
	}
	return b, nil
}

// location is a MINIDUMP_LOCATION_DESCRIPTOR.
type location struct {
	Size uint32
	RVA  uint32
}

func readLocation(b []byte) location { return location{Size: le.Uint32(b), RVA: le.Uint32(b[4:])} }

// readLocationData reads what loc points at, refusing more than limit bytes.
func (r *reader) readLocationData(s *Stream, at int64, loc location, limit int64, what string) ([]byte, error) {
	if int64(loc.Size) > limit {
		return nil, r.errf(s, at, "%s of %d bytes is larger than the %d allowed", what, loc.Size, limit)
	}
	b, err := r.read(int64(loc.RVA), int64(loc.Size))
	if err != nil {
		return nil, r.errf(s, at, "%s: %v", what, err)
	}
	return b, nil
}

// listEntries checks a stream that holds a 32-bit count and then count
// entries of entrySize bytes, and returns the entries' bytes. Some writers
// put four bytes of padding after the count to align the entries; a stream
// exactly that size is read that way. When the count claims more entries
// than the stream holds, the entries that fit are returned with an error.
func (r *reader) listEntries(s *Stream, data []byte, entrySize int) ([]byte, int, error) {
	if len(data) < 4 {
		return nil, 0, r.errf(s, int64(s.Offset), "stream of %d bytes is too short for its count", len(data))
	}
	count := uint64(le.Uint32(data))
	start := 4
	if uint64(len(data)) == 8+count*uint64(entrySize) {
		start = 8
	}
	avail := uint64(len(data)-start) / uint64(entrySize)
	var err error
	if count > avail {
		err = r.errf(s, int64(s.Offset), "count %d × %d bytes does not fit in the stream's %d bytes; reading %d",
			count, entrySize, len(data)-start, avail)
		count = avail
	}
	return data[start:], int(count), err
}

// readString reads a MINIDUMP_STRING (a 32-bit byte length, then UTF-16LE).
func (r *reader) readString(s *Stream, at int64, rva uint32) (string, error) {
	lb, err := r.read(int64(rva), 4)
	if err != nil {
		return "", r.errf(s, at, "string at %#x: %v", rva, err)
	}
	n := le.Uint32(lb)
	if n > maxStringBytes {
		return "", r.errf(s, int64(rva), "string length %d is larger than the %d allowed", n, maxStringBytes)
	}
	b, err := r.read(int64(rva)+4, int64(n&^1))
	if err != nil {
		return "", r.errf(s, int64(rva), "string of %d bytes: %v", n, err)
	}
	return decodeUTF16(b), nil
}

// readUTF8String reads a MinidumpUTF8String (a 32-bit length, then bytes).
func (r *reader) readUTF8String(s *Stream, at int64, rva uint32) (string, error) {
	lb, err := r.read(int64(rva), 4)
	if err != nil {
		return "", r.errf(s, at, "string at %#x: %v", rva, err)
	}
	n := le.Uint32(lb)
	if n > maxStringBytes {
		return "", r.errf(s, int64(rva), "string length %d is larger than the %d allowed", n, maxStringBytes)
	}
	b, err := r.read(int64(rva)+4, int64(n))
	if err != nil {
		return "", r.errf(s, int64(rva), "string of %d bytes: %v", n, err)
	}
	return string(b), nil
}

// decodeUTF16 decodes UTF-16LE bytes, dropping a trailing NUL.
func decodeUTF16(b []byte) string {
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = le.Uint16(b[2*i:])
	}
	for len(u) > 0 && u[len(u)-1] == 0 {
		u = u[:len(u)-1]
	}
	return string(utf16.Decode(u))
}

// readByteArray reads a MinidumpByteArray (a 32-bit length, then bytes).
func (r *reader) readByteArray(s *Stream, at int64, rva uint32) ([]byte, error) {
	lb, err := r.read(int64(rva), 4)
	if err != nil {
		return nil, r.errf(s, at, "byte array at %#x: %v", rva, err)
	}
	n := le.Uint32(lb)
	b, err := r.read(int64(rva)+4, int64(n))
	if err != nil {
		return nil, r.errf(s, int64(rva), "byte array of %d bytes: %v", n, err)
	}
	return b, nil
}
