package emu

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stackimage/stackimage/minidump"
	"github.com/stackimage/stackimage/snapshot"
	"github.com/stackimage/stackimage/symbolize"
)

// TestMinidumpRoundTrip writes every committed capture (fixtures/snapshots:
// real program states of all four architectures) as a minidump, reads it
// back, and walks and symbolicates both: the frames must be the same.
func TestMinidumpRoundTrip(t *testing.T) {
	paths, err := filepath.Glob("../fixtures/snapshots/*.json")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no snapshots: %v", err)
	}
	syms := symbolize.NewSymbols()
	defer syms.Close()
	if err := syms.AddDir("../fixtures/bin"); err != nil {
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
			var buf bytes.Buffer
			if err := WriteMinidump(&buf, snap); err != nil {
				t.Fatal(err)
			}
			md, err := minidump.Parse(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
			if err != nil {
				t.Fatalf("reading our minidump back: %v", err)
			}
			want, err := z.Symbolicate(snap.Dump())
			if err != nil {
				t.Fatal(err)
			}
			got, err := z.Symbolicate(md.Model())
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Threads) != len(want.Threads) {
				t.Fatalf("minidump has %d threads, the snapshot %d", len(got.Threads), len(want.Threads))
			}
			for i := range want.Threads {
				if len(want.Threads[i].Frames) < 2 {
					t.Errorf("thread %d: the snapshot walks only %d frames", i, len(want.Threads[i].Frames))
				}
				if diff := cmp.Diff(want.Threads[i].Frames, got.Threads[i].Frames); diff != "" {
					t.Errorf("thread %d frames (-snapshot +minidump):\n%s", i, diff)
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
