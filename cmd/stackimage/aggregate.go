package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/stackimage/stackimage/aggregate"
	"github.com/stackimage/stackimage/symbolize"
)

const aggregateSynopsis = `aggregate INPUT... [--symbols DIR]... [--group-by frames|stack|label:KEY] [--frames N]
       [--in-app PATTERN]... [--format summary|pprof|folded|speedscope|json] [-o FILE]`

// maxReportedErrors bounds how many bad inputs and records are printed one
// by one; the rest are counted.
const maxReportedErrors = 20

func runAggregate(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("aggregate", aggregateSynopsis, stderr)
	var dirs, inApp, labels stringList
	fs.Var(&dirs, "symbols", "a directory (searched recursively) or file of binaries and dSYMs, matched by UUID; repeatable")
	groupBy := fs.String("group-by", "frames", `how stacks are grouped: "frames" (the innermost in-app functions), "stack" (all functions), "label:KEY" (frames and a label's value)`)
	frames := fs.Int("frames", aggregate.DefaultGroupFrames, "how many in-app functions make a group's fingerprint")
	fs.Var(&inApp, "in-app", `an image name pattern ("MyKit*") or, with a "/", a path pattern ("/opt/app/"), of in-app images beyond the main executable and its .app bundle; repeatable`)
	format := fs.String("format", "summary", "summary, pprof, folded (flamegraph.pl), speedscope or json (the groups)")
	outPath := fs.String("o", "", "write the output to FILE instead of standard output")
	top := fs.Int("top", 10, "how many groups the summary lists")
	fs.Var(&labels, "label", "KEY=VALUE given to every stack read from a dump (stream records carry their own); repeatable")
	quiet := fs.Bool("quiet", false, "no progress bar")
	inputs, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(inputs) == 0 {
		return fmt.Errorf("%w: want at least one input (file, directory or archive)", errUsage)
	}
	opts := aggregate.GroupOptions{Frames: *frames}
	switch {
	case *groupBy == "frames":
	case *groupBy == "stack":
		opts.Frames = -1
	case strings.HasPrefix(*groupBy, "label:") && len(*groupBy) > len("label:"):
		opts.Label = strings.TrimPrefix(*groupBy, "label:")
	default:
		return fmt.Errorf("%w: --group-by %q: want frames, stack or label:KEY", errUsage, *groupBy)
	}
	if *frames < 1 && *groupBy != "stack" {
		return fmt.Errorf("%w: --frames %d: want 1 or more", errUsage, *frames)
	}
	for _, p := range inApp {
		if strings.Contains(p, "/") {
			opts.InApp.Paths = append(opts.InApp.Paths, p)
		} else {
			opts.InApp.Names = append(opts.InApp.Names, p)
		}
	}
	switch *format {
	case "summary", "pprof", "folded", "speedscope", "json":
	default:
		return fmt.Errorf("%w: --format %q: want summary, pprof, folded, speedscope or json", errUsage, *format)
	}
	labelMap := map[string]string{}
	for _, kv := range labels {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return fmt.Errorf("%w: --label %q: want KEY=VALUE", errUsage, kv)
		}
		labelMap[k] = v
	}

	syms := symbolize.NewSymbols()
	defer syms.Close()
	for _, d := range dirs {
		if err := syms.AddDir(d); err != nil {
			return err
		}
	}
	for _, skipped := range syms.Skipped {
		writeLine(stderr, "stackimage aggregate: skipped %s", skipped)
	}

	agg := aggregate.New()
	bar := newProgress(stderr, *quiet)
	var failures, shown int
	loader := &aggregate.Loader{
		Aggregator: agg,
		Symbolizer: &symbolize.Symbolizer{Symbols: syms},
		Labels:     labelMap,
		OnError: func(name string, err error) {
			failures++
			if shown < maxReportedErrors {
				shown++
				bar.clear()
				writeLine(stderr, "stackimage aggregate: %s: %v", name, err)
			}
		},
		OnInput: func(string, int64) { bar.input(agg.Records()) },
	}
	ctx := context.Background()
	start := time.Now()
	loadErr := loader.Load(ctx, inputs)
	bar.finish(agg.Records(), time.Since(start))
	if loadErr != nil {
		return loadErr
	}
	if failures > shown {
		writeLine(stderr, "stackimage aggregate: %d more inputs or records could not be read", failures-shown)
	}
	res, err := agg.Symbolicate(ctx, syms)
	if err != nil {
		return err
	}

	out := stdout
	var file *os.File
	if *outPath != "" {
		if file, err = os.Create(*outPath); err != nil {
			return err
		}
		defer file.Close()
		out = file
	}
	bw := bufio.NewWriterSize(out, 256<<10)
	switch *format {
	case "pprof":
		err = res.WriteProfile(bw)
	case "folded":
		err = res.WriteFolded(bw)
	case "speedscope":
		err = res.WriteSpeedscope(bw, "stackimage aggregate")
	case "json":
		err = res.WriteGroupsJSON(bw, res.Groups(opts))
	default:
		err = res.WriteSummary(bw, res.Groups(opts), *top)
	}
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	if file != nil {
		if cerr := file.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		return err
	}
	if *format != "summary" {
		// The summary prints the warnings itself.
		for _, w := range res.Warnings {
			writeLine(stderr, "stackimage aggregate: warning: %s", w)
		}
	}
	if failures > 0 {
		return fmt.Errorf("%d inputs or records could not be read (what could be read was aggregated)", failures)
	}
	return nil
}

// progress shows inputs and stacks read on a terminal; it is silent when
// stderr is not one, or with --quiet.
type progress struct {
	bar *progressbar.ProgressBar
	w   io.Writer
}

func newProgress(stderr io.Writer, quiet bool) *progress {
	f, ok := stderr.(*os.File)
	if quiet || !ok || !term.IsTerminal(int(f.Fd())) {
		return &progress{}
	}
	return &progress{w: stderr, bar: progressbar.NewOptions64(-1,
		progressbar.OptionSetWriter(stderr),
		progressbar.OptionSetDescription("reading"),
		progressbar.OptionShowCount(),
		progressbar.OptionSetItsString("inputs"),
		progressbar.OptionShowIts(),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionSpinnerType(14),
	)}
}

func (p *progress) input(records int64) {
	if p.bar == nil {
		return
	}
	p.bar.Describe("reading: " + strconv.FormatInt(records, 10) + " stacks")
	p.bar.Add(1)
}

func (p *progress) clear() {
	if p.bar != nil {
		p.bar.Clear()
	}
}

func (p *progress) finish(records int64, took time.Duration) {
	if p.bar == nil {
		return
	}
	p.bar.Finish()
	fmt.Fprintf(p.w, "\nread %d stacks in %.1fs\n", records, took.Seconds())
}
