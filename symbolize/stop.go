package symbolize

import (
	"fmt"

	"github.com/stackimage/stackimage/walker"
)

// StopReason says why a thread's frames end. Its values are the walker's
// reasons, converted (StopReason(walker.StopMaxDepth)); StopMaxTotalFrames,
// the symbolizer's own bound, which the walker knows nothing of and so
// lives here, outside walker's range; and StopNone, the zero value, for a
// reporter's backtrace, which no walk of ours ended. String gives the
// stable names JSON shows ("fp_zero", "max_total_frames"; "" for
// StopNone); it is also the text form (encoding.TextMarshaler). A
// StopReason is a plain value, safe to share.
type StopReason walker.StopReason

const (
	// StopNone: no walk ended here (a reporter's backtrace).
	StopNone = StopReason(walker.StopNone)
	// StopMaxTotalFrames: the frames were cut because the report reached
	// its bound, Symbolizer.MaxTotalFrames. The frames kept end at a
	// machine frame: inlined frames are never split from theirs.
	StopMaxTotalFrames StopReason = -1
)

// Walker returns the walker's reason, and false for StopMaxTotalFrames.
func (s StopReason) Walker() (walker.StopReason, bool) {
	if s == StopMaxTotalFrames {
		return 0, false
	}
	return walker.StopReason(s), true
}

// String returns "max_total_frames" for StopMaxTotalFrames, else the
// walker's name of the reason ("fp_zero", "max_depth", ...; "" for
// StopNone).
func (s StopReason) String() string {
	if w, ok := s.Walker(); ok {
		return w.String()
	}
	return "max_total_frames"
}

// MarshalText returns String's text.
func (s StopReason) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads what MarshalText writes.
func (s *StopReason) UnmarshalText(text []byte) error {
	if string(text) == "max_total_frames" {
		*s = StopMaxTotalFrames
		return nil
	}
	var w walker.StopReason
	if err := w.UnmarshalText(text); err != nil {
		return fmt.Errorf("symbolize: unknown stop reason %q", text)
	}
	*s = StopReason(w)
	return nil
}
