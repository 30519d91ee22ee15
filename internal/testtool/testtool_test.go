package testtool

import (
	"strings"
	"testing"
)

// recorder is a testing.TB that records how a test ended instead of
// ending the caller.
type recorder struct {
	testing.TB
	failed, skipped bool
	msg             string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatalf(format string, args ...any) {
	r.failed, r.msg = true, format
	panic(r)
}
func (r *recorder) Skipf(format string, args ...any) {
	r.skipped, r.msg = true, format
	panic(r)
}

func run(name string) (r *recorder, path string) {
	r = &recorder{}
	defer func() {
		if v := recover(); v != nil && v != r {
			panic(v)
		}
	}()
	return r, Path(r, name, "pkg", "a purpose")
}

func TestPath(t *testing.T) {
	if _, p := run("go"); p == "" || !strings.HasSuffix(p, "go") {
		t.Errorf("Path(go) = %q, want the go command's path", p)
	}

	t.Setenv(RequireEnv, "")
	if r, _ := run("no-such-program-xyz"); !r.skipped || r.failed {
		t.Errorf("missing program without %s: skipped %v failed %v, want a skip", RequireEnv, r.skipped, r.failed)
	}
	t.Setenv(RequireEnv, "1")
	if r, _ := run("no-such-program-xyz"); !r.failed || r.skipped {
		t.Errorf("missing program with %s: skipped %v failed %v, want a failure", RequireEnv, r.skipped, r.failed)
	}
}
