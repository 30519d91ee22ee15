package compactunwind

import "testing"

func TestPhaseString(t *testing.T) {
	for _, tt := range []struct {
		p    Phase
		want string
	}{{PhaseBody, "body"}, {PhasePrologue, "prologue"}, {PhaseEpilogue, "epilogue"}, {Phase(7), "Phase(7)"}} {
		if got := tt.p.String(); got != tt.want {
			t.Errorf("Phase(%d).String() = %q, want %q", int(tt.p), got, tt.want)
		}
	}
}
