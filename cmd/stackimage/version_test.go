package main

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
)

// TestVersionMatchesBuildInfo builds the command as go install would and
// checks that "stackimage version" and "--version" print the module
// version and the commit the toolchain recorded, as go version -m reads
// them back from the binary: "(devel)" from a tree without version control
// information, a pseudo-version and a revision from a git checkout.
func TestVersionMatchesBuildInfo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the command with the go command")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build the command with")
	}
	bin := filepath.Join(t.TempDir(), "stackimage")
	// -buildvcs=auto records the commit where the tree has one, whatever
	// GOFLAGS says.
	if out, err := exec.Command(goCmd, "build", "-buildvcs=auto", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	meta, err := exec.Command(goCmd, "version", "-m", bin).Output()
	if err != nil {
		t.Fatalf("go version -m: %v", err)
	}
	var modVersion, revision string
	for _, line := range strings.Split(string(meta), "\n") {
		fields := strings.Fields(line)
		switch {
		case len(fields) >= 3 && fields[0] == "mod":
			modVersion = fields[2]
		case len(fields) == 2 && fields[0] == "build" && strings.HasPrefix(fields[1], "vcs.revision="):
			revision = strings.TrimPrefix(fields[1], "vcs.revision=")
		}
	}
	if modVersion == "" {
		t.Fatalf("go version -m names no module version:\n%s", meta)
	}
	for _, arg := range []string{"version", "--version"} {
		out, err := exec.Command(bin, arg).Output()
		if err != nil {
			t.Fatalf("stackimage %s: %v", arg, err)
		}
		got := string(out)
		if first := strings.SplitN(got, "\n", 2)[0]; first != "stackimage "+modVersion {
			t.Errorf("stackimage %s: first line %q, want %q (the module version go version -m reads)", arg, first, "stackimage "+modVersion)
		}
		if !strings.Contains(got, "module   github.com/stackimage/stackimage "+modVersion+"\n") {
			t.Errorf("stackimage %s does not name the module and its version %s:\n%s", arg, modVersion, got)
		}
		if revision != "" && !strings.Contains(got, "revision "+revision) {
			t.Errorf("stackimage %s does not name the revision %s:\n%s", arg, revision, got)
		}
		if revision == "" && strings.Contains(got, "revision") {
			t.Errorf("stackimage %s names a revision the binary does not record:\n%s", arg, got)
		}
	}
}

// TestWriteVersion checks the lines for a build from a modified git
// checkout, a release and a binary without build information.
func TestWriteVersion(t *testing.T) {
	goLine := "  go       go1.99 " + runtime.GOOS + "/" + runtime.GOARCH + "\n"
	tests := []struct {
		name string
		info *debug.BuildInfo
		want string
	}{
		{"git checkout, modified", &debug.BuildInfo{GoVersion: "go1.99",
			Main: debug.Module{Path: "github.com/stackimage/stackimage", Version: "v0.0.0-20261126011433-3fce5d69b560+dirty"},
			Settings: []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: "3fce5d69b560"},
				{Key: "vcs.time", Value: "2026-11-26T01:14:33Z"}, {Key: "vcs.modified", Value: "true"}}},
			"stackimage v0.0.0-20261126011433-3fce5d69b560+dirty\n" +
				"  module   github.com/stackimage/stackimage v0.0.0-20261126011433-3fce5d69b560+dirty\n" +
				"  revision 3fce5d69b560 (git, 2026-11-26T01:14:33Z, modified)\n" + goLine},
		{"go install of a release", &debug.BuildInfo{GoVersion: "go1.99",
			Main: debug.Module{Path: "github.com/stackimage/stackimage", Version: "v1.0.0"}},
			"stackimage v1.0.0\n  module   github.com/stackimage/stackimage v1.0.0\n" + goLine},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			writeVersion(&out, tt.info, true)
			if out.String() != tt.want {
				t.Errorf("writeVersion =\n%s\nwant\n%s", out.String(), tt.want)
			}
		})
	}
	var out bytes.Buffer
	writeVersion(&out, nil, false)
	if !strings.HasPrefix(out.String(), "stackimage (unknown version") {
		t.Errorf("writeVersion without build information = %q, want it to say the version is unknown", out.String())
	}
}
