package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/open"
	"github.com/stackimage/stackimage/report"
	"github.com/stackimage/stackimage/symbolize"
	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/uuid"
	"github.com/stackimage/stackimage/walker"
)

// spooled is a request body written to a temporary file, so that a large
// minidump costs disk, not memory: its parser reads it in place.
type spooled struct {
	*os.File
	size int64
}

func (s *spooled) Close() error {
	err := s.File.Close()
	os.Remove(s.File.Name())
	return err
}

// spool copies r, at most max bytes, into a temporary file of the cache.
func (s *Server) spool(r io.Reader, max int64) (*spooled, error) {
	f, err := os.CreateTemp(s.cache.tmp, "body-*")
	if err != nil {
		return nil, err
	}
	n, err := io.Copy(f, io.LimitReader(r, max+1))
	if err == nil && n > max {
		err = &http.MaxBytesError{Limit: max}
	}
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return &spooled{File: f, size: n}, nil
}

// spoolRequest is spool for a request's whole body: the file its body was
// read ahead into (body.go) when there is one, else a copy.
func (s *Server) spoolRequest(w http.ResponseWriter, r *http.Request, max int64) (*spooled, error) {
	if rb, ok := r.Body.(*readBodyResult); ok {
		if rb.size > max {
			return nil, &http.MaxBytesError{Limit: max}
		}
		if f := rb.takeFile(); f != nil {
			return &spooled{File: f, size: rb.size}, nil
		}
	}
	return s.spool(http.MaxBytesReader(w, r.Body, max+1), max)
}

// openBody opens a spooled body through the library's front door: its
// format told by content, every process it lists a dump. An input read
// only in part comes back with the error that cut it, which the answer's
// warnings carry.
func openBody(ctx context.Context, body *spooled) (*open.Input, error) {
	if body.size == 0 {
		return nil, errors.New("empty body: want a dump or report")
	}
	in, err := open.ReaderAt(ctx, body, body.size)
	if in != nil && err == nil && in.Format.Format == dump.FormatMinidump {
		// A minidump's format errors (a stream past the end of a cut
		// file) come as the dump's warnings: they are what cut it.
		if w := in.Dumps[0].Warnings; len(w) > 0 {
			err = fmt.Errorf("minidump read in part: %s", strings.Join(w, "; "))
		}
	}
	if in != nil && err != nil && nothingRead(in) {
		// Cut before anything of use: the client's bytes are at fault.
		return nil, err
	}
	return in, err
}

// nothingRead reports whether an input read in part gave nothing to
// symbolicate: no architecture, thread or image in any of its dumps.
func nothingRead(in *open.Input) bool {
	for _, d := range in.Dumps {
		if d.Arch != nil || len(d.Threads) > 0 || len(d.Images) > 0 {
			return false
		}
	}
	return true
}

// multipartDump reads a multipart body: the file in field, and the
// optional "sources" field.
func (s *Server) multipartDump(w http.ResponseWriter, r *http.Request, field string, max int64) (*spooled, []json.RawMessage, bool) {
	r.Body = http.MaxBytesReader(w, r.Body, max+1<<20)
	mr, err := r.MultipartReader()
	if err != nil {
		writeError(w, http.StatusBadRequest, "want a multipart/form-data body with the field %q: %v", field, err)
		return nil, nil, false
	}
	var body *spooled
	var sources []json.RawMessage
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			if body != nil {
				body.Close()
			}
			bodyError(w, err, "multipart body")
			return nil, nil, false
		}
		switch part.FormName() {
		case field:
			if body != nil {
				body.Close()
			}
			body, err = s.spool(part, max)
		case "sources":
			var data []byte
			data, err = io.ReadAll(io.LimitReader(part, 1<<20))
			if err == nil && len(bytes.TrimSpace(data)) > 0 {
				err = json.Unmarshal(data, &sources)
			}
		}
		part.Close()
		if err != nil {
			if body != nil {
				body.Close()
			}
			bodyError(w, err, "field "+part.FormName())
			return nil, nil, false
		}
	}
	if body == nil {
		writeError(w, http.StatusBadRequest, "the multipart body has no field %q", field)
		return nil, nil, false
	}
	return body, sources, true
}

