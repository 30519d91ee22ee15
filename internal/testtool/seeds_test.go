package testtool

import (
	"testing"
)

// TestFreshSeed: the seed in the environment is the one returned (its
// first, of several); one that is no number fails the test; unset, a
// seed is drawn.
func TestFreshSeed(t *testing.T) {
	t.Setenv(FreshSeedsEnv, " 1795961020783530513, 7")
	if got := FreshSeed(t); got != 1795961020783530513 {
		t.Errorf("FreshSeed = %d, want the environment's first seed", got)
	}
	t.Setenv(FreshSeedsEnv, "x")
	r := &recorder{TB: t}
	func() {
		defer func() {
			if v := recover(); v != nil && v != r {
				panic(v)
			}
		}()
		FreshSeed(r)
	}()
	if !r.failed {
		t.Error("a seed that is no number did not fail the test")
	}
	t.Setenv(FreshSeedsEnv, "")
	if a, b := FreshSeed(t), FreshSeed(t); a == b {
		t.Errorf("two drawn seeds are both %d", a)
	}
}
