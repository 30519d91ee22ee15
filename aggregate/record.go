package aggregate

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/stackimage/stackimage/uuid"
)

// Limits of the stream format. They bound what one record may cost, so
// that a hostile stream costs at most this much per line; nothing a record
// declares sizes an allocation.
const (
	// MaxRecordBytes is the longest record line.
	MaxRecordBytes = 1 << 20
	// MaxFrames is the most frames one record may hold.
	MaxFrames = 4096
	// MaxImages is the most images one record may list.
	MaxImages = 4096
	// MaxLabels is the most labels one record may carry.
	MaxLabels = 64
	// MaxImageSets is the most distinct image_set names one stream may
	// define.
	MaxImageSets = 1 << 16
)

// Record is one captured stack of the stream format.
type Record struct {
	// Images are the images loaded when the stack was captured; a record
	// may instead name an image set an earlier record defined (ImageSet).
	Images []Image `json:"images,omitempty"`
	// ImageSet names the record's image list: a record with Images and
	// ImageSet defines the set (or replaces it), a record with ImageSet
	// alone reuses it. Streams of many stacks from one process list the
	// images once.
	ImageSet string `json:"image_set,omitempty"`
	// Frames are absolute instruction addresses, innermost first: the PC,
	// then return addresses.
	Frames Addresses `json:"frames"`
	// Thread is the thread's name, when known.
	Thread string `json:"thread,omitempty"`
	// Timestamp is when the stack was captured (RFC 3339); zero when not
	// given.
	Timestamp time.Time `json:"timestamp,omitzero"`
	// Device, OSVersion and AppVersion say where the stack was captured.
	Device     string `json:"device,omitempty"`
	OSVersion  string `json:"os_version,omitempty"`
	AppVersion string `json:"app_version,omitempty"`
	// Labels are free key/value pairs: the watched API's name, a test
	// case, a build flavour.
	Labels map[string]string `json:"labels,omitempty"`
	// Weight is what the stack counts for in profiles (samples, a
	// duration); zero or absent means 1.
	Weight int64 `json:"weight,omitempty"`

	// names are the reporter's own function names, by frame ("" for
	// none), for a record made from a report: used where no symbol file
	// names the address.
	names []string
	// placed are the frames placed by the goroutine that decoded the
	// record, when it could.
	placed placedFrames
}

// Image is one loaded image of a record.
type Image struct {
	UUID uuid.UUID `json:"-"`
	// LoadAddress is where the image's Mach-O header was loaded.
	LoadAddress Address `json:"load_address"`
	// Size is the mapped size from LoadAddress; 0 when unknown (the image
	// then reaches up to the next image).
	Size Address `json:"size,omitempty"`
	Name string  `json:"name"`
	Path string  `json:"path,omitempty"`
	// Main marks the main executable. When no image of a record is marked,
	// the first is taken as the main executable, as Apple's reports list
	// it first.
	Main bool `json:"main,omitempty"`
}

// imageJSON is Image as the stream spells it.
type imageJSON struct {
	UUID        string  `json:"uuid"`
	LoadAddress Address `json:"load_address"`
	Size        Address `json:"size,omitempty"`
	Name        string  `json:"name"`
	Path        string  `json:"path,omitempty"`
	Main        bool    `json:"main,omitempty"`
}

// UnmarshalJSON reads an image, its UUID with or without dashes.
func (im *Image) UnmarshalJSON(data []byte) error {
	var j struct {
		imageJSON
		LoadAddress json.RawMessage `json:"load_address"`
		Size        json.RawMessage `json:"size"`
	}
	if err := json.Unmarshal(data, &j); err != nil {
		var fe *fieldError
		if errors.As(err, &fe) {
			return &fieldError{"images." + fe.field, fe.err}
		}
		return &fieldError{"images" + dotField(jsonField(err)), jsonCause(err)}
	}
	id, err := uuid.Parse(j.UUID)
	if err != nil {
		return &fieldError{"images.uuid", err}
	}
	if j.LoadAddress == nil {
		return &fieldError{"images.load_address", errors.New("missing")}
	}
	load, err := parseAddress(j.LoadAddress)
	if err != nil {
		return &fieldError{"images.load_address", err}
	}
	var size uint64
	if j.Size != nil {
		if size, err = parseAddress(j.Size); err != nil {
			return &fieldError{"images.size", err}
		}
	}
	*im = Image{UUID: id, LoadAddress: Address(load), Size: Address(size), Name: j.Name, Path: j.Path, Main: j.Main}
	return nil
}

