//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stackimage/stackimage/internal/hostile"
)

// TestFIFOsRefused names a FIFO wherever the command takes a path. Opening
// a FIFO blocks until a writer comes, so each must be refused after a
// stat, before any open: a hang here is the bug.
func TestFIFOsRefused(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	dump := writeFile(t, filepath.Join(dir, "dump.json"), snapshotJSON("/app/App", [16]byte{1}, "main", 0x100001000))
	tests := []struct {
		name string
		args []string
	}{
		{"symbolicate DUMP", []string{"symbolicate", fifo}},
		{"symbolicate --symbols", []string{"symbolicate", dump, "--symbols", fifo}},
		{"atos -o", []string{"atos", "-o", fifo, "0x1000"}},
		{"images", []string{"images", fifo}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var status int
			var stderr string
			// Should the command block in open, a writer unblocks it.
			unblock := func() {
				if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					w.Close()
				}
			}
			hostile.Returns(t, 10*time.Second, unblock, func() {
				status, _, stderr = runCmd(nil, tt.args...)
			})
			if status != 1 || !strings.Contains(stderr, "not a regular file") {
				t.Errorf("%v: status %d, stderr %q; want 1 and \"not a regular file\"", tt.args, status, stderr)
			}
		})
	}
}

// TestDevZeroRefused gives /dev/zero as the dump: endless zeros must be
// refused after a stat, not read up to the size limit (which allocated
// 2.1 GB).
func TestDevZeroRefused(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skipf("no /dev/zero on this system: %v", err)
	}
	var status int
	var stderr string
	var allocated uint64
	hostile.Returns(t, 60*time.Second, nil, func() {
		allocated = hostile.Budget(t, 0, func() {
			status, _, stderr = runCmd(nil, "symbolicate", "/dev/zero")
		})
	})
	t.Logf("symbolicate /dev/zero allocated %d bytes", allocated)
	if status != 1 || !strings.Contains(stderr, "not a regular file") {
		t.Errorf("status %d, stderr %q; want 1 and \"not a regular file\"", status, stderr)
	}
}
