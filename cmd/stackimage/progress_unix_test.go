//go:build unix

package main

import (
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/creack/pty"
)

// onTerminal runs the command with a pseudo-terminal as its stderr, and
// returns its status and what the terminal received.
func onTerminal(t *testing.T, args ...string) (int, string) {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Fatalf("opening a pseudo-terminal: %v", err)
	}
	defer ptmx.Close()
	received := make(chan []byte)
	go func() {
		// The terminal is read as it is written, so that its buffer
		// never blocks the command; reading ends with an error once the
		// command's side is closed.
		b, _ := io.ReadAll(ptmx)
		received <- b
	}()
	status := run(args, strings.NewReader(""), io.Discard, tty)
	tty.Close()
	return status, string(<-received)
}

// TestProgressOnTerminal checks that symbolicate over a directory and
// index over many files draw a progress bar on a terminal, and that
// --quiet leaves the terminal empty.
func TestProgressOnTerminal(t *testing.T) {
	dir, names := snapshotCopies(t)
	tests := []struct {
		name string
		args []string
		bar  *regexp.Regexp // the bar, with the work done out of the total
	}{
		{"symbolicate", []string{"symbolicate", dir, "--symbols", symbolsDir, "--out", t.TempDir()},
			regexp.MustCompile(`\rsymbolicating +[0-9]+% \|[^|]*\| \([0-9]+/` + strconv.Itoa(len(names)) + `\)`)},
		{"index", []string{"index", "--symbols", symbolsDir, "--out", t.TempDir()},
			regexp.MustCompile(`\rindexing +[0-9]+% \|[^|]*\| \([0-9]+/[0-9]+\)`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, screen := onTerminal(t, tt.args...)
			if status != 0 {
				t.Fatalf("status %d; terminal %q", status, screen)
			}
			if !tt.bar.MatchString(screen) {
				t.Errorf("terminal %q, want a progress bar (%s)", screen, tt.bar)
			}
			status, screen = onTerminal(t, append(tt.args[:len(tt.args):len(tt.args)], "--quiet")...)
			if status != 0 || screen != "" {
				t.Errorf("with --quiet: status %d, terminal %q; want 0 and nothing", status, screen)
			}
		})
	}
}