// MarshalJSON writes an image as the stream spells it.
func (im Image) MarshalJSON() ([]byte, error) {
	return json.Marshal(imageJSON{UUID: im.UUID.String(), LoadAddress: im.LoadAddress, Size: im.Size,
		Name: im.Name, Path: im.Path, Main: im.Main})
}

func dotField(f string) string {
	if f == "" {
		return ""
	}
	return "." + f
}

// fieldError is a decoding error of one of our own fields: encoding/json
// does not say which field a method's error is about, so the error does.
type fieldError struct {
	field string
	err   error
}

func (e *fieldError) Error() string { return e.field + ": " + e.err.Error() }

// Address is an address in the stream format: a JSON number or a string
// of hexadecimal digits after "0x".
type Address uint64

// UnmarshalJSON reads a number or a "0x…" string.
func (a *Address) UnmarshalJSON(data []byte) error {
	v, err := parseAddress(data)
	if err != nil {
		return &fieldError{"address", err}
	}
	*a = Address(v)
	return nil
}

// MarshalJSON writes the address as a "0x…" string.
func (a Address) MarshalJSON() ([]byte, error) {
	return []byte(`"0x` + strconv.FormatUint(uint64(a), 16) + `"`), nil
}

// Addresses is a record's frames. It decodes its whole array at once:
// one call per record instead of one per address.
type Addresses []uint64

// UnmarshalJSON reads an array of numbers or "0x…" strings.
func (as *Addresses) UnmarshalJSON(data []byte) error {
	if err := as.unmarshal(data); err != nil {
		return &fieldError{"frames", err}
	}
	return nil
}

func (as *Addresses) unmarshal(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) < 2 || data[0] != '[' || data[len(data)-1] != ']' {
		return errors.New("not an array")
	}
	body := data[1 : len(data)-1]
	out := (*as)[:0]
	for k := 0; ; k++ {
		body = bytes.TrimLeft(body, " \t\r\n")
		if len(body) == 0 {
			if k > 0 {
				return errors.New("trailing comma")
			}
			break
		}
		if len(out) == MaxFrames {
			return fmt.Errorf("more than %d frames", MaxFrames)
		}
		end := bytes.IndexByte(body, ',')
		item := body
		if end >= 0 {
			item = body[:end]
		}
		v, err := parseAddress(bytes.TrimSpace(item))
		if err != nil {
			return fmt.Errorf("[%d]: %w", k, err)
		}
		out = append(out, v)
		if end < 0 {
			break
		}
		body = body[end+1:]
		if len(bytes.TrimSpace(body)) == 0 {
			return errors.New("trailing comma")
		}
	}
	*as = out
	return nil
}

// parseAddress reads a JSON number or a "0x…" string as an address.
func parseAddress(data []byte) (uint64, error) {
	if len(data) >= 2 && data[0] == '"' && data[len(data)-1] == '"' {
		s := string(data[1 : len(data)-1])
		if !strings.HasPrefix(s, "0x") && !strings.HasPrefix(s, "0X") {
			return 0, fmt.Errorf("address %q: a string address starts with 0x", s)
		}
		v, err := strconv.ParseUint(s[2:], 16, 64)
		if err != nil {
			return 0, fmt.Errorf("address %q: not a 64-bit hexadecimal number", s)
		}
		return v, nil
	}
	v, err := strconv.ParseUint(string(data), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("address %.40s: not an unsigned 64-bit number or 0x string", data)
	}
	return v, nil
}

