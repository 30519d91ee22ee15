package emu

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/machocore"
	"github.com/stackimage/stackimage/minidump"
	"github.com/stackimage/stackimage/snapshot"
	"github.com/stackimage/stackimage/symbolize"
	"github.com/stackimage/stackimage/symstore"
)

// TestDumpRoundTrip writes every committed capture (fixtures/snapshots:
// real program states of all four architectures) as a minidump and as a
// Mach-O core, reads each back, and walks and symbolicates all three: the
// frames must be the same.
func TestDumpRoundTrip(t *testing.T) {
	paths, err := filepath.Glob("../fixtures/snapshots/*.json")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no snapshots: %v", err)
	}
	syms := symstore.NewSymbols()
	defer syms.Close()
	if err := syms.AddDir(context.Background(), "../fixtures/bin"); err != nil {
		t.Fatal(err)
	}
	z := &symbolize.Symbolizer{Symbols: syms}
	arches := map[string]bool{}
	for _, path := range paths {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			snap, err := snapshot.Parse(data)
			if err != nil {
				t.Fatal(err)
			}
			arches[snap.Arch.Name] = true
			want, err := z.Symbolicate(snap.Dump())
			if err != nil {
				t.Fatal(err)
			}
			var md, core bytes.Buffer
			if err := WriteMinidump(&md, snap); err != nil {
				t.Fatal(err)
			}
			if err := WriteCore(&core, snap); err != nil {
				t.Fatal(err)
			}
			m, err := minidump.Parse(bytes.NewReader(md.Bytes()), int64(md.Len()))
			if err != nil {
				t.Fatalf("reading our minidump back: %v", err)
			}
			c, err := machocore.Open(bytes.NewReader(core.Bytes()), int64(core.Len()))
			if err != nil || len(c.Warnings) > 0 {
				t.Fatalf("reading our core back: %v %v", err, c.Warnings)
			}
			for _, d := range []*dump.Dump{m.Dump(), c.Dump()} {
				got, err := z.Symbolicate(d)
				if err != nil {
					t.Fatal(err)
				}
				if len(got.Threads) != len(want.Threads) {
					t.Fatalf("%s has %d threads, the snapshot %d", d.Format, len(got.Threads), len(want.Threads))
				}
				for i := range want.Threads {
					if len(want.Threads[i].Frames) < 2 {
						t.Errorf("thread %d: the snapshot walks only %d frames", i, len(want.Threads[i].Frames))
					}
					if diff := cmp.Diff(want.Threads[i].Frames, got.Threads[i].Frames); diff != "" {
						t.Errorf("%s thread %d frames (-snapshot +%s):\n%s", d.Format, i, d.Format, diff)
					}
				}
			}
		})
	}
	for _, a := range []string{"arm64", "armv7", "x86_64", "i386"} {
		if !arches[a] {
			t.Errorf("no %s capture among the snapshots", a)
		}
	}
}
