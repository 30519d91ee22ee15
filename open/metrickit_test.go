package open

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/internal/testcorpus"
)

// MetricKit payloads, arrays of them and bare trees are told by their
// content, every diagnostic a dump, the parsed input kept for the call
// trees' sample counts; no other committed input is taken for one.
func TestOpenMetricKit(t *testing.T) {
	paths := []string{"../cmd/stackimage/testdata/metrickit/payload-seed1.json", "../cmd/stackimage/testdata/metrickit/payload-ios14-seed2.json"}
	if dir, err := testcorpus.Find(); err == nil {
		more, _ := filepath.Glob(filepath.Join(dir, "metrickit", "*", "*.json"))
		paths = append(paths, more...)
	} else {
		t.Logf("corpus not found (%v): the committed payloads only", err)
	}
	for _, path := range paths {
		in, err := File(context.Background(), path)
		if in == nil {
			t.Fatalf("%s: %v", path, err)
		}
		if in.Format.Format != dump.FormatMetricKit || in.MetricKit == nil || len(in.Dumps) == 0 {
			t.Errorf("%s: format %s, %d dumps", path, in.Format.Format, len(in.Dumps))
		}
		n := 0
		for _, p := range in.MetricKit.Payloads {
			n += len(p.Diagnostics)
		}
		if n != len(in.Dumps) {
			t.Errorf("%s: %d dumps of %d diagnostics", path, len(in.Dumps), n)
		}
		in.Close()
	}
	for path, want := range committed {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if f, err := Sniff(data); err != nil || f.Format != want {
			t.Errorf("%s sniffed as %v (%v), want %s", path, f, err, want)
		}
	}
}