// handleMinidump is POST /minidump.
func (s *Server) handleMinidump(w http.ResponseWriter, r *http.Request) {
	s.handleMultipart(w, r, "upload_file_minidump", int64(s.cfg.Limits.MaxDumpBody))
}

// handleAppleCrashReport is POST /applecrashreport: a .crash or .ips
// report.
func (s *Server) handleAppleCrashReport(w http.ResponseWriter, r *http.Request) {
	s.handleMultipart(w, r, "apple_crash_report", int64(s.cfg.Limits.MaxReportBody))
}

func (s *Server) handleMultipart(w http.ResponseWriter, r *http.Request, field string, max int64) {
	body, rawSources, ok := s.multipartDump(w, r, field, max)
	if !ok {
		return
	}
	only, err := s.requestSources(rawSources)
	if err != nil {
		body.Close()
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	in, openErr := openBody(r.Context(), body)
	if in == nil {
		body.Close()
		writeError(w, http.StatusBadRequest, "%s: %v", field, openErr)
		return
	}
	if openErr != nil {
		// What could be read is answered; the header says the input was
		// cut, as on POST /v1/symbolicate.
		w.Header().Set("X-Stackimage-Incomplete", headerValue(openErr.Error()))
	}
	s.runStreamed(w, r, func(ctx context.Context, out answerOut) {
		defer body.Close()
		s.symbolicateDump(ctx, in.Dump(), openErr, only, out)
	})
}

// Output formats of POST /v1/symbolicate, as stackimage symbolicate's
// --format names them.
const (
	formatJSON = "json" // our JSON (docs/json.md), the default
	formatText = "text" // our crash-report-like text
	formatSame = "same" // the input's own layout, frames filled in
)

// handleNative is POST /v1/symbolicate: a raw body in any format the
// library's front door reads, answered with what stackimage symbolicate
// --format json|text|same prints for it.
func (s *Server) handleNative(w http.ResponseWriter, r *http.Request) {
	format := r.URL.Query().Get("format")
	switch format {
	case "":
		format = formatJSON
	case formatJSON, formatText, formatSame:
	default:
		writeError(w, http.StatusBadRequest, "format %q: want json, text or same", format)
		return
	}
	if ct := r.Header.Get("Content-Type"); strings.HasPrefix(ct, "multipart/") {
		writeError(w, http.StatusUnsupportedMediaType, "POST /v1/symbolicate takes the raw dump or report as its body, not %s", ct)
		return
	}
	body, err := s.spoolRequest(w, r, int64(s.cfg.Limits.MaxDumpBody))
	if err != nil {
		bodyError(w, err, "request body")
		return
	}
	defer body.Close()
	in, openErr := openBody(r.Context(), body)
	if in == nil {
		writeError(w, http.StatusBadRequest, "%v", openErr)
		return
	}
	if format == formatSame && !report.CanWriteSame(in.Format.Format) {
		writeError(w, http.StatusBadRequest, "format=same writes .crash, .ips, sample and spindump reports; this is %s", open.Article(in.Format.Name))
		return
	}
	ctx, cancel := s.deadline(r.Context())
	defer cancel()
	syms := s.findSymbols(ctx, in.Dumps, nil)
	defer syms.close()
	z := s.symbolizer(syms, r.URL.Query().Get("demangle") == "false")
	defer z.Symbols.Close()

	if format == formatJSON {
		w.Header().Set("Content-Type", "application/json")
	} else {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	}
	if openErr != nil {
		// What could be read is answered; the header says the input was
		// cut, as the command's exit status does.
		w.Header().Set("X-Stackimage-Incomplete", headerValue(openErr.Error()))
	}
	out := &countingWriter{w: w}
	bw := bufio.NewWriterSize(out, 32<<10)
	counted := &frameCounter{}
	switch format {
	case formatSame:
		err = report.WriteSame(ctx, z, in, bw)
	case formatText:
		counted.Writer = report.NewText(bw)
		err = report.Write(ctx, z, in, counted)
	default:
		counted.Writer = report.NewJSON(bw)
		err = report.Write(ctx, z, in, counted)
	}
	s.metrics.frames.Add(float64(counted.frames))
	if err != nil && ctx.Err() == nil && out.n == 0 && bw.Buffered() == 0 {
		writeError(w, http.StatusInternalServerError, "%v", err)
		return
	}
	// A deadline ends the document with the threads done and a warning
	// saying where it stopped; other errors cut it, as they cut the
	// command's output.
	bw.Flush()
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// frameCounter is a report.Writer that counts the frames it passes on,
// for the frames metric.
type frameCounter struct {
	report.Writer
	frames int
}

func (f *frameCounter) Thread(th symbolize.Thread) error {
	f.frames += len(th.Frames)
	return f.Writer.Thread(th)
}

// headerValue makes a message fit for an HTTP header: one line of
// printable ASCII, at most 1 KiB.
func headerValue(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c < 0x20 || c > 0x7e {
			b[i] = ' '
		}
	}
	return string(b[:min(len(b), 1024)])
}

// symbolizer is the symbolizer of one dump request: its symbols are the
// ones found for the request, asked through a symstore.Source.
func (s *Server) symbolizer(found *dumpSymbols, noDemangle bool) *symbolize.Symbolizer {
	syms := symstore.NewSymbols()
	syms.AddSource(found)
	return &symbolize.Symbolizer{Symbols: syms, MaxTotalFrames: s.cfg.Limits.MaxFrames, NoDemangle: noDemangle}
}

// dumpSymbols is what one dump request sees of the service's symbols: for
// each UUID of its images, the index (names, lines, inlined functions) and
// the executable and debug file when a source has them (the unwind tables
// and code the walker reads), found before the walk. It is the
// symstore.Source of the request's Symbols.
type dumpSymbols struct {
	cache *indexCache
	looks map[uuid.UUID]*imageLook
}

// imageLook is what was found for one UUID.
type imageLook struct {
	lookup
	machO []string // the executable and debug file, for the walker
}

// fetchShare is the part of a request's time left that its symbol
// lookups may take, in tenths: the walk of what was found keeps the rest.
const fetchShare = 9

// findSymbols finds the index and Mach-O files of every image of the
// dumps, at most limits.max_request_fetches at a time. Lookups not done
// when nine tenths of ctx's time are gone say "timeout", and the dumps
// are symbolicated without them.
func (s *Server) findSymbols(ctx context.Context, dumps []*dump.Dump, only []*source) *dumpSymbols {
	if dl, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, time.Now().Add(time.Until(dl)*fetchShare/10))
		defer cancel()
	}
	found := &dumpSymbols{cache: s.cache, looks: map[uuid.UUID]*imageLook{}}
	walks := slices.ContainsFunc(dumps, walked)
	type image struct {
		id   uuid.UUID
		name string
		look *imageLook
	}
	var images []image
	for _, d := range dumps {
		for _, im := range d.Images {
			if im.UUID.IsZero() || found.looks[im.UUID] != nil {
				continue
			}
			l := &imageLook{lookup: lookup{status: statusTimeout, err: errNotStarted}}
			found.looks[im.UUID] = l
			images = append(images, image{im.UUID, safeName(im.Name), l})
		}
	}
	forEachBounded(ctx, len(images), s.cfg.Limits.MaxRequestFetches, func(i int) {
		im := images[i]
		im.look.lookup = s.cache.get(ctx, im.id, im.name, only)
		if im.look.index != nil && walks {
			im.look.machO = s.cache.machOFiles(ctx, im.look.index, im.name, only)
		}
	})
	return found
}

