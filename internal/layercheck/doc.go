// Package layercheck holds the tests that keep docs/architecture.md and
// the Makefile true: one lists every package's imports with the go
// command and fails on an import the layering forbids; another fails
// when a package that starts goroutines or imports sync is missing from
// the Makefile's RACE_PKGS, which `make test` runs under -race.
package layercheck