// RecordError is a record the reader could not take. The stream goes on:
// the next call to Next reads the next line.
type RecordError struct {
	Line  int    // 1-based line number in the (decompressed) stream
	Field string // the JSON field at fault, "" for the record as a whole
	Err   error
}

func (e *RecordError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("line %d: %v", e.Line, e.Err)
	}
	return fmt.Sprintf("line %d: %s: %v", e.Line, e.Field, e.Err)
}

func (e *RecordError) Unwrap() error { return e.Err }

// Reader reads records of the stream format.
type Reader struct {
	r         *bufio.Reader
	mem       []byte             // the stream, when held in memory (r is then nil)
	release   func(from, to int) // when set, called with each part of mem read
	closer    io.Closer          // the gzip reader, when compressed
	line      int
	imageSets map[string][]Image
	done      bool
}

var gzipMagic = []byte{0x1f, 0x8b}

// NewReader reads the stream format from r, gzip-compressed or not: the
// first two bytes tell.
func NewReader(r io.Reader) (*Reader, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	rd := &Reader{imageSets: map[string][]Image{}}
	if head, _ := br.Peek(2); bytes.Equal(head, gzipMagic) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		rd.closer = zr
		br = bufio.NewReaderSize(zr, 64<<10)
	}
	rd.r = br
	return rd, nil
}

// newMemoryReader reads the stream format, not compressed, held in
// memory: ReadAll's goroutines then read its lines in place. The reader
// keeps no part of data once ReadAll returns (the records' strings are
// copies), so that data may be a mapped file, unmapped after.
// release, when not nil, is called with each part of data once it is
// read (from any goroutine).
func newMemoryReader(data []byte, release func(from, to int)) *Reader {
	return &Reader{mem: data, release: release, imageSets: map[string][]Image{}}
}

// IsStream reports whether head, an input's first bytes (decompressed),
// looks like the stream format: a JSON object whose first field is one of
// the record's.
func IsStream(head []byte) bool {
	head = bytes.TrimLeft(head, "\ufeff \t\r\n")
	if len(head) == 0 || head[0] != '{' {
		return false
	}
	head = bytes.TrimLeft(head[1:], " \t")
	for _, key := range []string{`"images"`, `"image_set"`, `"frames"`} {
		if bytes.HasPrefix(head, []byte(key)) {
			return true
		}
	}
	return false
}

// Close releases the decompressor, if any; it does not close the
// underlying reader.
func (rd *Reader) Close() error {
	if rd.closer != nil {
		return rd.closer.Close()
	}
	return nil
}

// Line returns the number of the line last read.
func (rd *Reader) Line() int { return rd.line }

// Next returns the next record. At the end of the stream it returns
// io.EOF; a bad record is a *RecordError, after which Next goes on with
// the next line; any other error (a read or decompression failure) ends
// the stream.
func (rd *Reader) Next() (*Record, error) {
	for {
		if rd.done {
			return nil, io.EOF
		}
		line, err := rd.readLine()
		if err == io.EOF {
			rd.done = true
			if len(line) == 0 {
				return nil, io.EOF
			}
		} else if err != nil {
			return nil, err
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue // blank lines separate nothing
		}
		rec := &Record{}
		if err := rd.decode(line, rec); err != nil {
			return nil, err
		}
		return rec, nil
	}
}

// readLine reads one line without its newline, at most MaxRecordBytes. A
// longer line is a *RecordError and is skipped to its end.
func (rd *Reader) readLine() ([]byte, error) {
	rd.line++
	var buf []byte
	for {
		chunk, err := rd.r.ReadSlice('\n')
		if len(buf)+len(chunk) > MaxRecordBytes+1 {
			for err == bufio.ErrBufferFull {
				_, err = rd.r.ReadSlice('\n')
			}
			if err != nil && err != io.EOF {
				return nil, err
			}
			if err == io.EOF {
				rd.done = true
			}
			return nil, &RecordError{Line: rd.line, Err: fmt.Errorf("record longer than %d bytes", MaxRecordBytes)}
		}
		if err == bufio.ErrBufferFull {
			buf = append(buf, chunk...)
			continue
		}
		if buf != nil {
			chunk = append(buf, chunk...)
		}
		return bytes.TrimSuffix(chunk, []byte("\n")), err
	}
}