// walked reports whether symbolizing d walks a stack, reading unwind
// tables and code: a dump's threads are walked, a report's only when it
// holds stack memory. A report without (most .crash and .ips files)
// needs names alone, and its images' binaries and dSYMs, which can be
// large, are not fetched for it.
func walked(d *dump.Dump) bool {
	if !d.Format.IsReport() || d.Memory != nil {
		return true
	}
	return slices.ContainsFunc(d.Threads, func(th dump.Thread) bool { return th.Stack != nil })
}

// close lets go of the indexes found.
func (d *dumpSymbols) close() {
	for _, l := range d.looks {
		d.cache.release(l.index)
	}
}

// OpenSymbols implements symstore.Source: the UUID's index file, then
// its executable and debug file. A UUID no source has is
// symstore.ErrNoSymbols (the image is listed as missing); one whose lookup
// failed or timed out is an error the answer's warnings carry.
func (d *dumpSymbols) OpenSymbols(_ context.Context, id uuid.UUID, _ *archregs.Arch) ([]symstore.SymbolFile, error) {
	l := d.looks[id]
	switch {
	case l == nil || l.index == nil && l.status == statusMissing:
		return nil, fmt.Errorf("%w %s in the service's sources", symstore.ErrNoSymbols, id)
	case l.index == nil && l.status == statusTimeout:
		return nil, fmt.Errorf("not found before the request's deadline (%s)", statusTimeout)
	case l.index == nil:
		return nil, fmt.Errorf("%s: %v", l.status, l.err)
	}
	index, err := openSymbolFile(l.index.path)
	if err != nil {
		return nil, err
	}
	files := []symstore.SymbolFile{index}
	for _, p := range l.machO {
		// A source's file gone since it was found costs the walk its
		// tables, not the frames their names.
		if f, err := openSymbolFile(p); err == nil {
			files = append(files, f)
		}
	}
	return files, nil
}

