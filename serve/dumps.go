package serve

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"

	"github.com/stackimage/stackimage/crashreport"
	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/hangreport"
	"github.com/stackimage/stackimage/machocore"
	"github.com/stackimage/stackimage/minidump"
	"github.com/stackimage/stackimage/snapshot"
	"github.com/stackimage/stackimage/symbolize"
	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/uuid"
	"github.com/stackimage/stackimage/walker"
)

// errUnrecognized is the error for a body in no format we read.
var errUnrecognized = errors.New("unrecognized input: not a minidump, Mach-O core, stackimage snapshot, Apple crash report (.crash or .ips), KSCrash report, or sample/spindump report")

// sniffSize is how much of a body the format checks see.
const sniffSize = 1 << 20

// maxTextDump bounds a text or JSON report read whole into memory.
const maxTextDump = 256 << 20

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

// parseDump reads a body in any format the service reads, told by its
// content. A dump read only in part comes back with the error that
// stopped it; its warnings say so in the answer.
func parseDump(body *spooled) (*dump.Dump, error) {
	head := make([]byte, min(body.size, sniffSize))
	if _, err := body.ReadAt(head, 0); err != nil && err != io.EOF {
		return nil, err
	}
	whole := func(limit int64) ([]byte, error) {
		if body.size > limit {
			return nil, fmt.Errorf("%d bytes: larger than the format's limit of %d", body.size, limit)
		}
		data := make([]byte, body.size)
		_, err := body.ReadAt(data, 0)
		if err == io.EOF {
			err = nil
		}
		return data, err
	}
	switch {
	case bytes.HasPrefix(head, []byte("MDMP")):
		md, err := minidump.Parse(body, body.size)
		if md == nil {
			return nil, fmt.Errorf("minidump: %w", err)
		}
		return md.Dump(), nil
	case isCore(head):
		c, err := machocore.Open(body, body.size)
		if c == nil {
			return nil, fmt.Errorf("Mach-O core: %w", err)
		}
		return c.Dump(), nil
	case isSnapshot(head):
		data, err := whole(maxTextDump)
		if err != nil {
			return nil, err
		}
		snap, err := snapshot.Parse(data)
		if err != nil {
			return nil, fmt.Errorf("snapshot: %w", err)
		}
		return snap.Dump(), nil
	case hangreport.Detect(head):
		data, err := whole(hangreport.MaxInputSize)
		if err != nil {
			return nil, err
		}
		r, err := hangreport.Parse(data)
		if r == nil {
			return nil, fmt.Errorf("sample report: %w", err)
		}
		d := r.Dump()
		if err != nil {
			d.Warnings = append(d.Warnings, err.Error())
		}
		return d, nil
	}
	if _, ok := crashreport.Detect(head); ok {
		data, err := whole(crashreport.MaxReportSize)
		if err != nil {
			return nil, err
		}
		cr, err := crashreport.Parse(data)
		if cr == nil {
			return nil, fmt.Errorf("crash report: %w", err)
		}
		d := cr.Dump()
		if err != nil {
			d.Warnings = append(d.Warnings, err.Error())
		}
		return d, nil
	}
	return nil, errUnrecognized
}

// isCore tells a Mach-O core by its magic and file type (MH_CORE).
func isCore(head []byte) bool {
	if len(head) < 16 {
		return false
	}
	magic := binary.LittleEndian.Uint32(head)
	return (magic == 0xfeedface || magic == 0xfeedfacf) && binary.LittleEndian.Uint32(head[12:]) == 4
}

// isSnapshot tells a stackimage snapshot by its format field near the
// start; other JSON is left to the crash report parsers.
func isSnapshot(head []byte) bool {
	t := bytes.TrimLeft(head, "\ufeff \t\r\n")
	return len(t) > 0 && t[0] == '{' && bytes.Contains(t[:min(len(t), 4096)], []byte(`"stackimage.snapshot/`))
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
	d, err := parseDump(body)
	if err != nil {
		body.Close()
		writeError(w, http.StatusBadRequest, "%s: %v", field, err)
		return
	}
	s.run(w, r, func(ctx context.Context) (int, any) {
		defer body.Close()
		resp, _ := s.symbolicateDump(ctx, d, only, false, false)
		return http.StatusOK, resp
	})
}

