package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoticeNamesApacheModules checks that NOTICE passes on the NOTICE
// file of every module the command is built from that ships one (the Apache-2.0 modules), so that a new
// dependency cannot be linked without its notice.
func TestNoticeNamesApacheModules(t *testing.T) {
	if testing.Short() {
		t.Skip("lists the build's modules with the go command")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list the modules with")
	}
	out, err := exec.Command(goCmd, "list", "-deps", "-f", "{{with .Module}}{{if not .Main}}{{.Path}} {{.Dir}}{{end}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	notice, err := os.ReadFile("../../NOTICE")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, dir, ok := strings.Cut(line, " ")
		if !ok || seen[path] {
			continue
		}
		seen[path] = true
		if _, err := os.Stat(filepath.Join(dir, "NOTICE")); err != nil {
			continue
		}
		if !strings.Contains(string(notice), "---- "+path+" (") {
			t.Errorf("NOTICE does not pass on the NOTICE file of %s", path)
		}
	}
	if len(seen) == 0 {
		t.Fatalf("go list named no module the command is built from:\n%s", out)
	}
}
