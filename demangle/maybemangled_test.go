package demangle

import (
	"strings"
	"testing"
)

func TestMayBeMangled(t *testing.T) {
	tests := []struct {
		raw  string
		want bool
	}{
		{"__ZN3foo3barEv", true},
		{"_ZN3foo3barEv", true},
		{"__RNvC4main", true},
		{"_$s5MyApp3fooyyF", true},
		{"$s5MyApp3fooyyF", true},
		{"_$S5MyApp3fooyyF", true},
		{"$S5MyApp3fooyyF", true},
		{"_$e5MyApp3fooyyF", true},
		{"$e5MyApp3fooyyF", true},
		{"_T05MyApp3fooyyF", true},
		{"__T05MyApp3fooyyF", true},
		{"_main", false},
		{"_runtime.sigpanic", false},
		{"_", false},
		{"", false},
		{"$", false},
		{"-[Foo bar]", false},
	}
	for _, tt := range tests {
		if got := MayBeMangled(tt.raw); got != tt.want {
			t.Errorf("MayBeMangled(%q) = %v, want %v", tt.raw, got, tt.want)
		}
	}
}

// TestMayBeMangledMatchesPrefixes checks the two-byte filter against the
// plain test of every prefix, on every short name made of the bytes the
// prefixes use and a few others.
func TestMayBeMangledMatchesPrefixes(t *testing.T) {
	const alphabet = "_$ZRTsSe0a"
	names := []string{""}
	for range 4 {
		for _, n := range names {
			for _, c := range alphabet {
				names = append(names, n+string(c))
			}
		}
	}
	for _, n := range names {
		want := false
		for _, p := range manglingPrefixes {
			want = want || strings.HasPrefix(n, p)
		}
		if got := MayBeMangled(n); got != want {
			t.Errorf("MayBeMangled(%q) = %v, want %v", n, got, want)
		}
	}
}
