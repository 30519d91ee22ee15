package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stackimage/stackimage/serve"
)

// TestServeRefusesBadSetups: serve starts nothing without symbols or a
// configuration, on a non-loopback address without a token, or with a
// configuration it cannot read, and says why.
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
		{[]string{"serve"}, 2, "needs --symbols DIR or --config FILE"},
		{[]string{"serve", "--symbols", dir, "--listen", "0.0.0.0:0"}, 1, "not a loopback address"},
		{[]string{"serve", "--config", bad}, 1, "max_concurrnt"},
		{[]string{"serve", "--config", filepath.Join(dir, "missing.yaml")}, 1, "missing.yaml"},
		{[]string{"serve", "extra"}, 2, `unexpected argument "extra"`},
	}
	for _, tt := range tests {
		status, _, stderr := runCmd(nil, tt.args...)
		if status != tt.status || !strings.Contains(stderr, tt.want) {
			t.Errorf("%v: status %d, stderr %q; want %d and %q", tt.args, status, stderr, tt.status, tt.want)
		}
	}
}

// TestServeAnswersWhatTheCommandPrints posts an input of each format the
// repository can give to POST /v1/symbolicate of a service over the same
// symbols, in every output format: the answer must be what stackimage
// symbolicate --format prints for it, byte for byte, walks included.
func TestServeAnswersWhatTheCommandPrints(t *testing.T) {
	dir := t.TempDir()
	cfg := serve.DefaultConfig(symbolsDir)
	cfg.Cache.Dir = filepath.Join(dir, "cache")
	srv, err := serve.New(cfg)
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
