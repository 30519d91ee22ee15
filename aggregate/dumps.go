package aggregate

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/stackimage/stackimage/crashreport"
	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/hangreport"
	"github.com/stackimage/stackimage/report"
	"github.com/stackimage/stackimage/symbolize"
)

// AddDump counts a dump's threads as records (DumpRecords).
func (a *Aggregator) AddDump(ctx context.Context, z *symbolize.Symbolizer, d *dump.Dump, labels map[string]string) error {
	recs, err := DumpRecords(ctx, z, d, labels)
	a.AddBatch(recs)
	return err
}

// Threads says which threads of an input become records.
type Threads int

const (
	// ThreadsByInput counts the threads the input means
	// (dump.Dump.Counting): a crash's crashed thread alone, every thread
	// of a sampled process (a hang, sample, spindump or microstackshot
	// report). A crash input with no crashed thread counts every thread,
	// with a warning.
	ThreadsByInput Threads = iota
	// ThreadsAll counts every thread of every input.
	ThreadsAll
)

// ParseThreads reads a Threads from its name: "input" (ThreadsByInput)
// or "all".
func ParseThreads(s string) (Threads, error) {
	switch s {
	case "input", "":
		return ThreadsByInput, nil
	case "all":
		return ThreadsAll, nil
	}
	return 0, fmt.Errorf("threads %q: want input or all", s)
}

// String is the name ParseThreads reads.
func (t Threads) String() string {
	if t == ThreadsAll {
		return "all"
	}
	return "input"
}

// CrashedOnly reports whether only d's crashed threads (Thread.Crashed)
// count under t, and the warning for a crash with no crashed thread,
// whose every thread then counts. A reader of a new input applies it to
// the input's dump as dumpRecords does; its parser need only set the
// dump's Counting and its threads' Crashed.
func (t Threads) CrashedOnly(d *dump.Dump) (only bool, warning string) {
	crashed := make([]bool, len(d.Threads))
	for i := range d.Threads {
		crashed[i] = d.Threads[i].Crashed
	}
	return crashedOnly(d.Counting, t, crashed)
}

// noCrashedThread is the warning for a crash input whose crashed thread
// is not known.
const noCrashedThread = "no crashed thread: every thread counted"

// crashedOnly reports whether only the crashed threads of a dump whose
// threads' Crashed flags are crashed become records, and the warning
// when a crash has none.
func crashedOnly(counting dump.Counting, threads Threads, crashed []bool) (only bool, warning string) {
	if threads == ThreadsAll || counting == dump.CountAllThreads {
		return false, ""
	}
	for _, c := range crashed {
		if c {
			return true, ""
		}
	}
	if len(crashed) > 1 {
		return false, noCrashedThread
	}
	return false, ""
}

// DumpRecords turns a dump's threads into records, the threads the input
// means (ThreadsByInput): a report's threads (.ips, .crash, KSCrash) as
// the reporter wrote them, with no symbol file opened; a memory dump's
// threads (snapshot, minidump, core) walked first through z, which must
// then be set. The dump's machine, OS, app version and capture time
// become the records' attributes, and labels are given to each. The
// records share one Images slice. It is safe to call from many
// goroutines at once. A call graph's dump (sample, spindump,
// microstackshot) is refused: HangRecords reads the report.
func DumpRecords(ctx context.Context, z *symbolize.Symbolizer, d *dump.Dump, labels map[string]string) ([]*Record, error) {
	recs, _, err := dumpRecords(ctx, z, d, labels, ThreadsByInput)
	return recs, err
}

