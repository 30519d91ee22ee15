package aggregate

import (
	"archive/tar"
	"archive/zip"
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"

	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/internal/mmapfile"
	"github.com/stackimage/stackimage/open"
	"github.com/stackimage/stackimage/symbolize"
)

// MaxInputBytes bounds one input read whole (a report inside an archive,
// a gzip-compressed dump): the largest format limit of package open.
const MaxInputBytes = open.MaxDumpSize

// Input is one input found under the paths given to WalkInputs.
type Input struct {
	// Name is the file's path, or "ARCHIVE:MEMBER" for an archive's member.
	Name string
	// Size is the size in bytes, -1 when unknown.
	Size int64
	// Path is the file's path when the input is a file of its own (not an
	// archive's member): a minidump or core is then read in place.
	Path string
	// Open opens the input for reading.
	Open func() (io.ReadCloser, error)
}

// WalkInputs calls fn for every input under paths: a file, every regular
// file below a directory (recursively, in lexical order), and every member
// of a zip or tar archive (tar gzip-compressed too), told by their content.
// Symbolic links are followed, to files and to directories, except a link
// to a directory that holds it (a cycle), which is passed over: a folder
// of links to reports is read as the reports. An error of fn stops the
// walk; one path that cannot be read (a dangling link, say) is passed to
// onError and the walk goes on.
func WalkInputs(paths []string, fn func(Input) error, onError func(name string, err error)) error {
	for _, root := range paths {
		info, err := os.Stat(root)
		if err != nil {
			onError(root, err)
			continue
		}
		if !info.IsDir() {
			err = walkFile(root, info, fn, onError)
		} else {
			err = walkDir(root, []fs.FileInfo{info}, fn, onError)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// walkDir walks the directory dir, whose own and ancestors' infos are in
// parents (dir's last): a link to any of them would walk in a circle.
func walkDir(dir string, parents []fs.FileInfo, fn func(Input) error, onError func(string, error)) error {
	entries, err := os.ReadDir(dir) // sorted by name
	if err != nil {
		onError(dir, err)
	}
	for _, d := range entries {
		path := filepath.Join(dir, d.Name())
		var info fs.FileInfo
		if d.Type()&fs.ModeSymlink != 0 {
			info, err = os.Stat(path) // the link's target
		} else {
			info, err = d.Info()
		}
		if err != nil {
			onError(path, err)
			continue
		}
		switch {
		case info.IsDir():
			if slices.ContainsFunc(parents, func(p fs.FileInfo) bool { return os.SameFile(p, info) }) {
				continue // a link back up the tree
			}
			err = walkDir(path, append(parents[:len(parents):len(parents)], info), fn, onError)
		case info.Mode().IsRegular():
			err = walkFile(path, info, fn, onError)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// walkFile passes a file on, or each member when it is an archive.
func walkFile(path string, info fs.FileInfo, fn func(Input) error, onError func(string, error)) error {
	if !info.Mode().IsRegular() {
		onError(path, fmt.Errorf("not a regular file"))
		return nil
	}
	kind, err := archiveKind(path)
	if err != nil {
		onError(path, err)
		return nil
	}
	switch kind {
	case "zip":
		zr, err := zip.OpenReader(path)
		if err != nil {
			onError(path, err)
			return nil
		}
		defer zr.Close()
		for _, f := range zr.File {
			if f.FileInfo().IsDir() || !f.Mode().IsRegular() {
				continue
			}
			// Read whole here, as a tar member is: the archive is closed
			// when the walk moves on, and the reading may come later.
			name := path + ":" + f.Name
			data, err := readMember(f)
			if err != nil {
				onError(name, err)
				continue
			}
			if err := fn(memoryInput(name, data)); err != nil {
				return err
			}
		}
		return nil
	case "tar", "tar.gz":
		return walkTar(path, kind == "tar.gz", fn, onError)
	}
	return fn(Input{Name: path, Size: info.Size(), Path: path, Open: func() (io.ReadCloser, error) { return os.Open(path) }})
}

// archiveKind tells a zip or tar archive (tar gzip-compressed too) by
// its content; "" for any other file.
func archiveKind(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	switch {
	case bytes.HasPrefix(head, []byte("PK\x03\x04")):
		return "zip", nil
	case isTarHeader(head):
		return "tar", nil
	case bytes.HasPrefix(head, gzipMagic):
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return "", err
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			return "", nil // not gzip after all: let the readers say
		}
		inner := make([]byte, 512)
		n, _ := io.ReadFull(zr, inner)
		if isTarHeader(inner[:n]) {
			return "tar.gz", nil
		}
	}
	return "", nil
}

func isTarHeader(head []byte) bool {
	return len(head) >= 263 && bytes.Equal(head[257:262], []byte("ustar"))
}

// readMember reads a zip member whole, at most MaxInputBytes.
func readMember(f *zip.File) ([]byte, error) {
	if f.UncompressedSize64 > MaxInputBytes {
		return nil, fmt.Errorf("larger than %d bytes", int64(MaxInputBytes))
	}
	rc, err := f.Open()
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, MaxInputBytes+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxInputBytes {
		return nil, fmt.Errorf("larger than %d bytes", int64(MaxInputBytes))
	}
	return data, nil
}

func memoryInput(name string, data []byte) Input {
	return Input{Name: name, Size: int64(len(data)), Open: func() (io.ReadCloser, error) {
		return io.NopCloser(bytes.NewReader(data)), nil
	}}
}

// walkTar passes each regular member of a tar archive on, read whole
// (a tar is read in order, so a member cannot be reopened later).
func walkTar(path string, compressed bool, fn func(Input) error, onError func(string, error)) error {
	f, err := os.Open(path)
	if err != nil {
		onError(path, err)
		return nil
	}
	defer f.Close()
	var r io.Reader = bufio.NewReader(f)
	if compressed {
		zr, err := gzip.NewReader(r)
		if err != nil {
			onError(path, err)
			return nil
		}
		r = zr
	}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			onError(path, err)
			return nil
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		name := path + ":" + h.Name
		if h.Size > MaxInputBytes {
			onError(name, fmt.Errorf("larger than %d bytes", int64(MaxInputBytes)))
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			onError(name, err)
			return nil
		}
		if err := fn(memoryInput(name, data)); err != nil {
			return err
		}
	}
}

// Loader reads inputs into an aggregator: stream-format files record by
// record, any other input through the library's door (package open),
// several inputs at once.
type Loader struct {
	// Aggregator receives the records.
	Aggregator *Aggregator
	// Symbolizer walks memory dumps (snapshots, minidumps, cores); nil
	// refuses them, unless SymbolizerFor is set. Reports need none.
	Symbolizer *symbolize.Symbolizer
	// SymbolizerFor, when Symbolizer is nil, gives the symbolizer for the
	// memory dumps of one input, made for their images (a service finds
	// those images' symbol files first); release is called when the
	// input's records are made.
	SymbolizerFor func(ctx context.Context, dumps []*dump.Dump) (z *symbolize.Symbolizer, release func())
	// Labels are given to every record read from a dump (records of the
	// stream format carry their own).
	Labels map[string]string
	// Threads says which threads of each dump are counted: those the
	// input means (ThreadsByInput, the zero value: a crash's crashed
	// thread, every thread of a sampled process) or all of them.
	Threads Threads
	// OnWarning hears of an input counted otherwise than it asked: a
	// crash with no crashed thread, whose every thread was counted. Nil
	// ignores them.
	OnWarning func(name, warning string)
	// Workers is how many inputs are read at once; zero means GOMAXPROCS.
	Workers int
	// OnError hears of each input or record that could not be read; the
	// load goes on. Nil ignores them.
	OnError func(name string, err error)
	// OnInput hears of each input read, with its size; nil for none.
	OnInput func(name string, size int64)

	mu sync.Mutex // serializes the aggregator and the callbacks
}

// loadWorker is what one of Load's workers keeps from one input to the
// next.
type loadWorker struct {
	ips ipsReader
	// buf holds the last file read whole, for the next one, when nothing
	// kept it.
	buf []byte
	// order, in Load, has the worker count its input (seq) only after
	// every input found before it.
	order *inputOrder
	seq   int
	// counting says the worker has its turn to count.
	counting bool
}

// inputOrder is the order in which Load's workers count their inputs:
// the order WalkInputs found them. The workers read their inputs at
// once, and count them one after another, in that order: the counting
// is serialized in any case (it was under one lock), and counting in a
// known order makes the aggregate the same whatever the workers and
// however the machine runs them, down to which stack of a group is its
// representative when two weigh the same (the first counted).
type inputOrder struct {
	mu   sync.Mutex
	cond sync.Cond
	next int // the input to count next
}

// takeTurn waits until every input before w's is counted; w then counts.
func (w *loadWorker) takeTurn() {
	if w.order == nil || w.counting {
		return
	}
	o := w.order
	o.mu.Lock()
	for o.next != w.seq {
		o.cond.Wait()
	}
	o.mu.Unlock()
	w.counting = true
}

// passTurn ends w's turn (taking it first if w did not count).
func (w *loadWorker) passTurn() {
	if w.order == nil {
		return
	}
	w.takeTurn()
	o := w.order
	o.mu.Lock()
	o.next++
	o.mu.Unlock()
	o.cond.Broadcast()
	w.counting = false
}

// Load reads every input under paths (WalkInputs), several at once, and
// counts them in the order they were found (inputOrder).
func (l *Loader) Load(ctx context.Context, paths []string) error {
	type foundInput struct {
		Input
		seq int
	}
	workers := l.workers()
	inputs := make(chan foundInput, workers)
	order := &inputOrder{}
	order.cond.L = &order.mu
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w := &loadWorker{order: order}
			for in := range inputs {
				w.seq = in.seq
				l.loadOne(ctx, w, in.Input)
				w.passTurn()
			}
		}()
	}
	seq := 0
	err := WalkInputs(paths, func(in Input) error {
		select {
		case inputs <- foundInput{in, seq}:
			seq++
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}, l.fail)
	close(inputs)
	wg.Wait()
	if err == nil {
		err = ctx.Err()
	}
	return err
}

func (l *Loader) fail(name string, err error) {
	if l.OnError == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.OnError(name, err)
}

// add counts records, in w's turn.
func (l *Loader) add(w *loadWorker, recs []*Record) {
	w.takeTurn()
	l.mu.Lock()
	l.Aggregator.AddBatch(recs)
	l.mu.Unlock()
}

// loadOne reads one input.
func (l *Loader) loadOne(ctx context.Context, w *loadWorker, in Input) {
	if ctx.Err() != nil {
		return
	}
	rc, err := in.Open()
	if err != nil {
		w.takeTurn()
		l.fail(in.Name, err)
		return
	}
	defer rc.Close()
	// A file of its own is read in place (a minidump, a core) or whole,
	// through the handle open already.
	var file io.ReaderAt
	if f, ok := rc.(*os.File); ok && in.Path != "" {
		file = f
	}
	err = l.read(ctx, w, in.Name, rc, file, in.Size)
	// The input's errors and progress are told in its turn too.
	w.takeTurn()
	if err != nil {
		l.fail(in.Name, err)
	}
	if l.OnInput != nil {
		l.mu.Lock()
		l.OnInput(in.Name, in.Size)
		l.mu.Unlock()
	}
}

// Read reads one input from r: the stream format (gzip-compressed or
// not) or anything package open reads (gzip-compressed too). Bad records
// of a stream go to OnError with their line; the error is for an input
// that could not be read at all, or only in part.
func (l *Loader) Read(ctx context.Context, name string, r io.Reader) error {
	return l.read(ctx, &loadWorker{}, name, r, nil, 0)
}

// read is Read for the input w reads; file, when set, is the file of
// size bytes that r reads from its start. A file up to open.SniffSize is
// then read whole with one read into w's buffer, a larger minidump or
// core opened from it in place, and any other dump read whole from it,
// without a second open.
func (l *Loader) read(ctx context.Context, w *loadWorker, name string, r io.Reader, file io.ReaderAt, size int64) error {
	if file != nil && size > 0 && size <= open.SniffSize {
		// A file the sniffers see whole (a report, most snapshots) is
		// read whole at once, into the worker's buffer.
		if int64(cap(w.buf)) < size {
			w.buf = make([]byte, size)
		}
		data := w.buf[:size]
		n, err := file.ReadAt(data, 0)
		if err != nil && err != io.EOF {
			return err
		}
		data = data[:n]
		if !bytes.HasPrefix(data, gzipMagic) {
			if IsStream(data[:min(len(data), 512)]) {
				// Read in place; nothing keeps the buffer after.
				return l.readStreamData(ctx, w, name, data, nil)
			}
			return l.addBytes(ctx, w, name, data, true)
		}
		w.buf = nil // r reads it
		r, file = bytes.NewReader(data), nil
	}
	if file != nil && size > 0 {
		head := make([]byte, min(size, 512))
		n, err := file.ReadAt(head, 0)
		if err != nil && err != io.EOF {
			return err
		}
		if head = head[:n]; !bytes.HasPrefix(head, gzipMagic) {
			if !IsStream(head) {
				opened, err := open.ReaderAt(ctx, file, size)
				return l.addOpened(ctx, w, name, opened, err)
			}
			// A stream file is mapped and read in place when it can be;
			// otherwise (a system without mmap, a file that refuses it)
			// it is read as any reader is, below.
			if f, ok := file.(*os.File); ok {
				if m, err := mapStreamFile(f.Name()); err == nil && m != nil {
					data := m.Bytes()
					err := l.readStreamData(ctx, w, name, data, func(from, to int) { releaseMapped(data, from, to) })
					if cerr := m.Close(); err == nil {
						err = cerr
					}
					return err
				}
			}
		}
	}
	br := bufio.NewReaderSize(r, 64<<10)
	head, _ := br.Peek(2)
	var src io.Reader = br
	if bytes.Equal(head, gzipMagic) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return fmt.Errorf("gzip: %w", err)
		}
		defer zr.Close()
		src = bufio.NewReaderSize(zr, 64<<10)
	}
	sr := src.(*bufio.Reader)
	head, _ = sr.Peek(512)
	if IsStream(head) {
		return l.readStream(ctx, w, name, sr)
	}
	data, err := io.ReadAll(io.LimitReader(sr, MaxInputBytes+1))
	if err != nil {
		return err
	}
	if len(data) > MaxInputBytes {
		return fmt.Errorf("larger than %d bytes", int64(MaxInputBytes))
	}
	return l.addBytes(ctx, w, name, data, false)
}

// addBytes adds the records of an input held whole in data; inBuf says
// data is w's buffer. An .ips report the sniffers see whole goes through
// ipsReader, which gives the records the door's dump would give at a
// fraction of the cost; anything else, and any report it does not read,
// through the door, which then takes the buffer (the dumps it makes may
// keep slices of it).
func (l *Loader) addBytes(ctx context.Context, w *loadWorker, name string, data []byte, inBuf bool) error {
	if len(data) <= open.SniffSize {
		if f, err := open.Sniff(data); err == nil && f.Format == dump.FormatIPS {
			if recs, warning, ok := w.ips.read(data, l.Labels, l.Threads); ok {
				l.add(w, recs)
				l.warn(name, warning)
				return nil
			}
		}
	}
	if inBuf {
		w.buf = nil
	}
	opened, err := open.Bytes(data)
	return l.addOpened(ctx, w, name, opened, err)
}

// addOpened adds the records of an opened input; err is the error that
// opening it returned.
func (l *Loader) addOpened(ctx context.Context, w *loadWorker, name string, opened *open.Input, err error) error {
	if opened == nil {
		return err
	}
	defer opened.Close()
	if opened.Hang != nil {
		l.add(w, HangRecords(opened.Hang, l.Labels))
		return err
	}
	if opened.MetricKit != nil {
		recs, warning, rerr := metricKitRecords(opened.MetricKit, l.Labels, l.Threads)
		l.add(w, recs)
		l.warn(name, warning)
		return errors.Join(err, rerr)
	}
	z := l.Symbolizer
	if z == nil && l.SymbolizerFor != nil && slices.ContainsFunc(opened.Dumps, func(d *dump.Dump) bool { return !d.Format.IsReport() }) {
		var release func()
		z, release = l.SymbolizerFor(ctx, opened.Dumps)
		defer release()
	}
	var all []*Record
	var warning string
	for _, d := range opened.Dumps {
		recs, dwarn, derr := dumpRecords(ctx, z, d, l.Labels, l.Threads)
		if derr != nil && err == nil {
			err = derr
		}
		if warning == "" {
			warning = dwarn
		}
		all = append(all, recs...)
	}
	l.add(w, all)
	l.warn(name, warning)
	return err
}

// warn tells OnWarning of an input's warning, in w's turn (after add);
// an empty warning is none.
func (l *Loader) warn(name, warning string) {
	if warning == "" || l.OnWarning == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.OnWarning(name, warning)
}

// readStream reads the stream format, decoding on the loader's workers
// and counting in stream order on one goroutine while the next records
// are read and decoded: the counts, and the order stacks and samples
// are numbered in, are those of one goroutine reading alone, whatever
// the number of cores. The counting waits for w's turn (inputOrder);
// the decoding starts at once.
func (l *Loader) readStream(ctx context.Context, w *loadWorker, name string, r io.Reader) error {
	rd, err := NewReader(r)
	if err != nil {
		return err
	}
	defer rd.Close()
	return rd.readAll(ctx, l.workers(), true, l.Aggregator, l.countStream(w, name))
}

// readStreamData is readStream for a stream held in memory (a mapped
// file, a file read whole), not compressed: its lines are read in place,
// and each part read is passed to release when it is not nil.
func (l *Loader) readStreamData(ctx context.Context, w *loadWorker, name string, data []byte, release func(from, to int)) error {
	return newMemoryReader(data, release).readAll(ctx, l.workers(), true, l.Aggregator, l.countStream(w, name))
}

// mapStreamFile maps a stream file (nil where it cannot be); a
// variable, so that the tests can make it fail.
var mapStreamFile = mmapfile.Map

// countStream counts a stream's records, batch by batch, in w's turn.
// The aggregator keeps nothing of the records, so that their arrays are
// decoded into again.
func (l *Loader) countStream(w *loadWorker, name string) func([]*Record, []*RecordError) error {
	return func(recs []*Record, bad []*RecordError) error {
		w.takeTurn()
		for _, re := range bad {
			l.fail(name, re)
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		l.Aggregator.AddBatch(recs)
		return nil
	}
}

func (l *Loader) workers() int {
	if l.Workers > 0 {
		return l.Workers
	}
	return runtime.GOMAXPROCS(0)
}
