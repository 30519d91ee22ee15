package buildversion

import (
	"bytes"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

const module = "github.com/stackimage/stackimage"

func gitBuild(version, revision, modified string) *debug.BuildInfo {
	return &debug.BuildInfo{GoVersion: "go1.99",
		Main: debug.Module{Path: module, Version: version},
		Settings: []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: revision},
			{Key: "vcs.time", Value: "2026-11-26T01:14:33Z"}, {Key: "vcs.modified", Value: modified}}}
}

var release = &debug.BuildInfo{GoVersion: "go1.99", Main: debug.Module{Path: module, Version: "v1.0.0"}}

// TestWrite checks the lines for a build from a modified git checkout, a
// release and a binary without build information, under the program's
// name.
func TestWrite(t *testing.T) {
	goLine := "  go       go1.99 " + runtime.GOOS + "/" + runtime.GOARCH + "\n"
	tests := []struct {
		name, program string
		info          *debug.BuildInfo
		want          string
	}{
		{"git checkout, modified", "stackimage", gitBuild("v0.0.0-20261126011433-3fce5d69b560+dirty", "3fce5d69b560", "true"),
			"stackimage v0.0.0-20261126011433-3fce5d69b560+dirty\n" +
				"  module   github.com/stackimage/stackimage v0.0.0-20261126011433-3fce5d69b560+dirty\n" +
				"  revision 3fce5d69b560 (git, 2026-11-26T01:14:33Z, modified)\n" + goLine},
		{"go install of a release", "stackimage", release,
			"stackimage v1.0.0\n  module   github.com/stackimage/stackimage v1.0.0\n" + goLine},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			Write(&out, tt.program, tt.info, true)
			if out.String() != tt.want {
				t.Errorf("Write =\n%s\nwant\n%s", out.String(), tt.want)
			}
		})
	}
	var out bytes.Buffer
	Write(&out, "stackimage", nil, false)
	if !strings.HasPrefix(out.String(), "stackimage (unknown version") {
		t.Errorf("Write without build information = %q, want it to say the version is unknown", out.String())
	}
}
