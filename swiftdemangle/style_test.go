package swiftdemangle

import "testing"

func TestStyleString(t *testing.T) {
	for _, tt := range []struct {
		s    Style
		want string
	}{{Full, "Full"}, {Simplified, "Simplified"}, {NameOnly, "NameOnly"}, {SimplifiedTypes, "SimplifiedTypes"}, {Style(-1), "Style(-1)"}} {
		if got := tt.s.String(); got != tt.want {
			t.Errorf("Style(%d).String() = %q, want %q", int(tt.s), got, tt.want)
		}
	}
}
