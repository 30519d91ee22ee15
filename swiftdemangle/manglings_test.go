package swiftdemangle

import (
	"bufio"
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// manglingsFloor is the share of testdata/manglings.txt lines (Swift's own
// demangler test) this package must print exactly as swift-demangle does,
// in Full style. It is the measured agreement: raise it when lines are fixed.
const manglingsFloor = 1.0

type manglingCase struct {
	line          int
	mangled, want string
}

// classifyPrefix matches the "{T:...,C} " that swift-demangle -classify
// puts before some lines of manglings.txt: a classification, not part of
// the demangled name.
var classifyPrefix = regexp.MustCompile(`^\{[^}]*\} `)

// readManglings reads Swift's test/Demangle/Inputs/manglings.txt as Swift's
// test does: the input is the text before the first "--->", the expected
// output the text after the last one; lines without "--->" are ignored.
func readManglings(t *testing.T, path string) []manglingCase {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var cases []manglingCase
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		first := strings.Index(line, "--->")
		if first < 0 {
			continue
		}
		last := strings.LastIndex(line, "--->")
		mangled := strings.TrimRight(line[:first], " ")
		want := strings.TrimLeft(line[last+len("--->"):], " ")
		want = classifyPrefix.ReplaceAllString(want, "")
		cases = append(cases, manglingCase{line: n, mangled: mangled, want: want})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return cases
}

// swiftDemangle prints a name as swift-demangle does: demangled, or as
// given when it does not demangle.
func swiftDemangle(name string) string {
	s, err := Demangle(name, Full)
	if err != nil {
		return trimMachO(name)
	}
	return s
}

// readKnownDifferences reads testdata/manglings.known-differences.txt: one
// mangled name per line, a tab, and why this package prints it differently.
func readKnownDifferences(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile("testdata/manglings.known-differences.txt")
	if err != nil {
		t.Fatal(err)
	}
	known := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, reason, ok := strings.Cut(line, "\t")
		if !ok || strings.TrimSpace(reason) == "" {
			t.Errorf("known difference %q has no reason", line)
		}
		known[name] = reason
	}
	return known
}

func TestManglingsTxt(t *testing.T) {
	cases := readManglings(t, "testdata/manglings.txt")
	known := readKnownDifferences(t)
	var differing []string
	agree := 0
	for _, c := range cases {
		got := swiftDemangle(c.mangled)
		if got == c.want {
			agree++
			if _, ok := known[c.mangled]; ok {
				t.Errorf("manglings.txt:%d: %s now demangles as swift-demangle does; remove it from the known differences", c.line, c.mangled)
			}
			continue
		}
		differing = append(differing, c.mangled)
		if _, ok := known[c.mangled]; !ok {
			t.Errorf("manglings.txt:%d: Demangle(%q)\n got: %q\nwant: %q", c.line, c.mangled, got, c.want)
		}
	}
	sort.Strings(differing)
	for name := range known {
		if i := sort.SearchStrings(differing, name); i == len(differing) || differing[i] != name {
			if !hasCase(cases, name) {
				t.Errorf("known difference %q is not a line of manglings.txt", name)
			}
		}
	}
	share := float64(agree) / float64(len(cases))
	t.Logf("manglings.txt: %d of %d lines (%.2f%%) identical to swift-demangle", agree, len(cases), 100*share)
	if share < manglingsFloor {
		t.Errorf("agreement %.4f fell under the floor %.4f", share, manglingsFloor)
	}
}

func hasCase(cases []manglingCase, name string) bool {
	for _, c := range cases {
		if c.mangled == name {
			return true
		}
	}
	return false
}
