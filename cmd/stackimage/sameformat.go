package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/stackimage/stackimage/crashreport"
	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/symbolize"
)

// Output formats of symbolicate.
const (
	outputText = "text" // our crash-report-like text (the default)
	outputJSON = "json" // our JSON
	outputSame = "same" // the input's own layout, frames filled in
)

// outputFlags are symbolicate's --format and its synonym --json.
type outputFlags struct {
	format string
	json   bool
}

func addOutputFlags(fs *flag.FlagSet) *outputFlags {
	o := &outputFlags{}
	fs.StringVar(&o.format, "format", outputText,
		"output: text, json, or same (a .crash or .ips report written back in its own layout with the frames filled in)")
	fs.BoolVar(&o.json, "json", false, "print JSON (--format json)")
	return o
}

// chosen returns the output format the flags ask for.
func (o *outputFlags) chosen() (string, error) {
	switch o.format {
	case outputText, outputJSON, outputSame:
	default:
		return "", fmt.Errorf("%w: --format %q: want text, json or same", errUsage, o.format)
	}
	if o.json {
		if o.format != outputText && o.format != outputJSON {
			return "", fmt.Errorf("%w: --json and --format %s contradict each other", errUsage, o.format)
		}
		return outputJSON, nil
	}
	return o.format, nil
}

// symbolicateSame symbolicates a .crash or .ips report and writes it back
// to w in its own layout. Like symbolicate, it returns the reason a report
// could be read only in part as parseErr, after writing what it could;
// err means nothing was written.
func symbolicateSame(z *symbolize.Symbolizer, in *input, f *inputFormat, w io.Writer) (parseErr, err error) {
	data, err := in.bytes(f)
	if err != nil {
		return nil, err
	}
	cr, parseErr := crashreport.Parse(data)
	if cr == nil {
		return nil, parseErr
	}
	d := cr.Dump()
	rep, err := z.Symbolicate(d)
	if err != nil {
		return nil, err
	}
	names := newFrameNames(d, rep)
	if err := crashreport.WriteSymbolicated(w, data, cr.Format, names.lookup); err != nil {
		return nil, err
	}
	return parseErr, nil
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
	if outer.Symbol == "" || outer.SymbolSource == symbolize.SourceReport || outer.Index != ref.Frame+th.SkippedFrames {
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

func frameName(f symbolize.Frame) crashreport.FrameName {
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
