package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// writeVersion prints what the Go toolchain recorded in the binary: the
// module's version (a tag or pseudo-version when built from a checkout or
// by go install, "(devel)" otherwise), the commit it was built from and
// whether the tree had uncommitted changes, and the Go version.
func writeVersion(w io.Writer, info *debug.BuildInfo, ok bool) {
	if !ok {
		fmt.Fprintf(w, "stackimage (unknown version: built without module information)\n  go       %s %s/%s\n",
			runtime.Version(), runtime.GOOS, runtime.GOARCH)
		return
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	writeLine(w, "stackimage %s", info.Main.Version)
	writeLine(w, "  module   %s %s", info.Main.Path, info.Main.Version)
	if rev := settings["vcs.revision"]; rev != "" {
		detail := settings["vcs"]
		if t := settings["vcs.time"]; t != "" {
			detail += ", " + t
		}
		if settings["vcs.modified"] == "true" {
			detail += ", modified"
		}
		writeLine(w, "  revision %s (%s)", rev, detail)
	}
	writeLine(w, "  go       %s %s/%s", info.GoVersion, runtime.GOOS, runtime.GOARCH)
}

func runVersion(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("version", "version", stdout)
	rest, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, rest[0])
	}
	info, ok := debug.ReadBuildInfo()
	writeVersion(stdout, info, ok)
	return nil
}
