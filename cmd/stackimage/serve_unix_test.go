//go:build unix

package main

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stackimage/stackimage/internal/testtool"
)

// TestBuiltCommandServes runs the command as go install builds it, alone
// on an empty PATH: "stackimage serve" answers a health check and a
// symbolication request from the same process, and SIGTERM shuts it down
// gracefully (exit 0).
func TestBuiltCommandServes(t *testing.T) {
	bin := builtCommand(t)
	cmd := exec.Command(bin, "serve", "--symbols", symbolsDir, "--listen", "127.0.0.1:0", "--cache", t.TempDir())
	cmd.Env = append(os.Environ(), "PATH="+t.TempDir())
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := bufio.NewReader(stderr)
	url := testtool.ListeningURL(t, lines)
	testtool.Healthcheck(t, url)

	const snapshot = "../../fixtures/snapshots/chain-arm64-O1-deepest.json"
	body, err := os.ReadFile(snapshot)
	if err != nil {
		t.Fatal(err)
	}
	var want, errOut bytes.Buffer
	if status := run([]string{"symbolicate", snapshot, "--symbols", symbolsDir}, nil, &want, &errOut); status != 0 {
		t.Fatalf("stackimage symbolicate: status %d: %s", status, errOut.String())
	}
	resp, err := http.Post(url+"/v1/symbolicate?format=text", "application/octet-stream", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || string(got) != want.String() {
		t.Errorf("POST /v1/symbolicate: status %d, error %v, answer\n%s\nwant what stackimage symbolicate prints:\n%s", resp.StatusCode, err, got, want.String())
	}

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
		if err != nil || cmd.ProcessState.ExitCode() != 0 {
			t.Errorf("after SIGTERM: %v, exit %d, want a graceful exit 0; stderr %q", err, cmd.ProcessState.ExitCode(), rest)
		}
		if strings.Contains(string(rest), "panic") {
			t.Errorf("stderr after SIGTERM: %s", rest)
		}
	case <-ctx.Done():
		t.Fatal("the service did not exit within 30 s of SIGTERM")
	}
}
