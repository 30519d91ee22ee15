package metrickit

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stackimage/stackimage/internal/hostile"
)

// DeepPayload is a crash whose one call stack nests depth subFrames deep.
func deepPayload(depth int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"crashDiagnostics": [{"callStackTree": {"callStacks": [{"threadAttributed": true, "callStackRootFrames": [`)
	for range depth {
		b.WriteString(`{"address": 4100, "offsetIntoBinaryTextSegment": 4, "binaryName": "A", "sampleCount": 1, "subFrames": [`)
	}
	b.WriteString(`{"address": 4104}`)
	b.WriteString(strings.Repeat("]}", depth))
	b.WriteString(`]}]}}]}`)
	return b.Bytes()
}

// widePayload is a CPU exception whose one root frame has n subFrames.
func widePayload(n int) []byte {
	var b bytes.Buffer
	b.Grow(16 * n)
	b.WriteString(`{"cpuExceptionDiagnostics": [{"callStackTree": {"callStacks": [{"callStackRootFrames": [{"address": 4096, "binaryName": "A", "offsetIntoBinaryTextSegment": 0, "sampleCount": 18446744073709551615, "subFrames": [`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"address": 4100}`)
	}
	b.WriteString(`]}]}]}}]}`)
	return b.Bytes()
}

// Hostile payloads are read within the hostile budget (5 s, 256 MiB, and
// 64 bytes per input byte plus 64 MiB), keeping what the limits allow:
// frames nested 200,000 deep keep MaxDepth levels; 2 million frames keep
// MaxFrames; a sampleCount of 2⁶⁴-1 is taken as MaxSampleCount; each
// with a warning, not an error.
func TestHostilePayloads(t *testing.T) {
	tests := []struct {
		name       string
		data       []byte
		wantFrames int
		wantWarn   []string
	}{
		{"deep subFrames", deepPayload(200_000), MaxDepth, []string{"nested deeper than 2048"}},
		{"millions of frames, huge sampleCount", widePayload(2_000_000), MaxFrames, []string{"after the first 262144 left out", "sampleCount 18446744073709551615 taken as 1099511627776"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var in *Input
			var err error
			frames := 0
			alloc, took := hostile.CaseBudget(t, int64(len(tt.data)), func() {
				in, err = Parse(tt.data)
				if in == nil {
					return
				}
				for _, d := range in.Dumps() {
					for _, th := range d.Threads {
						frames += len(th.Frames)
					}
				}
			})
			t.Logf("%d bytes: %v, %d MiB allocated", len(tt.data), took, alloc>>20)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if frames != tt.wantFrames {
				t.Errorf("%d frames kept, want %d", frames, tt.wantFrames)
			}
			for _, w := range tt.wantWarn {
				if !strings.Contains(strings.Join(in.Warnings, "\n"), w) {
					t.Errorf("warnings %q lack %q", in.Warnings, w)
				}
			}
		})
	}
}

// An input over MaxInputSize is refused before it is read.
func TestTooLarge(t *testing.T) {
	if in, err := Parse(make([]byte, MaxInputSize+1)); in != nil || err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("Parse of %d bytes: %v, %v", MaxInputSize+1, in, err)
	}
}
