package symbolize

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync"

	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/walker"
)

// DefaultMaxTotalFrames is the most frames one report holds when
// Symbolizer.MaxTotalFrames is zero: above real processes (500 threads of
// 64 frames), far below what a small hostile dump can ask for (thousands
// of threads walking one deep stack), and low enough that such a dump of
// 850 KB is symbolicated within the allocation budget of docs/security.md.
const DefaultMaxTotalFrames = 1 << 15

// Bounds of the walks remembered for threads with identical states.
const (
	maxRememberedWalks  = 1024
	maxRememberedFrames = 1 << 16
)

// Symbolicate walks and symbolicates a dump, whatever it was read from.
// A thread with a reporter's backtrace keeps it, symbolicated, and gets our
// own walk beside it when its registers and stack memory allow one; a
// thread without one is walked. Images without symbols keep their
// addresses and the names the input gave. The report holds at most
// MaxTotalFrames frames (see SymbolicateEach).
func (z *Symbolizer) Symbolicate(d *dump.Dump) (*Report, error) {
	var threads []Thread
	rep, err := z.SymbolicateEach(d, func(t Thread) error {
		threads = append(threads, t)
		return nil
	})
	if rep != nil {
		rep.Threads = threads
	}
	return rep, err
}

// NewDumpProcess matches a dump's images with symbol files, as NewProcess
// does for a list of loaded images: for callers that name addresses of a
// dump themselves. Close the process when done.
func (z *Symbolizer) NewDumpProcess(d *dump.Dump) (*Process, error) {
	if z == nil {
		return nil, errNilSymbolizer
	}
	if d == nil {
		return nil, errors.New("symbolize: nil dump")
	}
	loaded := make([]*image.Loaded, len(d.Images))
	for i, im := range d.Images {
		name := im.Path
		if name == "" {
			name = im.Name
		}
		loaded[i] = &image.Loaded{Name: name, UUID: im.UUID, LoadAddress: im.LoadAddress, Size: im.Size}
	}
	return z.NewProcess(d.Arch, loaded)
}

// SymbolicateEach symbolicates a dump as Symbolicate does, handing each
// thread to each as soon as it is done, in the dump's order, instead of
// keeping it: a caller that writes threads out as they come holds one
// thread's frames at a time, whatever the dump's size. It returns the
// report without its threads (Threads is nil) once every thread was
// handed over: its Missing and Warnings are complete only then. An error
// from each stops the work and is returned with the report so far.
//
// The frames of the whole report are bounded by MaxTotalFrames. When the
// bound is reached, the thread being symbolicated keeps the frames that
// fit, every later thread keeps none, each such thread (or its Walk) has
// StopReason StopMaxTotalFrames and a StopDetail saying how many frames it
// kept, and the report has a warning saying so. A reporter's backtrace and
// our walk beside it both count; a reported thread left without room for
// the walk has no Walk, and its StopDetail says the walk is left out.
//
// Threads whose registers and stack bounds are the same, over the same
// memory, are walked once: their Frames share one slice, which readers
// must not modify. A thread's Frames may also be a prefix of another's.
func (z *Symbolizer) SymbolicateEach(d *dump.Dump, each func(Thread) error) (*Report, error) {
	if d != nil && len(d.Threads) == 0 && len(d.Images) == 0 && d.Arch == nil {
		return nil, errors.New("symbolize: empty dump (no architecture, threads or images)")
	}
	if each == nil {
		each = func(Thread) error { return nil }
	}
	p, err := z.NewDumpProcess(d)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	// Names are remembered across threads; one backtrace without memory
	// names each address about once.
	p.unnamedCache = len(d.Threads) == 1 && len(d.Threads[0].Frames) > 0 && d.Memory == nil &&
		len(d.LastExceptionBacktrace) == 0 && d.RecrashThread == nil
	rep := &Report{Format: d.Format, Dump: d, Arch: d.Arch, Missing: p.Missing}
	s := &dumpSymbolizer{z: z, p: p, d: d, left: z.maxTotalFrames(), maxDepth: z.MaxDepth}
	s.encoded.encode = z.EncodeFrames
	if s.maxDepth <= 0 {
		s.maxDepth = walker.DefaultMaxDepth
	}
	if z.ReuseFrames {
		kept := scratchFrames.Get().(*[]symstore.Frame)
		s.scratch = *kept
		defer func() {
			if cap(s.scratch) <= maxScratchFrames {
				*kept = s.scratch[:0]
				scratchFrames.Put(kept)
			}
		}()
		if z.EncodeFrames != nil {
			defer s.encoded.release(true)
		}
	}
	err = s.each(each)
	rep.Warnings = append(append([]string(nil), d.Warnings...), p.Warnings()...)
	if s.cut > 0 {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("the report holds at most %d frames (MaxTotalFrames): "+
			"%d threads were cut short or left without frames (stop reason %s)", z.maxTotalFrames(), s.cut, StopMaxTotalFrames))
	}
	return rep, err
}

