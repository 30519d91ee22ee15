package main

import (
	"strings"
	"testing"
)

// TestServeMissingSaysHowToInstall: with no stackimage-serve beside the
// running program (here the test binary) nor on PATH, "stackimage serve"
// fails with status 1 and the go install command that fetches it.
func TestServeMissingSaysHowToInstall(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	status, stdout, stderr := runCmd(nil, "serve", "--symbols", symbolsDir)
	if status != 1 || stdout != "" {
		t.Errorf("status %d, stdout %q; want 1 and nothing", status, stdout)
	}
	for _, want := range []string{
		"stackimage serve: ",
		"stackimage-serve",
		"nor on PATH",
		`go install github.com/stackimage/stackimage/cmd/stackimage-serve@`,
		"make build",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q does not say %q", stderr, want)
		}
	}
}
