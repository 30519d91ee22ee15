//go:build unicorn

package emu

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stackimage/stackimage/snapshot"
)

var update = flag.Bool("update", false, "rewrite fixtures/snapshots from the emulator")

// TestSnapshots captures every SnapshotPoint and checks that the committed
// snapshot and its .chain file are exactly what the generator produces now,
// so that they cannot drift from the fixtures or the capture code. With
// -update it writes them instead:
//
//	go test -tags unicorn ./emu/ -run TestSnapshots -update
func TestSnapshots(t *testing.T) {
	root := repoRoot(t)
	dir := filepath.Join(root, "fixtures", "snapshots")
	if *update {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	want := map[string]bool{}
	for _, pt := range SnapshotPoints {
		want[pt.Name+".json"], want[pt.Name+".chain"] = true, true
		t.Run(pt.Name, func(t *testing.T) {
			snap, chain, err := CapturePoint(filepath.Join(root, "fixtures"), pt)
			if err != nil {
				t.Fatal(err)
			}
			js, err := snapshot.Marshal(snap)
			if err != nil {
				t.Fatalf("snapshot.Marshal: %v", err)
			}
			files := map[string][]byte{
				pt.Name + ".json":  js,
				pt.Name + ".chain": []byte(FormatChain(pt, chain)),
			}
			for name, data := range files {
				path := filepath.Join(dir, name)
				if *update {
					if err := os.WriteFile(path, data, 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				got, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (run go test -tags unicorn ./emu/ -run TestSnapshots -update)", err)
				}
				if !bytes.Equal(got, data) {
					t.Errorf("%s differs from what the emulator captures now (-committed +now):\n%s", name, cmp.Diff(string(got), string(data)))
				}
			}
			// A second capture must be byte-identical: the generator is
			// deterministic.
			again, _, err := CapturePoint(filepath.Join(root, "fixtures"), pt)
			if err != nil {
				t.Fatal(err)
			}
			js2, err := snapshot.Marshal(again)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(js, js2) {
				t.Errorf("two captures of %s differ", pt.Name)
			}
		})
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var stray []string
	for _, e := range entries {
		if !want[e.Name()] {
			stray = append(stray, e.Name())
		}
	}
	sort.Strings(stray)
	if len(stray) > 0 && !*update {
		t.Errorf("fixtures/snapshots holds files no SnapshotPoint generates: %q", stray)
	}
}
