package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/symbolize"
	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/symstore/indexcache"
	"github.com/stackimage/stackimage/symstore/remote"
	"github.com/stackimage/stackimage/uuid"
	"github.com/stackimage/stackimage/walker"
)

// hexValue is an address as symbolicator takes it: a "0x…" string, a
// decimal string or a JSON number. It is written back as "0x…".
type hexValue uint64

func (h *hexValue) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	var v uint64
	var err error
	if t, ok := strings.CutPrefix(strings.ToLower(s), "0x"); ok {
		v, err = strconv.ParseUint(t, 16, 64)
	} else {
		v, err = strconv.ParseUint(s, 10, 64)
	}
	if err != nil {
		return fmt.Errorf("address %s: want a hex string (0x…) or a number", b)
	}
	*h = hexValue(v)
	return nil
}

func (h hexValue) MarshalJSON() ([]byte, error) {
	return []byte(`"0x` + strconv.FormatUint(uint64(h), 16) + `"`), nil
}

// optionalHex is an address that may be absent (sym_addr): a value
// rather than a pointer, so that a frame's costs no allocation.
type optionalHex struct {
	addr hexValue
	set  bool
}

func someHex(v uint64) optionalHex { return optionalHex{hexValue(v), true} }

// IsZero tells encoding/json to omit an absent address (omitzero).
func (o optionalHex) IsZero() bool { return !o.set }

func (o optionalHex) MarshalJSON() ([]byte, error) { return o.addr.MarshalJSON() }

func (o *optionalHex) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*o = optionalHex{}
		return nil
	}
	o.set = true
	return o.addr.UnmarshalJSON(b)
}

// fileName is path.Base of a file's path, without its work for the
// usual path, which does not end in a slash.
func fileName(p string) string {
	if p != "" && p[len(p)-1] != '/' {
		return p[strings.LastIndexByte(p, '/')+1:]
	}
	return path.Base(p)
}

// symbolicateRequest is the body of POST /symbolicate.
type symbolicateRequest struct {
	Platform    string            `json:"platform,omitempty"`
	Signal      *int              `json:"signal,omitempty"`
	Sources     []json.RawMessage `json:"sources,omitempty"`
	Stacktraces []rawStacktrace   `json:"stacktraces"`
	// Threads is the older name of Stacktraces.
	Threads []rawStacktrace `json:"threads,omitempty"`
	Modules []rawModule     `json:"modules"`
	Options struct {
		DIFCandidates bool `json:"dif_candidates"`
		// NoDemangle is ours: keep names as the binary spells them.
		NoDemangle bool `json:"no_demangle"`
	} `json:"options"`
}

type rawStacktrace struct {
	Registers map[string]hexValue `json:"registers,omitempty"`
	Frames    rawFrames           `json:"frames"`
}

type rawFrame struct {
	InstructionAddr hexValue `json:"instruction_addr"`
	AddrMode        string   `json:"addr_mode,omitempty"`
	// AdjustInstructionAddr says whether the address is a return
	// address to look up one instruction earlier; by default every frame
	// but the first of a stack trace is.
	AdjustInstructionAddr *bool  `json:"adjust_instruction_addr,omitempty"`
	Trust                 string `json:"trust,omitempty"`
}

// rawModule is a module as the request gives it; it is echoed back with
// the fields the response adds.
type rawModule struct {
	Type      string    `json:"type"`
	DebugID   string    `json:"debug_id,omitempty"`
	CodeID    string    `json:"code_id,omitempty"`
	DebugFile string    `json:"debug_file,omitempty"`
	CodeFile  string    `json:"code_file,omitempty"`
	ImageAddr hexValue  `json:"image_addr"`
	ImageSize *hexValue `json:"image_size,omitempty"`
}

