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

const aggregateSynopsis = `aggregate INPUT... [--symbols DIR]... [--symbols-url URL]... [--group-by frames|stack|label:KEY] [--frames N]
       [--in-app PATTERN]... [--threads input|all] [--format summary|pprof|folded|speedscope|json] [-o FILE]`

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
	servers := addSymbolServerFlags(fs)
	groupBy := fs.String("group-by", "frames", `how stacks are grouped: "frames" (the innermost in-app functions), "stack" (all functions), "label:KEY" (frames and a label's value)`)
	frames := fs.Int("frames", aggregate.DefaultGroupFrames, "how many in-app functions make a group's fingerprint")
	fs.Var(&inApp, "in-app", `an image name pattern ("MyKit*") or, with a "/", a path pattern ("/opt/app/"), of in-app images beyond the main executable and its .app bundle; repeatable`)
	format := fs.String("format", "summary", "summary, pprof, folded (flamegraph.pl), speedscope or json (the groups)")
	outPath := fs.String("o", "", "write the output to FILE instead of standard output")
	top := fs.Int("top", 10, "how many groups the summary lists")
	fs.Var(&labels, "label", "KEY=VALUE given to every stack read from a dump (stream records carry their own); repeatable")
	quiet := fs.Bool("quiet", false, "show no progress bar on a terminal")
	threadsFlag := fs.String("threads", "input", `which threads count: "input" (a crash's crashed thread; every thread of a hang, sample, spindump or microstackshot report) or "all"`)
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
	threads, err := aggregate.ParseThreads(*threadsFlag)
	if err != nil {
		return fmt.Errorf("%w: --%v", errUsage, err)
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
	removeDownloads, err := servers.addTo(syms)
	if err != nil {
		return err
	}
	defer removeDownloads()
	for _, skipped := range syms.Skipped {
		writeLine(stderr, "stackimage aggregate: skipped %s", skipped)
	}

	agg := aggregate.New()
	bar := newProgress(stderr, *quiet, countFiles(inputs), "reading")
	defer bar.finish()
	stderr = bar.writer(stderr)
	var failures, warnings, shown, done int
	// empty lists the inputs read without error that gave no stack, in
	// the order found: when no input gave one, the user is told of each
	// (the others' errors are told as they come).
	var empty []string
	failed, seen := map[string]bool{}, map[string]bool{}
	var counted int64
	loader := &aggregate.Loader{
		Aggregator: agg,
		Symbolizer: &symbolize.Symbolizer{Symbols: syms},
		Labels:     labelMap,
		Threads:    threads,
		OnError: func(name string, err error) {
			failures++
			if shown < maxReportedErrors {
				shown++
				writeLine(stderr, "stackimage aggregate: %s: %v", name, err)
			}
			seen[name], failed[name] = true, true
		},
		// Called in each input's turn, after its records were counted:
		// the records counted since the last input are its own.
		OnInput: func(name string, _ int64) {
			done++
			bar.set(done)
			seen[name] = true
			if n := agg.Records(); n == counted && !failed[name] {
				empty = append(empty, name)
			} else {
				counted = n
			}
		},
		OnWarning: func(name, warning string) {
			warnings++
			if shown < maxReportedErrors {
				shown++
				writeLine(stderr, "stackimage aggregate: %s: warning: %s", name, warning)
			}
		},
	}
	loadErr := loader.Load(ctx, inputs)
	bar.finish()
	if loadErr != nil {
		return loadErr
	}
	if failures+warnings > shown {
		writeLine(stderr, "stackimage aggregate: %d more inputs or records could not be read or had warnings", failures+warnings-shown)
	}
	if agg.Records() == 0 {
		return noStackError(stderr, len(seen), empty)
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

// noStackError tells why an aggregate read no stack: how many inputs it
// looked at, and which of them were read but held no stack (the others
// could not be read, and their errors were told already).
func noStackError(stderr io.Writer, looked int, empty []string) error {
	for i, name := range empty {
		if i == maxReportedErrors {
			writeLine(stderr, "stackimage aggregate: and %d more", len(empty)-i)
			break
		}
		writeLine(stderr, "stackimage aggregate: %s: read, but it holds no stack", name)
	}
	return fmt.Errorf("read no stack from the %d inputs looked at (why each gave nothing is above); nothing to aggregate", looked)
}

// countFiles counts the files under the paths, each archive as one, for
// the progress bar's total; members of archives move the bar too, which
// then stops at its end.
func countFiles(paths []string) int {
	n := 0
	for _, root := range paths {
		filepath.WalkDir(root, func(_ string, d fs.DirEntry, err error) error {
			if err == nil && (d.Type().IsRegular() || d.Type()&fs.ModeSymlink != 0) {
				n++
			}
			return nil
		})
	}
	return n
}
