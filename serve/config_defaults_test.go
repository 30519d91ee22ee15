package serve

import (
	"context"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestZeroValuesAreTheDocumentedDefaults reads the configuration block of
// docs/serve.md ("Every key, with its default") and checks that the zero
// value of each key it documents becomes that value: the listen address,
// the cache and the limits, and a source's layout, download limit and
// timeout.
func TestZeroValuesAreTheDocumentedDefaults(t *testing.T) {
	doc, err := os.ReadFile("../docs/serve.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "Every key, with its default:\n\n```yaml\n")
	block, _, ok2 := strings.Cut(rest, "```")
	if !ok || !ok2 {
		t.Fatal("docs/serve.md has no configuration block after \"Every key, with its default:\"")
	}
	documented, err := ParseConfig([]byte(block))
	if err != nil {
		t.Fatalf("docs/serve.md's configuration block: %v", err)
	}
	var zero Config
	zero.Sources = []SourceConfig{{Name: "upstream", Type: "http"}}
	zero.setDefaults()

	if zero.Listen != documented.Listen {
		t.Errorf("listen: zero value means %q, docs/serve.md says %q", zero.Listen, documented.Listen)
	}
	if diff := cmp.Diff(documented.Limits, zero.Limits); diff != "" {
		t.Errorf("limits: zero values differ from docs/serve.md (-documented +zero):\n%s", diff)
	}
	if diff := cmp.Diff(documented.Cache, zero.Cache); diff != "" {
		t.Errorf("cache: zero values differ from docs/serve.md (-documented +zero):\n%s", diff)
	}
	var upstream SourceConfig
	for _, s := range documented.Sources {
		if s.Name == "upstream" {
			upstream = s
		}
	}
	got := zero.Sources[0]
	if got.Layout != upstream.Layout || got.MaxDownload != upstream.MaxDownload || got.DownloadTimeout != upstream.DownloadTimeout {
		t.Errorf("an http source's zero layout, max_download and download_timeout mean %+v, %d, %v; docs/serve.md says %+v, %d, %v",
			got.Layout, got.MaxDownload, got.DownloadTimeout, upstream.Layout, upstream.MaxDownload, upstream.DownloadTimeout)
	}
	// The documented block sets every key to its default, explicitly:
	// so it must set each limit, as a check that the table is whole.
	for _, l := range []reflect.Value{reflect.ValueOf(documented.Limits), reflect.ValueOf(documented.Cache)} {
		for i := range l.NumField() {
			if name := l.Type().Field(i).Name; name != "Dir" && l.Field(i).IsZero() {
				t.Errorf("docs/serve.md's configuration block leaves %s at zero", name)
			}
		}
	}
}

// TestCheckAndNewAgree: Check accepts exactly the configurations New
// accepts, zero values included, and changes nothing in the one it
// checks.
func TestCheckAndNewAgree(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name  string
		cfg   Config
		valid bool
	}{
		{"zero", Config{}, true},
		{"a filesystem source, no layout", Config{Sources: []SourceConfig{{Name: "a", Type: "filesystem", Path: dir}}}, true},
		{"an http source, no layout", Config{Sources: []SourceConfig{{Name: "a", Type: "http", URL: "http://127.0.0.1:1/"}}}, true},
		{"a scanned store", Config{Store: "a", Sources: []SourceConfig{{Name: "a", Type: "filesystem", Path: dir}}}, true},
		{"a source without a name", Config{Sources: []SourceConfig{{Type: "filesystem", Path: dir}}}, false},
		{"an unknown layout", Config{Sources: []SourceConfig{{Name: "a", Type: "http", URL: "http://x/", Layout: LayoutConfig{Type: "flat"}}}}, false},
		{"a negative timeout", Config{Limits: Limits{RequestTimeout: -1}}, false},
		{"a negative body cap", Config{Limits: Limits{MaxDumpBody: -1}}, false},
		{"a negative download limit", Config{Sources: []SourceConfig{{Name: "a", Type: "http", URL: "http://x/", MaxDownload: -1}}}, false},
		{"a negative cache size", Config{Cache: CacheConfig{MaxBytes: -1}}, false},
		{"reachable without a token", Config{Listen: "0.0.0.0:3021"}, false},
		{"a bad listen address", Config{Listen: "nowhere"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.cfg.Cache.Dir = t.TempDir()
			before := tt.cfg
			before.Sources = append([]SourceConfig(nil), tt.cfg.Sources...)
			checkErr := tt.cfg.Check()
			if diff := cmp.Diff(before, tt.cfg); diff != "" {
				t.Errorf("Check changed the configuration (-before +after):\n%s", diff)
			}
			s, newErr := New(context.Background(), tt.cfg)
			if s != nil {
				s.Close()
			}
			if (checkErr == nil) != tt.valid || (newErr == nil) != tt.valid {
				t.Errorf("Check: %v; New: %v; want both to accept it: %v", checkErr, newErr, tt.valid)
			}
		})
	}
}
