package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"

	"github.com/stackimage/stackimage/internal/buildversion"
	"github.com/stackimage/stackimage/internal/textesc"
	"github.com/stackimage/stackimage/serve"
	"github.com/stackimage/stackimage/symstore"
)

const synopsis = "stackimage-serve [--listen ADDR] [--symbols DIR] [--config FILE] [--cache DIR]\n       stackimage-serve --version"

// usageError is a mistake on the command line: exit status 2, as the flag
// package and stackimage use.
type usageError struct{ error }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	status := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(status)
}

// run is main without the process: the service runs until ctx ends (main
// ends it on SIGTERM or SIGINT), and run returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	err := runServe(ctx, args, stdout, stderr)
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.As(err, new(usageError)):
		// One line and where to read more, not the whole flag list.
		writeLine(stderr, "stackimage-serve: %v", err)
		writeLine(stderr, "run 'stackimage-serve -h' for usage")
		return 2
	default:
		// Errors quote paths and names from files: escape them.
		writeLine(stderr, "stackimage-serve: %v", err)
		return 1
	}
}

func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	// "version" as a command, as stackimage has it; --version is a flag.
	if len(args) > 0 && args[0] == "version" {
		if len(args) > 1 {
			return usageError{fmt.Errorf("unexpected argument %q", args[1])}
		}
		writeVersion(stdout)
		return nil
	}
	fs := flag.NewFlagSet("stackimage-serve", flag.ContinueOnError)
	// A bad flag is reported by run in one line; the flag package would
	// print the whole flag list after it.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	listen := fs.String("listen", "", "the address to listen on (default 127.0.0.1:3021, or the config's listen)")
	symbols := fs.String("symbols", "", "a directory of binaries, dSYMs and .sym files to serve (a filesystem source named local)")
	config := fs.String("config", "", "a YAML configuration file (docs/serve.md)")
	cacheDir := fs.String("cache", "", "the local cache directory (default: the config's cache.dir, else a temporary directory)")
	version := fs.Bool("version", false, "print the module version, commit and Go version it was built from, and exit")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			writeHelp(stdout, fs)
			return err
		}
		return usageError{err}
	}
	if *version {
		writeVersion(stdout)
		return nil
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Errorf("unexpected argument %q", fs.Arg(0))}
	}
	if *symbols == "" && *config == "" {
		return usageError{errors.New("needs --symbols DIR or --config FILE (docs/serve.md)")}
	}
	cfg := serve.DefaultConfig(*symbols)
	if *config != "" {
		var err error
		if cfg, err = serve.LoadConfig(*config); err != nil {
			return err
		}
		if *symbols != "" {
			cfg.AddSymbolsDir(*symbols)
		}
	}
	if *listen != "" {
		cfg.Listen = *listen
	}
	if *cacheDir != "" {
		cfg.Cache.Dir = *cacheDir
	}
	if err := cfg.Check(); err != nil {
		return err
	}
	srv, err := serve.New(cfg)
	if err != nil {
		return err
	}
	defer srv.Close()
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return err
	}
	writeLine(stderr, "stackimage-serve: listening on http://%s", ln.Addr())
	return srv.Serve(ctx, ln)
}

// writeHelp prints the usage, the options, what --symbols serves and an
// example, to stdout as -h asks.
func writeHelp(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprintf(w, "Usage: %s\n\nOptions:\n", synopsis)
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
	fmt.Fprint(w, "\n--symbols serves, matched by UUID:\n")
	width := 0
	for _, k := range symstore.SymbolFileKinds {
		width = max(width, len(k.Name))
	}
	for _, k := range symstore.SymbolFileKinds {
		fmt.Fprintf(w, "  %-*s  %s\n", width, k.Name, k.Example)
	}
	fmt.Fprint(w, "\nRequests: Sentry symbolicator's API and our own (docs/serve.md).\n"+
		"\"stackimage serve ARGS\" runs this command with the same arguments.\n\nExample:\n"+
		"  stackimage-serve --symbols store/ --listen 127.0.0.1:3021\n")
}

// writeVersion prints what the Go toolchain recorded in the binary, as
// "stackimage version" does: "stackimage serve" compares the same record
// with its own before running this program.
func writeVersion(w io.Writer) {
	info, ok := debug.ReadBuildInfo()
	buildversion.Write(w, "stackimage-serve", info, ok)
}

// writeLine writes one line of text output with everything a terminal
// could act on escaped (textesc.WriteLine).
func writeLine(w io.Writer, format string, args ...any) { textesc.WriteLine(w, format, args...) }
