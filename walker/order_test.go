package walker

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestStrategyOrderDocumented holds docs/walker.md's table of the
// strategy lists to the lists the walk runs: a reordered or added
// strategy must be documented.
func TestStrategyOrderDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "docs", "walker.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, list := range []struct {
		name       string
		strategies []strategy
	}{
		{"frame0Strategies", frame0Strategies},
		{"callerStrategies", callerStrategies},
	} {
		prefix := "| `" + list.name + "` | "
		var documented []string
		for _, line := range strings.Split(string(doc), "\n") {
			if rest, ok := strings.CutPrefix(line, prefix); ok {
				documented = strings.Split(strings.TrimSuffix(strings.TrimSpace(rest), " |"), "; ")
			}
		}
		if documented == nil {
			t.Errorf("docs/walker.md has no row %q...", prefix)
			continue
		}
		var names []string
		for _, s := range list.strategies {
			names = append(names, s.name)
		}
		if diff := cmp.Diff(documented, names); diff != "" {
			t.Errorf("%s differs from docs/walker.md (-doc +code):\n%s", list.name, diff)
		}
	}
}

// TestStopReasonText checks that every stop reason's text form reads
// back as itself, that StopNone is "", and that an unknown name is an
// error.
func TestStopReasonText(t *testing.T) {
	for s := StopNone; int(s) < len(stopNames); s++ {
		text, err := s.MarshalText()
		if err != nil {
			t.Fatalf("%d.MarshalText: %v", int(s), err)
		}
		if s != StopNone && (len(text) == 0 || strings.HasPrefix(string(text), "StopReason(")) {
			t.Errorf("StopReason(%d) has no name: %q", int(s), text)
		}
		var back StopReason
		if err := back.UnmarshalText(text); err != nil || back != s {
			t.Errorf("UnmarshalText(%q) = %v, %v; want %v", text, back, err, s)
		}
	}
	if got := StopNone.String(); got != "" {
		t.Errorf("StopNone.String() = %q, want \"\"", got)
	}
	var s StopReason
	if err := s.UnmarshalText([]byte("no_such_reason")); err == nil {
		t.Errorf("UnmarshalText(no_such_reason) = %v, nil; want an error", s)
	}
}
