package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stackimage/stackimage/internal/testtool"
	"github.com/stackimage/stackimage/symstore"
)

const symbolsDir = "../../fixtures/bin"

func runCmd(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	status := run(context.Background(), args, &stdout, &stderr)
	return status, stdout.String(), stderr.String()
}

// TestRefusesBadSetups: the service starts nothing without symbols or a
// configuration, on a non-loopback address without a token, or with a
// configuration it cannot read, and says why.
func TestRefusesBadSetups(t *testing.T) {
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
		{nil, 2, "stackimage-serve: needs --symbols DIR or --config FILE (docs/serve.md)\n"},
		{[]string{"--symbols", dir, "--listen", "0.0.0.0:0"}, 1, "not a loopback address"},
		{[]string{"--config", bad}, 1, "max_concurrnt"},
		{[]string{"--config", filepath.Join(dir, "missing.yaml")}, 1, "missing.yaml"},
		{[]string{"--symbols", dir, "extra"}, 2, "stackimage-serve: unexpected argument \"extra\"\n"},
	}
	for _, tt := range tests {
		status, stdout, stderr := runCmd(tt.args...)
		if status != tt.status || !strings.Contains(stderr, tt.want) || stdout != "" {
			t.Errorf("%q: status %d, stdout %q, stderr %q; want %d, nothing and %q", tt.args, status, stdout, stderr, tt.status, tt.want)
		}
	}
}

// TestHelp: -h and --help print the usage, the options, what --symbols
// serves and an example to stdout, with status 0.
func TestHelp(t *testing.T) {
	want := []string{"-listen", "-symbols", "-config", "-cache", "Example:\n  stackimage-serve ", "stackimage serve ARGS"}
	for _, k := range symstore.SymbolFileKinds {
		want = append(want, k.Name, k.Example)
	}
	for _, flag := range []string{"-h", "--help"} {
		status, stdout, stderr := runCmd(flag)
		if status != 0 || stderr != "" || !strings.HasPrefix(stdout, "Usage: stackimage-serve ") {
			t.Errorf("%s: status %d, stderr %q, stdout %.100q; want 0, nothing and the usage first", flag, status, stderr, stdout)
		}
		for _, s := range want {
			if !strings.Contains(stdout, s) {
				t.Errorf("%s does not mention %q:\n%s", flag, s, stdout)
			}
		}
	}
}

// TestBadFlag: a flag the service does not have is reported in one line,
// with where to read more, and status 2.
func TestBadFlag(t *testing.T) {
	for _, args := range [][]string{{"-x"}, {"--symbols", "d", "--no-such-flag=1"}} {
		status, stdout, stderr := runCmd(args...)
		name := strings.TrimLeft(strings.SplitN(args[len(args)-1], "=", 2)[0], "-")
		want := fmt.Sprintf("stackimage-serve: flag provided but not defined: -%s\nrun 'stackimage-serve -h' for usage\n", name)
		if status != 2 || stdout != "" || stderr != want {
			t.Errorf("%q: status %d, stdout %q, stderr %q; want 2, nothing and %q", args, status, stdout, stderr, want)
		}
	}
}

// TestServesUntilCancelled: the service says where it listens, answers
// there, and returns 0 once its context ends (main ends it on SIGTERM).
func TestServesUntilCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	status := make(chan int, 1)
	go func() {
		status <- run(ctx, []string{"--symbols", symbolsDir, "--listen", "127.0.0.1:0", "--cache", t.TempDir()}, io.Discard, pw)
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

// TestVersion: --version and version print the build's version in the
// form stackimage version does, under this program's name, with status 0;
// version takes no argument.
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"-version"}, {"version"}} {
		status, stdout, stderr := runCmd(args...)
		if status != 0 || stderr != "" || !strings.HasPrefix(stdout, "stackimage-serve ") || !strings.Contains(stdout, "\n  go       go") {
			t.Errorf("%q: status %d, stdout %q, stderr %q; want 0, the version lines and nothing", args, status, stdout, stderr)
		}
	}
	if status, _, stderr := runCmd("version", "extra"); status != 2 || !strings.Contains(stderr, `unexpected argument "extra"`) {
		t.Errorf("version extra: status %d, stderr %q; want 2 and the argument named", status, stderr)
	}
}
