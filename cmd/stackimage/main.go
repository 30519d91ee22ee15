// Command stackimage symbolicates captured thread stacks and crash reports
// of Apple platforms, looks up addresses like atos, and lists Mach-O images.
//
//	stackimage symbolicate DUMP [--symbols DIR]... [--format text|json|same|crash]
//	stackimage symbolicate DUMP|DIR... --out DIR [--quiet]
//	stackimage atos -o BINARY [-arch ARCH] [-l LOADADDR] [ADDR...]
//	stackimage images FILE...
//	stackimage index --symbols DIR --out STORE
//	stackimage serve [--listen ADDR] [--symbols DIR] [--config FILE]
//	stackimage version
//	stackimage aggregate INPUT... [--symbols DIR]... [--format summary|pprof|folded|speedscope|json]
//
// "stackimage serve" runs the service (package serve) in this process
// until SIGTERM or SIGINT.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/stackimage/stackimage/internal/textesc"
	"github.com/stackimage/stackimage/symstore"
)

const usage = `stackimage: symbolicate Apple-platform stacks and crash reports on any OS

Usage:
  stackimage symbolicate DUMP [--symbols DIR]... [--format text|json|same|crash]
      Walk every thread of a dump (snapshot, minidump, Mach-O core) or read a
      crash or hang report (.ips, .crash, KSCrash, .plcrash, sample,
      microstackshot) or a MetricKit payload, and print the symbolicated
      backtraces; "-" reads stdin. --format same prints the input in its own
      layout, --format crash as Apple's .crash text.
  stackimage symbolicate DUMP|DIR... --out DIR [--quiet] [options]
      Symbolicate many reports, one file each in --out, with a progress
      bar on a terminal.
  stackimage atos -o BINARY [-arch ARCH] [-l LOADADDR] [ADDR...]
      Look up addresses in a binary, as atos(1) does; reads stdin when no
      address is given. BINARY may be a .app or .dSYM bundle.
  stackimage images FILE...
      Print the UUID, architecture, type and segments of every slice
      (of the executable, for a .app or .dSYM bundle).
  stackimage index --symbols DIR --out STORE [--quiet]
      Write STORE/UUID/ARCH.symindex for every binary and dSYM under DIR;
      --symbols STORE (and atos -o FILE.symindex) then answer from them.
  stackimage serve [--listen 127.0.0.1:3021] [--symbols DIR] [--config FILE]
      Run the symbolication service: Sentry symbolicator's API and our own,
      over HTTP (docs/serve.md), until SIGTERM or SIGINT.
  stackimage version
      Print the module version, commit and Go version it was built from.
  stackimage aggregate INPUT... [--symbols DIR]... [--format summary|pprof|folded|speedscope|json] [-o FILE]
      Count, symbolicate once and group many captured stacks (the stream
      format of docs/aggregate.md, and any dump or report, in files,
      directories or archives); print the top groups, or a profile.

Run "stackimage COMMAND -h" for a command's options, the inputs it accepts
and an example.
`

// errUsage marks an error the user made on the command line; it is reported
// with exit status 2, like the flag package does.
var errUsage = errors.New("usage")

// badFlagsError is a command line the flag package rejected.
type badFlagsError struct{ err error }

func (e *badFlagsError) Error() string { return e.err.Error() }

func main() {
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is main without the process: it returns the exit status, so that the
// tests can drive the command in-process.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runContext(context.Background(), args, stdin, stdout, stderr)
}

// runContext is run with a context that bounds the command's reading
// and symbolication, and ends the service (serve stops when it ends, or
// at SIGTERM or SIGINT).
func runContext(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "serve":
		err = runServe(ctx, args[1:], stdout, stderr)
	case "symbolicate":
		err = runSymbolicate(ctx, args[1:], stdin, stdout, stderr)
	case "atos":
		err = runAtos(ctx, args[1:], stdin, stdout, stderr)
	case "images":
		err = runImages(args[1:], stdout, stderr)
	case "index":
		err = runIndex(ctx, args[1:], stdout, stderr)
	case "version", "-version", "--version":
		err = runVersion(args[1:], stdout, stderr)
	case "aggregate":
		err = runAggregate(ctx, args[1:], stdout, stderr)
	case "help", "-h", "-help", "--help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "stackimage: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	var badFlags *badFlagsError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, &badFlags) || errors.Is(err, errUsage):
		// One line and where to read more, not the whole flag list.
		writeLine(stderr, "stackimage %s: %v", args[0], err)
		writeLine(stderr, "run 'stackimage %s -h' for usage", args[0])
		return 2
	default:
		// Errors quote paths and names from files: escape them too.
		writeLine(stderr, "stackimage %s: %v", args[0], err)
		return 1
	}
}

// parseInterspersed parses flags that may come before, between or after the
// positional arguments, which the flag package alone does not allow.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, &badFlagsError{err}
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return positional, nil
		}
		// The flag package stops at "--" too; everything after it is
		// positional.
		if len(args) > len(rest) && args[len(args)-len(rest)-1] == "--" {
			return append(positional, rest...), nil
		}
		positional = append(positional, rest[0])
		args = rest[1:]
	}
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return fmt.Sprint(*l) }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// flagSet is a command's flags and its help, which -h prints to stdout.
type flagSet struct {
	*flag.FlagSet
	synopsis string
	// notes, when set, writes what the help says after the options: the
	// inputs the command accepts and an example.
	notes  func(w io.Writer)
	stdout io.Writer
}

func newFlagSet(name, synopsis string, stdout io.Writer) *flagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	// A bad flag is reported by run in one line; the flag package would
	// print the whole flag list after it.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	return &flagSet{FlagSet: fs, synopsis: synopsis, stdout: stdout}
}

// parse is parseInterspersed, printing the help for -h.
func (fs *flagSet) parse(args []string) ([]string, error) {
	rest, err := parseInterspersed(fs.FlagSet, args)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintf(fs.stdout, "Usage: stackimage %s\n", fs.synopsis)
		hasFlags := false
		fs.VisitAll(func(*flag.Flag) { hasFlags = true })
		if hasFlags {
			fmt.Fprint(fs.stdout, "\nOptions:\n")
			fs.SetOutput(fs.stdout)
			fs.PrintDefaults()
			fs.SetOutput(io.Discard)
		}
		if fs.notes != nil {
			fs.notes(fs.stdout)
		}
	}
	return rest, err
}

// writeKinds writes a help section: a heading, then each kind of input
// with an example of it.
func writeKinds(w io.Writer, heading string, kinds [][2]string) {
	fmt.Fprintf(w, "\n%s\n", heading)
	width := 0
	for _, k := range kinds {
		width = max(width, len(k[0]))
	}
	for _, k := range kinds {
		fmt.Fprintf(w, "  %-*s  %s\n", width, k[0], k[1])
	}
}

// symbolFileKinds lists what --symbols accepts, with an example each.
func symbolFileKinds() [][2]string {
	var kinds [][2]string
	for _, k := range symstore.SymbolFileKinds {
		kinds = append(kinds, [2]string{k.Name, k.Example})
	}
	return kinds
}

// writeLine writes one line of text output with everything a terminal
// could act on escaped (textesc.WriteLine).
func writeLine(w io.Writer, format string, args ...any) { textesc.WriteLine(w, format, args...) }

// setGCPercent sets the collector's pace for a command that allocates
// much and keeps little, unless the environment's GOGC chose one.
func setGCPercent(percent int) {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(percent)
	}
}
