package serve

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestParseConfig reads a file with every key and checks each landed.
func TestParseConfig(t *testing.T) {
	c, err := ParseConfig([]byte(`
listen: 127.0.0.1:4000
sources:
  - name: dsyms
    type: filesystem
    path: /srv/dsyms
  - name: upstream
    type: http
    url: https://symbols.example.com/store
    headers: {X-Key: abc}
    layout: {type: breakpad, casing: lowercase}
    max_download: 512MiB
    download_timeout: 20s
  - name: bucket
    type: s3
    endpoint: 127.0.0.1:7070
    bucket: symbols
    prefix: team/
    region: eu-west-1
    access_key: AK
    secret_key: SK
    secure: false
store: bucket
allow_sources: [upstream]
cache:
  dir: /var/cache/si
  max_bytes: 2GiB
  miss_ttl: 30s
  failed_ttl: 1h
  shared: false
limits:
  max_concurrent: 8
  request_timeout: 5s
  max_symbolicate_body: 1MiB
  max_dump_body: 64MiB
  max_report_body: 2MiB
  max_upload_body: 1GiB
  max_frames: 1000
  max_pending: 10
auth:
  token: t0
  upload_token: t1
`))
	if err != nil {
		t.Fatal(err)
	}
	got := []any{c.Listen, c.Sources[0].Layout.Type, c.Sources[1].Layout, c.Sources[1].MaxDownload, c.Sources[1].DownloadTimeout,
		c.Sources[1].Headers["X-Key"], c.Sources[2].Layout.Type, c.Sources[2].Prefix, c.Store, c.AllowSources[0],
		c.Cache.MaxBytes, c.Cache.MissTTL, c.Cache.FailedTTL, *c.Cache.Shared,
		c.Limits.MaxConcurrent, c.Limits.RequestTimeout, c.Limits.MaxSymbolicateBody, c.Limits.MaxDumpBody,
		c.Limits.MaxReportBody, c.Limits.MaxUploadBody, c.Limits.MaxFrames, c.Limits.MaxPending, c.Auth.Token, c.Auth.UploadToken}
	want := []any{"127.0.0.1:4000", "scan", LayoutConfig{Type: "breakpad", Casing: "lowercase"}, ByteSize(512 << 20), 20 * time.Second,
		"abc", "unified", "team/", "bucket", "upstream",
		ByteSize(2 << 30), 30 * time.Second, time.Hour, false,
		8, 5 * time.Second, ByteSize(1 << 20), ByteSize(64 << 20),
		ByteSize(2 << 20), ByteSize(1 << 30), 1000, 10, "t0", "t1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
}

// TestConfigErrors: each mistake is refused with a message naming it.
func TestConfigErrors(t *testing.T) {
	tests := []struct{ yaml, want string }{
		{"limts: {}", "field limts not found"},
		{"sources: [{name: a, type: ftp}]", `type "ftp"`},
		{"sources: [{name: a, type: http, url: file:///etc}]", "http:// or https://"},
		{"sources: [{type: filesystem, path: /x}]", "name is required"},
		{"sources: [{name: a, type: s3, bucket: b}]", "endpoint and a bucket"},
		{"sources: [{name: a, type: http, url: 'http://x', layout: {type: scan}}]", `unknown layout "scan"`},
		{"sources: [{name: a, type: http, url: 'http://x', layout: {casing: camel}}]", `casing "camel"`},
		{"store: nowhere", `store "nowhere" names no source`},
		{"sources: [{name: a, type: http, url: 'http://x'}]\nstore: a", "cannot be written"},
		{"allow_sources: [x]", `"x" names no source`},
		{"listen: 0.0.0.0:3021", "not a loopback address"},
		{"limits: {max_upload_body: 12XB}", "want a number of bytes"},
	}
	for _, tt := range tests {
		_, err := ParseConfig([]byte(tt.yaml))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseConfig(%q) = %v, want an error containing %q", tt.yaml, err, tt.want)
		}
	}
	// A token, or auth explicitly disabled, allows any address.
	for _, ok := range []string{"listen: 0.0.0.0:3021\nauth: {token: x}", "listen: '[::]:3021'\nauth: {disabled: true}", "listen: localhost:1"} {
		if _, err := ParseConfig([]byte(ok)); err != nil {
			t.Errorf("ParseConfig(%q) = %v, want ok", ok, err)
		}
	}
}