// dumpRecords is DumpRecords for the given threads; warning says what
// it did that the input did not ask for (noCrashedThread).
func dumpRecords(ctx context.Context, z *symbolize.Symbolizer, d *dump.Dump, labels map[string]string, threads Threads) (recs []*Record, warning string, err error) {
	images := make([]Image, len(d.Images))
	for i, im := range d.Images {
		images[i] = Image{UUID: im.UUID, LoadAddress: Address(im.LoadAddress), Size: Address(im.Size),
			Name: im.Name, Path: im.Path, Main: d.Process.Path != "" && im.Path == d.Process.Path}
	}
	base := Record{Images: images, Device: d.System.Hardware, OSVersion: osVersion(d.System), AppVersion: d.Process.Version,
		Timestamp: parseTime(d.Process.Time), Labels: labels}
	add := func(thread string, frames []uint64, names []string) {
		if len(frames) == 0 {
			return
		}
		rec := base
		rec.Thread, rec.Frames, rec.names = thread, frames, names
		recs = append(recs, &rec)
	}
	if d.Format.IsCallGraph() {
		// The threads hold a call graph's nodes, not stacks.
		return nil, "", errors.New("aggregate: a sample, spindump or microstackshot report's call graph is read by HangRecords")
	}
	if d.CallGraph {
		return nil, "", errors.New("aggregate: a MetricKit call tree is read by MetricKitRecords")
	}
	if d.Format.IsReport() {
		only, warning := threads.CrashedOnly(d)
		for _, t := range d.Threads {
			if only && !t.Crashed {
				continue
			}
			frames := make([]uint64, 0, len(t.Frames))
			var names []string
			for _, f := range t.Frames {
				if f.Inlined {
					continue // the reporter's own inlining: the same address again
				}
				if f.Symbol != "" && names == nil {
					names = make([]string, len(frames), len(t.Frames))
				}
				if names != nil {
					names = append(names, f.Symbol)
				}
				frames = append(frames, f.Address)
			}
			add(t.Name, frames, names)
		}
		return recs, warning, nil
	}
	if z == nil {
		return nil, "", fmt.Errorf("aggregate: %s threads must be walked, which needs symbols", d.Format)
	}
	rep, err := report.Symbolicate(ctx, z, d)
	if rep == nil {
		return nil, "", err
	}
	crashed := make([]bool, len(rep.Threads))
	for i := range rep.Threads {
		crashed[i] = rep.Threads[i].Crashed
	}
	only, warning := crashedOnly(d.Counting, threads, crashed)
	for _, t := range rep.Threads {
		if only && !t.Crashed {
			continue
		}
		var frames []uint64
		for _, f := range t.Frames {
			if !f.Inlined {
				frames = append(frames, f.Address)
			}
		}
		add(t.Name, frames, nil)
	}
	return recs, warning, err
}

// ipsReader makes the records of .ips reports as dumpRecords makes them
// from the reports' dumps, through crashreport.ReadIPSStacks: without the
// report, the dump and their copies of every frame, and reusing its
// buffers from one report to the next. A loader's worker has one.
type ipsReader struct {
	stacks  crashreport.Stacks
	images  []Image
	records []Record
	ptrs    []*Record
	frames  []uint64
	names   []string
}

// read returns the records of the given threads of the .ips report in
// data, which hold the reader's buffers until the next call, and
// dumpRecords' warning; false when ReadIPSStacks does not read the
// report (crashreport.Parse then says why).
func (ir *ipsReader) read(data []byte, labels map[string]string, threads Threads) (recs []*Record, warning string, ok bool) {
	st := &ir.stacks
	if !crashreport.ReadIPSStacks(data, st) {
		return nil, "", false
	}
	crashed := make([]bool, len(st.Threads))
	for i := range st.Threads {
		crashed[i] = st.Threads[i].Crashed
	}
	// An .ips crash report is a crash (dump.CountCrashedThread).
	only, warning := crashedOnly(dump.CountCrashedThread, threads, crashed)
	images := ir.images[:0]
	for _, im := range st.Images {
		images = append(images, Image{UUID: im.UUID, LoadAddress: Address(im.LoadAddress), Size: Address(im.Size),
			Name: im.Name, Path: im.Path, Main: st.Path != "" && im.Path == st.Path})
	}
	ir.images = images
	base := Record{Images: images, Device: st.Hardware, OSVersion: osVersion(dump.System{OS: st.OS}), AppVersion: st.Version,
		Timestamp: parseTime(st.Time), Labels: labels}
	total := 0
	for _, t := range st.Threads {
		total += len(t.Frames)
	}
	// The records' frames and names are slices of one buffer each, made
	// long enough first so that they stay where they are.
	frames := slices.Grow(ir.frames[:0], total)
	names := slices.Grow(ir.names[:0], total)
	records := ir.records[:0]
	for _, t := range st.Threads {
		if only && !t.Crashed {
			continue
		}
		start, named := len(frames), false
		for _, f := range t.Frames {
			if f.Inlined {
				continue // the reporter's own inlining: the same address again
			}
			frames = append(frames, f.Address)
			names = append(names, f.Symbol)
			named = named || f.Symbol != ""
		}
		if len(frames) == start {
			continue
		}
		rec := base
		rec.Thread, rec.Frames = t.Name, frames[start:len(frames):len(frames)]
		if named {
			rec.names = names[start:len(names):len(names)]
		}
		records = append(records, rec)
	}
	ir.frames, ir.names, ir.records = frames, names, records
	ptrs := ir.ptrs[:0]
	for i := range records {
		ptrs = append(ptrs, &records[i])
	}
	ir.ptrs = ptrs
	return ptrs, warning, true
}