// decode parses one line into rec and checks it, resolving image sets.
func (rd *Reader) decode(line []byte, rec *Record) error {
	if err := decodeLine(line, rd.line, rec); err != nil {
		return err
	}
	return rd.resolve(rec, rd.line)
}

// decodeLine parses and checks one line without the stream's state: it
// may run on many lines at once.
func decodeLine(line []byte, lineNo int, rec *Record) error {
	return decodeLineCached(line, lineNo, rec, nil)
}

// decodeLineCached is decodeLine with a decoding goroutine's cache.
func decodeLineCached(line []byte, lineNo int, rec *Record, cache *decodeCache) error {
	if err := decodeFastCached(line, rec, cache); err != nil {
		*rec = Record{}
		if err := json.Unmarshal(line, rec); err != nil {
			return &RecordError{Line: lineNo, Field: jsonField(err), Err: jsonCause(err)}
		}
	}
	fail := func(field string, format string, args ...any) error {
		return &RecordError{Line: lineNo, Field: field, Err: fmt.Errorf(format, args...)}
	}
	if len(rec.Frames) == 0 {
		return fail("frames", "missing or empty")
	}
	if len(rec.Images) > MaxImages {
		return fail("images", "more than %d images", MaxImages)
	}
	if len(rec.Labels) > MaxLabels {
		return fail("labels", "more than %d labels", MaxLabels)
	}
	if rec.Weight < 0 {
		return fail("weight", "negative (%d)", rec.Weight)
	}
	for i, im := range rec.Images {
		if im.Name == "" {
			return fail(fmt.Sprintf("images[%d].name", i), "missing")
		}
	}
	return nil
}

// resolve defines or looks up the record's image set, in stream order.
func (rd *Reader) resolve(rec *Record, lineNo int) error {
	fail := func(format string, args ...any) error {
		return &RecordError{Line: lineNo, Field: "image_set", Err: fmt.Errorf(format, args...)}
	}
	switch {
	case rec.ImageSet != "" && rec.Images != nil:
		if _, ok := rd.imageSets[rec.ImageSet]; !ok && len(rd.imageSets) >= MaxImageSets {
			return fail("more than %d image sets in one stream", MaxImageSets)
		}
		rd.imageSets[rec.ImageSet] = rec.Images
	case rec.ImageSet != "":
		ims, ok := rd.imageSets[rec.ImageSet]
		if !ok {
			return fail("%q was not defined by an earlier record", rec.ImageSet)
		}
		rec.Images = ims
	}
	return nil
}

// batchLines is how many lines one decoding job holds when the stream is
// read from an io.Reader; batchBytes how many bytes of a stream held in
// memory one job takes (whole lines: about a thousand records of the
// benchmark's 500 bytes).
const (
	batchLines = 1024
	batchBytes = 512 << 10
)

// lineBatch is lines read in order, for decoding on many goroutines.
type lineBatch struct {
	seq int
	// firstLine is the number of the batch's first line; 0 until the
	// batch is delivered, for a stream held in memory (its batches are
	// cut on many goroutines, which do not count the lines before them).
	firstLine int
	data      []byte         // the lines copied from a reader, or a stream in memory's batch until decode splits it
	memFrom   int            // where data starts in a stream held in memory
	lines     [][]byte       // the batch's lines, without their newlines
	errs      []*RecordError // lines that could not be read (too long), by index; nil for none
	recs      []*Record      // decoded; nil where errs or decodeErr say why
	decodeErr []error
	// held are the records' arrays, to reuse once the records are
	// counted; nil when the records are the caller's to keep.
	held *batchRecords
}

