// Package buildversion reads what the Go toolchain recorded in a binary
// (runtime/debug.BuildInfo) for the project's programs: the lines that
// "stackimage version" and "stackimage-serve --version" print, and the
// rule by which two programs count as the same build.
//
// Two programs are the same build when their main module's path and
// version match; when the version is "(devel)" (a build outside a
// version-control checkout, or by a Go before 1.24 in one), the commit
// they were built from (vcs.revision) and whether the tree had
// uncommitted changes (vcs.modified) must match too. Any other version
// already names the commit: a tag, or a pseudo-version that ends with
// the commit's hash and "+dirty" when the tree was modified. Two builds
// of one modified tree compare equal even if the changes differ: the
// binary records that the tree was modified, not how.
package buildversion
