package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
)

// A small Breakpad symbol file of a Mach-O module: main at 0x100-0x120,
// line 5 of main.c at 0x100-0x110, line 6 after.
const testSym = `MODULE mac arm64 4C4C444C55553144A1173E15AF6B6CFF0 tiny
FILE 0 /src/main.c
FUNC 100 20 0 main
100 10 5 0
110 10 6 0
`

// TestAtosBreakpad: atos -o X.sym answers as symbolicate --symbols X.sym
// does, at module-relative addresses, or slid ones with -l.
func TestAtosBreakpad(t *testing.T) {
	sym := writeFile(t, filepath.Join(t.TempDir(), "tiny.sym"), []byte(testSym))
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"relative", []string{"atos", "-o", sym, "0x104", "0x114", "0x200"}, "main (in tiny) (main.c:5)\nmain (in tiny) (main.c:6)\n0x200\n"},
		{"slid", []string{"atos", "-o", sym, "-l", "0x100000000", "0x100000104"}, "main (in tiny) (main.c:5)\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := runOK(t, tt.args...); got != tt.want {
				t.Errorf("%v printed %q, want %q", tt.args, got, tt.want)
			}
		})
	}
}

// TestImagesGoesOn: images reports every file it was given, a bad one
// with its error, and lists the good ones after it.
func TestImagesGoesOn(t *testing.T) {
	bad := writeFile(t, filepath.Join(t.TempDir(), "notes.txt"), []byte("These are notes, not a Mach-O file.\n"))
	good := filepath.Join(symbolsDir, "chain-arm64-O1")
	var stdout, stderr bytes.Buffer
	status := run([]string{"images", bad, good, "/nonexistent/file"}, nil, &stdout, &stderr)
	if status != 1 {
		t.Errorf("status %d, want 1", status)
	}
	if !strings.Contains(stdout.String(), good+" (thin)\n  arm64   EXECUTE  4C4C444C-5555-3144-A117-3E15AF6B6CFF") {
		t.Errorf("stdout lacks the good file's listing:\n%s", stdout.String())
	}
	for _, want := range []string{"notes.txt: not a Mach-O file: bad magic", "/nonexistent/file", "2 of 3 files could not be read"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
}
