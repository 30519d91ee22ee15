package report

import (
	"context"
	"fmt"
	"io"

	"github.com/stackimage/stackimage/crashreport"
	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/hangreport"
	"github.com/stackimage/stackimage/open"
	"github.com/stackimage/stackimage/symbolize"
	"github.com/stackimage/stackimage/symstore"
)

// ErrNoSameFormat is the error WriteSame returns for an input it cannot
// write in its own layout (a snapshot, a minidump, a core, KSCrash JSON).
var ErrNoSameFormat = fmt.Errorf("same format: only .crash, .ips, .plcrash, sample, spindump and microstackshot reports are written in their own layout")

// CanWriteSame reports whether WriteSame writes inputs of format f.
func CanWriteSame(f dump.Format) bool {
	return f == dump.FormatCrash || f == dump.FormatIPS || f == dump.FormatPLCrash ||
		f.IsCallGraph()
}

// WriteSame symbolicates in and writes it back in its own layout, every
// byte kept but the frames it fills in: a .crash or .ips report with the
// names (and inlined functions, file and line) Xcode would write; a
// sample or spindump report with names where it had "???", in every
// process it lists; a PLCrashReporter report, whose own layout is binary,
// as the .crash text its reporter's formatter writes (NewCrash). A
// damaged or truncated input is written whole, the frames that could be
// read filled in.
//
// When ctx is done the rest of the input is written as it is, unnamed,
// and the error is ctx's. For other formats the error wraps
// ErrNoSameFormat.
func WriteSame(ctx context.Context, z *symbolize.Symbolizer, in *open.Input, w io.Writer) error {
	if z == nil || in == nil || in.Format == nil {
		return ErrNilDump
	}
	switch {
	case in.Format.Format == dump.FormatPLCrash:
		return Write(ctx, z, in, NewCrash(w))
	case in.Hang != nil:
		return WriteHang(ctx, z, in.Hang, w, hangreport.StyleReport)
	case in.Crash != nil && CanWriteSame(in.Format.Format) && len(in.Dumps) > 0:
		d := in.Dumps[0]
		rep, err := Symbolicate(ctx, z, d)
		if rep == nil {
			return err
		}
		names := newFrameNames(d, rep)
		if werr := crashreport.WriteSymbolicated(w, in.Data(), in.Crash.Format, names.lookup); werr != nil {
			return werr
		}
		return err
	}
	return fmt.Errorf("%w; this is %s", ErrNoSameFormat, open.Article(in.Format.Name))
}

// WriteHang writes a sample or spindump report back in its own layout,
// with names in the given style where it had "???", in every process it
// lists. The error is w's, else the first of building a process's symbols
// or ctx's; the report is written whole in any case.
func WriteHang(ctx context.Context, z *symbolize.Symbolizer, r *hangreport.Report, w io.Writer, style hangreport.Style) error {
	if z == nil || r == nil {
		return ErrNilDump
	}
	names, nameErr, closeNames := hangNamer(ctx, z, r)
	defer closeNames()
	if err := r.Write(w, names, style); err != nil {
		return err
	}
	return *nameErr
}

// hangNamer names a report's addresses from the symbol files, with one
// symbolize.Process per process of the report, built when first asked.
// Every address is looked up as the report gives it, as atos (and sample
// itself) does: a call graph's addresses are return addresses, and their
// line is the one the call returns to. The name is the machine frame's:
// the function holding the address, with the source position of the code
// there. The first error (of building a process, or ctx's) is left in
// *err, and names nothing more once ctx is done; closeAll closes the
// processes built.
func hangNamer(ctx context.Context, z *symbolize.Symbolizer, r *hangreport.Report) (names hangreport.Namer, err *error, closeAll func()) {
	var firstErr error
	dumps := r.Dumps()
	procs := make([]*symbolize.Process, len(dumps))
	failed := make([]bool, len(dumps))
	names = func(pi int, addr uint64) (hangreport.Name, bool) {
		if pi < 0 || pi >= len(procs) || failed[pi] {
			return hangreport.Name{}, false
		}
		if cerr := ctx.Err(); cerr != nil {
			if firstErr == nil {
				firstErr = cerr
			}
			return hangreport.Name{}, false
		}
		p := procs[pi]
		if p == nil {
			d := dumps[pi]
			var err error
			if p, err = z.NewDumpProcess(d); err != nil {
				failed[pi] = true
				if firstErr == nil {
					firstErr = fmt.Errorf("process %q: %w", d.Process.Name, err)
				}
				return hangreport.Name{}, false
			}
			procs[pi] = p
		}
		fs := p.Frames(0, addr, addr, symstore.FoundByReport)
		f := fs[len(fs)-1]
		if f.Symbol == "" {
			return hangreport.Name{}, false
		}
		return hangreport.Name{Symbol: f.Symbol, Offset: f.SymbolOffset, HasOffset: f.HasOffset, File: f.File, Line: f.Line}, true
	}
	closeAll = func() {
		for _, p := range procs {
			if p != nil {
				p.Close()
			}
		}
	}
	return names, &firstErr, closeAll
}

