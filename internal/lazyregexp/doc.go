// Package lazyregexp is a regular expression compiled the first time it
// is used rather than when its package is initialized, as the Go
// toolchain's own internal/lazyregexp does: stackimage starts once per
// report, and the parsers' expressions cost every run (stackimage
// version included) a share of its start-up whether or not their input
// comes. In a test binary the expressions are compiled at once, so that
// a bad one still fails every test of its package.
package lazyregexp
