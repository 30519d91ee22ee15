package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestLinksNoServiceDependency keeps the service out of the command: every
// run of stackimage paid for the initialization of the service's
// libraries (package serve and its HTTP metrics, S3 client and YAML
// reader) until "stackimage serve" became its own program,
// stackimage-serve. go list -deps names everything the command links,
// tests excluded.
func TestLinksNoServiceDependency(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list the dependencies with")
	}
	out, err := exec.Command(goCmd, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 || deps[len(deps)-1] != "github.com/stackimage/stackimage/cmd/stackimage" {
		t.Fatalf("go list -deps printed %d packages, ending with %q: not the command's dependencies", len(deps), deps[len(deps)-1:])
	}
	for _, dep := range deps {
		if isServiceDependency(dep) {
			t.Errorf("stackimage links %s: the service's dependencies belong to stackimage-serve (cmd/stackimage-serve)", dep)
		}
	}
}

// isServiceDependency reports whether pkg is package serve or one of the
// libraries only the service uses.
func isServiceDependency(pkg string) bool {
	const serve = "github.com/stackimage/stackimage/serve"
	if pkg == serve || strings.HasPrefix(pkg, serve+"/") {
		return true
	}
	for _, prefix := range []string{"github.com/prometheus/", "github.com/minio/", "go.yaml.in/yaml/", "gopkg.in/yaml."} {
		if strings.HasPrefix(pkg, prefix) {
			return true
		}
	}
	return false
}
