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
		{"go install of a release", "stackimage-serve", release,
			"stackimage-serve v1.0.0\n  module   github.com/stackimage/stackimage v1.0.0\n" + goLine},
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
	Write(&out, "stackimage-serve", nil, false)
	if !strings.HasPrefix(out.String(), "stackimage-serve (unknown version") {
		t.Errorf("Write without build information = %q, want it to say the version is unknown", out.String())
	}
}

// TestSameBuild checks the rule: module, version, commit and the
// modified flag all count; the commit's time and the Go version do not.
func TestSameBuild(t *testing.T) {
	devel := func(revision, modified string) *debug.BuildInfo {
		return gitBuild("(devel)", revision, modified)
	}
	otherGo := *release
	otherGo.GoVersion = "go1.98"
	otherTime := gitBuild("(devel)", "3fce5d69b560", "false")
	otherTime.Settings[2].Value = "2026-11-27T00:00:00Z"
	fork := *release
	fork.Main.Path = "example.com/fork"
	tests := []struct {
		name string
		a, b *debug.BuildInfo
		same bool
	}{
		{"one release", release, release, true},
		{"one release, other Go", release, &otherGo, true},
		{"releases", release, &debug.BuildInfo{Main: debug.Module{Path: module, Version: "v1.0.1"}}, false},
		{"fork", release, &fork, false},
		{"one commit", devel("3fce5d69b560", "false"), otherTime, true},
		{"commits", devel("3fce5d69b560", "false"), devel("8558aff00000", "false"), false},
		{"modified or not", devel("3fce5d69b560", "false"), devel("3fce5d69b560", "true"), false},
		{"release or its checkout", release, gitBuild("v1.0.0", "3fce5d69b560", "false"), true},
		{"release or its modified checkout", release, gitBuild("v1.0.0+dirty", "3fce5d69b560", "true"), false},
		{"pseudo-versions", gitBuild("v0.0.0-20261126011433-3fce5d69b560", "3fce5d69b560", "false"),
			gitBuild("v0.0.0-20261126011433-3fce5d69b560+dirty", "3fce5d69b560", "true"), false},
		{"no version control", &debug.BuildInfo{Main: debug.Module{Path: module, Version: "(devel)"}},
			&debug.BuildInfo{Main: debug.Module{Path: module, Version: "(devel)"}}, true},
	}
	for _, tt := range tests {
		a, b := Of(tt.a), Of(tt.b)
		if same := a.Same(b); same != tt.same || b.Same(a) != same {
			t.Errorf("%s: Of(%v).Same(Of(%v)) is %v, want %v", tt.name, a, b, same, tt.same)
		}
	}
}

func TestBuildString(t *testing.T) {
	tests := []struct {
		b    Build
		want string
	}{
		{Build{Version: "v1.0.0"}, "v1.0.0"},
		{Build{Version: "(devel)", Revision: "3fce5d69b560"}, "(devel) (revision 3fce5d69b560)"},
		{Build{Version: "(devel)", Revision: "3fce5d69b560", Modified: true}, "(devel) (revision 3fce5d69b560, modified)"},
		{Build{}, "(no version)"},
	}
	for _, tt := range tests {
		if got := tt.b.String(); got != tt.want {
			t.Errorf("%#v.String() = %q, want %q", tt.b, got, tt.want)
		}
	}
}