// openSymbolFile opens a file on disk as a symstore.SymbolFile.
func openSymbolFile(path string) (symstore.SymbolFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return symstore.SymbolFile{}, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return symstore.SymbolFile{}, err
	}
	return symstore.SymbolFile{Name: path, ReaderAt: f, Size: st.Size(), Closer: f}, nil
}

// stacktraceWriter is a report.Writer that encodes a dump's threads as
// symbolicator's stack traces as they are symbolicated and passes the
// answer on in pieces (answerEncoder), so that the memory an answer takes
// is one thread's and a buffer's, however large the answer.
type stacktraceWriter struct {
	e      *answerEncoder
	count  int // stack traces written
	frames int
}

func (w *stacktraceWriter) Begin(*dump.Dump) error { return nil }

func (w *stacktraceWriter) Thread(th symbolize.Thread) error {
	if w.count > 0 {
		w.e.b = append(w.e.b, ',')
	}
	st := stacktraceOf(th)
	w.e.b = appendStacktrace(w.e.b, &st)
	w.e.passOn()
	w.count++
	w.frames += len(th.Frames)
	// A client gone stops the walk.
	return w.e.err
}

func (w *stacktraceWriter) End(*symbolize.Report) error { return nil }
func (w *stacktraceWriter) Close() error                { return nil }

// symbolicateDump answers a dump in symbolicator's shape, written to out
// stack trace by stack trace as the threads are symbolicated. The
// answer's fields come in the order they are known: status, crashed and
// arch, the stack traces, the modules, then the warnings (symbolicator's
// clients read the object by key). Images whose symbols were not found by
// the deadline are left without and say "timeout"; a deadline met during
// the walk keeps the threads done, and the warnings say where it stopped.
// openErr is what cut the input short, if anything.
func (s *Server) symbolicateDump(ctx context.Context, d *dump.Dump, openErr error, only []*source, out answerOut) {
	found := s.findSymbols(ctx, []*dump.Dump{d}, only)
	defer found.close()
	z := s.symbolizer(found, false)
	defer z.Symbols.Close()
	e := newAnswerEncoder(out)
	defer e.close()
	e.b = append(e.b, `{"status":"completed"`...)
	if d.Crash != nil {
		e.b = append(e.b, `,"crashed":true`...)
	}
	if d.Arch != nil {
		e.b = appendStringField(e.b, `,"arch":`, d.Arch.Name)
	}
	e.b = append(e.b, `,"stacktraces":[`...)
	sw := &stacktraceWriter{e: e}
	rep, err := report.Stream(ctx, z, d, sw)
	s.metrics.frames.Add(float64(sw.frames))
	if e.err != nil {
		return // the client is gone
	}
	var warnings []string
	if openErr != nil {
		warnings = append(warnings, openErr.Error())
	}
	if rep != nil {
		warnings = append(warnings, rep.Warnings...)
	} else if err != nil {
		warnings = append(warnings, err.Error())
	}
	e.b = appendModules(append(e.b, `],"modules":[`...), dumpModules(d, found))
	e.b = append(e.b, ']')
	if len(warnings) > 0 {
		list, _ := json.Marshal(warnings)
		e.b = append(append(e.b, `,"warnings":`...), list...)
	}
	e.b = append(e.b, "}\n"...)
	e.end()
}