// symbolicatedFrame is a frame of the response, with symbolicator's
// fields first and ours (column, inlined, symbol_source, found_by) after.
type symbolicatedFrame struct {
	Status          string      `json:"status"`
	OriginalIndex   int         `json:"original_index"`
	InstructionAddr hexValue    `json:"instruction_addr"`
	AddrMode        string      `json:"addr_mode,omitempty"`
	Package         string      `json:"package,omitempty"`
	Lang            string      `json:"lang,omitempty"`
	Symbol          string      `json:"symbol,omitempty"`
	SymAddr         optionalHex `json:"sym_addr,omitzero"`
	Function        string      `json:"function,omitempty"`
	Filename        string      `json:"filename,omitempty"`
	AbsPath         string      `json:"abs_path,omitempty"`
	Lineno          int         `json:"lineno,omitempty"`
	Trust           string      `json:"trust,omitempty"`
	Column          int         `json:"column,omitempty"`
	Inlined         bool        `json:"inlined,omitempty"`
	SymbolSource    string      `json:"symbol_source,omitempty"`
	FoundBy         string      `json:"found_by,omitempty"`
}

type symbolicatedStacktrace struct {
	// ThreadID, IsRequesting and ThreadName are set for dumps.
	ThreadID     *uint64              `json:"thread_id,omitempty"`
	ThreadName   string               `json:"thread_name,omitempty"`
	IsRequesting *bool                `json:"is_requesting,omitempty"`
	Registers    map[string]hexValue  `json:"registers,omitempty"`
	Frames       []symbolicatedFrame  `json:"frames"`
	StopReason   symbolize.StopReason `json:"stop_reason,omitempty"`
	// encodedFrames, when set, stands for Frames: each request frame's
	// symbolicated frames as JSON objects joined by commas, as the
	// resolvers of a large request wrote them.
	encodedFrames [][]byte
}

type moduleFeatures struct {
	HasDebugInfo  bool `json:"has_debug_info"`
	HasUnwindInfo bool `json:"has_unwind_info"`
	HasSymbols    bool `json:"has_symbols"`
	HasSources    bool `json:"has_sources"`
}

type candidate struct {
	Source   string            `json:"source"`
	Location string            `json:"location,omitempty"`
	Download map[string]string `json:"download"`
}

// completeModule is a module of the response: the request's fields and
// what symbolication found.
type completeModule struct {
	DebugStatus  string         `json:"debug_status"`
	UnwindStatus string         `json:"unwind_status,omitempty"`
	Features     moduleFeatures `json:"features"`
	Arch         string         `json:"arch"`
	rawModule
	Candidates []candidate `json:"candidates,omitempty"`
	// Error says why the module's symbols are missing or unusable (ours).
	Error string `json:"error,omitempty"`
}

// completedResponse is symbolicator's CompletedSymbolicationResponse.
type completedResponse struct {
	Status      string                   `json:"status"`
	Signal      *int                     `json:"signal,omitempty"`
	Crashed     *bool                    `json:"crashed,omitempty"`
	Arch        string                   `json:"arch,omitempty"`
	Stacktraces []symbolicatedStacktrace `json:"stacktraces"`
	Modules     []completeModule         `json:"modules"`
	Warnings    []string                 `json:"warnings,omitempty"`
	// release, when set, gives back the buffers the stack traces'
	// encodedFrames lie in. It is called once the answer is written, and
	// only by the request that made it: an answer kept for a later GET
	// /requests/{id} keeps its buffers.
	release func()
}

// handleSymbolicate is POST /symbolicate.
func (s *Server) handleSymbolicate(w http.ResponseWriter, r *http.Request) {
	body := http.MaxBytesReader(w, r.Body, int64(s.cfg.Limits.MaxSymbolicateBody))
	buf := bodyPool.Get().(*bytes.Buffer)
	if _, err := buf.ReadFrom(body); err != nil {
		putBody(buf)
		bodyError(w, err, "request body")
		return
	}
	var req symbolicateRequest
	err := decodeRequest(buf.Bytes(), &req)
	putBody(buf) // req holds nothing of it
	if err != nil {
		writeError(w, http.StatusBadRequest, "request body: %v", err)
		return
	}
	if len(req.Stacktraces) == 0 {
		req.Stacktraces = req.Threads
	}
	total := 0
	for _, st := range req.Stacktraces {
		total += len(st.Frames)
	}
	if total > s.cfg.Limits.MaxFrames {
		writeError(w, http.StatusRequestEntityTooLarge, "%d frames: more than the limit of %d", total, s.cfg.Limits.MaxFrames)
		return
	}
	only, err := s.requestSources(req.Sources)
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	s.run(w, r, func(ctx context.Context) (int, any) {
		return http.StatusOK, s.symbolicate(ctx, &req, only)
	})
}