// HangRecords turns a sample, spindump or microstackshot report's call
// graphs into records: one per node that was on top of the stack in some
// samples, its stack the path from it to its thread's root, its weight
// those samples (the node's count less its children's), as
// stackcollapse-sample does. A node without an address (a
// microstackshot's "<Requested Thread QoS ...>") counts as the frame
// above it. Every thread of every process counts (dump.CountAllThreads).
// The heaviest stack, a summary of the others, is left out. A
// microstackshot report's event ("cpu usage", "disk writes") is the
// records' label "event", unless labels has one.
func HangRecords(r *hangreport.Report, labels map[string]string) []*Record {
	if _, given := labels["event"]; !given && r.Event() != "" {
		event := r.Event()
		withEvent := make(map[string]string, len(labels)+1)
		maps.Copy(withEvent, labels)
		withEvent["event"] = event
		labels = withEvent
	}
	var recs []*Record
	dumps := r.Dumps()
	for pi, pr := range r.Processes {
		if pi >= len(dumps) {
			break
		}
		d := dumps[pi]
		images := make([]Image, len(d.Images))
		for i, im := range d.Images {
			images[i] = Image{UUID: im.UUID, LoadAddress: Address(im.LoadAddress), Size: Address(im.Size),
				Name: im.Name, Path: im.Path, Main: d.Process.Path != "" && im.Path == d.Process.Path}
		}
		base := Record{Images: images, Device: d.System.Hardware, OSVersion: osVersion(d.System), AppVersion: d.Process.Version,
			Timestamp: parseTime(d.Process.Time), Labels: labels}
		for ti := range pr.Threads {
			th := &pr.Threads[ti]
			if th.Heaviest {
				continue
			}
			addrs := make([]uint64, len(th.Nodes))
			names := make([]string, len(th.Nodes))
			has := make([]bool, len(th.Nodes))
			for ni := range th.Nodes {
				f := r.Frame(th.Nodes[ni].Text)
				if addr, ok := r.FrameAddress(pi, f); ok {
					addrs[ni], names[ni], has[ni] = addr, f.Symbol, true
				}
			}
			for ni := range th.Nodes {
				n := &th.Nodes[ni]
				self := n.Count
				for c := n.FirstChild; c >= 0 && c < len(th.Nodes); c = th.Nodes[c].NextSibling {
					self -= min(self, th.Nodes[c].Count)
				}
				// A node without an address ("<Kernel mode>", "<patched
				// truncated backtrace>") gives its samples to the stack
				// of the frames above it, so that no sample is lost.
				if self == 0 {
					continue
				}
				var frames []uint64
				var frameNames []string
				// Parents come before their children in Nodes, so the
				// walk up ends; the bound keeps a damaged graph finite.
				for p, steps := ni, 0; p >= 0 && p < len(th.Nodes) && steps < len(th.Nodes) && len(frames) < MaxFrames; p, steps = th.Nodes[p].Parent, steps+1 {
					if has[p] {
						frames = append(frames, addrs[p])
						frameNames = append(frameNames, names[p])
					}
				}
				if len(frames) == 0 {
					continue
				}
				rec := base
				rec.Thread, rec.Frames, rec.Weight, rec.names = threadName(th.Heading), frames, int64(min(self, 1<<62)), frameNames
				recs = append(recs, &rec)
			}
		}
	}
	return recs
}

// threadName is the thread's name in a call graph's heading, its
// dispatch queue's when it has one ("DispatchQueue_1: com.apple.main-thread").
func threadName(heading string) string {
	if _, q, ok := strings.Cut(heading, "DispatchQueue_"); ok {
		if _, name, ok := strings.Cut(q, ": "); ok {
			name, _, _ = strings.Cut(name, "  ")
			return strings.TrimSpace(name)
		}
	}
	return ""
}

func osVersion(s dump.System) string {
	if s.OS != "" {
		return s.OS
	}
	return strings.TrimSpace(s.Version + " " + s.Build)
}

// timeLayouts are the capture times reporters write.
var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02 15:04:05.999999999 -0700", // Apple's .ips and .crash
	"2006-01-02 15:04:05 -0700",
	"2006-01-02 15:04:05", // MetricKit's timeStampEnd, taken as UTC
	"2006-01-02T15:04:05.999999999Z0700",
}

// parseTime reads a dump's capture time; zero when it has none or none of
// the known layouts reads it.
func parseTime(s string) time.Time {
	s = strings.TrimSpace(s)
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t
		}
	}
	return time.Time{}
}
