package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/stackimage/stackimage/aggregate"
	"github.com/stackimage/stackimage/open"
	"github.com/stackimage/stackimage/symbolize"
	"github.com/stackimage/stackimage/symstore"
)

const aggregateSynopsis = `aggregate INPUT... [--symbols DIR]... [--group-by frames|stack|label:KEY] [--frames N]
       [--in-app PATTERN]... [--format summary|pprof|folded|speedscope|json] [-o FILE]`

// aggregateGCPercent is the collector's GOGC while aggregating.
const aggregateGCPercent = 400

// maxReportedErrors bounds how many bad inputs and records are printed one
// by one; the rest are counted.
const maxReportedErrors = 20

func runAggregate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	// Aggregating allocates much and keeps little (the unique stacks and
	// samples), so the collector runs at a quarter of its default pace
	// unless GOGC says otherwise: 0.89x the wall time on a million
	// stacks, for a peak of 375 MB instead of 213 MB (docs/aggregate.md).
	setGCPercent(aggregateGCPercent)
	fs := newFlagSet("aggregate", aggregateSynopsis, stdout)
	fs.notes = func(w io.Writer) {
		kinds := [][2]string{{"stream format", "stacks.ndjson[.gz]: one JSON record per stack (docs/aggregate.md)"}}
		for _, f := range open.Formats() {
			kinds = append(kinds, [2]string{f.Name, f.Example})
		}
		kinds = append(kinds, [2]string{"directory", "searched recursively"}, [2]string{"archive", "a .zip, .tar or .tar.gz of any of these"})
		writeKinds(w, "INPUT may be, told apart by its content:", kinds)
		writeKinds(w, "--symbols finds, matched by UUID:", symbolFileKinds())
		fmt.Fprint(w, "\nExample:\n  stackimage aggregate hangs/ stacks.ndjson.gz --symbols MyApp.app.dSYM\n"+
			"  stackimage aggregate stacks.ndjson.gz --symbols MyApp.app.dSYM --format pprof -o stacks.pb.gz && go tool pprof -http=: stacks.pb.gz\n")
	}
	var dirs, inApp, labels stringList
	fs.Var(&dirs, "symbols", "a directory (searched recursively) or file of binaries and dSYMs, matched by UUID; repeatable")
	groupBy := fs.String("group-by", "frames", `how stacks are grouped: "frames" (the innermost in-app functions), "stack" (all functions), "label:KEY" (frames and a label's value)`)
	frames := fs.Int("frames", aggregate.DefaultGroupFrames, "how many in-app functions make a group's fingerprint")
	fs.Var(&inApp, "in-app", `an image name pattern ("MyKit*") or, with a "/", a path pattern ("/opt/app/"), of in-app images beyond the main executable and its .app bundle; repeatable`)
	format := fs.String("format", "summary", "summary, pprof, folded (flamegraph.pl), speedscope or json (the groups)")
	outPath := fs.String("o", "", "write the output to FILE instead of standard output")
	top := fs.Int("top", 10, "how many groups the summary lists")
	fs.Var(&labels, "label", "KEY=VALUE given to every stack read from a dump (stream records carry their own); repeatable")
	quiet := fs.Bool("quiet", false, "show no progress bar on a terminal")
	inputs, err := fs.parse(args)
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

	syms := symstore.NewSymbols()
	defer syms.Close()
	for _, d := range dirs {
		if err := syms.AddDir(ctx, d); err != nil {
			return err
		}
	}
	for _, skipped := range syms.Skipped {
		writeLine(stderr, "stackimage aggregate: skipped %s", skipped)
	}

	agg := aggregate.New()
	bar := newProgress(stderr, *quiet, countFiles(inputs), "reading")
	defer bar.finish()
	stderr = bar.writer(stderr)
	var failures, shown, done int
	loader := &aggregate.Loader{
		Aggregator: agg,
		Symbolizer: &symbolize.Symbolizer{Symbols: syms},
		Labels:     labelMap,
		OnError: func(name string, err error) {
			failures++
			if shown < maxReportedErrors {
				shown++
				writeLine(stderr, "stackimage aggregate: %s: %v", name, err)
			}
		},
		OnInput: func(string, int64) { done++; bar.set(done) },
	}
	loadErr := loader.Load(ctx, inputs)
	bar.finish()
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

// countFiles counts the files under the paths, each archive as one, for
// the progress bar's total; members of archives move the bar too, which
// then stops at its end.
func countFiles(paths []string) int {
	n := 0
	for _, root := range paths {
		filepath.WalkDir(root, func(_ string, d fs.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() {
				n++
			}
			return nil
		})
	}
	return n
}