// bodyPool holds the buffers request bodies are read into: a body is read
// whole before it is decoded, and a new buffer per request would be a
// good part of what a request allocates.
var bodyPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// maxPooledBuffer is the largest buffer (of a body or an answer) kept for
// the next request: a rare huge one is left to the garbage collector.
const maxPooledBuffer = 1 << 20

func putBody(b *bytes.Buffer) {
	if b.Cap() <= maxPooledBuffer {
		b.Reset()
		bodyPool.Put(b)
	}
}

// moduleState is a request module while its frames are symbolicated.
type moduleState struct {
	raw      rawModule
	id       uuid.UUID
	idErr    error
	start    uint64
	end      uint64 // 0 when unknown: up to the next module
	used     bool
	look     indexcache.Lookup
	arch     *archregs.Arch
	hasDebug bool
	// entry is the module's symbols, held for the request.
	entry *symstore.Entry
}

// symbolicate answers a /symbolicate request.
func (s *Server) symbolicate(ctx context.Context, req *symbolicateRequest, only []*source) *completedResponse {
	mods := make([]*moduleState, len(req.Modules))
	for i, m := range req.Modules {
		ms := &moduleState{raw: m, start: uint64(m.ImageAddr)}
		if m.ImageSize != nil && *m.ImageSize > 0 {
			ms.end = ms.start + uint64(*m.ImageSize)
		}
		id := m.DebugID
		if id == "" {
			id = m.CodeID
		}
		ms.id, ms.idErr = parseDebugID(id)
		mods[i] = ms
	}
	byAddr := append([]*moduleState(nil), mods...)
	sort.SliceStable(byAddr, func(i, j int) bool { return byAddr[i].start < byAddr[j].start })
	find := func(addr uint64) *moduleState {
		i := sort.Search(len(byAddr), func(i int) bool { return byAddr[i].start > addr }) - 1
		if i < 0 {
			return nil
		}
		m := byAddr[i]
		end := m.end
		if end == 0 && i+1 < len(byAddr) {
			end = byAddr[i+1].start
		}
		if end != 0 && addr >= end {
			return nil
		}
		return m
	}
	// Place every frame first, so that only the modules frames use are
	// fetched, all at once.
	type placed struct {
		mod  *moduleState
		addr uint64
	}
	places := make([][]placed, len(req.Stacktraces))
	for i, st := range req.Stacktraces {
		places[i] = make([]placed, len(st.Frames))
		for j, f := range st.Frames {
			addr := uint64(f.InstructionAddr)
			var m *moduleState
			if rel, ok := strings.CutPrefix(f.AddrMode, "rel:"); ok {
				if n, err := strconv.Atoi(rel); err == nil && n >= 0 && n < len(mods) {
					m = mods[n]
					addr += m.start
				}
			} else {
				m = find(addr)
			}
			if m != nil {
				m.used = true
			}
			places[i][j] = placed{m, addr}
		}
	}
	s.fetchModules(ctx, mods, only)
	defer func() {
		for _, m := range mods {
			if m.entry != nil {
				m.entry.Release()
			}
			s.cache.Release(m.look.Index)
		}
	}()

	resp := &completedResponse{Status: "completed", Signal: req.Signal, Stacktraces: make([]symbolicatedStacktrace, len(req.Stacktraces))}
	// Every frame, in order, for the resolvers.
	n := 0
	for _, st := range req.Stacktraces {
		n += len(st.Frames)
	}
	all := make([]frameRef, 0, n)
	for i, st := range req.Stacktraces {
		for j := range st.Frames {
			all = append(all, frameRef{i, j})
		}
	}
	resolve := func(buf []symbolicatedFrame, scratch *[]symstore.Frame, r frameRef) []symbolicatedFrame {
		f := req.Stacktraces[r.stack].Frames[r.frame]
		p := places[r.stack][r.frame]
		adjust := r.frame > 0
		if f.AdjustInstructionAddr != nil {
			adjust = *f.AdjustInstructionAddr
		}
		return s.appendFrames(buf, scratch, r.frame, f, p.mod, p.addr, adjust, req.Options.NoDemangle)
	}
	var spans [][]byte
	if len(all) >= 2*framesPerResolver {
		// The answer is written from the resolvers' buffers; they go back
		// to their pool once it is written (resp.release).
		spans, resp.release = resolveAll(all, resolve)
	}
	var scratch *[]symstore.Frame
	if spans == nil {
		scratch = getScratch()
		defer putScratch(scratch)
	}
	k := 0
	for i, st := range req.Stacktraces {
		out := symbolicatedStacktrace{Registers: st.Registers}
		if spans != nil {
			// The resolvers wrote the frames' JSON.
			out.encodedFrames = spans[k : k+len(st.Frames) : k+len(st.Frames)]
			k += len(st.Frames)
		} else {
			out.Frames = make([]symbolicatedFrame, 0, len(st.Frames))
			for range st.Frames {
				out.Frames = resolve(out.Frames, scratch, all[k])
				k++
			}
		}
		resp.Stacktraces[i] = out
	}
	frames := len(all)
	s.metrics.frames.Add(float64(frames))
	resp.Modules = make([]completeModule, len(mods))
	for i, m := range mods {
		resp.Modules[i] = m.complete(req.Options.DIFCandidates)
	}
	return resp
}

