package symbolicator

import (
	"context"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/internal/parallel"
	"github.com/stackimage/stackimage/symbolize"
	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/walker"
)

// Module statuses, as symbolicator names them (ObjectFileStatus), that
// frames' statuses follow.
const (
	StatusFound     = "found"
	StatusUnused    = "unused"
	StatusMissing   = "missing"
	StatusMalformed = "malformed"
)

// Answer writes what symbolize made of a dump as symbolicator's answer
// (CompletedSymbolicationResponse): its head, each thread as a stack
// trace as it comes, then the modules. It is the one conversion of every
// answer: a dump read from a file, or a request made one (Input).
type Answer struct {
	d       *dump.Dump
	in      *Input
	modules []CompleteModule
	// byLoad is the first image loaded at each address: a frame's image
	// is the one at its ImageLoadAddress, where symbolize placed it.
	byLoad map[uint64]int
	count  int // stack traces written
	// Workers bounds the goroutines that encode one long backtrace the
	// Symbolizer did not encode (a walk's); zero means GOMAXPROCS. A
	// service sets it as it sets the Symbolizer's Workers.
	Workers int
}

// NewAnswer starts the answer to d, whose modules (one per image of d, in
// order) are known before the frames, which take their statuses from
// them. in is the request d was made of, nil for a dump read from a file.
func NewAnswer(d *dump.Dump, in *Input, modules []CompleteModule) *Answer {
	a := &Answer{d: d, in: in, modules: modules, byLoad: make(map[uint64]int, len(d.Images))}
	for i, im := range d.Images {
		if _, ok := a.byLoad[im.LoadAddress]; !ok {
			a.byLoad[im.LoadAddress] = i
		}
	}
	return a
}

// AppendHead appends the answer's opening brace and the fields before its
// stack traces, up to the stack traces' opening bracket.
func (a *Answer) AppendHead(b []byte) []byte {
	b = append(b, `{"status":"completed"`...)
	if a.in != nil && a.in.Request.Signal != nil {
		b = strconv.AppendInt(append(b, `,"signal":`...), int64(*a.in.Request.Signal), 10)
	}
	if a.d.Crash != nil {
		b = append(b, `,"crashed":true`...)
	}
	if a.d.Arch != nil {
		b = AppendStringField(b, `,"arch":`, a.d.Arch.Name)
	}
	return append(b, `,"stacktraces":[`...)
}

// AppendThread appends the next thread's stack trace, with its comma.
// Each frame is encoded as it is converted, never held.
func (a *Answer) AppendThread(b []byte, th symbolize.Thread) []byte {
	if a.count > 0 {
		b = append(b, ',')
	}
	st, raw := a.stacktrace(th)
	b = appendStacktraceHead(b, &st)
	if th.Encoded != nil {
		// Encoded where they were named (EncodeFrames).
		for _, run := range th.Encoded {
			b = append(b, run...)
		}
	} else if workers := min(a.workers(), len(th.Frames)/framesPerEncoder); workers > 1 {
		b = a.appendFramesParallel(b, th.Frames, raw, workers)
	} else {
		b = a.appendFrames(b, th.Frames, raw)
	}
	b = appendStacktraceTail(b, &st)
	a.count++
	return b
}

// workers is Workers, or GOMAXPROCS when it is zero.
func (a *Answer) workers() int {
	if a.Workers > 0 {
		return a.Workers
	}
	return runtime.GOMAXPROCS(0)
}

// EncodeFrames is a symbolize.FrameEncoder of this answer's frames: set
// it as the Symbolizer's, and a long backtrace is encoded where it is
// named, its runs in parallel.
func (a *Answer) EncodeFrames(dst []byte, thread int, frames []symstore.Frame, opens bool) []byte {
	var raw *Stacktrace
	if a.in != nil && thread >= 0 && thread < len(a.in.Request.Stacktraces) {
		raw = &a.in.Request.Stacktraces[thread]
	}
	if !opens {
		dst = append(dst, ',')
	}
	return a.appendFrames(dst, frames, raw)
}

// appendFrames appends frames' JSON objects, joined by commas.
func (a *Answer) appendFrames(b []byte, frames []symstore.Frame, raw *Stacktrace) []byte {
	for i := range frames {
		if i > 0 {
			b = append(b, ',')
		}
		sf := a.frame(&frames[i], raw)
		b = AppendFrame(b, &sf)
	}
	return b
}

// framesPerEncoder is the fewest frames worth another goroutine encoding
// them, encodeChunk how many one takes at a time: a long backtrace is
// written by the cores an idle service has, as it was named.
const (
	framesPerEncoder = 32
	encodeChunk      = 16
)

// encodedParts keeps the buffers the encoders of a long backtrace fill.
var encodedParts = sync.Pool{New: func() any { return new([]byte) }}

