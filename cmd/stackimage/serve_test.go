package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
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
