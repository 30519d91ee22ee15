package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/internal/hostile"
)

// TestCorpusThroughCommand runs every hostile case through the command,
// each command within the allocation budget, CaseTime and CaseAlloc: a damaged symbol file
// never fails symbolicate, which answers from its good parts; atos and
// images answer or refuse it clearly; a dump is symbolicated or refused
// with status 1. No output holds a raw control character.
func TestCorpusThroughCommand(t *testing.T) {
	for _, c := range hostile.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			dir := t.TempDir()
			data := c.Build()
			path := writeFile(t, filepath.Join(dir, "syms", "input"), data)
			cmd := func(args ...string) (int, string, string) {
				t.Helper()
				var status int
				var out, errOut string
				hostile.Returns(t, 30*time.Second, nil, func() {
					hostile.CaseBudget(t, int64(len(data)), func() {
						status, out, errOut = runCmd(nil, args...)
					})
				})
				checkNoRawControls(t, strings.Join(args[:1], " "), out+errOut)
				return status, out, errOut
			}
			switch c.Kind {
			case hostile.KindMachO:
				f, err := image.NewFile(bytes.NewReader(data), "input")
				if err != nil {
					if c.WantErr == "" {
						t.Fatalf("the case does not open: %v", err)
					}
					if status, _, errOut := cmd("atos", "-o", path, "0x1000"); status != 1 || errOut == "" {
						t.Errorf("atos: status %d, stderr %q; want 1 and a reason", status, errOut)
					}
					return
				}
				im := f.Images[0]
				pc := uint64(hostile.CodeAddr + 8)
				dump := writeFile(t, filepath.Join(dir, "dump.json"), snapshotJSON("/app/input", im.UUID, "main", pc))
				status, out, errOut := cmd("symbolicate", dump, "--symbols", filepath.Join(dir, "syms"))
				if status != 0 {
					t.Errorf("symbolicate: status %d, stderr %q; want 0: a damaged symbol file is never fatal", status, errOut)
				}
				if c.WantSymbol != "" && !strings.Contains(out, c.WantSymbol+" + 8") {
					t.Errorf("symbolicate: frame 0 is not in %s:\n%s", c.WantSymbol, out)
				}
				for _, w := range c.WantWarnings {
					if !strings.Contains(out, w) {
						t.Errorf("symbolicate: no warning saying %q:\n%s", w, out)
					}
				}
				atos := []string{"atos", "-o", path, fmt.Sprintf("%#x", pc)}
				if f.Fat {
					atos = append(atos, "-arch", im.ArchName())
				}
				if status, out, errOut := cmd(atos...); status != 0 || (c.WantSymbol != "" && !strings.HasPrefix(out, c.WantSymbol+" (in input) + 8")) {
					t.Errorf("atos: status %d, stdout %q, stderr %q; want 0 and %s", status, out, errOut, c.WantSymbol)
				}
				if status, _, errOut := cmd("images", path); status != 0 || (len(f.SliceErrors) > 0 && !strings.Contains(errOut, "fat slice")) {
					t.Errorf("images: status %d, stderr %q; want 0, and the bad slices named", status, errOut)
				}
			case hostile.KindDump:
				status, _, errOut := cmd("symbolicate", path)
				switch {
				case c.WantErr != "" && (status != 1 || !strings.Contains(errOut, path)):
					t.Errorf("symbolicate: status %d, stderr %q; want 1 and an error naming the file", status, errOut)
				case c.WantErr == "" && status != 0:
					t.Errorf("symbolicate: status %d, stderr %q; want 0", status, errOut)
				}
			}
		})
	}
}