// appendFramesParallel is appendFrames on several goroutines, each
// encoding chunks of frames into a buffer of its own, appended in order.
func (a *Answer) appendFramesParallel(b []byte, frames []symstore.Frame, raw *Stacktrace, workers int) []byte {
	chunks := (len(frames) + encodeChunk - 1) / encodeChunk
	parts := make([]*[]byte, chunks)
	parallel.ForEach(context.Background(), chunks, workers, func(c int) {
		lo := c * encodeChunk
		part := encodedParts.Get().(*[]byte)
		*part = a.appendFrames((*part)[:0], frames[lo:min(lo+encodeChunk, len(frames))], raw)
		parts[c] = part
	})
	for c, part := range parts {
		if c > 0 {
			b = append(b, ',')
		}
		b = append(b, *part...)
		if cap(*part) <= 64<<10 {
			encodedParts.Put(part)
		}
	}
	return b
}

// AppendTail appends the end of the stack traces, the modules and the
// warnings, and closes the answer.
func (a *Answer) AppendTail(b []byte, warnings []string) []byte {
	b = AppendModules(append(b, `],"modules":[`...), a.modules)
	b = append(b, ']')
	if len(warnings) > 0 {
		b = append(b, `,"warnings":[`...)
		for i, w := range warnings {
			if i > 0 {
				b = append(b, ',')
			}
			b = AppendJSONString(b, w)
		}
		b = append(b, ']')
	}
	return append(b, "}\n"...)
}

// Stacktrace turns the next symbolicated thread into an answer's stack
// trace, as AppendThread writes it.
func (a *Answer) Stacktrace(th symbolize.Thread) SymbolicatedStacktrace {
	st, raw := a.stacktrace(th)
	st.Frames = make([]SymbolicatedFrame, len(th.Frames))
	for i := range th.Frames {
		st.Frames[i] = a.frame(&th.Frames[i], raw)
	}
	a.count++
	return st
}

// stacktrace is the next stack trace without its frames: a dump's thread
// with its ID and name; a request's stack trace with its registers. raw
// is the request's stack trace, nil for a dump's.
func (a *Answer) stacktrace(th symbolize.Thread) (st SymbolicatedStacktrace, raw *Stacktrace) {
	st.StopReason = th.StopReason
	if a.in != nil {
		raw = &a.in.Request.Stacktraces[a.count]
		st.Registers = raw.Registers
	} else {
		id, crashed := th.ID, th.Crashed
		st.ThreadID, st.ThreadName, st.IsRequesting = &id, th.Name, &crashed
	}
	return st, raw
}

// frame is a frame of the answer: how a dump's frame was found; a
// request's frame's address, mode and trust as the request gave them.
func (a *Answer) frame(f *symstore.Frame, raw *Stacktrace) SymbolicatedFrame {
	sf := SymbolicatedFrame{OriginalIndex: f.Index, Inlined: f.Inlined}
	unplaced := false
	if raw != nil {
		rf := &raw.Frames[f.Index]
		sf.InstructionAddr, sf.AddrMode, sf.Trust = rf.InstructionAddr, rf.AddrMode, rf.Trust
		// A frame relative to a module the request lacks lies in none.
		_, ok := relativeTo(rf.AddrMode, len(a.modules))
		unplaced = !ok && strings.HasPrefix(rf.AddrMode, "rel:")
	} else {
		sf.InstructionAddr, sf.Trust, sf.FoundBy = Hex(f.Address), trustOf(f.FoundBy, f.Trust), f.FoundBy.String()
	}
	var mod *CompleteModule
	if k, ok := a.byLoad[f.ImageLoadAddress]; ok && f.Image != "" && !unplaced {
		mod = &a.modules[k]
		sf.Package = mod.CodeFile
	} else if !unplaced {
		sf.Package = f.ImagePath
		if sf.Package == "" {
			sf.Package = f.Image
		}
	}
	switch {
	case unplaced:
		sf.Status = "unknown_image"
	case f.Symbol != "":
		sf.Status = "symbolicated"
		sf.Function, sf.Symbol = f.Symbol, f.Symbol
		if f.MangledSymbol != "" {
			sf.Symbol = f.MangledSymbol
		}
		if f.HasOffset {
			sf.SymAddr = SomeHex(f.Address - f.SymbolOffset)
		}
		sf.Lang = langName(f.Lang)
		sf.SymbolSource = f.SymbolSource.String()
		if f.File != "" {
			sf.AbsPath, sf.Filename = f.File, baseName(f.File)
			sf.Lineno, sf.Column = f.Line, f.Column
		}
	case f.Image == "":
		sf.Status = "unknown_image"
	case mod == nil || mod.DebugStatus == StatusFound:
		sf.Status = "missing_symbol"
	case mod.DebugStatus == StatusMalformed:
		sf.Status = "malformed"
	default:
		// The image's symbols were not found.
		sf.Status = "missing"
	}
	return sf
}

// baseName is a path's last element, after a slash or a backslash. (A
// loop from the end: strings.LastIndexAny takes several times as long on
// a path whose name is short.)
func baseName(p string) string {
	for i := len(p) - 1; i >= 0; i-- {
		if p[i] == '/' || p[i] == '\\' {
			return p[i+1:]
		}
	}
	return p
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
