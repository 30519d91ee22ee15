package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stackimage/stackimage/crashreport"
	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/internal/hostile"
)

// runCmd runs the command in-process with stdin and returns its status and
// output.
func runCmd(stdin []byte, args ...string) (status int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	status = run(args, bytes.NewReader(stdin), &out, &errOut)
	return status, out.String(), errOut.String()
}

func writeFile(t *testing.T, path string, data []byte) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// snapshotJSON is an arm64 snapshot of one thread stopped at pc in one
// image loaded at hostile.TextAddr (no slide), with one more image that no
// symbol file has.
func snapshotJSON(imageName string, uuid image.UUID, threadName string, pc uint64) []byte {
	return fmt.Appendf(nil, `{"format": "stackimage.snapshot/v1", "arch": "arm64",
  "images": [{"name": %q, "uuid": %q, "load_address": "%#x"},
             {"name": "/usr/lib/dyld", "uuid": "B70CE1EC-B902-3852-8268-05DE00BFA8D5", "load_address": "0x200000000"}],
  "threads": [{"id": 1, "name": %q, "crashed": true, "registers": {"pc": "%#x", "lr": "0x0", "fp": "0x0", "sp": "0x16fdff000"}}],
  "memory": []}`, imageName, uuid, uint64(hostile.TextAddr), threadName, pc)
}

// damagedMachO is a symbol file whose three symbol sources are each
// damaged in one place, with one good symbol, "_good", at hostile.CodeAddr.
func damagedMachO(uuid image.UUID) []byte {
	return hostile.MachO{
		UUID:    uuid,
		Strings: []byte("\x00_good\x00"),
		Symbols: []hostile.Symbol{
			{Strx: 1, Addr: hostile.CodeAddr},
			{Strx: 0x7fffffff, Addr: hostile.CodeAddr + 0x20},
		},
		FunctionStarts: append(hostile.ULEB128(nil, hostile.CodeOffset), bytes.Repeat([]byte{0xff}, 11)...),
		ExportTrie:     hostile.ExportTrie([]string{"_exported"}, []uint64{0x40}, true),
	}.Bytes()
}

// TestDamagedSymbolFile checks that a symbol file with damaged parts still
// symbolicates from its good parts, in symbolicate (text and JSON) and
// atos, with warnings that name each damaged part.
func TestDamagedSymbolFile(t *testing.T) {
	dir := t.TempDir()
	uuid := image.UUID{0xd1, 0xd2}
	bin := writeFile(t, filepath.Join(dir, "syms", "Damaged"), damagedMachO(uuid))
	dump := writeFile(t, filepath.Join(dir, "dump.json"), snapshotJSON("/app/Damaged", uuid, "main", hostile.CodeAddr+8))
	parts := []string{"LC_SYMTAB: symbol 1 skipped", "LC_FUNCTION_STARTS", "export trie: node reached twice"}

	for _, format := range []string{"text", "json"} {
		t.Run("symbolicate "+format, func(t *testing.T) {
			args := []string{"symbolicate", dump, "--symbols", filepath.Join(dir, "syms")}
			if format == "json" {
				args = append(args, "--json")
			}
			status, out, errOut := runCmd(nil, args...)
			if status != 0 {
				t.Fatalf("status %d, stderr %q; want 0", status, errOut)
			}
			if !strings.Contains(out, "good + 8") && !strings.Contains(out, `"symbol": "good"`) {
				t.Errorf("output lacks frame 0 in good:\n%s", out)
			}
			for _, p := range parts {
				if !strings.Contains(out, p) {
					t.Errorf("output lacks a warning naming %q:\n%s", p, out)
				}
			}
		})
	}
	t.Run("atos", func(t *testing.T) {
		status, out, errOut := runCmd(nil, "atos", "-o", bin, fmt.Sprintf("%#x", hostile.CodeAddr+8))
		if status != 0 || out != "good (in Damaged) + 8\n" {
			t.Errorf("atos = %d, %q, stderr %q; want 0, \"good (in Damaged) + 8\\n\"", status, out, errOut)
		}
		for _, p := range parts {
			if !strings.Contains(errOut, p) {
				t.Errorf("atos stderr lacks a warning naming %q:\n%s", p, errOut)
			}
		}
	})
}

// zeros is an endless stream of zero bytes, like /dev/zero on stdin.
type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// TestSymbolicateStdin reads the dump from stdin ("-"): a snapshot is
// symbolicated, and endless input is refused within the budget, from its
// first bytes when they are in no known format and at the format's own
// size limit when they are.
func TestSymbolicateStdin(t *testing.T) {
	for name, prefix := range map[string]string{"snapshot": "", "snapshot with a byte order mark": "\ufeff"} {
		t.Run(name, func(t *testing.T) {
			dump := append([]byte(prefix), snapshotJSON("/app/App", image.UUID{1}, "main", hostile.CodeAddr)...)
			status, out, errOut := runCmd(dump, "symbolicate", "-")
			if status != 0 || !strings.Contains(out, "Thread 1 Crashed (main):") {
				t.Errorf("status %d, stderr %q, stdout:\n%s\nwant the thread", status, errOut, out)
			}
		})
	}
	tests := []struct {
		name    string
		stdin   io.Reader
		read    int64 // bytes the command must read to know
		wantErr string
	}{
		{"endless zeros", zeros{}, sniffSize, "not a stackimage snapshot"},
		{"endless crash report", io.MultiReader(strings.NewReader("Process: App [1]\nThread 0 Crashed:\n"), zeros{}),
			crashreport.MaxReportSize + 1,
			fmt.Sprintf("larger than %d bytes, the limit for an Apple text crash report", crashreport.MaxReportSize)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var status int
			var out, errOut bytes.Buffer
			hostile.Returns(t, 60*time.Second, nil, func() {
				hostile.Budget(t, tt.read, func() {
					status = run([]string{"symbolicate", "-"}, tt.stdin, &out, &errOut)
				})
			})
			if status != 1 || !strings.Contains(errOut.String(), tt.wantErr) {
				t.Errorf("status %d, stderr %q; want 1 and %q", status, errOut.String(), tt.wantErr)
			}
		})
	}
}
