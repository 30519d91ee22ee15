package serve_test

import (
	"context"
	"log"
	"net"
	"os/signal"
	"syscall"

	"github.com/stackimage/stackimage/serve"
)

// A service over a directory of dSYMs, as `stackimage serve --symbols`
// runs it, stopped gracefully on SIGTERM.
func Example() {
	cfg := serve.DefaultConfig("/srv/dSYMs")
	cfg.Limits.MaxConcurrent = 32
	srv, err := serve.New(context.Background(), cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	if err := srv.Serve(ctx, ln); err != nil {
		log.Fatal(err)
	}
}

// The service as a handler inside another server, with its configuration
// from YAML.
func ExampleParseConfig() {
	cfg, err := serve.ParseConfig([]byte(`
sources:
  - {name: bucket, type: s3, endpoint: "http://127.0.0.1:7070", bucket: symbols}
store: bucket
auth: {upload_token: secret}
`))
	if err != nil {
		log.Fatal(err)
	}
	srv, err := serve.New(context.Background(), cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	_ = srv // an http.Handler: mux.Handle("/", srv)
}
