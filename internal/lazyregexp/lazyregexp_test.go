package lazyregexp

import (
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCompiledAtFirstUse: outside a test binary an expression is compiled
// only when first used, and then answers as regexp does.
func TestCompiledAtFirstUse(t *testing.T) {
	defer func(was bool) { inTest = was }(inTest)
	inTest = false
	compiled := 0
	expr := `^(\d+) (\w+)$`
	r := newWith(expr, func(e string) *regexp.Regexp { compiled++; return regexp.MustCompile(e) })
	if compiled != 0 {
		t.Fatalf("compiled %d times before any use, want 0", compiled)
	}
	want := regexp.MustCompile(expr)
	for _, s := range []string{"12 ab", "x", "3 c", ""} {
		if got, w := r.FindStringSubmatch(s), want.FindStringSubmatch(s); !cmp.Equal(got, w) {
			t.Errorf("FindStringSubmatch(%q) = %q, want %q", s, got, w)
		}
		if got, w := r.FindStringSubmatchIndex(s), want.FindStringSubmatchIndex(s); !cmp.Equal(got, w) {
			t.Errorf("FindStringSubmatchIndex(%q) = %v, want %v", s, got, w)
		}
		if got, w := r.FindStringIndex(s), want.FindStringIndex(s); !cmp.Equal(got, w) {
			t.Errorf("FindStringIndex(%q) = %v, want %v", s, got, w)
		}
		if got, w := r.FindIndex([]byte(s)), want.FindIndex([]byte(s)); !cmp.Equal(got, w) {
			t.Errorf("FindIndex(%q) = %v, want %v", s, got, w)
		}
		if got, w := r.Match([]byte(s)), want.MatchString(s); got != w {
			t.Errorf("Match(%q) = %v, want %v", s, got, w)
		}
		if got, w := r.FindAllStringSubmatch(s, -1), want.FindAllStringSubmatch(s, -1); !cmp.Equal(got, w) {
			t.Errorf("FindAllStringSubmatch(%q) = %q, want %q", s, got, w)
		}
	}
	if compiled != 1 {
		t.Errorf("compiled %d times, want once", compiled)
	}
}

// TestBadExpressionFailsInTests: in a test binary New compiles at once,
// so a bad expression panics when its package is initialized.
func TestBadExpressionFailsInTests(t *testing.T) {
	if !inTest {
		t.Fatalf("inTest is false in a test binary")
	}
	defer func() {
		if recover() == nil {
			t.Error("New of a bad expression did not panic in a test binary")
		}
	}()
	New(`(`)
}
