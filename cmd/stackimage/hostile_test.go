package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/stackimage/stackimage/crashreport"
	"github.com/stackimage/stackimage/internal/hostile"
	"github.com/stackimage/stackimage/open"
	"github.com/stackimage/stackimage/uuid"
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
func snapshotJSON(imageName string, id uuid.UUID, threadName string, pc uint64) []byte {
	quote := func(s string) string {
		b, _ := json.Marshal(s)
		return string(b)
	}
	return fmt.Appendf(nil, `{"format": "stackimage.snapshot/v1", "arch": "arm64",
  "images": [{"name": %s, "uuid": "%s", "load_address": "%#x"},
             {"name": "/usr/lib/dyld", "uuid": "B70CE1EC-B902-3852-8268-05DE00BFA8D5", "load_address": "0x200000000"}],
  "threads": [{"id": 1, "name": %s, "crashed": true, "registers": {"pc": "%#x", "lr": "0x0", "fp": "0x0", "sp": "0x16fdff000"}}],
  "memory": []}`, quote(imageName), id, uint64(hostile.TextAddr), quote(threadName), pc)
}

// damagedMachO is a symbol file whose three symbol sources are each
// damaged in one place, with one good symbol, "_good", at hostile.CodeAddr.
func damagedMachO(id uuid.UUID) []byte {
	return hostile.MachO{
		UUID:    id,
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
	id := uuid.UUID{0xd1, 0xd2}
	bin := writeFile(t, filepath.Join(dir, "syms", "Damaged"), damagedMachO(id))
	dump := writeFile(t, filepath.Join(dir, "dump.json"), snapshotJSON("/app/Damaged", id, "main", hostile.CodeAddr+8))
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
			dump := append([]byte(prefix), snapshotJSON("/app/App", uuid.UUID{1}, "main", hostile.CodeAddr)...)
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
		{"endless zeros", zeros{}, open.SniffSize, "not a stackimage snapshot"},
		{"endless crash report", io.MultiReader(strings.NewReader("Process: App [1]\nThread 0 Crashed:\n"), zeros{}),
			crashreport.MaxReportSize + 1,
			fmt.Sprintf("larger than %d bytes, the limit for an Apple text crash report", crashreport.MaxReportSize)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var status int
			var out, errOut bytes.Buffer
			var allocated uint64
			hostile.Returns(t, 60*time.Second, nil, func() {
				allocated = hostile.Budget(t, tt.read, func() {
					status = run([]string{"symbolicate", "-"}, tt.stdin, &out, &errOut)
				})
			})
			t.Logf("allocated %d bytes", allocated)
			if status != 1 || !strings.Contains(errOut.String(), tt.wantErr) {
				t.Errorf("status %d, stderr %q; want 1 and %q", status, errOut.String(), tt.wantErr)
			}
		})
	}
}

// evil is a name as a hostile symbol file or dump may spell it: a NUL,
// terminal escape sequences (clear screen, set the title), a newline that
// would forge a line of output, a byte that is not UTF-8, a C1 control
// (CSI) and a right-to-left override.
const evil = "ev\x00il\x1b[2J\x1b]0;owned\x07\nThread 9 Crashed:\xff\u009b31m\u202egnp.exe"

// checkTerminalSafe fails when text holds a byte a terminal could act on:
// a control character other than the newlines ending lines, invalid UTF-8,
// a C1 control or a bidirectional override; and when a forged line starts
// one of its own.
func checkTerminalSafe(t *testing.T, what, text string) {
	t.Helper()
	checkNoRawControls(t, what, text)
	for _, line := range strings.Split(text, "\n") {
		if strings.HasPrefix(line, "Thread 9") {
			t.Errorf("%s: a name forged the line %q", what, line)
		}
	}
	if !strings.Contains(text, `\x1b[2J`) {
		t.Errorf("%s: the escape sequence is not shown escaped:\n%s", what, text)
	}
}

// checkNoRawControls fails when text holds a byte a terminal could act
// on: a control character other than the newlines ending lines, invalid
// UTF-8, a C1 control or a bidirectional override.
func checkNoRawControls(t *testing.T, what, text string) {
	t.Helper()
	if !utf8.ValidString(text) {
		t.Errorf("%s: invalid UTF-8:\n%q", what, text)
	}
	for i, r := range text {
		switch {
		case r == '\n':
		case unicode.IsControl(r), r == '\u202e':
			t.Errorf("%s: raw %U at byte %d:\n%q", what, r, i, text)
		}
	}
}

// TestTextOutputEscapesControls puts control characters and invalid UTF-8
// in symbol names, image names, thread names and paths, and checks that
// every text output shows them escaped, and that JSON output escapes them
// too and keeps the names intact.
func TestTextOutputEscapesControls(t *testing.T) {
	dir := t.TempDir()
	id := uuid.UUID{0xe1}
	// A symbol table name ends at its first NUL.
	evilSymbol := strings.ReplaceAll(evil, "\x00", "")
	m := hostile.MachO{UUID: id, Symbols: []hostile.Symbol{{Name: "_" + evilSymbol, Addr: hostile.CodeAddr}}}.Bytes()
	// A segment name from the file: __TEXT becomes "__T\x1b[XT".
	seg := bytes.Index(m, []byte("__TEXT\x00"))
	copy(m[seg:], "__T\x1b[XT")
	bin := writeFile(t, filepath.Join(dir, "syms", "App\x1b[2J"), m)
	dump := writeFile(t, filepath.Join(dir, "dump.json"), snapshotJSON("/app/App\x1b[2J", id, evil, hostile.CodeAddr+8))

	status, out, errOut := runCmd(nil, "symbolicate", dump, "--symbols", filepath.Join(dir, "syms"))
	if status != 0 {
		t.Fatalf("symbolicate: status %d, stderr %q", status, errOut)
	}
	checkTerminalSafe(t, "symbolicate", out)
	checkTerminalSafe(t, "symbolicate stderr", errOut+`\x1b[2J`)

	status, out, errOut = runCmd(nil, "atos", "-o", bin, fmt.Sprintf("%#x", hostile.CodeAddr+8))
	if status != 0 {
		t.Fatalf("atos: status %d, stderr %q", status, errOut)
	}
	checkTerminalSafe(t, "atos", out)

	status, out, errOut = runCmd(nil, "images", bin)
	if status != 0 {
		t.Fatalf("images: status %d, stderr %q", status, errOut)
	}
	checkTerminalSafe(t, "images", out)
	if !strings.Contains(out, `__T\x1b[XT`) {
		t.Errorf("images: the segment name is not shown escaped:\n%s", out)
	}

	status, out, errOut = runCmd(nil, "symbolicate", dump, "--symbols", filepath.Join(dir, "syms"), "--json")
	if status != 0 {
		t.Fatalf("symbolicate --json: status %d, stderr %q", status, errOut)
	}
	for i := 0; i < len(out); i++ {
		if c := out[i]; c < 0x20 && c != '\n' {
			t.Errorf("JSON output holds raw byte %#x at %d", c, i)
		}
	}
	var rep jsonReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	// encoding/json writes invalid UTF-8 as U+FFFD and escapes the rest.
	if got, want := rep.Threads[0].Name, strings.ToValidUTF8(evil, "\ufffd"); got != want {
		t.Errorf("JSON thread name = %q, want %q", got, want)
	}
	if got, want := rep.Threads[0].Frames[0].Symbol, strings.ToValidUTF8(evilSymbol, "\ufffd"); got != want {
		t.Errorf("JSON symbol = %q, want %q", got, want)
	}
}
