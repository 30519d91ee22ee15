package remote

import (
	"strings"
	"testing"
)

// TestStoreConfigCheck: each type's required fields, its layouts and
// casings are checked, with a message naming what is wrong.
func TestStoreConfigCheck(t *testing.T) {
	layout := Layout{Type: "unified", Casing: "default"}
	tests := []struct {
		name string
		cfg  StoreConfig
		want string // "" for valid
	}{
		{"a directory", StoreConfig{Type: "filesystem", Path: "/x", Layout: layout}, ""},
		{"a scanned directory", StoreConfig{Type: "filesystem", Path: "/x", Layout: Layout{Type: "scan", Casing: "default"}}, ""},
		{"a directory without a path", StoreConfig{Type: "filesystem", Layout: layout}, "needs a path"},
		{"an http server", StoreConfig{Type: "http", URL: "https://x/", Layout: layout}, ""},
		{"an http server scanned", StoreConfig{Type: "http", URL: "https://x/", Layout: Layout{Type: "scan", Casing: "default"}}, `unknown layout "scan"`},
		{"a url without a scheme", StoreConfig{Type: "http", URL: "x/", Layout: layout}, "http:// or https://"},
		{"a bucket without an endpoint", StoreConfig{Type: "s3", Bucket: "b", Layout: layout}, "endpoint and a bucket"},
		{"an unknown type", StoreConfig{Type: "ftp", Layout: layout}, `type "ftp"`},
		{"an unknown casing", StoreConfig{Type: "filesystem", Path: "/x", Layout: Layout{Type: "unified", Casing: "camel"}}, `casing "camel"`},
		{"a negative limit", StoreConfig{Type: "filesystem", Path: "/x", Layout: layout, MaxDownload: -1}, "must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Check()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Check() = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Check() = %v, want an error saying %q", err, tt.want)
			}
		})
	}
}
