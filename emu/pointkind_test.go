//go:build unicorn

package emu

import "testing"

func TestPointKindString(t *testing.T) {
	for _, tt := range []struct {
		k    PointKind
		want string
	}{{PointMiddle, "middle"}, {PointPush, "push"}, {PointAfterPop, "after-pop"}, {PointEntry, "entry"}, {PointKind(9), "PointKind(9)"}} {
		if got := tt.k.String(); got != tt.want {
			t.Errorf("PointKind(%d).String() = %q, want %q", int(tt.k), got, tt.want)
		}
	}
}
