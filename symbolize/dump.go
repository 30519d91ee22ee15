package symbolize

import (
	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/walker"
)

// Symbolicate walks and symbolicates a dump, whatever it was read from.
// A thread with a reporter's backtrace keeps it, symbolicated, and gets our
// own walk beside it when its registers and stack memory allow one; a
// thread without one is walked. Images without symbols keep their
// addresses and the names the input gave.
func (z *Symbolizer) Symbolicate(d *dump.Dump) (*Report, error) {
	loaded := make([]*image.Loaded, len(d.Images))
	for i, im := range d.Images {
		name := im.Path
		if name == "" {
			name = im.Name
		}
		loaded[i] = &image.Loaded{Name: name, UUID: im.UUID, LoadAddress: im.LoadAddress, Size: im.Size}
	}
	p, err := z.NewProcess(d.Arch, loaded)
	if err != nil {
		return nil, err
	}
	defer p.Close()
	rep := &Report{Format: d.Format, Dump: d, Arch: d.Arch, Missing: p.Missing}
	add := func(th dump.Thread, name string) {
		t := Thread{ID: th.ID, KernelID: th.KernelID, Name: name, Crashed: th.Crashed}
		mem := z.threadMemory(d, th)
		opts := walker.Options{MaxDepth: z.MaxDepth, StackLow: th.StackLow, StackHigh: th.StackHigh, PACMask: d.PACMask}
		switch {
		case len(th.Frames) > 0:
			rule := addressRuleOf(d, th)
			t.Frames = p.reportedFrames(th.Frames, th.SkippedFrames, rule)
			if th.Registers != nil && mem != nil {
				t.Walk = p.walkReported(th, mem, rule, opts)
			}
		case th.Registers != nil && (mem != nil || !d.Format.IsReport()):
			// A report's thread without a backtrace is walked only when
			// the report kept its stack.
			frames, res := p.Walk(th.Registers, mem, opts)
			t.Frames, t.StopReason, t.StopDetail = frames, res.Stop.String(), res.StopDetail
		}
		rep.Threads = append(rep.Threads, t)
	}
	for _, th := range d.Threads {
		name := th.Name
		if name == "" {
			name = th.Queue
		}
		add(th, name)
	}
	if len(d.LastExceptionBacktrace) > 0 {
		add(dump.Thread{Index: -1, ID: ^uint64(0), Frames: d.LastExceptionBacktrace}, "Last Exception Backtrace")
		rep.Threads[len(rep.Threads)-1].LastException = true
	}
	if d.RecrashThread != nil {
		add(*d.RecrashThread, "Recrash (the reporter's own thread)")
	}
	rep.Warnings = append(append([]string(nil), d.Warnings...), p.Warnings()...)
	return rep, nil
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