// frameRef is a request frame: stack trace and frame index.
type frameRef struct{ stack, frame int }

// framesPerResolver is the fewest frames worth another goroutine: a
// lookup takes microseconds, starting a goroutine far less.
const framesPerResolver = 25

// resolveChunk is how many frames a resolver takes at a time: small
// enough that the resolvers of a request finish together, large enough
// that taking them costs nothing.
const resolveChunk = 8

// encodedPool holds the resolvers' buffers of encoded frames; one larger
// than maxPooledBuffer is left to the garbage collector.
var encodedPool = sync.Pool{New: func() any { return new([]byte) }}

// resolveAll resolves frames with resolve (which appends a frame's
// symbolicated frames to a buffer) and returns each frame's symbolicated
// frames as JSON (the frames' objects joined by commas), in order, valid
// until release is called. A request of many frames is resolved by up to
// GOMAXPROCS goroutines, so that one large request uses the cores an idle
// instance has (the index is safe for concurrent lookups); under load,
// requests in flight keep the cores busy anyway. Each goroutine encodes
// the frames it resolves, so that writing the answer's JSON is shared out
// as well and the frames are never copied into the answer's structures.
// The goroutines take the frames a few at a time, so that one that starts
// late (its core busy with other work) leaves its share to the others
// rather than holding the request up.
func resolveAll(frames []frameRef, resolve func([]symbolicatedFrame, *[]symstore.Frame, frameRef) []symbolicatedFrame) (spans [][]byte, release func()) {
	workers := max(min(runtime.GOMAXPROCS(0), len(frames)/framesPerResolver), 1)
	// Where each frame's JSON lies: which resolver's buffer, from, to.
	type place struct{ worker, start, end int }
	places := make([]place, len(frames))
	bufs := make([]*[]byte, workers)
	var next atomic.Int64
	run := func(w int) {
		pooled := encodedPool.Get().(*[]byte)
		buf := (*pooled)[:0]
		scratch := getScratch()
		defer putScratch(scratch)
		// Room for a frame and the functions inlined at it, most often.
		resolved := make([]symbolicatedFrame, 0, 8)
		for {
			lo := int(next.Add(resolveChunk)) - resolveChunk
			if lo >= len(frames) {
				break
			}
			for k := lo; k < min(lo+resolveChunk, len(frames)); k++ {
				resolved = resolve(resolved[:0], scratch, frames[k])
				start := len(buf)
				for i := range resolved {
					if i > 0 {
						buf = append(buf, ',')
					}
					buf = appendFrame(buf, &resolved[i])
				}
				places[k] = place{w, start, len(buf)}
			}
		}
		*pooled = buf
		bufs[w] = pooled
	}
	var wg sync.WaitGroup
	for w := range workers - 1 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			run(w)
		}()
	}
	run(workers - 1) // the request's own goroutine is one of them
	wg.Wait()
	// Sliced once every buffer is full: appending may move a buffer.
	spans = make([][]byte, len(frames))
	for k, p := range places {
		spans[k] = (*bufs[p.worker])[p.start:p.end:p.end]
	}
	return spans, func() {
		for _, pooled := range bufs {
			if cap(*pooled) <= maxPooledBuffer {
				*pooled = (*pooled)[:0]
				encodedPool.Put(pooled)
			}
		}
	}
}

