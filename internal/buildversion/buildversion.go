package buildversion

import (
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

func settingsOf(info *debug.BuildInfo) map[string]string {
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	return settings
}
