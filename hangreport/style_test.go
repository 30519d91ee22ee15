package hangreport

import "testing"

func TestStyleString(t *testing.T) {
	for _, tt := range []struct {
		s    Style
		want string
	}{{StyleReport, "StyleReport"}, {StyleAtos, "StyleAtos"}, {Style(9), "Style(9)"}} {
		if got := tt.s.String(); got != tt.want {
			t.Errorf("Style(%d).String() = %q, want %q", int(tt.s), got, tt.want)
		}
	}
}
