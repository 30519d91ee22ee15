// Package layercheck holds the test that keeps docs/architecture.md true:
// it lists every package's imports with the go command and fails on an
// import the layering forbids.
package layercheck
