package main

import (
	"debug/buildinfo"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/stackimage/stackimage/internal/buildversion"
)

// externalCommands are the commands that are programs of their own,
// stackimage-NAME, so that this one does not load their dependencies at
// every start: the service's HTTP, S3, metrics and YAML libraries doubled
// the size of this binary and the time "stackimage version" took.
// "stackimage NAME ARGS" runs stackimage-NAME ARGS, as git runs its
// external subcommands.
var externalCommands = map[string]bool{"serve": true}

// runExternal runs stackimage-NAME with args in place of this process
// (its signals and exit status are then the child's), or says how to
// install it when it cannot be found. It refuses (exit 2) a program of
// another build than this one: a stale stackimage-NAME left on PATH by an
// older install would otherwise answer with older behaviour. A program
// named by STACKIMAGE_NAME is run whatever its build, with a warning.
func runExternal(name string, args []string, stderr io.Writer) int {
	path, chosen, err := findExternal(name)
	if err == nil {
		switch mismatch := checkSameBuild(name, path, chosen); {
		case mismatch != nil && !chosen:
			writeLine(stderr, "stackimage %s: %v", name, mismatch)
			return 2
		case mismatch != nil:
			writeLine(stderr, "stackimage %s: warning: %v", name, mismatch)
		}
		var status int
		status, err = execExternal(path, args)
		if err == nil {
			return status
		}
	}
	writeLine(stderr, "stackimage %s: %v", name, err)
	return 1
}

// externalEnv is the environment variable that names stackimage-NAME's
// path explicitly: STACKIMAGE_SERVE for serve.
func externalEnv(name string) string { return "STACKIMAGE_" + strings.ToUpper(name) }

// checkSameBuild returns an error naming both builds and both paths when
// the program at path is not the same build as this one
// (buildversion.Build.Same). It reads the program's build information
// from its file, without running it. A stackimage without build
// information has nothing to compare and checks nothing.
func checkSameBuild(name, path string, chosen bool) error {
	selfInfo, ok := debug.ReadBuildInfo()
	if !ok {
		return nil
	}
	self := "stackimage"
	if exe, err := os.Executable(); err == nil {
		self = exe
	}
	how := fmt.Sprintf("install both from one build (in a checkout \"make build\" or \"go install ./cmd/...\"%s)", goInstallHint(name))
	if !chosen {
		how += fmt.Sprintf(", or set %s=%s to run it anyway", externalEnv(name), path)
	}
	info, err := buildinfo.ReadFile(path)
	if err != nil {
		return fmt.Errorf("cannot tell which build %s is (%v), so it may not match this stackimage, %s, version %v; %s",
			path, err, self, buildversion.Of(selfInfo), how)
	}
	mine, theirs := buildversion.Of(selfInfo), buildversion.Of(info)
	if mine.Same(theirs) {
		return nil
	}
	mineText, theirsText := mine.String(), theirs.String()
	if mine.Module != theirs.Module {
		mineText, theirsText = mine.Module+" "+mineText, theirs.Module+" "+theirsText
	}
	verb := "refusing to run"
	if chosen {
		verb = "running"
	}
	return fmt.Errorf("%s %s, version %s: it is not the build of this stackimage, %s, version %s; %s",
		verb, path, theirsText, self, mineText, how)
}

// goInstallHint is the go install command that fetches the
// stackimage-NAME of this build, when this build has a version go install can fetch.
func goInstallHint(name string) string {
	v := installVersion()
	if v == "latest" {
		return ""
	}
	return fmt.Sprintf(", or \"go install github.com/stackimage/stackimage/cmd/stackimage-%s@%s\"", name, v)
}

// findExternal returns the path of stackimage-NAME: the one
// STACKIMAGE_NAME names (chosen is then true), else beside this
// executable (where go install and make build put both), or where its
// symbolic link points, else on PATH.
func findExternal(name string) (path string, chosen bool, err error) {
	file := "stackimage-" + name
	if path := os.Getenv(externalEnv(name)); path != "" {
		if !isExecutable(path) {
			return "", true, fmt.Errorf("%s=%s is not an executable file", externalEnv(name), path)
		}
		return path, true, nil
	}
	exe := file
	if runtime.GOOS == "windows" {
		exe += ".exe"
	}
	var dirs []string
	if self, err := os.Executable(); err == nil {
		dirs = append(dirs, filepath.Dir(self))
		if real, err := filepath.EvalSymlinks(self); err == nil && filepath.Dir(real) != dirs[0] {
			dirs = append(dirs, filepath.Dir(real))
		}
	}
	for _, dir := range dirs {
		path := filepath.Join(dir, exe)
		if isExecutable(path) {
			return path, false, nil
		}
	}
	// LookPath refuses a command found through "." in PATH (exec.ErrDot):
	// a stackimage-NAME in whatever directory the user stands in is not
	// run either.
	if path, err := exec.LookPath(file); err == nil {
		return path, false, nil
	}
	beside := "beside this executable"
	if len(dirs) > 0 {
		beside = "in " + strings.Join(dirs, " or ")
	}
	return "", false, fmt.Errorf("the %s command is a program of its own, %s, and it is neither %s nor on PATH; "+
		"install it with \"go install github.com/stackimage/stackimage/cmd/%s@%s\" "+
		"(in a checkout, \"make build\" puts both programs in bin/)", name, file, beside, file, installVersion())
}

// isExecutable reports whether path is a regular file someone may run
// (Windows has no execute bit: any regular file).
func isExecutable(path string) bool {
	info, err := os.Stat(path)
	if err != nil || !info.Mode().IsRegular() {
		return false
	}
	return runtime.GOOS == "windows" || info.Mode().Perm()&0o111 != 0
}

// installVersion is the version go install should fetch to match this
// build: its module version when it is one go install can fetch, else
// latest (a build from a checkout says "(devel)" or a "+dirty"
// pseudo-version).
func installVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "latest"
	}
	v := info.Main.Version
	if v == "" || v == "(devel)" || strings.Contains(v, "+") {
		return "latest"
	}
	return v
}
