package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stackimage/stackimage/serve"
)

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
