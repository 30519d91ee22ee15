//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stackimage/stackimage/internal/testtool"
)

// buildCommands builds stackimage and stackimage-serve into dir.
func buildCommands(t *testing.T, dir string) {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the commands with the go command")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build the commands with")
	}
	for _, cmd := range []string{"stackimage", "stackimage-serve"} {
		if out, err := exec.Command(goCmd, "build", "-o", filepath.Join(dir, cmd), "../"+cmd).CombinedOutput(); err != nil {
			t.Fatalf("go build ../%s: %v\n%s", cmd, err, out)
		}
	}
}

// runBinary runs bin with args and PATH set to path, and returns its exit
// status and output.
func runBinary(t *testing.T, path, bin string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "PATH="+path)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("%s %v: %v", bin, args, err)
	}
	return cmd.ProcessState.ExitCode(), stdout.String(), stderr.String()
}

// TestServeRunsTheServiceProgram runs the built commands as a user does:
// "stackimage serve ARGS" becomes stackimage-serve ARGS, found beside
// stackimage, through a symbolic link to it, or on PATH; the service's
// exit status and its signals pass through unchanged (SIGTERM sent to the
// process started as stackimage shuts the service down gracefully, exit
// 0); without stackimage-serve the command says how to install it.
func TestServeRunsTheServiceProgram(t *testing.T) {
	both := t.TempDir()
	buildCommands(t, both)
	noPath := t.TempDir()
	stackimage := filepath.Join(both, "stackimage")

	// stackimage alone in one directory, stackimage-serve in another, and
	// a link to the pair's stackimage from a third.
	alone, servePath, linked := t.TempDir(), t.TempDir(), t.TempDir()
	for _, c := range []struct{ from, to string }{
		{filepath.Join(both, "stackimage"), filepath.Join(alone, "stackimage")},
		{filepath.Join(both, "stackimage-serve"), filepath.Join(servePath, "stackimage-serve")},
	} {
		b, err := os.ReadFile(c.from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(c.to, b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(stackimage, filepath.Join(linked, "stackimage")); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name, path, bin string
		args            []string
		status          int
		stdout, stderr  string // prefixes
	}{
		{"help beside", noPath, stackimage, []string{"serve", "-h"}, 0, "Usage: stackimage-serve", ""},
		{"bad flag's status", noPath, stackimage, []string{"serve", "-x"}, 2, "", "stackimage-serve: flag provided but not defined: -x"},
		{"refusal's status", noPath, stackimage, []string{"serve", "--symbols", both, "--listen", "0.0.0.0:0"}, 1, "", "stackimage-serve: "},
		{"through a link", noPath, filepath.Join(linked, "stackimage"), []string{"serve", "--help"}, 0, "Usage: stackimage-serve", ""},
		{"on PATH", servePath, filepath.Join(alone, "stackimage"), []string{"serve", "-h"}, 0, "Usage: stackimage-serve", ""},
		{"missing", noPath, filepath.Join(alone, "stackimage"), []string{"serve", "-h"}, 1, "",
			"stackimage serve: the serve command is a program of its own, stackimage-serve"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, stdout, stderr := runBinary(t, tt.path, tt.bin, tt.args...)
			if status != tt.status || !strings.HasPrefix(stdout, tt.stdout) || !strings.HasPrefix(stderr, tt.stderr) {
				t.Errorf("%v: status %d, stdout %.200q, stderr %.300q; want %d, stdout from %q, stderr from %q",
					tt.args, status, stdout, stderr, tt.status, tt.stdout, tt.stderr)
			}
		})
	}

	t.Run("SIGTERM", func(t *testing.T) {
		cmd := exec.Command(stackimage, "serve", "--symbols", symbolsDir, "--listen", "127.0.0.1:0")
		cmd.Env = append(os.Environ(), "PATH="+noPath)
		stderr, err := cmd.StderrPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		defer cmd.Process.Kill()
		lines := bufio.NewReader(stderr)
		testtool.Healthcheck(t, testtool.ListeningURL(t, lines))
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		var rest []byte
		done := make(chan error, 1)
		go func() {
			// Wait closes the pipe: read what is left first.
			rest, _ = io.ReadAll(lines)
			done <- cmd.Wait()
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		select {
		case err := <-done:
			// A stackimage that waited for a child would have died of
			// the signal instead (exit -1, signaled).
			if err != nil || cmd.ProcessState.ExitCode() != 0 {
				t.Errorf("after SIGTERM: %v, exit %d, want a graceful exit 0; stderr %q", err, cmd.ProcessState.ExitCode(), rest)
			}
		case <-ctx.Done():
			t.Fatal("the service did not exit within 30 s of SIGTERM")
		}
	})
}