// scratchPool holds the buffers symstore resolves a frame into before it
// is copied into the answer's shape: one buffer per resolver, reused for
// each of its frames, instead of a new slice of a few hundred bytes per
// frame.
var scratchPool = sync.Pool{New: func() any { return new([]symstore.Frame) }}

// maxScratchFrames is the largest scratch buffer kept for the next
// request: a frame has at most a few dozen inlined functions.
const maxScratchFrames = 256

func getScratch() *[]symstore.Frame { return scratchPool.Get().(*[]symstore.Frame) }

func putScratch(p *[]symstore.Frame) {
	if cap(*p) <= maxScratchFrames {
		clear(*p) // no strings kept alive by the pool
		*p = (*p)[:0]
		scratchPool.Put(p)
	}
}

// fetchModules finds the index of every used module: those open in
// memory, nearly always all of them, on the request's goroutine; the
// others in parallel. A module not ready by the deadline says "timeout".
func (s *Server) fetchModules(ctx context.Context, mods []*moduleState, only []*source) {
	var cold []*moduleState
	for _, m := range mods {
		if !m.used || m.idErr != nil {
			continue
		}
		if look, ok := s.cache.GetHot(m.id); ok {
			// A goroutine here would cost more than the lookup: its start
			// wakes another thread, and the request waits for it.
			m.found(look)
			continue
		}
		cold = append(cold, m)
	}
	if len(cold) > 0 {
		s.fetchCold(ctx, cold, only)
	}
}

// fetchCold finds the indexes of modules not open in memory, at most
// limits.max_request_fetches at a time; those not started by the
// deadline say "timeout".
func (s *Server) fetchCold(ctx context.Context, mods []*moduleState, only []*source) {
	for _, m := range mods {
		m.look = indexcache.Lookup{Status: statusTimeout, Err: errNotStarted}
	}
	forEachBounded(ctx, len(mods), s.cfg.Limits.MaxRequestFetches, func(i int) {
		m := mods[i]
		m.found(s.cache.Get(ctx, m.id, moduleName(m.raw), origins(only)))
	})
}

// errNotStarted is the error of a lookup the request's deadline came
// before.
var errNotStarted = errors.New("not looked up before the request's deadline")

// found takes the outcome of looking up the module's index.
func (m *moduleState) found(look indexcache.Lookup) {
	m.look = look
	if ix := look.Index; ix != nil {
		m.hasDebug = ix.HasDebug
		m.arch = ix.ArchRegs
		m.entry, _ = ix.Symbols.Lookup(m.id)
	}
}

