package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/stackimage/stackimage/open"
	"github.com/stackimage/stackimage/report"
	"github.com/stackimage/stackimage/symbolize"
	"github.com/stackimage/stackimage/symstore"
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
		"output: text, json, or same (a .crash, .ips, sample or spindump report written back in its own layout with the frames filled in)")
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

func runSymbolicate(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("symbolicate", "symbolicate DUMP|- [--symbols DIR]... [--format text|json|same] [--exact-addresses]", stdout)
	fs.notes = func(w io.Writer) {
		var formats [][2]string
		for _, f := range open.Formats() {
			formats = append(formats, [2]string{f.Name, f.Example})
		}
		writeKinds(w, "DUMP may be, told apart by its content:", formats)
		writeKinds(w, "--symbols finds, matched by UUID:", symbolFileKinds())
		fmt.Fprint(w, "\nExample:\n  stackimage symbolicate MyApp-2025-01-31-101112.ips --symbols MyApp.app.dSYM --format same\n")
	}
	var dirs stringList
	fs.Var(&dirs, "symbols", "a directory (searched recursively) or file of binaries and dSYMs, matched by UUID; repeatable")
	output := addOutputFlags(fs.FlagSet)
	depth := fs.Int("max-depth", 0, "the most frames to walk per thread (default 512)")
	total := fs.Int("max-total-frames", 0, fmt.Sprintf("the most frames of the whole report (default %d)", symbolize.DefaultMaxTotalFrames))
	noDemangle := fs.Bool("no-demangle", false, "print C++, Rust and Swift names as the binary spells them")
	exact := fs.Bool("exact-addresses", false,
		"look callers up at their return address, as atos and Apple's tools do, not one instruction back at the call")
	noUnwind := fs.Bool("no-unwind-info", false, "walk by frame records, link register and scanning only, ignoring unwind tables (for comparison)")
	async := fs.Bool("async", false, "follow Swift async context chains instead of the thread's stack at async frames")
	files, err := fs.parse(args)
	if err != nil {
		return err
	}
	format, err := output.chosen()
	if err != nil {
		return err
	}
	if len(files) != 1 {
		return fmt.Errorf("%w: want one dump file, got %d", errUsage, len(files))
	}
	name := files[0]
	var in *open.Input
	var parseErr error
	if name == "-" {
		in, parseErr = open.Reader(stdin)
		name = "stdin"
	} else {
		in, parseErr = open.File(name)
	}
	if in == nil {
		return fmt.Errorf("%s: %w", name, parseErr)
	}
	defer in.Close()
	syms := symstore.NewSymbols()
	defer syms.Close()
	for _, d := range dirs {
		if err := syms.AddDir(d); err != nil {
			return err
		}
	}
	// A file that looks like Mach-O but cannot be read is why a user's
	// dSYM may not be used: say so, and go on with the rest.
	for _, skipped := range syms.Skipped {
		writeLine(stderr, "stackimage symbolicate: skipped %s", skipped)
	}
	z := &symbolize.Symbolizer{Symbols: syms, MaxDepth: *depth, MaxTotalFrames: *total, NoDemangle: *noDemangle,
		ExactAddresses: *exact, NoUnwindInfo: *noUnwind, Async: *async}
	ctx := context.Background()
	// Each thread is written as soon as it is symbolicated, so that the
	// memory a report takes is one thread's, however many it has.
	out := bufio.NewWriter(stdout)
	switch format {
	case outputSame:
		err = report.WriteSame(ctx, z, in, out)
		if errors.Is(err, report.ErrNoSameFormat) {
			return fmt.Errorf("%s: --format same writes .crash, .ips, sample and spindump reports; this is %s", name, open.Article(in.Format.Name))
		}
	case outputJSON:
		err = report.Write(ctx, z, in, report.NewJSON(out))
	default:
		err = report.Write(ctx, z, in, report.NewText(out))
	}
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if parseErr != nil {
		// What could be read was printed; the rest is an error all the same.
		return fmt.Errorf("%s: incomplete %s: %w", name, in.Format.Name, parseErr)
	}
	return nil
}
