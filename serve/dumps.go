package serve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"runtime"
	"strings"

	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/internal/spill"
	"github.com/stackimage/stackimage/open"
	"github.com/stackimage/stackimage/report"
	"github.com/stackimage/stackimage/symbolicator"
	"github.com/stackimage/stackimage/symbolize"
	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/symstore/indexcache"
	"github.com/stackimage/stackimage/uuid"
)

// spool copies r, at most max bytes, into memory or, when larger than
// memoryBodyBytes, a temporary file of the cache: a large minidump costs
// disk, not memory, and its parser reads it in place.
func (s *Server) spool(r io.Reader, max int64) (*spill.Buffer, error) {
	buf := spill.New(s.tmpDir, memoryBodyBytes)
	n, err := io.Copy(buf, io.LimitReader(r, max+1))
	if err == nil && n > max {
		err = &http.MaxBytesError{Limit: max}
	}
	if err != nil {
		buf.Close()
		return nil, err
	}
	return buf, nil
}

// spoolRequest is spool for a request's whole body: the buffer its body
// was read ahead into (body.go) when there is one, else a copy.
func (s *Server) spoolRequest(w http.ResponseWriter, r *http.Request, max int64) (*spill.Buffer, error) {
	if rb, ok := r.Body.(*readBodyResult); ok {
		if rb.buf.Size() > max {
			return nil, &http.MaxBytesError{Limit: max}
		}
		// The handler closes the buffer; the Body, closed too, is left
		// with nothing.
		buf := rb.buf
		rb.buf = spill.New("", 0)
		return buf, nil
	}
	return s.spool(http.MaxBytesReader(w, r.Body, max+1), max)
}

// openBody opens a spooled body through the library's front door: its
// format told by content, every process it lists a dump. An input read
// only in part comes back with the error that cut it, which the answer's
// warnings carry.
func openBody(ctx context.Context, body *spill.Buffer) (*open.Input, error) {
	if body.Size() == 0 {
		return nil, errors.New("empty body: want a dump or report")
	}
	in, err := open.ReaderAt(ctx, body, body.Size())
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
func (s *Server) multipartDump(w http.ResponseWriter, r *http.Request, field string, max int64) (*spill.Buffer, []json.RawMessage, bool) {
	r.Body = http.MaxBytesReader(w, r.Body, max+1<<20)
	mr, err := r.MultipartReader()
	if err != nil {
		writeError(w, http.StatusBadRequest, "want a multipart/form-data body with the field %q: %v", field, err)
		return nil, nil, false
	}
	var body *spill.Buffer
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
		s.answerDump(ctx, in.Dump(), openErr, only, nil, out)
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
	return &symbolize.Symbolizer{Symbols: syms, MaxTotalFrames: s.cfg.Limits.MaxFrames, NoDemangle: noDemangle,
		Entries: found.Entry}
}

// dumpSymbols is what one dump request sees of the service's symbols,
// found before the walk (indexcache.Request).
type dumpSymbols struct{ *indexcache.Request }

func (d *dumpSymbols) close() { d.Request.Close() }

// found is what was found for a UUID, as symbolicator's answer says it.
func (d *dumpSymbols) found(id uuid.UUID) *symbolicator.Found {
	f := d.Found(id)
	if f == nil {
		return nil
	}
	out := &symbolicator.Found{Status: f.Status, Source: f.Source, Location: f.Location}
	if f.Err != nil {
		out.Err = f.Err.Error()
	}
	if ix := f.Index; ix != nil {
		out.Status, out.Arch, out.HasDebug, out.HasUnwind = symbolicator.StatusFound, ix.Arch, ix.HasDebug, len(f.MachO) > 0
		out.Err = ix.DegradedError()
	}
	return out
}

// findSymbols finds the index and Mach-O files of every image of the
// dumps, from the sources only (nil: every source), at most
// limits.max_request_fetches at a time (indexcache.Cache.Find).
func (s *Server) findSymbols(ctx context.Context, dumps []*dump.Dump, only []*source) *dumpSymbols {
	return &dumpSymbols{s.cache.Find(ctx, dumps, origins(only), s.cfg.Limits.MaxRequestFetches)}
}

// stacktraceWriter is a report.Writer that encodes a dump's threads as
// symbolicator's stack traces as they are symbolicated and passes the
// answer on in pieces (answerEncoder), so that the memory an answer takes
// is one thread's and a buffer's, however large the answer.
type stacktraceWriter struct {
	e      *answerEncoder
	answer *symbolicator.Answer
	frames int
}

func (w *stacktraceWriter) Begin(*dump.Dump) error { return nil }

func (w *stacktraceWriter) Thread(th symbolize.Thread) error {
	w.e.b = w.answer.AppendThread(w.e.b, th)
	w.e.passOn()
	w.frames += len(th.Frames)
	// A client gone stops the walk.
	return w.e.err
}

func (w *stacktraceWriter) End(*symbolize.Report) error { return nil }
func (w *stacktraceWriter) Close() error                { return nil }

// spareCores is how many cores a request may take to name a long
// backtrace: its own and those no other request in flight holds, so that
// a busy service names each backtrace on one goroutine, without the
// hand-offs that only pay on idle cores.
func (s *Server) spareCores() int {
	return max(1, runtime.GOMAXPROCS(0)-(len(s.slots)-1))
}

// answerDump answers a dump in symbolicator's shape, written to out
// stack trace by stack trace as the threads are symbolicated: a dump read
// from a file (/minidump, /applecrashreport), or a /symbolicate request
// made one (wire). The answer's fields come in the order they are known:
// status, signal, crashed and arch, the stack traces, the modules, then
// the warnings (symbolicator's clients read the object by key). Images
// whose symbols were not found by the deadline are left without and say
// "timeout"; a deadline met during the walk keeps the threads done, and
// the warnings say where it stopped. openErr is what cut the input short,
// if anything.
func (s *Server) answerDump(ctx context.Context, d *dump.Dump, openErr error, only []*source, wire *symbolicator.Input, out answerOut) {
	fetch := d
	if wire != nil {
		fetch = wire.Fetch
	}
	found := s.findSymbols(ctx, []*dump.Dump{fetch}, only)
	defer found.close()
	z := s.symbolizer(found, wire != nil && wire.Request.Options.NoDemangle)
	if wire != nil {
		// The request's frames are bounded by limits.max_frames already;
		// each names the functions inlined at it, as many as its symbols
		// say.
		z.MaxTotalFrames = math.MaxInt
	}
	// stacktraceWriter encodes each thread's frames as they come and
	// keeps none.
	z.ReuseFrames = true
	defer z.Symbols.Close()
	modules := symbolicator.AnswerModules(d, wire, found.found, indexcache.Walked(d))
	answer := symbolicator.NewAnswer(d, wire, modules)
	z.EncodeFrames = answer.EncodeFrames
	z.Workers = s.spareCores()
	answer.Workers = z.Workers
	e := newAnswerEncoder(out)
	defer e.close()
	e.b = answer.AppendHead(e.b)
	sw := &stacktraceWriter{e: e, answer: answer}
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
	e.b = answer.AppendTail(e.b, warnings)
	e.end()
}
