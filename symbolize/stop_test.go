package symbolize

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stackimage/stackimage/walker"
)

// TestStopReasonText checks that StopReason spells the walker's reasons as
// the walker does, max_total_frames for its own, and nothing for
// StopNone, and that the text reads back.
func TestStopReasonText(t *testing.T) {
	tests := []struct {
		reason StopReason
		want   string
	}{
		{StopNone, ""},
		{StopMaxTotalFrames, "max_total_frames"},
	}
	// The walker names its reasons from 1 up, and unknown values
	// "StopReason(n)".
	for w := walker.StopNone + 1; !strings.HasPrefix(w.String(), "StopReason("); w++ {
		tests = append(tests, struct {
			reason StopReason
			want   string
		}{StopReason(w), w.String()})
	}
	if len(tests) < 10 {
		t.Fatalf("only %d reasons to check; the walker names more", len(tests))
	}
	for _, tt := range tests {
		if got := tt.reason.String(); got != tt.want {
			t.Errorf("StopReason(%d).String() = %q, want %q", int(tt.reason), got, tt.want)
		}
		var back StopReason
		if err := back.UnmarshalText([]byte(tt.want)); err != nil || back != tt.reason {
			t.Errorf("UnmarshalText(%q) = %v, %v; want %v", tt.want, back, err, tt.reason)
		}
	}
	if w, ok := StopMaxTotalFrames.Walker(); ok {
		t.Errorf("StopMaxTotalFrames.Walker() = %v, true; want false", w)
	}
	var back StopReason
	if err := back.UnmarshalText([]byte("no_such_reason")); err == nil {
		t.Errorf("UnmarshalText(no_such_reason) = %v, nil; want an error", back)
	}
}

// TestStopReasonJSON checks the JSON spelling: the name as a string, and
// StopNone omitted where the field is omitempty (a reporter's backtrace).
func TestStopReasonJSON(t *testing.T) {
	type thread struct {
		StopReason StopReason `json:"stop_reason,omitempty"`
	}
	for _, tt := range []struct {
		reason StopReason
		want   string
	}{
		{StopNone, `{}`},
		{StopReason(walker.StopFramePointerZero), `{"stop_reason":"fp_zero"}`},
		{StopMaxTotalFrames, `{"stop_reason":"max_total_frames"}`},
	} {
		b, err := json.Marshal(thread{tt.reason})
		if err != nil || string(b) != tt.want {
			t.Errorf("json.Marshal(%v) = %s, %v; want %s", tt.reason, b, err, tt.want)
		}
		var back thread
		if err := json.Unmarshal(b, &back); err != nil || back.StopReason != tt.reason {
			t.Errorf("json.Unmarshal(%s) = %v, %v; want %v", b, back.StopReason, err, tt.reason)
		}
	}
}