func (z *Symbolizer) maxTotalFrames() int {
	if z.MaxTotalFrames > 0 {
		return z.MaxTotalFrames
	}
	return DefaultMaxTotalFrames
}

// dumpSymbolizer is the state of one SymbolicateEach call.
type dumpSymbolizer struct {
	z        *Symbolizer
	p        *Process
	d        *dump.Dump
	maxDepth int
	// left is what remains of MaxTotalFrames; cut counts the threads that
	// lost frames to it.
	left, cut int
	// walks remembers the walks of threads by their state (walkKey), up to
	// maxRememberedWalks walks of maxRememberedFrames frames in all.
	walks       map[string]rememberedWalk
	walksFrames int
	key         []byte
	// scratch holds a reporter's backtrace named, reused from thread to
	// thread and call to call when the Symbolizer's ReuseFrames says the
	// writer keeps no frames.
	scratch []symstore.Frame
	// encoded holds a thread's frames as EncodeFrames wrote them, run by
	// run.
	encoded encodedRuns
}

// scratchFrames keeps the frame slices of ReuseFrames calls between
// calls; maxScratchFrames bounds the slices it keeps.
var scratchFrames = sync.Pool{New: func() any { return new([]symstore.Frame) }}

const maxScratchFrames = 4096

// rememberedWalk is a walk's outcome, shared by the threads of one state.
// budgetCut says the walk was shortened to what was left of the report's
// bound, so that its stop reason is StopMaxTotalFrames.
type rememberedWalk struct {
	frames         []symstore.Frame
	stop           StopReason
	detail         string
	setAsideLR     uint64
	setAsideLRName string
	budgetCut      bool
}

func (s *dumpSymbolizer) each(each func(Thread) error) error {
	d := s.d
	for _, th := range d.Threads {
		name := th.Name
		if name == "" {
			name = th.Queue
		}
		if err := each(s.thread(th, name)); err != nil {
			return err
		}
	}
	if len(d.LastExceptionBacktrace) > 0 {
		t := s.thread(dump.Thread{Index: -1, ID: ^uint64(0), Frames: d.LastExceptionBacktrace}, "Last Exception Backtrace")
		t.LastException = true
		if err := each(t); err != nil {
			return err
		}
	}
	if d.RecrashThread != nil {
		if err := each(s.thread(*d.RecrashThread, "Recrash (the reporter's own thread)")); err != nil {
			return err
		}
	}
	return nil
}

// thread symbolicates one thread within what is left of the report's
// bound.
func (s *dumpSymbolizer) thread(th dump.Thread, name string) Thread {
	p, d := s.p, s.d
	t := Thread{ID: th.ID, KernelID: th.KernelID, Name: name, Crashed: th.Crashed}
	mem := s.z.threadMemory(d, th)
	opts := walker.Options{MaxDepth: s.maxDepth, StackLow: th.StackLow, StackHigh: th.StackHigh, PACMask: d.PACMask}
	switch {
	case len(th.Frames) > 0:
		rule := addressRuleOf(d, th)
		var enc *encodedRuns
		if s.z.EncodeFrames != nil {
			// The writer is done with the last thread's runs.
			enc = &s.encoded
			enc.release(s.z.ReuseFrames)
			enc.thread = th.Index
		}
		if s.z.ReuseFrames {
			// The writer is done with the last thread's frames.
			s.scratch = p.reportedFrames(s.scratch[:0], th.Frames, th.SkippedFrames, rule, enc)
			t.Frames = s.scratch
		} else {
			t.Frames = p.reportedFrames(nil, th.Frames, th.SkippedFrames, rule, enc)
		}
		if enc != nil && len(enc.runs) > 0 {
			t.Encoded = enc.runs
		}
		if s.bound(&t.Frames, false) {
			t.StopReason, t.StopDetail = StopMaxTotalFrames, s.cutDetail(len(t.Frames))
			t.Encoded = nil // of frames cut off too
		}
		switch {
		case th.Registers == nil || mem == nil:
		case s.left == 0:
			// No room for our walk beside the report's frames: say so.
			if t.StopReason == StopNone {
				t.StopReason, t.StopDetail = StopMaxTotalFrames, s.cutDetail(len(t.Frames))
				s.cut++
			}
			t.StopDetail += "; our walk of this thread is left out"
		default:
			opts.MaxDepth = min(opts.MaxDepth, s.left)
			t.Walk = p.walkReported(th, mem, rule, opts)
			if s.bound(&t.Walk.Frames, opts.MaxDepth < s.maxDepth && t.Walk.StopReason == StopReason(walker.StopMaxDepth)) {
				t.Walk.StopReason, t.Walk.StopDetail = StopMaxTotalFrames, s.cutDetail(len(t.Walk.Frames))
			}
			if len(t.Walk.Frames) == 0 {
				// No frame 0 is shown to have a caller missing after it.
				t.Walk.SetAsideLR, t.Walk.SetAsideLRName = 0, ""
			}
		}
	case th.Registers != nil && (mem != nil || !d.Format.IsReport()):
		// A report's thread without a backtrace is walked only when
		// the report kept its stack.
		w := s.walk(th, mem, opts)
		t.Frames, t.StopReason, t.StopDetail = w.frames, w.stop, w.detail
		if s.bound(&t.Frames, w.budgetCut) {
			t.StopReason, t.StopDetail = StopMaxTotalFrames, s.cutDetail(len(t.Frames))
		}
		if len(t.Frames) > 0 {
			// No frame 0 left by the bound, no caller missing after it.
			t.SetAsideLR, t.SetAsideLRName = w.setAsideLR, w.setAsideLRName
		}
	}
	return t
}

