package swiftdemangle

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stackimage/stackimage/internal/testcorpus"
)

// symbolicStyles maps the DemangleOptions of symbolic's tests (getsentry's
// Rust symbolication library, which wraps Swift's own demangler) to ours.
var symbolicStyles = map[string]Style{
	"DemangleOptions::name_only().parameters(true)": SimplifiedTypes,
	"DemangleOptions::name_only()":                  NameOnly,
}

var (
	symbolicBlock = regexp.MustCompile(`assert_demangle!\(Language::Swift,\s*(DemangleOptions::[^,{]*),\s*\{`)
	symbolicPair  = regexp.MustCompile(`^\s*"((?:[^"\\]|\\.)*)"\s*=>\s*"((?:[^"\\]|\\.)*)",`)
)

// TestSymbolicSwift checks every pair of symbolic's Swift demangling test,
// read from the real-world corpus (it is not ours to copy), in the style
// each block asks for. A name symbolic cannot demangle stays as it is.
func TestSymbolicSwift(t *testing.T) {
	checkSymbolic(t, filepath.Join(testcorpus.Dir(t), "swift", "symbolic-test_swift.rs"))
}

func checkSymbolic(t *testing.T, path string) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("symbolic's Swift test is not in the corpus: %v", err)
	}
	style, inBlock, pairs := Style(0), false, 0
	for n, line := range strings.Split(string(data), "\n") {
		if m := symbolicBlock.FindStringSubmatch(line); m != nil {
			s, ok := symbolicStyles[strings.TrimSpace(m[1])]
			if !ok {
				t.Fatalf("%s:%d: no style for %s", path, n+1, m[1])
			}
			style, inBlock = s, true
			continue
		}
		if strings.HasPrefix(strings.TrimSpace(line), "});") {
			inBlock = false
			continue
		}
		m := symbolicPair.FindStringSubmatch(line)
		if !inBlock || m == nil {
			continue
		}
		pairs++
		mangled, want := m[1], m[2]
		got, err := Demangle(mangled, style)
		if err != nil {
			got = mangled
		}
		if got != want {
			t.Errorf("%s:%d: Demangle(%q, %d) = %q (err %v), want %q", filepath.Base(path), n+1, mangled, style, got, err, want)
		}
	}
	if pairs < 100 {
		t.Errorf("read only %d pairs from %s; has its format changed?", pairs, path)
	}
	t.Logf("%d pairs of symbolic's Swift test checked", pairs)
}
