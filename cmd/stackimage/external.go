package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
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
// install it when it cannot be found.
func runExternal(name string, args []string, stderr io.Writer) int {
	path, err := findExternal(name)
	if err == nil {
		var status int
		status, err = execExternal(path, args)
		if err == nil {
			return status
		}
	}
	writeLine(stderr, "stackimage %s: %v", name, err)
	return 1
}

// findExternal returns the path of stackimage-NAME: beside this
// executable (where go install and make build put both), or where its
// symbolic link points, else on PATH.
func findExternal(name string) (string, error) {
	file := "stackimage-" + name
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
			return path, nil
		}
	}
	// LookPath refuses a command found through "." in PATH (exec.ErrDot):
	// a stackimage-NAME in whatever directory the user stands in is not
	// run either.
	if path, err := exec.LookPath(file); err == nil {
		return path, nil
	}
	beside := "beside this executable"
	if len(dirs) > 0 {
		beside = "in " + strings.Join(dirs, " or ")
	}
	return "", fmt.Errorf("the %s command is a program of its own, %s, and it is neither %s nor on PATH; "+
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
