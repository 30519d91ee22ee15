package buildversion

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"

	"github.com/stackimage/stackimage/internal/textesc"
)

// Write prints program's version as the toolchain recorded it in info:
// the module's version (a tag or pseudo-version when built from a
// checkout or by go install, "(devel)" otherwise), the commit it was built
// from and whether the tree had uncommitted changes, and the Go version.
// ok is false when the binary has no build information
// (debug.ReadBuildInfo's second result).
func Write(w io.Writer, program string, info *debug.BuildInfo, ok bool) {
	if !ok || info == nil {
		textesc.WriteLine(w, "%s (unknown version: built without module information)", program)
		textesc.WriteLine(w, "  go       %s %s/%s", runtime.Version(), runtime.GOOS, runtime.GOARCH)
		return
	}
	settings := settingsOf(info)
	textesc.WriteLine(w, "%s %s", program, info.Main.Version)
	textesc.WriteLine(w, "  module   %s %s", info.Main.Path, info.Main.Version)
	if rev := settings["vcs.revision"]; rev != "" {
		detail := settings["vcs"]
		if t := settings["vcs.time"]; t != "" {
			detail += ", " + t
		}
		if settings["vcs.modified"] == "true" {
			detail += ", modified"
		}
		textesc.WriteLine(w, "  revision %s (%s)", rev, detail)
	}
	textesc.WriteLine(w, "  go       %s %s/%s", info.GoVersion, runtime.GOOS, runtime.GOARCH)
}

// Build is what the package's rule compares to tell whether two programs
// are the same build (Build.Same).
type Build struct {
	Module   string // the main module's path
	Version  string // its version: a tag, a pseudo-version or "(devel)"
	Revision string // vcs.revision, empty when not recorded
	Modified bool   // vcs.modified: the tree had uncommitted changes
}

// Of returns info's Build.
func Of(info *debug.BuildInfo) Build {
	settings := settingsOf(info)
	return Build{
		Module:   info.Main.Path,
		Version:  info.Main.Version,
		Revision: settings["vcs.revision"],
		Modified: settings["vcs.modified"] == "true",
	}
}

// Same reports whether b and other are the same build: the same module
// and version, and for "(devel)" builds the same commit and modified flag.
func (b Build) Same(other Build) bool {
	if b.Module != other.Module || b.Version != other.Version {
		return false
	}
	if b.Version == "(devel)" || b.Version == "" {
		return b.Revision == other.Revision && b.Modified == other.Modified
	}
	return true
}

// String is the version and, when recorded, the commit:
// "v0.0.0-20261126011433-3fce5d69b560+dirty (revision 3fce5d69b560…, modified)".
func (b Build) String() string {
	s := b.Version
	if s == "" {
		s = "(no version)"
	}
	switch {
	case b.Revision != "" && b.Modified:
		s += fmt.Sprintf(" (revision %s, modified)", b.Revision)
	case b.Revision != "":
		s += fmt.Sprintf(" (revision %s)", b.Revision)
	case b.Modified:
		s += " (modified)"
	}
	return s
}

func settingsOf(info *debug.BuildInfo) map[string]string {
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	return settings
}
