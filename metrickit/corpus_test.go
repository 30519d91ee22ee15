package metrickit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stackimage/stackimage/internal/testcorpus"
)

// TestCorpus reads every real payload and tree of the corpus
// (../shared/corpus/metrickit: Xcode's simulated payloads from ChimeHQ's
// Meter, sentry-cocoa's MetricKit test trees): each is MetricKit by its
// content, every diagnostic is a dump of its kind with every frame, and
// the deliberately broken ones give what their names say.
func TestCorpus(t *testing.T) {
	dir := filepath.Join(testcorpus.Dir(t), "metrickit")
	files, err := filepath.Glob(filepath.Join(dir, "*", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no MetricKit files under %s (%v)", dir, err)
	}
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(filepath.Base(filepath.Dir(path))+"/"+name, func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !Detect(data) {
				t.Fatal("not told as MetricKit")
			}
			in, err := Parse(data)
			switch name {
			case "tree-garbage.json":
				// Cut short inside callStacks[0]: an error naming it, and
				// the frames before the cut kept.
				if err == nil || !strings.Contains(err.Error(), "callStacks[0]") {
					t.Fatalf("err %v, want one naming callStacks[0]", err)
				}
				if in == nil || len(in.Dumps()) != 1 || len(in.Dumps()[0].Threads[0].Frames) != 2 {
					t.Fatalf("the two frames before the cut not kept: %+v", in)
				}
				return
			case "tree-unknown-fields.json":
				if err != nil || len(in.Warnings) != 1 || !strings.Contains(in.Warnings[0], `"unkownField"`) {
					t.Fatalf("err %v, warnings %q: want the unknown field named, the rest read", err, in.Warnings)
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			frames, diagnostics := 0, 0
			for _, p := range in.Payloads {
				for _, d := range p.Diagnostics {
					diagnostics++
					for _, s := range d.Tree.Stacks {
						frames += len(s.Frames)
					}
				}
			}
			dumps := in.Dumps()
			if len(dumps) != diagnostics {
				t.Fatalf("%d dumps of %d diagnostics", len(dumps), diagnostics)
			}
			got := 0
			for i, d := range dumps {
				for _, th := range d.Threads {
					got += len(th.Frames)
				}
				if kind := d.Annotations[0]; kind.Key != "diagnostic" || kind.Value == "" {
					t.Errorf("dump %d: first annotation %+v, want its kind", i, kind)
				}
			}
			if got != frames {
				t.Errorf("dumps hold %d frames, the input %d", got, frames)
			}
			if strings.HasPrefix(name, "xcode_simulated") {
				if in.Shape != ShapePayload || dumps[0].Crash == nil || dumps[0].Crash.Signal != "SIGSEGV" || dumps[0].CrashedThread() != 0 {
					t.Errorf("Xcode's simulated crash: shape %q, crash %+v", in.Shape, dumps[0].Crash)
				}
			} else if in.Shape != ShapeTree {
				t.Errorf("shape %q, want a tree", in.Shape)
			}
		})
	}
}
