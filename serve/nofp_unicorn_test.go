//go:build unicorn

package serve

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stackimage/stackimage/emu"
	"github.com/stackimage/stackimage/snapshot"
)

var update = flag.Bool("update", false, "rewrite testdata/chain-nofp-arm64-O1-deepest.* from the emulator")

// nofpPoint is the capture of testdata/chain-nofp-arm64-O1-deepest.json:
// code built without frame pointers, which only its unwind tables
// describe.
var nofpPoint = emu.SnapshotPoint{Name: "chain-nofp-arm64-O1-deepest", Output: "chain-nofp-arm64-O1", Function: "deepest",
	Kind: emu.PointMiddle, Why: "built with -fomit-frame-pointer: only the unwind tables describe the frames"}

// TestNoFramePointerCapture checks that testdata/chain-nofp-arm64-O1-deepest.json
// and its .chain are what the emulator captures now. With -update it
// writes them:
//
//	go test -tags unicorn ./serve/ -run TestNoFramePointerCapture -update
func TestNoFramePointerCapture(t *testing.T) {
	snap, chain, err := emu.CapturePoint(filepath.Join("..", "fixtures"), nofpPoint)
	if err != nil {
		t.Fatal(err)
	}
	js, err := snapshot.Marshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		nofpPoint.Name + ".json":  js,
		nofpPoint.Name + ".chain": []byte(emu.FormatChain(nofpPoint, chain)),
	}
	for name, data := range files {
		path := filepath.Join("testdata", name)
		if *update {
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test -tags unicorn ./serve/ -run TestNoFramePointerCapture -update)", err)
		}
		if !bytes.Equal(got, data) {
			t.Errorf("%s differs from what the emulator captures now (-committed +now):\n%s", name, cmp.Diff(string(got), string(data)))
		}
	}
}