// bound cuts frames to what is left of the report's bound, at a machine
// frame, and takes them from it. It reports whether the frames were cut:
// shortened here, or already (cut, when the walk was shortened to fit).
func (s *dumpSymbolizer) bound(frames *[]symstore.Frame, cut bool) bool {
	f := *frames
	if len(f) > s.left {
		keep := s.left
		for keep > 0 && f[keep].Index == f[keep-1].Index {
			keep-- // frames[keep] is inlined into the machine frame before it
		}
		*frames, cut = f[:keep:keep], true
	}
	s.left -= len(*frames)
	if cut {
		s.cut++
	}
	return cut
}

func (s *dumpSymbolizer) cutDetail(kept int) string {
	return fmt.Sprintf("the report's bound of %d frames (MaxTotalFrames) was reached; %d frames of this thread are shown",
		s.z.maxTotalFrames(), kept)
}

// walk walks a thread without a reporter's backtrace, or takes the walk of
// an earlier thread with the same state, and shortens the walk to what is
// left of the report's bound.
func (s *dumpSymbolizer) walk(th dump.Thread, mem walker.Memory, opts walker.Options) rememberedWalk {
	if s.left == 0 {
		return rememberedWalk{budgetCut: true}
	}
	// Only threads walked over the dump's shared memory can be alike: a
	// thread's own stack dump is its own.
	var key string
	if th.Stack == nil {
		key = s.walkKey(th)
		if w, ok := s.walks[key]; ok {
			return w
		}
	}
	opts.MaxDepth = min(opts.MaxDepth, s.left)
	frames, res := s.p.Walk(th.Registers, mem, opts)
	w := rememberedWalk{frames: frames[:len(frames):len(frames)], stop: StopReason(res.Stop), detail: res.StopDetail,
		setAsideLR: res.AmbiguousLR, setAsideLRName: s.p.setAsideLRName(res.AmbiguousLR),
		budgetCut: opts.MaxDepth < s.maxDepth && res.Stop == walker.StopMaxDepth}
	if key != "" {
		if s.walks == nil || len(s.walks) >= maxRememberedWalks || s.walksFrames+len(frames) > maxRememberedFrames {
			s.walks, s.walksFrames = map[string]rememberedWalk{}, 0
		}
		s.walks[key] = w
		s.walksFrames += len(frames)
	}
	return w
}

// walkKey returns what a walk over the dump's memory depends on: every
// register, known or not, and the stack bounds. (The other options are
// the same for every thread of a dump.)
func (s *dumpSymbolizer) walkKey(th dump.Thread) string {
	b := s.key[:0]
	regs := th.Registers
	for _, name := range regs.Arch.RegNames {
		v, ok := regs.Get(name)
		if ok {
			b = append(b, 1)
		} else {
			b = append(b, 0)
		}
		b = binary.LittleEndian.AppendUint64(b, v)
	}
	b = binary.LittleEndian.AppendUint64(b, th.StackLow)
	b = binary.LittleEndian.AppendUint64(b, th.StackHigh)
	s.key = b
	return string(b)
}

// threadMemory returns the memory a thread is walked over: its own stack
// dump, else the dump's memory; nil when there is none.
func (z *Symbolizer) threadMemory(d *dump.Dump, th dump.Thread) walker.Memory {
	if th.Stack != nil {
		return th.Stack
	}
	if d.Memory != nil {
		return d.Memory
	}
	return nil
}