// moduleName is the image's file name, for layouts that need one.
func moduleName(m rawModule) string {
	name := m.CodeFile
	if name == "" {
		name = m.DebugFile
	}
	return remote.SafeName(path.Base(strings.ReplaceAll(name, `\`, "/")))
}

// appendFrames appends the symbolicated frames of one request frame: the
// functions inlined at its address, innermost first, then the function
// holding it, all with its original index.
func (s *Server) appendFrames(out []symbolicatedFrame, scratch *[]symstore.Frame, index int, f rawFrame, m *moduleState, addr uint64, adjust, noDemangle bool) []symbolicatedFrame {
	base := symbolicatedFrame{OriginalIndex: index, InstructionAddr: f.InstructionAddr, AddrMode: f.AddrMode, Trust: f.Trust}
	if m == nil {
		base.Status = "unknown_image"
		return append(out, base)
	}
	base.Package = m.raw.CodeFile
	ix := m.look.Index
	if ix == nil {
		base.Status = "missing"
		if m.idErr != nil {
			base.Status = "malformed"
		}
		return append(out, base)
	}
	lookupAddr := addr
	if adjust {
		lookupAddr = walker.CallerLookupAddress(m.arch, addr)
	}
	unslid := lookupAddr - m.start + ix.TextAddr
	if m.entry == nil {
		base.Status = "missing"
		return append(out, base)
	}
	// The frame as Symbols.Resolve would make it, from the entry the
	// request holds: no lookup of the UUID per frame.
	rf := symstore.Frame{Address: unslid, LookupAddress: unslid}
	if unslid >= ix.TextAddr {
		rf.ImageLoadAddress, rf.ImageOffset = ix.TextAddr, unslid-ix.TextAddr
	}
	resolved := m.entry.AppendResolve((*scratch)[:0], rf, unslid, symstore.ResolveOptions{NoDemangle: noDemangle})
	*scratch = resolved
	if len(resolved) == 0 {
		base.Status = "missing"
		return append(out, base)
	}
	for _, rf := range resolved {
		sf := base
		if rf.Symbol == "" {
			sf.Status = "missing_symbol"
			out = append(out, sf)
			continue
		}
		sf.Status = "symbolicated"
		sf.Function = rf.Symbol
		sf.Symbol = rf.Symbol
		if rf.MangledSymbol != "" {
			sf.Symbol = rf.MangledSymbol
		}
		if rf.HasOffset {
			// Resolve measured the offset from the unslid lookup address.
			sf.SymAddr = someHex(lookupAddr - rf.SymbolOffset)
		}
		sf.Lang = langName(rf.Lang)
		if rf.File != "" {
			sf.AbsPath = rf.File
			sf.Filename = fileName(rf.File)
			sf.Lineno, sf.Column = rf.Line, rf.Column
		}
		sf.Inlined = rf.Inlined
		sf.SymbolSource = rf.SymbolSource.String()
		out = append(out, sf)
	}
	return out
}

// langName spells a language as symbolicator does.
func langName(l string) string {
	switch l {
	case "":
		return ""
	case "C++":
		return "cpp"
	case "ObjC":
		return "objc"
	case "C":
		return "c"
	case "Go":
		return "go" // without an allocation per frame
	case "Swift":
		return "swift"
	default:
		return strings.ToLower(l)
	}
}

// complete is the module as the response gives it.
func (m *moduleState) complete(withCandidates bool) completeModule {
	c := completeModule{rawModule: m.raw, DebugStatus: statusUnused, Arch: "unknown"}
	switch {
	case m.idErr != nil:
		c.DebugStatus, c.Error = statusMalformed, m.idErr.Error()
	case !m.used:
	case m.look.Index != nil:
		ix := m.look.Index
		c.DebugStatus, c.Arch = statusFound, ix.Arch
		c.UnwindStatus = statusUnused
		c.Features = moduleFeatures{HasDebugInfo: ix.HasDebug, HasSymbols: true}
		c.Error = ix.DegradedError()
		if withCandidates {
			c.Candidates = []candidate{{Source: m.look.Source, Location: m.look.Location,
				Download: map[string]string{"status": "ok"}}}
		}
	default:
		c.DebugStatus = m.look.Status
		if m.look.Err != nil {
			c.Error = m.look.Err.Error()
		}
		if withCandidates {
			c.Candidates = []candidate{{Source: m.look.Source, Location: m.look.Location,
				Download: map[string]string{"status": "notfound"}}}
		}
	}
	return c
}
