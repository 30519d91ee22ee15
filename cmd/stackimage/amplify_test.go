package main

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stackimage/stackimage/internal/hostile"
	"github.com/stackimage/stackimage/symbolize"
)

// tailWriter counts what is written and keeps its last bytes, so that a
// huge output costs the test nothing and its end can still be checked.
type tailWriter struct {
	n    int64
	tail []byte
}

func (w *tailWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	w.tail = append(w.tail, p...)
	if len(w.tail) > 64<<10 {
		w.tail = append(w.tail[:0], w.tail[len(w.tail)-32<<10:]...)
	}
	return len(p), nil
}

// TestSharedStackAmplification symbolicates thousands of threads walking
// one deep stack, as text and JSON: the run ends within the allocation
// budget of its input, the output is bounded by Symbolizer.MaxTotalFrames
// and says where the bound cut the report.
func TestSharedStackAmplification(t *testing.T) {
	for _, distinct := range []bool{false, true} {
		data := hostile.SharedStackSnapshot(hostile.SharedStackThreads, hostile.SharedStackFrames, distinct)
		dump := writeFile(t, filepath.Join(t.TempDir(), "dump.json"), data)
		for _, format := range []string{"text", "json"} {
			t.Run(fmt.Sprintf("distinct=%v/%s", distinct, format), func(t *testing.T) {
				var status int
				var out tailWriter
				var errOut bytes.Buffer
				var allocated uint64
				start := time.Now()
				hostile.Returns(t, 120*time.Second, nil, func() {
					allocated = hostile.Budget(t, int64(len(data)), func() {
						status = run([]string{"symbolicate", dump, "--format", format}, nil, &out, &errOut)
					})
				})
				t.Logf("%d bytes of input: %v, %d bytes allocated, %d bytes of output",
					len(data), time.Since(start).Round(time.Millisecond), allocated, out.n)
				if status != 0 {
					t.Fatalf("status %d, stderr %q; want 0", status, errOut.String())
				}
				warning := fmt.Sprintf("the report holds at most %d frames (MaxTotalFrames)", symbolize.DefaultMaxTotalFrames)
				if tail := string(out.tail); !strings.Contains(tail, warning) || !strings.Contains(tail, "max_total_frames") {
					t.Errorf("output does not end with threads cut at max_total_frames and a warning %q:\n...%s", warning, tail[max(0, len(tail)-2000):])
				}
			})
		}
	}
}
