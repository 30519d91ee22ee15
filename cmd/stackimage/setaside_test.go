package main

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An arm64 snapshot of a library whose binary is absent: frame 0 at
// 0x100002010, its record at FP giving 0x100003004, and LR at
// 0x100001fc0, 20 instructions before PC. Without the library's code or
// symbols, nothing tells that LR from a stale return address, and the
// walk sets it aside; with a Breakpad file listing its functions, LR lies
// in another function than PC and is frame 1.
const (
	asideLib   = 0x100000000
	asidePC    = asideLib + 0x2010
	asideLR    = asideLib + 0x1fc0
	asideRA    = asideLib + 0x3004
	asideStack = 0x16f000000
)

func writeSetAsideSnapshot(t *testing.T) string {
	t.Helper()
	stack := make([]byte, 0x40)
	binary.LittleEndian.PutUint64(stack[0x18:], asideRA) // the record at FP, the last: FP 0
	data := fmt.Sprintf(`{"format": "stackimage.snapshot/v1", "arch": "arm64",
"images": [{"name": "/app/Lib", "uuid": "5B000000-0000-0000-0000-000000000001", "load_address": "%#x", "size": "0x100000"}],
"threads": [{"id": 1, "crashed": true, "registers": {"pc": "%#x", "lr": "%#x", "fp": "%#x", "sp": "%#x"}, "stack": {"low": "%#x", "high": "%#x"}}],
"memory": [{"address": "%#x", "data": %q}]}`,
		asideLib, asidePC, asideLR, asideStack+0x10, asideStack, asideStack, asideStack+len(stack),
		asideStack, base64.StdEncoding.EncodeToString(stack))
	p := filepath.Join(t.TempDir(), "lib.json")
	if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// writeSetAsideSymbols lays out a Breakpad file of the library's
// functions: LR's call site in caller, PC in leaf, the record's return
// address in outer.
func writeSetAsideSymbols(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, "Lib", "5B0000000000000000000000000000010", "Lib.sym")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	sym := "MODULE mac arm64 5B0000000000000000000000000000010 Lib\n" +
		"FUNC 1f00 100 0 caller\nFUNC 2000 100 0 leaf\nFUNC 3000 100 0 outer\n"
	if err := os.WriteFile(p, []byte(sym), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestSetAsideLinkRegister: the link register the walk set aside shows in
// the JSON (set_aside_lr) and in the text, below the stop line, with its
// image and offset; a walk with the library's symbols takes LR for frame 1
// and shows neither.
func TestSetAsideLinkRegister(t *testing.T) {
	snap := writeSetAsideSnapshot(t)
	syms := writeSetAsideSymbols(t)
	line := fmt.Sprintf("Link register %#x (Lib + 0x1fc0) set aside: in frame 0's image near PC, "+
		"without code or symbols to tell a caller from a stale return address", asideLR)
	for _, tc := range []struct {
		name   string
		flags  []string
		frames []string
		aside  string
	}{
		{"no symbols", nil, []string{hex(asidePC), hex(asideRA)}, hex(asideLR)},
		{"Breakpad symbols", []string{"--symbols", syms}, []string{hex(asidePC), hex(asideLR), hex(asideRA)}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := runOK(t, append([]string{"symbolicate", snap, "--json"}, tc.flags...)...)
			var rep jsonReport
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("symbolicate --json: %v\n%s", err, out)
			}
			if len(rep.Threads) != 1 {
				t.Fatalf("%d threads, want 1", len(rep.Threads))
			}
			th := rep.Threads[0]
			var frames []string
			for _, f := range th.Frames {
				frames = append(frames, f.Address)
			}
			if strings.Join(frames, " ") != strings.Join(tc.frames, " ") {
				t.Errorf("frames %v, want %v", frames, tc.frames)
			}
			if th.SetAsideLR != tc.aside {
				t.Errorf("set_aside_lr = %q, want %q", th.SetAsideLR, tc.aside)
			}
			if got, want := strings.Contains(out, `"set_aside_lr"`), tc.aside != ""; got != want {
				t.Errorf("JSON holds set_aside_lr: %v, want %v:\n%s", got, want, out)
			}
			text := runOK(t, append([]string{"symbolicate", snap}, tc.flags...)...)
			if got, want := strings.Contains(text, line), tc.aside != ""; got != want {
				t.Errorf("text holds %q: %v, want %v:\n%s", line, got, want, text)
			}
			if tc.aside == "" && strings.Contains(text, "set aside") {
				t.Errorf("text speaks of a set-aside link register:\n%s", text)
			}
		})
	}
}
