package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/stackimage/stackimage/open"
	"github.com/stackimage/stackimage/report"
	"github.com/stackimage/stackimage/symbolize"
	"github.com/stackimage/stackimage/symstore"
)

// Output formats of symbolicate.
const (
	outputText  = "text"  // our crash-report-like text (the default)
	outputJSON  = "json"  // our JSON
	outputSame  = "same"  // the input's own layout, frames filled in
	outputCrash = "crash" // Apple's .crash text layout, for any crash input
)

// outputFlags are symbolicate's --format and its synonym --json.
type outputFlags struct {
	format string
	json   bool
}

func addOutputFlags(fs *flag.FlagSet) *outputFlags {
	o := &outputFlags{}
	fs.StringVar(&o.format, "format", outputText,
		"output: text, json, same (a .crash, .ips, sample, spindump or microstackshot report written back in its own layout with the frames filled in; a .plcrash as .crash text), or crash (any crash report or dump as Apple's .crash text)")
	fs.BoolVar(&o.json, "json", false, "print JSON (--format json)")
	return o
}

// chosen returns the output format the flags ask for.
func (o *outputFlags) chosen() (string, error) {
	switch o.format {
	case outputText, outputJSON, outputSame, outputCrash:
	default:
		return "", fmt.Errorf("%w: --format %q: want text, json, same or crash", errUsage, o.format)
	}
	if o.json {
		if o.format != outputText && o.format != outputJSON {
			return "", fmt.Errorf("%w: --json and --format %s contradict each other", errUsage, o.format)
		}
		return outputJSON, nil
	}
	return o.format, nil
}

func runSymbolicate(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("symbolicate", "symbolicate DUMP|- [--symbols DIR]... [--symbols-url URL]... [--format text|json|same|crash] [--exact-addresses]\n"+
		"       stackimage symbolicate DUMP|DIR... --out DIR [--quiet] [options]", stdout)
	fs.notes = func(w io.Writer) {
		var formats [][2]string
		for _, f := range open.Formats() {
			formats = append(formats, [2]string{f.Name, f.Example})
		}
		writeKinds(w, "DUMP may be, told apart by its content:", formats)
		writeKinds(w, "--symbols finds, matched by UUID:", symbolFileKinds())
		fmt.Fprint(w, "\nExample:\n  stackimage symbolicate MyApp-2025-01-31-101112.ips --symbols MyApp.app.dSYM --format same\n"+
			"  stackimage symbolicate crashes/ --symbols MyApp.app.dSYM --out symbolicated/\n")
	}
	var dirs stringList
	fs.Var(&dirs, "symbols", "a directory (searched recursively) or file of binaries and dSYMs, matched by UUID; repeatable")
	servers := addSymbolServerFlags(fs)
	output := addOutputFlags(fs.FlagSet)
	outDir := fs.String("out", "", "write one report per input into this directory (NAME.txt, NAME.json, NAME.crash, or NAME for --format same), for several inputs or directories of them")
	quiet := fs.Bool("quiet", false, "show no progress bar on a terminal")
	depth := fs.Int("max-depth", 0, "the most frames to walk per thread (default 512)")
	total := fs.Int("max-total-frames", 0, fmt.Sprintf("the most frames of the whole report (default %d)", symbolize.DefaultMaxTotalFrames))
	noDemangle := fs.Bool("no-demangle", false, "print C++, Rust and Swift names as the binary spells them")
	exact := fs.Bool("exact-addresses", false,
		"look callers up at their return address, as atos and Apple's tools do, not one instruction back at the call")
	noUnwind := fs.Bool("no-unwind-info", false, "walk by the functions' code, frame records, link register and scanning only, ignoring unwind tables (for comparison)")
	async := fs.Bool("async", false, "follow Swift async context chains instead of the thread's stack at async frames")
	files, err := fs.parse(args)
	if err != nil {
		return err
	}
	format, err := output.chosen()
	if err != nil {
		return err
	}
	var inputs []reportInput
	if *outDir != "" {
		if inputs, err = findInputs(files, *outDir, format); err != nil {
			return err
		}
	} else if len(files) != 1 || isDir(files[0]) {
		return fmt.Errorf("%w: want one dump file, or --out DIR for several and for directories; got %d", errUsage, len(files))
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
	// A file that looks like Mach-O but cannot be read is why a user's
	// dSYM may not be used: say so, and go on with the rest.
	for _, skipped := range syms.Skipped {
		writeLine(stderr, "stackimage symbolicate: skipped %s", skipped)
	}
	z := &symbolize.Symbolizer{Symbols: syms, MaxDepth: *depth, MaxTotalFrames: *total, NoDemangle: *noDemangle,
		ExactAddresses: *exact, NoUnwindInfo: *noUnwind, Async: *async}
	if *outDir == "" {
		return symbolicateOne(ctx, z, files[0], stdin, stdout, format)
	}
	// Every input is tried: one that fails is named on stderr and the
	// rest are written all the same.
	bar := newProgress(stderr, *quiet, len(inputs), "symbolicating")
	defer bar.finish()
	stderr = bar.writer(stderr)
	failed := 0
	for i, in := range inputs {
		bar.set(i)
		err := symbolicateToFile(ctx, z, in, format)
		switch {
		case err == nil:
		case in.found && errors.Is(err, open.ErrUnrecognizedFormat):
			// A directory of reports holds other files too.
			writeLine(stderr, "stackimage symbolicate: skipped %s: in no format symbolicate reads", in.path)
		default:
			writeLine(stderr, "stackimage symbolicate: %v", err)
			failed++
		}
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d inputs could not be symbolicated in full", failed, len(inputs))
	}
	return nil
}

// reportInput is one input of a run with --out, and the file its report
// goes to.
type reportInput struct {
	path, out string
	found     bool // found below a directory named, not named itself
}

// findInputs lists the files named and those below the directories named,
// each with the report file it makes under outDir: its path below the
// directory named (its name, for a file named), with .txt or .json added
// unless the report is in the input's own layout. Two inputs that would
// write one file are refused.
func findInputs(args []string, outDir, format string) ([]reportInput, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("%w: want dump files or directories", errUsage)
	}
	ext := map[string]string{outputText: ".txt", outputJSON: ".json", outputSame: "", outputCrash: ".crash"}[format]
	var inputs []reportInput
	byOut := map[string]string{}
	add := func(path, rel string, found bool) error {
		out := filepath.Join(outDir, rel+ext)
		if format == outputSame && strings.HasSuffix(rel, ".plcrash") {
			// A .plcrash's own layout is binary: it is written as .crash text.
			out += ".crash"
		}
		if first, ok := byOut[out]; ok {
			return fmt.Errorf("%w: %s and %s would both be written to %s", errUsage, first, path, out)
		}
		byOut[out] = path
		inputs = append(inputs, reportInput{path, out, found})
		return nil
	}
	for _, arg := range args {
		if arg == "-" {
			return nil, fmt.Errorf("%w: with --out, inputs are files and directories, not stdin", errUsage)
		}
		if !isDir(arg) {
			if err := add(arg, filepath.Base(arg), false); err != nil {
				return nil, err
			}
			continue
		}
		err := filepath.WalkDir(arg, func(path string, d iofs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() || strings.HasPrefix(d.Name(), ".") {
				return err // hidden files (.DS_Store) are no reports
			}
			rel, err := filepath.Rel(arg, path)
			if err != nil {
				return err
			}
			return add(path, rel, true)
		})
		if err != nil {
			return nil, err
		}
	}
	return inputs, nil
}

