package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/stackimage/stackimage/internal/testtool"
	"github.com/stackimage/stackimage/serve"
	"github.com/stackimage/stackimage/symstore"
)

// TestServeAnswersWhatTheCommandPrints posts an input of each format the
// repository can give to POST /v1/symbolicate of a service over the same
// symbols, in every output format: the answer must be what stackimage
// symbolicate --format prints for it, byte for byte, walks included.
func TestServeAnswersWhatTheCommandPrints(t *testing.T) {
	dir := t.TempDir()
	cfg := serve.DefaultConfig(symbolsDir)
	cfg.Cache.Dir = filepath.Join(dir, "cache")
	srv, err := serve.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv)
	defer srv.Close()
	defer ts.Close()
	// A capture of code without frame pointers, which only the binary's
	// unwind tables walk.
	nofp := doorInput{"../../serve/testdata/chain-nofp-arm64-O1-deepest.json", false}
	for _, in := range append(doorInputs(t, dir), nofp) {
		formats := []string{"text", "json"}
		if in.same {
			formats = append(formats, "same")
		}
		body, err := os.ReadFile(in.path)
		if err != nil {
			t.Fatal(err)
		}
		for _, format := range formats {
			t.Run(filepath.Base(in.path)+"/"+format, func(t *testing.T) {
				var want, errOut bytes.Buffer
				if status := run([]string{"symbolicate", in.path, "--symbols", symbolsDir, "--format", format}, nil, &want, &errOut); status != 0 {
					t.Fatalf("stackimage symbolicate: status %d: %s", status, errOut.String())
				}
				if want.Len() == 0 {
					t.Fatal("the command printed nothing")
				}
				resp, err := http.Post(ts.URL+"/v1/symbolicate?format="+format, "application/octet-stream", bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				got, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil {
					t.Fatal(err)
				}
				if resp.StatusCode != http.StatusOK {
					t.Fatalf("POST /v1/symbolicate?format=%s: status %d: %s", format, resp.StatusCode, got)
				}
				if diff := cmp.Diff(want.String(), string(got)); diff != "" {
					t.Errorf("the service's answer differs from the command's output (-command +service):\n%s", diff)
				}
			})
		}
	}
}

// TestServeRefusesBadSetups: the service starts nothing without symbols
// or a configuration, on a non-loopback address without a token, or with
// a configuration it cannot read, and says why.
func TestServeRefusesBadSetups(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("limits: {max_concurrnt: 3}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args   []string
		status int
		want   string
	}{
		{nil, 2, "stackimage serve: usage: needs --symbols DIR or --config FILE (docs/serve.md)\nrun 'stackimage serve -h' for usage\n"},
		{[]string{"--symbols", dir, "--listen", "0.0.0.0:0"}, 1, "not a loopback address"},
		{[]string{"--config", bad}, 1, "max_concurrnt"},
		{[]string{"--config", filepath.Join(dir, "missing.yaml")}, 1, "missing.yaml"},
		{[]string{"--symbols", dir, "extra"}, 2, "stackimage serve: usage: unexpected argument \"extra\"\n"},
		{[]string{"--symbols", dir, "--no-such-flag=1"}, 2, "stackimage serve: flag provided but not defined: -no-such-flag\nrun 'stackimage serve -h' for usage\n"},
	}
	for _, tt := range tests {
		status, stdout, stderr := runCmd(nil, append([]string{"serve"}, tt.args...)...)
		if status != tt.status || !strings.Contains(stderr, tt.want) || stdout != "" {
			t.Errorf("%q: status %d, stdout %q, stderr %q; want %d, nothing and %q", tt.args, status, stdout, stderr, tt.status, tt.want)
		}
	}
}

// TestServeHelp: -h prints the usage, the options, what --symbols serves
// and an example to stdout, with status 0.
func TestServeHelp(t *testing.T) {
	want := []string{"-listen", "-symbols", "-config", "-cache", "Example:\n  stackimage serve "}
	for _, k := range symstore.SymbolFileKinds {
		want = append(want, k.Name, k.Example)
	}
	status, stdout, stderr := runCmd(nil, "serve", "-h")
	if status != 0 || stderr != "" || !strings.HasPrefix(stdout, "Usage: stackimage serve ") {
		t.Errorf("serve -h: status %d, stderr %q, stdout %.100q; want 0, nothing and the usage first", status, stderr, stdout)
	}
	for _, s := range want {
		if !strings.Contains(stdout, s) {
			t.Errorf("serve -h does not mention %q:\n%s", s, stdout)
		}
	}
}

// TestServesUntilCancelled: the service says where it listens, answers
// there, and returns 0 once its context ends (as at SIGTERM).
func TestServesUntilCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	status := make(chan int, 1)
	go func() {
		status <- runContext(ctx, []string{"serve", "--symbols", symbolsDir, "--listen", "127.0.0.1:0", "--cache", t.TempDir()}, nil, io.Discard, pw)
		pw.Close()
	}()
	lines := bufio.NewReader(pr)
	url := testtool.ListeningURL(t, lines)
	go io.Copy(io.Discard, lines) // an unread pipe would block the service's writes
	testtool.Healthcheck(t, url)
	cancel()
	select {
	case s := <-status:
		if s != 0 {
			t.Errorf("status %d after the context ended, want 0", s)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the service did not stop within 30 s of its context ending")
	}
}