// dumpModules lists a dump's images as symbolicator's modules, with what
// was found for each.
func dumpModules(d *dump.Dump, found *dumpSymbols) []completeModule {
	var modules []completeModule
	for _, im := range d.Images {
		m := completeModule{rawModule: rawModule{Type: "macho", DebugID: strings.ToLower(im.UUID.String()), CodeID: simple(im.UUID),
			CodeFile: im.Path, DebugFile: im.Name, ImageAddr: hexValue(im.LoadAddress)}, DebugStatus: statusUnused, Arch: "unknown"}
		if m.CodeFile == "" {
			m.CodeFile = im.Name
		}
		if im.Size > 0 {
			size := hexValue(im.Size)
			m.ImageSize = &size
		}
		l := found.looks[im.UUID]
		switch {
		case im.UUID.IsZero():
			m.DebugStatus, m.Error = statusMissing, "the image has no UUID"
		case l == nil:
		case l.index != nil:
			m.DebugStatus, m.Arch = statusFound, l.index.arch
			m.Features = moduleFeatures{HasDebugInfo: l.index.hasDebug, HasSymbols: true, HasUnwindInfo: len(l.machO) > 0}
			m.Error = l.index.degradedError()
			m.UnwindStatus = statusMissing
			if len(l.machO) > 0 {
				m.UnwindStatus = statusFound
			}
		case l.status != "":
			m.DebugStatus = l.status
			if l.err != nil {
				m.Error = l.err.Error()
			}
		}
		modules = append(modules, m)
	}
	return modules
}

// stacktraceOf turns a symbolicated thread into a response stack trace.
func stacktraceOf(th symbolize.Thread) symbolicatedStacktrace {
	id := th.ID
	crashed := th.Crashed
	st := symbolicatedStacktrace{ThreadID: &id, ThreadName: th.Name, IsRequesting: &crashed,
		StopReason: th.StopReason, Frames: make([]symbolicatedFrame, 0, len(th.Frames))}
	for _, f := range th.Frames {
		sf := symbolicatedFrame{OriginalIndex: f.Index, InstructionAddr: hexValue(f.Address), Package: f.ImagePath,
			Trust: trustOf(f.FoundBy, f.Trust), FoundBy: f.FoundBy.String(), Inlined: f.Inlined}
		if sf.Package == "" {
			sf.Package = f.Image
		}
		switch {
		case f.Symbol != "":
			sf.Status = "symbolicated"
			sf.Function, sf.Symbol = f.Symbol, f.Symbol
			if f.MangledSymbol != "" {
				sf.Symbol = f.MangledSymbol
			}
			if f.HasOffset {
				sf.SymAddr = someHex(f.Address - f.SymbolOffset)
			}
			sf.Lang = langName(f.Lang)
			sf.SymbolSource = f.SymbolSource.String()
			if f.File != "" {
				sf.AbsPath, sf.Filename = f.File, baseName(f.File)
				sf.Lineno, sf.Column = f.Line, f.Column
			}
		case f.Image == "":
			sf.Status = "unknown_image"
		default:
			sf.Status = "missing_symbol"
		}
		st.Frames = append(st.Frames, sf)
	}
	return st
}

func baseName(p string) string {
	if i := strings.LastIndexAny(p, `/\`); i >= 0 {
		return p[i+1:]
	}
	return p
}

// trustOf names how a frame was found in symbolicator's terms (FrameTrust):
// by its finder, and for a scanned frame by the check it passed (a scan
// for the caller of a frame whose unwind row could not be applied is
// symbolicator's cfi_scan).
func trustOf(f symstore.FoundBy, trust walker.Trust) string {
	w, ok := f.Walker()
	if !ok {
		return "prewalked"
	}
	switch w {
	case walker.FoundByContext:
		return "context"
	case walker.FoundByCompactUnwind, walker.FoundByCFI:
		return "cfi"
	case walker.FoundByCode:
		// A rule read from the function's own instructions: the CFA and
		// return-address slot an unwind table would give, so symbolicator's
		// nearest trust is cfi's.
		return "cfi"
	case walker.FoundByScan:
		if trust == walker.TrustCFIScan {
			return "cfi_scan"
		}
		return "scan"
	default:
		return "fp"
	}
}