// frameNames answers crashreport.WriteSymbolicated's lookups from a
// symbolicated report.
type frameNames struct {
	d   *dump.Dump
	rep *symbolize.Report
	// starts[k] holds, for rep.Threads[k], the index in its Frames of the
	// first frame of each reported frame (inlined frames come first);
	// built on first use.
	starts map[int][]int
}

func newFrameNames(d *dump.Dump, rep *symbolize.Report) *frameNames {
	return &frameNames{d: d, rep: rep, starts: map[int][]int{}}
}

// thread returns the index in rep.Threads of the report's thread t and
// the dump thread it came from.
func (n *frameNames) thread(t int) (int, *dump.Thread, bool) {
	d := n.d
	switch {
	case t >= 0 && t < len(d.Threads):
		return t, &d.Threads[t], true
	case t == crashreport.LastExceptionBacktrace && len(d.LastExceptionBacktrace) > 0:
		return len(d.Threads), &dump.Thread{Frames: d.LastExceptionBacktrace}, true
	case t == crashreport.RecrashThread && d.RecrashThread != nil:
		k := len(d.Threads)
		if len(d.LastExceptionBacktrace) > 0 {
			k++
		}
		return k, d.RecrashThread, true
	}
	return 0, nil, false
}

func (n *frameNames) lookup(ref crashreport.FrameRef) (crashreport.FrameName, bool) {
	k, th, ok := n.thread(ref.Thread)
	if !ok || k >= len(n.rep.Threads) || ref.Frame < 0 || ref.Frame >= len(th.Frames) {
		return crashreport.FrameName{}, false
	}
	frames := n.rep.Threads[k].Frames
	starts, ok := n.starts[k]
	if !ok {
		for i, f := range frames {
			if i == 0 || f.Index != frames[i-1].Index {
				starts = append(starts, i)
			}
		}
		n.starts[k] = starts
	}
	if ref.Frame >= len(starts) {
		return crashreport.FrameName{}, false
	}
	end := len(frames)
	if ref.Frame+1 < len(starts) {
		end = starts[ref.Frame+1]
	}
	group := frames[starts[ref.Frame]:end]
	outer := group[len(group)-1]
	// A name the report itself gave is already in the input.
	if outer.Symbol == "" || outer.SymbolSource == symstore.SourceReport || outer.Index != ref.Frame+th.SkippedFrames {
		return crashreport.FrameName{}, false
	}
	name := frameName(outer)
	if !alreadyInlined(th) {
		for _, f := range group[:len(group)-1] {
			name.Inlined = append(name.Inlined, frameName(f))
		}
	}
	return name, true
}

func frameName(f symstore.Frame) crashreport.FrameName {
	return crashreport.FrameName{Symbol: f.Symbol, SymbolOffset: f.SymbolOffset, HasOffset: f.HasOffset, File: f.File, Line: f.Line}
}

// alreadyInlined reports whether the reporter listed inlined frames in th
// itself (a report symbolicated before): ours would repeat them.
func alreadyInlined(th *dump.Thread) bool {
	for _, f := range th.Frames {
		if f.Inlined {
			return true
		}
	}
	return false
}