// batchRecords are the arrays a batch's records are decoded into.
type batchRecords struct {
	recs   []Record
	ptrs   []*Record
	frames []uint64
	refs   []frameRef // the frames placed (recordPlacer)
	lines  [][]byte   // a stream in memory's lines, while they are decoded
	errs   []error    // the records' errors, until delivered
}

// recordArrays are the arrays of batches whose records were counted,
// for the next batches: a million records would otherwise allocate
// about 450 MB, for the collector to take back.
var recordArrays sync.Pool

// ReadAll reads the whole stream, decoding on up to workers goroutines
// (zero means one), and calls fn with the records in stream order, a
// batch at a time, and with each bad record's *RecordError. fn runs on
// the calling goroutine. It returns the first error of fn, of reading, or
// of ctx. Records whose labels are spelled alike may share one Labels
// map: treat it as read-only.
func (rd *Reader) ReadAll(ctx context.Context, workers int, fn func(recs []*Record, bad []*RecordError) error) error {
	return rd.readAll(ctx, workers, false, nil, fn)
}

// readAll is ReadAll; reuse says fn keeps nothing of the records it is
// given (neither them nor their frames) once it returns, so that their
// arrays are decoded into again. With placeFor, the decoding goroutines
// also place the records' frames for that aggregator (recordPlacer).
func (rd *Reader) readAll(ctx context.Context, workers int, reuse bool, placeFor *Aggregator, fn func(recs []*Record, bad []*RecordError) error) error {
	workers = max(workers, 1)
	done := make(chan *lineBatch, workers)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	readErr := make(chan error, 1)
	var next func() *lineBatch // the next batch to decode, nil at the end
	if rd.mem != nil {
		// A stream held in memory: each decoding goroutine cuts its next
		// batch itself and reads its lines in place.
		cut := &memoryBatches{data: rd.mem}
		next = cut.next
	} else {
		jobs := make(chan *lineBatch, workers)
		next = func() *lineBatch { return <-jobs }
		go func() { // the reader: lines in order, in batches
			defer close(jobs)
			for seq := 0; ; seq++ {
				b, err := rd.readBatch(seq)
				if b != nil {
					select {
					case jobs <- b:
					case <-ctx.Done():
						return
					}
				}
				if err != nil {
					if err != io.EOF {
						readErr <- err
					}
					return
				}
			}
		}()
	}
	// A batch is taken only when fewer than maxAhead are taken and not
	// yet delivered: a slow batch holds the others back, so that the
	// batches decoded after it wait in bounded memory, and so that no
	// batch is decoded long before the image sets it uses are defined.
	maxAhead := 2 * workers
	ahead := make(chan struct{}, maxAhead)
	var guesses *imageSetGuesses
	if placeFor != nil {
		guesses = newImageSetGuesses()
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cache := newDecodeCache()
			var placer *recordPlacer
			if placeFor != nil {
				placer = newRecordPlacer(placeFor, guesses)
			}
			for {
				select {
				case ahead <- struct{}{}:
				case <-ctx.Done():
					return
				}
				b := next()
				if b == nil || ctx.Err() != nil {
					return
				}
				from, to := b.memFrom, b.memFrom+len(b.data)
				b.decode(cache, reuse, placer)
				if rd.release != nil {
					rd.release(from, to)
				}
				select {
				case done <- b:
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	go func() { wg.Wait(); close(done) }()
	pending := map[int]*lineBatch{}
	nextSeq := 0
	var fnErr error
	for b := range done {
		if fnErr != nil {
			continue // drain
		}
		pending[b.seq] = b
		for {
			b, ok := pending[nextSeq]
			if !ok {
				break
			}
			delete(pending, nextSeq)
			nextSeq++
			<-ahead
			fnErr = rd.deliver(b, fn)
			if b.held != nil {
				recordArrays.Put(b.held)
			}
			if fnErr != nil {
				cancel()
				break
			}
		}
	}
	if fnErr != nil {
		return fnErr
	}
	select {
	case err := <-readErr:
		return err
	default:
	}
	return ctx.Err()
}

// memoryBatches cuts a stream held in memory into batches of whole
// lines, about batchBytes each, in order, for the decoding goroutines
// to take in turn.
type memoryBatches struct {
	mu   sync.Mutex
	data []byte
	at   int // where the next batch starts
	seq  int
}

func (m *memoryBatches) next() *lineBatch {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.at >= len(m.data) {
		return nil
	}
	start, end := m.at, len(m.data)
	if start+batchBytes < end {
		if i := bytes.IndexByte(m.data[start+batchBytes:], '\n'); i >= 0 {
			end = start + batchBytes + i + 1
		}
	}
	m.at = end
	b := &lineBatch{seq: m.seq, memFrom: start}
	m.seq++
	b.data = m.data[start:end] // split into lines by decode, outside the lock
	return b
}

// splitLines makes the batch's lines of data, whole lines, the last
// without a newline when the stream ends without one. A line longer
// than MaxRecordBytes is a *RecordError, numbered from the batch's
// first line (deliver numbers it in the stream).
func (b *lineBatch) splitLines(data []byte) {
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if len(line) > MaxRecordBytes {
			if b.errs == nil {
				b.errs = make([]*RecordError, 0, 1)
			}
			for len(b.errs) < len(b.lines) {
				b.errs = append(b.errs, nil)
			}
			b.errs = append(b.errs, &RecordError{Line: len(b.lines) + 1, Err: fmt.Errorf("record longer than %d bytes", MaxRecordBytes)})
			line = nil
		}
		b.lines = append(b.lines, line)
	}
	if b.errs != nil {
		for len(b.errs) < len(b.lines) {
			b.errs = append(b.errs, nil)
		}
	}
}

// batchBuffers are the lines' buffers of decoded batches, for the next
// batches: a batch's lines are not needed once decoded.
var batchBuffers sync.Pool

// readBatch reads up to batchLines lines; io.EOF with the last of them.
// A line too long to read is a *RecordError numbered from the batch's
// first line, as decode numbers the records' errors.
func (rd *Reader) readBatch(seq int) (*lineBatch, error) {
	b := &lineBatch{seq: seq, firstLine: rd.line + 1}
	if buf, ok := batchBuffers.Get().(*[]byte); ok {
		b.data = (*buf)[:0]
	}
	ends := make([]int, 0, batchLines)
	var err error
	for len(ends) < batchLines {
		if rd.done {
			err = io.EOF
			break
		}
		line, lerr := rd.readLine()
		var re *RecordError
		switch {
		case errors.As(lerr, &re):
			if b.errs == nil {
				b.errs = make([]*RecordError, batchLines)
			}
			re.Line = len(ends) + 1
			b.errs[len(ends)] = re
			ends = append(ends, len(b.data))
			continue
		case lerr == io.EOF:
			rd.done = true
		case lerr != nil:
			err = lerr
		}
		if err != nil {
			break
		}
		b.data = append(b.data, line...)
		ends = append(ends, len(b.data))
	}
	b.lines = make([][]byte, len(ends))
	start := 0
	for k, end := range ends {
		b.lines[k] = b.data[start:end:end]
		start = end
	}
	if b.errs != nil {
		b.errs = b.errs[:len(ends)]
	}
	return b, err
}

// decode decodes a batch's lines, each on its own, and places their
// frames with placer when it is not nil; reuse takes the records' arrays
// from those of batches already counted. The records'
// frames share one array, sized by the lines' length (a frame takes at
// least two bytes of JSON). A record's error is numbered from the
// batch's first line.
func (b *lineBatch) decode(cache *decodeCache, reuse bool, placer *recordPlacer) {
	var held *batchRecords
	if reuse {
		held, _ = recordArrays.Get().(*batchRecords)
	}
	if held == nil {
		held = &batchRecords{}
	}
	inPlace := b.lines == nil // a batch of a stream held in memory
	if inPlace {
		b.lines = held.lines[:0]
		b.splitLines(b.data)
		held.lines = b.lines
	}
	n, size := len(b.lines), 0
	for _, line := range b.lines {
		size += len(line)
	}
	if cap(held.recs) < n {
		held.recs, held.ptrs = make([]Record, n), make([]*Record, n)
	}
	if cap(held.frames) < size/16 {
		held.frames = make([]uint64, 0, size/16)
	}
	if cap(held.errs) < n {
		held.errs = make([]error, n)
	}
	recs, frames := held.recs[:n], held.frames[:0]
	b.recs = held.ptrs[:n]
	b.decodeErr = held.errs[:n]
	clear(b.decodeErr)
	if reuse {
		b.held = held
	}
	for k, line := range b.lines {
		b.recs[k] = nil
		if b.errs != nil && b.errs[k] != nil || len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		rec := &recs[k]
		*rec = Record{Frames: frames[len(frames):]}
		if err := decodeLineCached(line, k+1, rec, cache); err != nil {
			b.decodeErr[k] = err
			continue
		}
		if n := len(rec.Frames); n > 0 && n <= cap(frames)-len(frames) && &rec.Frames[0] == &frames[:len(frames)+1][len(frames)] {
			frames = frames[:len(frames)+n]
			rec.Frames = rec.Frames[:n:n] // an append to them must not reach the next record's
		}
		b.recs[k] = rec
	}
	if placer != nil {
		if cap(held.refs) < len(frames) {
			held.refs = make([]frameRef, 0, len(frames))
		}
		held.refs = placer.placeBatch(b.recs, held.refs)
	}
	if inPlace {
		clear(held.lines) // no slice of the stream is kept past its reading
	}
	b.lines = nil
	if !inPlace {
		data := b.data
		batchBuffers.Put(&data)
	}
	b.data = nil
}

// deliver numbers a decoded batch's lines, resolves its image sets in
// order and passes it on.
func (rd *Reader) deliver(b *lineBatch, fn func([]*Record, []*RecordError) error) error {
	if b.firstLine == 0 {
		b.firstLine = rd.line + 1
		rd.line += len(b.recs)
	}
	recs := make([]*Record, 0, len(b.recs))
	var bad []*RecordError
	for k, rec := range b.recs {
		var err error
		switch {
		case b.errs != nil && b.errs[k] != nil:
			err = b.errs[k]
		case b.decodeErr[k] != nil:
			err = b.decodeErr[k]
		case rec == nil:
			continue // a blank line
		default:
			err = rd.resolve(rec, b.firstLine+k)
		}
		if err != nil {
			var re *RecordError
			if !errors.As(err, &re) {
				re = &RecordError{Line: b.firstLine + k, Err: err}
			} else if b.errs != nil && b.errs[k] != nil || b.decodeErr[k] != nil {
				re.Line += b.firstLine - 1 // numbered from the batch's first line
			}
			bad = append(bad, re)
			continue
		}
		recs = append(recs, rec)
	}
	return fn(recs, bad)
}

// jsonField names the field a decoding error is about, as a path.
func jsonField(err error) string {
	var fe *fieldError
	if errors.As(err, &fe) {
		return fe.field
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return te.Field
	}
	return ""
}

// jsonCause is the decoding error without Go type names where a plainer
// message exists.
func jsonCause(err error) error {
	var fe *fieldError
	if errors.As(err, &fe) {
		return fe.err
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Errorf("a JSON %s where %s is expected", te.Value, jsonKind(te.Type.Kind().String()))
	}
	return err
}

func jsonKind(goKind string) string {
	switch {
	case strings.HasPrefix(goKind, "int"), strings.HasPrefix(goKind, "uint"), strings.HasPrefix(goKind, "float"):
		return "a number"
	case goKind == "string":
		return "a string"
	case goKind == "bool":
		return "true or false"
	case goKind == "slice", goKind == "array":
		return "an array"
	case goKind == "map", goKind == "struct":
		return "an object"
	}
	return goKind
}