// handleNative is POST /v1/symbolicate: a raw body in any format the
// service reads, answered as symbolicator's JSON (format=json, the
// default) or as text (format=text).
func (s *Server) handleNative(w http.ResponseWriter, r *http.Request) {
	format := r.URL.Query().Get("format")
	switch format {
	case "", "json", "text":
	case "same":
		writeError(w, http.StatusNotImplemented, "format=same is not served yet; use json or text")
		return
	default:
		writeError(w, http.StatusBadRequest, "format %q: want json or text", format)
		return
	}
	if ct := r.Header.Get("Content-Type"); strings.HasPrefix(ct, "multipart/") {
		writeError(w, http.StatusUnsupportedMediaType, "POST /v1/symbolicate takes the raw dump or report as its body, not %s", ct)
		return
	}
	body, err := s.spool(http.MaxBytesReader(w, r.Body, int64(s.cfg.Limits.MaxDumpBody)+1), int64(s.cfg.Limits.MaxDumpBody))
	if err != nil {
		bodyError(w, err, "request body")
		return
	}
	defer body.Close()
	d, err := parseDump(body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	ctx, cancel := s.deadline(r.Context())
	defer cancel()
	resp, rep := s.symbolicateDump(ctx, d, nil, r.URL.Query().Get("demangle") == "false", format == "text")
	if format == "text" {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		writeText(w, rep)
		return
	}
	writeJSON(w, resp)
}

// writeText writes a report as Apple's crash reports lay out backtraces.
func writeText(w io.Writer, rep *symbolize.Report) {
	if rep == nil {
		return
	}
	ptrSize := 8
	if rep.Arch != nil {
		ptrSize = rep.Arch.PtrSize
	}
	for i, th := range rep.Threads {
		if i > 0 {
			fmt.Fprintln(w)
		}
		crashed := ""
		if th.Crashed {
			crashed = " Crashed"
		}
		name := ""
		if th.Name != "" {
			name = ":: " + th.Name
		}
		fmt.Fprintf(w, "Thread %d%s%s:\n", i, crashed, name)
		for _, f := range th.Frames {
			fmt.Fprintln(w, f.Format(ptrSize))
		}
	}
	for _, m := range rep.Missing {
		fmt.Fprintf(w, "\nNo symbols for %s (%s)\n", m.Name, m.UUID)
	}
}

// symbolicateDump finds the symbols of a dump's images and symbolicates
// it. Images whose index is not ready by the deadline are left without
// symbols and say "timeout".
//
// keepThreads keeps the symbolicated threads in the report returned, for
// the text output; otherwise the report has none.
func (s *Server) symbolicateDump(ctx context.Context, d *dump.Dump, only []*source, noDemangle, keepThreads bool) (*completedResponse, *symbolize.Report) {
	looks := make([]lookup, len(d.Images))
	var wg sync.WaitGroup
	slots := make(chan struct{}, maxParallelFetches)
	seen := map[uuid.UUID]bool{}
	for i, im := range d.Images {
		if im.UUID.IsZero() || seen[im.UUID] {
			continue
		}
		seen[im.UUID] = true
		wg.Add(1)
		go func() {
			defer wg.Done()
			slots <- struct{}{}
			defer func() { <-slots }()
			looks[i] = s.cache.get(ctx, im.UUID, safeName(im.Name), only)
		}()
	}
	wg.Wait()
	syms := symstore.NewSymbols()
	defer syms.Close()
	for _, l := range looks {
		if l.index != nil {
			syms.AddFile(l.index.path)
		}
	}
	defer func() {
		for _, l := range looks {
			s.cache.release(l.index)
		}
	}()
	z := &symbolize.Symbolizer{Symbols: syms, MaxTotalFrames: s.cfg.Limits.MaxFrames, NoDemangle: noDemangle}
	resp := &completedResponse{Status: "completed"}
	// Threads are turned into the answer as they come, so that a dump of
	// many threads costs the answer's frames once, not twice.
	var threads []symbolize.Thread
	frames := 0
	rep, err := z.SymbolicateEach(d, func(th symbolize.Thread) error {
		resp.Stacktraces = append(resp.Stacktraces, stacktraceOf(th))
		frames += len(th.Frames)
		if keepThreads {
			threads = append(threads, th)
		}
		return nil
	})
	s.metrics.frames.Add(float64(frames))
	if rep != nil {
		rep.Threads = threads
	}
	if d.Arch != nil {
		resp.Arch = d.Arch.Name
	}
	if d.Crash != nil {
		yes := true
		resp.Crashed = &yes
	}
	if err != nil {
		resp.Warnings = append(resp.Warnings, err.Error())
	}
	resp.Warnings = append(resp.Warnings, d.Warnings...)
	if rep != nil {
		resp.Warnings = append(resp.Warnings, rep.Warnings...)
	}
	for i, im := range d.Images {
		m := completeModule{rawModule: rawModule{Type: "macho", DebugID: strings.ToLower(im.UUID.String()), CodeID: simple(im.UUID),
			CodeFile: im.Path, DebugFile: im.Name, ImageAddr: hexValue(im.LoadAddress)}, DebugStatus: statusUnused, Arch: "unknown"}
		if m.CodeFile == "" {
			m.CodeFile = im.Name
		}
		if im.Size > 0 {
			size := hexValue(im.Size)
			m.ImageSize = &size
		}
		l := looks[i]
		switch {
		case im.UUID.IsZero():
			m.DebugStatus, m.Error = statusMissing, "the image has no UUID"
		case l.index != nil:
			m.DebugStatus, m.Arch, m.UnwindStatus = statusFound, l.index.arch, statusUnused
			m.Features = moduleFeatures{HasDebugInfo: l.index.hasDebug, HasSymbols: true}
		case l.status != "":
			m.DebugStatus = l.status
			if l.err != nil {
				m.Error = l.err.Error()
			}
		}
		resp.Modules = append(resp.Modules, m)
	}
	return resp, rep
}

// stacktraceOf turns a symbolicated thread into a response stack trace.
func stacktraceOf(th symbolize.Thread) symbolicatedStacktrace {
	id := th.ID
	crashed := th.Crashed
	st := symbolicatedStacktrace{ThreadID: &id, ThreadName: th.Name, IsRequesting: &crashed,
		StopReason: th.StopReason, Frames: make([]symbolicatedFrame, 0, len(th.Frames))}
	for _, f := range th.Frames {
		sf := symbolicatedFrame{OriginalIndex: f.Index, InstructionAddr: hexValue(f.Address), Package: f.ImagePath,
			Trust: trustOf(f.FoundBy), FoundBy: f.FoundBy.String(), Inlined: f.Inlined}
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
				start := hexValue(f.Address - f.SymbolOffset)
				sf.SymAddr = &start
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

// trustOf names how a frame was found in symbolicator's terms (FrameTrust).
func trustOf(f symstore.FoundBy) string {
	w, ok := f.Walker()
	if !ok {
		return "prewalked"
	}
	switch w {
	case walker.FoundByContext:
		return "context"
	case walker.FoundByCompactUnwind, walker.FoundByCFI:
		return "cfi"
	case walker.FoundByScan:
		return "scan"
	default:
		return "fp"
	}
}
