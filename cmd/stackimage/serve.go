package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"syscall"

	"github.com/stackimage/stackimage/serve"
	"github.com/stackimage/stackimage/symstore"
)

// runServe runs the symbolication service (package serve) until ctx ends
// or the process gets SIGTERM or SIGINT; it then stops accepting,
// finishes or times out the requests in flight and returns nil (exit 0).
func runServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, os.Interrupt)
	defer stop()
	fs := newFlagSet("serve", "serve [--listen ADDR] [--symbols DIR] [--config FILE] [--cache DIR]", stdout)
	fs.notes = func(w io.Writer) {
		var kinds [][2]string
		for _, k := range symstore.SymbolFileKinds {
			kinds = append(kinds, [2]string{k.Name, k.Example})
		}
		writeKinds(w, "--symbols serves, matched by UUID:", kinds)
		fmt.Fprint(w, "\nRequests: Sentry symbolicator's API and our own (docs/serve.md).\n\n"+
			"Example:\n  stackimage serve --symbols store/ --listen 127.0.0.1:3021\n")
	}
	listen := fs.String("listen", "", "the address to listen on (default 127.0.0.1:3021, or the config's listen)")
	symbols := fs.String("symbols", "", "a directory of binaries, dSYMs and .sym files to serve (a filesystem source named local)")
	config := fs.String("config", "", "a YAML configuration file (docs/serve.md)")
	cacheDir := fs.String("cache", "", "the local cache directory (default: the config's cache.dir, else a temporary directory)")
	rest, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, rest[0])
	}
	if *symbols == "" && *config == "" {
		return fmt.Errorf("%w: needs --symbols DIR or --config FILE (docs/serve.md)", errUsage)
	}
	cfg := serve.DefaultConfig(*symbols)
	if *config != "" {
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
	srv, err := serve.New(ctx, cfg)
	if err != nil {
		return err
	}
	defer srv.Close()
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return err
	}
	writeLine(stderr, "stackimage serve: listening on http://%s", ln.Addr())
	return srv.Serve(ctx, ln)
}
