package symbolize

import (
	"fmt"

	"github.com/stackimage/stackimage/crashreport"
	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/walker"
)

// Walk is our own walk of a reported thread, made when the report holds
// the thread's registers and a dump of its stack, and how it compares with
// the reporter's backtrace.
type Walk struct {
	Frames     []Frame
	StopReason string
	StopDetail string
	// Compared counts the machine frames both have; Agrees says they have
	// the same return addresses in all of them, and Differences says where
	// they part. A walk and a report may still differ in length: a
	// reporter's walker has its own stop rules.
	Compared    int
	Agrees      bool
	Differences []string
}

// CrashReport symbolicates a crash report: each thread's backtrace as the
// reporter recorded it and, where registers and a stack dump allow, our
// own walk beside it. Images without symbols keep their addresses and the
// names the report gave.
func (z *Symbolizer) CrashReport(cr *crashreport.Report) (*Report, error) {
	loaded := make([]*image.Loaded, len(cr.Images))
	for i, im := range cr.Images {
		name := im.Path
		if name == "" {
			name = im.Name
		}
		loaded[i] = &image.Loaded{Name: name, UUID: im.UUID, LoadAddress: im.LoadAddress, Size: im.Size}
	}
	p, err := z.NewProcess(cr.Arch, loaded)
	if err != nil {
		return nil, err
	}
	rep := &Report{Format: string(cr.Format), Arch: cr.Arch, Missing: p.Missing, CrashReport: cr}
	add := func(th crashreport.Thread, name string) {
		t := Thread{ID: uint64(th.Index), KernelID: th.ID, Name: name, Crashed: th.Crashed}
		t.Frames = p.reportedFrames(th.Frames, th.SkippedFrames)
		if th.Registers != nil && th.Stack != nil {
			t.Walk = p.walkReported(th, z.MaxDepth)
		}
		rep.Threads = append(rep.Threads, t)
	}
	for _, th := range cr.Threads {
		name := th.Name
		if name == "" {
			name = th.Queue
		}
		add(th, name)
	}
	if len(cr.LastExceptionBacktrace) > 0 {
		add(crashreport.Thread{Index: -1, Frames: cr.LastExceptionBacktrace}, "Last Exception Backtrace")
		rep.Threads[len(rep.Threads)-1].LastException = true
	}
	if cr.RecrashThread != nil {
		add(*cr.RecrashThread, "Recrash (the reporter's own thread)")
	}
	return rep, nil
}

// reportedFrames symbolicates a reporter's backtrace. Frame 0 is the PC and
// is looked up as it is; callers are looked up at the return address minus
// one instruction, as atos does, so that a call ending a function is
// attributed to it. When the reporter skipped frames, even the first frame
// given is a caller.
func (p *Process) reportedFrames(frames []crashreport.Frame, skipped int) []Frame {
	var out []Frame
	for i, rf := range frames {
		index := i + skipped
		lookup, foundBy := rf.Address, "report"
		if index > 0 {
			lookup = walker.CallerLookupAddress(p.Arch, rf.Address)
		}
		fs := p.Frames(index, rf.Address, lookup, foundBy)
		last := &fs[len(fs)-1]
		if last.Image == "" && rf.ImageName != "" {
			// The report names an image our list cannot place (it gave no
			// size or load address): keep the reporter's word.
			last.Image, last.ImagePath = rf.ImageName, rf.ImageName
			if rf.ImageIndex >= 0 {
				last.ImageOffset = rf.ImageOffset
			}
		}
		if last.Symbol == "" && rf.Symbol != "" {
			last.Symbol, last.SymbolOffset, last.HasOffset = rf.Symbol, rf.SymbolOffset, true
			last.SymbolSource = "report"
			if rf.File != "" {
				last.File, last.Line = rf.File, rf.Line
			}
		}
		out = append(out, fs...)
	}
	return out
}

// walkReported walks a thread over its stack dump and compares the machine
// frames found with the reporter's.
func (p *Process) walkReported(th crashreport.Thread, maxDepth int) *Walk {
	opts := walker.Options{MaxDepth: maxDepth}
	if n := uint64(len(th.Stack.Data)); n > 0 {
		opts.StackLow, opts.StackHigh = th.Stack.Start, th.Stack.Start+n
	}
	frames, res := p.Walk(th.Registers, th.Stack, opts)
	w := &Walk{Frames: frames, StopReason: res.Stop.String(), StopDetail: res.StopDetail}
	w.Compared, w.Differences = compareBacktraces(res.Frames, th.Frames, th.SkippedFrames)
	w.Agrees = len(w.Differences) == 0
	return w
}

// compareBacktraces lists where a walk and a reporter's backtrace disagree
// on return addresses, frame by frame up to the shorter of the two.
func compareBacktraces(walked []walker.Frame, reported []crashreport.Frame, skipped int) (compared int, diffs []string) {
	for i := range walked {
		j := i - skipped
		if j < 0 {
			continue
		}
		if j >= len(reported) {
			break
		}
		compared++
		if walked[i].ReturnAddress != reported[j].Address {
			diffs = append(diffs, fmt.Sprintf("frame %d: walk %#x, report %#x", i, walked[i].ReturnAddress, reported[j].Address))
		}
	}
	return compared, diffs
}
