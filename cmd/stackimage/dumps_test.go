package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stackimage/stackimage/emu"
	"github.com/stackimage/stackimage/snapshot"
)

// TestSymbolicateDumpFormats writes committed captures as a minidump and as
// a Mach-O core and symbolicates the files: the command tells each format
// by its content and prints the true call chain recorded beside the
// capture.
func TestSymbolicateDumpFormats(t *testing.T) {
	writers := map[string]func(*bytes.Buffer, *snapshot.Snapshot) error{
		"minidump":    func(b *bytes.Buffer, s *snapshot.Snapshot) error { return emu.WriteMinidump(b, s) },
		"Mach-O core": func(b *bytes.Buffer, s *snapshot.Snapshot) error { return emu.WriteCore(b, s) },
	}
	for _, name := range []string{"chain-arm64-O1-deepest", "chain-x86_64-O1-deepest", "chain-armv7-O1-deepest", "chain-i386-O1-deepest"} {
		snap := readSnapshot(t, filepath.Join(snapshotsDir, name+".json"))
		want := readChain(t, filepath.Join(snapshotsDir, name+".chain"))
		for format, write := range writers {
			t.Run(name+"/"+format, func(t *testing.T) {
				var buf bytes.Buffer
				if err := write(&buf, snap); err != nil {
					t.Fatal(err)
				}
				path := filepath.Join(t.TempDir(), "dump")
				if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				if out := runOK(t, "symbolicate", path, "--symbols", symbolsDir); !strings.HasPrefix(out, "Format: "+format+"\n") {
					t.Errorf("symbolicate printed %q first, want Format: %s", firstLine(out), format)
				}
				var rep jsonReport
				if err := json.Unmarshal([]byte(runOK(t, "symbolicate", path, "--symbols", symbolsDir, "--json")), &rep); err != nil || len(rep.Threads) != 1 {
					t.Fatalf("symbolicate --json: %v, %d threads; want the capture's one", err, len(rep.Threads))
				}
				// A core marks no thread crashed: it records no exception here.
				if format == "minidump" && !rep.Threads[0].Crashed {
					t.Errorf("the minidump's thread is not marked crashed")
				}
				if len(rep.Modules) != len(snap.Images) || rep.Modules[0].Symbols != "found" {
					t.Errorf("modules = %+v, want the capture's %d images, symbols found for the fixture", rep.Modules, len(snap.Images))
				}
				if diff := cmp.Diff(want, jsonNames(rep.Threads[0].Frames)); diff != "" {
					t.Errorf("function names differ from %s.chain (-want +got):\n%s", name, diff)
				}
			})
		}
	}
}
