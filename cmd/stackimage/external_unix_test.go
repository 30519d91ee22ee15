//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"debug/buildinfo"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stackimage/stackimage/internal/buildversion"
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
	return runBinaryEnv(t, []string{"PATH=" + path}, bin, args...)
}

// runBinaryEnv runs bin with args and env added to this process's
// environment, and returns its exit status and output.
func runBinaryEnv(t *testing.T, env []string, bin string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
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

// buildStaleServe builds, into dir, a stackimage-serve of another build
// than this tree's: a program of another module, which prints a line and
// exits 3 so that a test can tell it ran.
func buildStaleServe(t *testing.T, dir string) string {
	t.Helper()
	src := t.TempDir()
	for name, text := range map[string]string{
		"go.mod":  "module example.com/stale\n\ngo 1.22\n",
		"main.go": "package main\n\nimport (\"fmt\"; \"os\")\n\nfunc main() { fmt.Println(\"stale stackimage-serve ran\"); os.Exit(3) }\n",
	} {
		if err := os.WriteFile(filepath.Join(src, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "stackimage-serve")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build of a stale stackimage-serve: %v\n%s", err, out)
	}
	return bin
}

// TestServeRefusesAnotherBuild: "stackimage serve" reads the build
// information of the stackimage-serve it found and refuses, with exit 2
// and one line naming both builds and both paths and how to fix it, a
// program of another build, whether on PATH or beside it; a program that
// is not a Go program (no build information) likewise. STACKIMAGE_SERVE
// names a program to run anyway, with a warning; one that does not exist
// is an error.
func TestServeRefusesAnotherBuild(t *testing.T) {
	both := t.TempDir()
	buildCommands(t, both)
	stackimage := filepath.Join(both, "stackimage")
	alone := t.TempDir()
	copyExecutable(t, stackimage, filepath.Join(alone, "stackimage"))
	stalePath := t.TempDir()
	stale := buildStaleServe(t, stalePath)
	// A stale program beside a copy of stackimage.
	besideDir := t.TempDir()
	copyExecutable(t, stackimage, filepath.Join(besideDir, "stackimage"))
	copyExecutable(t, stale, filepath.Join(besideDir, "stackimage-serve"))
	// A shell script on PATH: no Go build information to read.
	scriptPath := t.TempDir()
	script := filepath.Join(scriptPath, "stackimage-serve")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho script ran\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	selfVersion := versionLine(t, stackimage)

	tests := []struct {
		name   string
		env    []string
		bin    string
		status int
		stdout string
		stderr []string // all in the first line
	}{
		{"stale on PATH", []string{"PATH=" + stalePath}, filepath.Join(alone, "stackimage"), 2, "",
			[]string{"stackimage serve: refusing to run " + stale + ", version example.com/stale (devel)",
				"not the build of this stackimage, " + filepath.Join(alone, "stackimage") + ", version github.com/stackimage/stackimage " + selfVersion,
				`"make build"`, `"go install ./cmd/..."`, "STACKIMAGE_SERVE=" + stale}},
		{"stale beside", []string{"PATH=" + t.TempDir()}, filepath.Join(besideDir, "stackimage"), 2, "",
			[]string{"refusing to run " + filepath.Join(besideDir, "stackimage-serve"), "install both from one build"}},
		{"not a Go program", []string{"PATH=" + scriptPath}, filepath.Join(alone, "stackimage"), 2, "",
			[]string{"stackimage serve: cannot tell which build " + script + " is", "STACKIMAGE_SERVE=" + script}},
		{"chosen stale", []string{"STACKIMAGE_SERVE=" + stale}, stackimage, 3, "stale stackimage-serve ran\n",
			[]string{"stackimage serve: warning: running " + stale + ", version example.com/stale (devel)", "install both from one build"}},
		{"chosen missing", []string{"STACKIMAGE_SERVE=" + filepath.Join(stalePath, "missing")}, stackimage, 1, "",
			[]string{"stackimage serve: STACKIMAGE_SERVE=" + filepath.Join(stalePath, "missing") + " is not an executable file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, stdout, stderr := runBinaryEnv(t, tt.env, tt.bin, "serve", "-h")
			first, rest, _ := strings.Cut(stderr, "\n")
			if status != tt.status || stdout != tt.stdout || rest != "" {
				t.Errorf("status %d, stdout %q, stderr %q; want %d, %q and one line", status, stdout, stderr, tt.status, tt.stdout)
			}
			for _, want := range tt.stderr {
				if !strings.Contains(first, want) {
					t.Errorf("stderr %q does not say %q", first, want)
				}
			}
		})
	}

	// A matching program chosen explicitly runs without a warning.
	status, stdout, stderr := runBinaryEnv(t, []string{"STACKIMAGE_SERVE=" + filepath.Join(both, "stackimage-serve")}, stackimage, "serve", "-h")
	if status != 0 || !strings.HasPrefix(stdout, "Usage: stackimage-serve") || stderr != "" {
		t.Errorf("STACKIMAGE_SERVE of the same build: status %d, stdout %.100q, stderr %q; want 0, the usage and no warning", status, stdout, stderr)
	}
}

// TestServeVersionIsStackimagesVersion: the built stackimage-serve's
// --version and version print what stackimage version prints, under its
// own name, and stackimage serve --version passes the flag on.
func TestServeVersionIsStackimagesVersion(t *testing.T) {
	both := t.TempDir()
	buildCommands(t, both)
	noPath := t.TempDir()
	_, want, _ := runBinary(t, noPath, filepath.Join(both, "stackimage"), "version")
	if !strings.HasPrefix(want, "stackimage ") {
		t.Fatalf("stackimage version = %q", want)
	}
	want = "stackimage-serve " + strings.TrimPrefix(want, "stackimage ")
	for _, run := range [][]string{
		{filepath.Join(both, "stackimage-serve"), "--version"},
		{filepath.Join(both, "stackimage-serve"), "version"},
		{filepath.Join(both, "stackimage"), "serve", "--version"},
	} {
		status, stdout, stderr := runBinary(t, noPath, run[0], run[1:]...)
		if status != 0 || stdout != want || stderr != "" {
			t.Errorf("%v: status %d, stdout %q, stderr %q; want 0 and\n%s", run, status, stdout, stderr, want)
		}
	}
}

// versionLine returns the version stackimage at bin reports, with its
// commit as buildversion.Build.String writes it.
func versionLine(t *testing.T, bin string) string {
	t.Helper()
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	return buildversion.Of(info).String()
}

// copyExecutable copies the program at from to to, executable.
func copyExecutable(t *testing.T, from, to string) {
	t.Helper()
	copyFile(t, from, to)
	if err := os.Chmod(to, 0o755); err != nil {
		t.Fatal(err)
	}
}
