package lazyregexp

import (
	"os"
	"regexp"
	"strings"
	"sync"
)

// Regexp is a regexp.Regexp compiled at its first use. Its methods are
// those of regexp.Regexp that the project calls; add others as needed.
type Regexp struct {
	re func() *regexp.Regexp
}

// inTest reports whether this is a test binary, whose expressions are
// compiled at once.
var inTest = len(os.Args) > 0 && strings.HasSuffix(strings.TrimSuffix(os.Args[0], ".exe"), ".test")

// New returns expr, compiled (with regexp.MustCompile, so a bad
// expression panics) when one of its methods is first called.
func New(expr string) *Regexp { return newWith(expr, regexp.MustCompile) }

// newWith is New with the compiler given, for the tests to count calls.
func newWith(expr string, compile func(string) *regexp.Regexp) *Regexp {
	r := &Regexp{re: sync.OnceValue(func() *regexp.Regexp { return compile(expr) })}
	if inTest {
		r.re()
	}
	return r
}

// Match is regexp.Regexp.Match.
func (r *Regexp) Match(b []byte) bool { return r.re().Match(b) }

// FindIndex is regexp.Regexp.FindIndex.
func (r *Regexp) FindIndex(b []byte) []int { return r.re().FindIndex(b) }

// FindStringIndex is regexp.Regexp.FindStringIndex.
func (r *Regexp) FindStringIndex(s string) []int { return r.re().FindStringIndex(s) }

// FindStringSubmatch is regexp.Regexp.FindStringSubmatch.
func (r *Regexp) FindStringSubmatch(s string) []string { return r.re().FindStringSubmatch(s) }

// FindStringSubmatchIndex is regexp.Regexp.FindStringSubmatchIndex.
func (r *Regexp) FindStringSubmatchIndex(s string) []int { return r.re().FindStringSubmatchIndex(s) }

// FindAllStringSubmatch is regexp.Regexp.FindAllStringSubmatch.
func (r *Regexp) FindAllStringSubmatch(s string, n int) [][]string {
	return r.re().FindAllStringSubmatch(s, n)
}
