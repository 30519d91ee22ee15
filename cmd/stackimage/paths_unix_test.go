//go:build unix

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stackimage/stackimage/internal/hostile"
	"github.com/stackimage/stackimage/uuid"
)

// TestPathsInDumpsAreNotOpened names, in a snapshot and in a crash report,
// the absolute path of a real binary with the image's UUID and a symbol,
// outside every --symbols directory: its symbol must not appear, and the
// image must be listed as without symbols. A second image's path is a
// FIFO: opening it would block, so a hang means a path from the dump was
// opened. Symbol files are found under --symbols only.
func TestPathsInDumpsAreNotOpened(t *testing.T) {
	dir := t.TempDir()
	id := uuid.UUID{0x5e, 0xc2}
	secret := writeFile(t, filepath.Join(dir, "elsewhere", "App"),
		hostile.MachO{UUID: id, Symbols: []hostile.Symbol{{Name: "_secret_function", Addr: hostile.CodeAddr}}}.Bytes())
	// Also a UUID-less copy: found by name only under --symbols.
	noUUID := writeFile(t, filepath.Join(dir, "elsewhere", "NoUUID"),
		hostile.MachO{Symbols: []hostile.Symbol{{Name: "_secret_function", Addr: hostile.CodeAddr}}}.Bytes())
	fifo := filepath.Join(dir, "elsewhere", "Pipe")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	syms := filepath.Join(dir, "syms")
	writeFile(t, filepath.Join(syms, "Unrelated"), hostile.MachO{UUID: uuid.UUID{0x99}}.Bytes())

	pc := uint64(hostile.CodeAddr + 8)
	snap := fmt.Appendf(nil, `{"format": "stackimage.snapshot/v1", "arch": "arm64",
  "images": [{"name": %q, "uuid": "%s", "load_address": "%#x"},
             {"name": %q, "uuid": "00000000-0000-0000-0000-000000000000", "load_address": "0x200000000"},
             {"name": %q, "uuid": "%s", "load_address": "0x300000000"}],
  "threads": [{"id": 1, "registers": {"pc": "%#x", "lr": "0x200001008", "fp": "0x0"}}], "memory": []}`,
		secret, id, uint64(hostile.TextAddr), noUUID, fifo, uuid.UUID{0x77}, pc)
	crash := fmt.Appendf(nil, `Incident Identifier: 11111111-2222-3333-4444-555555555555
Process:             App [42]
Code Type:           ARM-64 (Native)

Thread 0 Crashed:
0   App                           	%#18x 0x100000000 + 4104
1   NoUUID                        	       0x200001008 0x200000000 + 4104

Binary Images:
       0x100000000 -        0x100003fff App arm64  <%x> %s
       0x200000000 -        0x200003fff NoUUID arm64  <00000000000000000000000000000000> %s
       0x300000000 -        0x300003fff Pipe arm64  <77000000000000000000000000000000> %s
`, pc, id[:], secret, noUUID, fifo)

	for name, data := range map[string][]byte{"snapshot": snap, "crash report": crash} {
		t.Run(name, func(t *testing.T) {
			dump := writeFile(t, filepath.Join(dir, "dump"), data)
			var status int
			var out, errOut string
			unblock := func() {
				if w, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
					w.Close()
				}
			}
			hostile.Returns(t, 10*time.Second, unblock, func() {
				status, out, errOut = runCmd(nil, "symbolicate", dump, "--symbols", syms)
			})
			if status != 0 {
				t.Fatalf("status %d, stderr %q", status, errOut)
			}
			if strings.Contains(out, "secret_function") {
				t.Errorf("a symbol came from %s, which the dump names but --symbols does not hold:\n%s", secret, out)
			}
			if !strings.Contains(out, id.String()+" "+secret) {
				t.Errorf("the image is not listed as without symbols:\n%s", out)
			}
		})
	}
}
