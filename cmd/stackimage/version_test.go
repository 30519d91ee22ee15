package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// built is the command as go install builds it, once for the tests that
// run the program itself.
var built struct {
	once sync.Once
	dir  string
	path string
	err  error
	out  []byte
}

// builtCommand builds this command alone, as go install does, and returns
// the binary's path; it is built once and removed by TestMain.
func builtCommand(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the command with the go command")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build the command with")
	}
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "stackimage-built-"); built.err != nil {
			return
		}
		built.path = filepath.Join(built.dir, "stackimage")
		// -buildvcs=auto records the commit where the tree has one,
		// whatever GOFLAGS says.
		built.out, built.err = exec.Command(goCmd, "build", "-buildvcs=auto", "-o", built.path, ".").CombinedOutput()
	})
	if built.err != nil {
		t.Fatalf("go build: %v\n%s", built.err, built.out)
	}
	return built.path
}

// TestVersionMatchesBuildInfo builds the command as go install would and
// checks that "stackimage version" and "--version" print the module
// version and the commit the toolchain recorded, as go version -m reads
// them back from the binary: "(devel)" from a tree without version control
// information, a pseudo-version and a revision from a git checkout.
func TestVersionMatchesBuildInfo(t *testing.T) {
	bin := builtCommand(t)
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to read the build information with")
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

// TestMain removes the command builtCommand built.
func TestMain(m *testing.M) {
	status := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(status)
}
