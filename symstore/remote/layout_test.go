package remote

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stackimage/stackimage/symstore/objstore"
	"github.com/stackimage/stackimage/uuid"
)

// TestLayoutPaths checks each layout's path for one UUID against the
// layouts' own conventions (symbolicator's paths.rs, LLDB, Breakpad).
func TestLayoutPaths(t *testing.T) {
	u, _ := uuid.Parse("4C4C444C-5555-3144-A117-3E15AF6B6CFF")
	tests := []struct {
		layout Layout
		kind   Kind
		name   string
		want   []string
	}{
		{Layout{Type: "unified"}, KindDebug, "", []string{"4c/4c444c55553144a1173e15af6b6cff/debuginfo"}},
		{Layout{Type: "unified"}, KindCode, "", []string{"4c/4c444c55553144a1173e15af6b6cff/executable"}},
		{Layout{Type: "unified", Casing: "uppercase"}, KindBreakpad, "", []string{"4C/4C444C55553144A1173E15AF6B6CFF/BREAKPAD"}},
		{Layout{Type: "debuginfod"}, KindDebug, "", []string{"buildid/4c4c444c55553144a1173e15af6b6cff/debuginfo"}},
		{Layout{Type: "debuginfod"}, KindBreakpad, "", nil},
		{Layout{Type: "native"}, KindDebug, "", []string{"4C4C/444C/5555/3144/A117/3E15AF6B6CFF"}},
		{Layout{Type: "native"}, KindCode, "", []string{"4C4C/444C/5555/3144/A117/3E15AF6B6CFF.app"}},
		{Layout{Type: "breakpad"}, KindBreakpad, "/usr/lib/App", []string{"App/4C4C444C55553144A1173E15AF6B6CFF0/App.sym"}},
		{Layout{Type: "breakpad"}, KindBreakpad, "", nil},
		{Layout{Type: "ssqp"}, KindDebug, "", []string{"_.dwarf/mach-uuid-sym-4c4c444c55553144a1173e15af6b6cff/_.dwarf"}},
		{Layout{Type: "ssqp", Casing: "lowercase"}, KindCode, "App", []string{"app/mach-uuid-4c4c444c55553144a1173e15af6b6cff/app"}},
		// A name that tries to climb out keeps its base name only, or nothing.
		{Layout{Type: "breakpad"}, KindBreakpad, "../../etc/passwd", []string{"passwd/4C4C444C55553144A1173E15AF6B6CFF0/passwd.sym"}},
		{Layout{Type: "breakpad"}, KindBreakpad, "x/..", nil},
		{Layout{Type: "ssqp"}, KindCode, `C:\..\..`, nil},
	}
	for _, tt := range tests {
		got := LayoutPaths(tt.layout, u, tt.kind, tt.name)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("LayoutPaths(%+v, %s, %q) (-want +got):\n%s", tt.layout, tt.kind, tt.name, diff)
		}
		for _, p := range got {
			if !objstore.ValidKey(p) {
				t.Errorf("LayoutPaths(%+v) = %q, not a valid key", tt.layout, p)
			}
		}
	}
}