func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

// symbolicateToFile writes the report of one input to its file. An input
// in no known format makes no file.
func symbolicateToFile(ctx context.Context, z *symbolize.Symbolizer, in reportInput, format string) error {
	input, parseErr := open.File(ctx, in.path)
	if input == nil {
		return fmt.Errorf("%s: %w", in.path, parseErr)
	}
	defer input.Close()
	if err := os.MkdirAll(filepath.Dir(in.out), 0o755); err != nil {
		return err
	}
	f, err := os.Create(in.out)
	if err != nil {
		return err
	}
	err = writeReport(ctx, z, in.path, input, parseErr, f, format)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// symbolicateOne writes the report of one input, a path or "-" for stdin,
// to w.
func symbolicateOne(ctx context.Context, z *symbolize.Symbolizer, name string, stdin io.Reader, w io.Writer, format string) error {
	var in *open.Input
	var parseErr error
	if name == "-" {
		in, parseErr = open.Reader(ctx, stdin)
		name = "stdin"
	} else {
		in, parseErr = open.File(ctx, name)
	}
	if in == nil {
		return fmt.Errorf("%s: %w", name, parseErr)
	}
	defer in.Close()
	return writeReport(ctx, z, name, in, parseErr, w, format)
}

// writeReport writes the report of an opened input to w; parseErr is why
// it was read only in part.
func writeReport(ctx context.Context, z *symbolize.Symbolizer, name string, in *open.Input, parseErr error, w io.Writer, format string) error {
	// Each thread is written as soon as it is symbolicated, so that the
	// memory a report takes is one thread's, however many it has.
	out := bufio.NewWriter(w)
	var err error
	switch format {
	case outputSame:
		err = report.WriteSame(ctx, z, in, out)
		if errors.Is(err, report.ErrNoSameFormat) {
			return fmt.Errorf("%s: --format same writes .crash, .ips, .plcrash, sample, spindump and microstackshot reports; this is %s", name, open.Article(in.Format.Name))
		}
	case outputCrash:
		if !report.CanWriteCrash(in.Format.Format) {
			return fmt.Errorf("%s: --format crash writes crash reports and dumps, whose threads are stacks; this is %s", name, open.Article(in.Format.Name))
		}
		err = report.Write(ctx, z, in, report.NewCrash(out))
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
