package layercheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// notRaced are concurrent packages `make test` does not run under the race
// detector, and why.
var notRaced = map[string]string{
	"emu":                 "cgo behind the unicorn tag; its goroutines run the emulator, whose C state the detector cannot see",
	"internal/testcorpus": "finds the corpus once for tests; no code of the library",
}

// TestRaceCoversConcurrency checks that the Makefile's RACE_PKGS names
// every package whose code (tests excluded) starts a goroutine or imports
// sync or sync/atomic, so that a new concurrent package cannot escape
// `make test`'s -race run.
func TestRaceCoversConcurrency(t *testing.T) {
	makefile, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	raced := racePackages(t, string(makefile))
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to list the packages with")
	}
	out, err := exec.Command(goCmd, "list", "-tags", "unicorn", "-f", "{{.ImportPath}} {{.Dir}} {{join .GoFiles \" \"}} {{join .CgoFiles \" \"}}", module+"...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	concurrent := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg, dir := strings.TrimPrefix(fields[0], module), fields[1]
		if strings.HasPrefix(pkg, "bench/") || strings.HasPrefix(pkg, "cmd/") || strings.HasPrefix(pkg, "fixtures") {
			continue // programs: their packages are what they run
		}
		why := concurrency(t, dir, fields[2:])
		if why == "" {
			continue
		}
		concurrent++
		if _, ok := notRaced[pkg]; ok {
			continue
		}
		if !slices.Contains(raced, pkg) {
			t.Errorf("%s %s, but the Makefile's RACE_PKGS does not name it: add ./%s/", pkg, why, pkg)
		}
	}
	if concurrent < 5 {
		t.Errorf("found %d concurrent packages: the check is not looking", concurrent)
	}
}

// racePackages reads RACE_PKGS from the Makefile, continuation lines
// included, as package paths inside the module.
func racePackages(t *testing.T, makefile string) []string {
	_, rest, ok := strings.Cut(makefile, "\nRACE_PKGS := ")
	if !ok {
		t.Fatal("the Makefile sets no RACE_PKGS")
	}
	var pkgs []string
	for _, line := range strings.Split(rest, "\n") {
		cont := strings.HasSuffix(line, "\\")
		for _, f := range strings.Fields(strings.TrimSuffix(line, "\\")) {
			pkgs = append(pkgs, strings.Trim(f, "./"))
		}
		if !cont {
			break
		}
	}
	if len(pkgs) == 0 {
		t.Fatal("RACE_PKGS is empty")
	}
	return pkgs
}

// concurrency says why the files of a package are concurrent (a go
// statement, an import of sync), or "" when they are not.
func concurrency(t *testing.T, dir string, files []string) string {
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == "sync" || p == "sync/atomic" {
				return "imports " + p + " (" + name + ")"
			}
		}
		why := ""
		ast.Inspect(f, func(n ast.Node) bool {
			if g, ok := n.(*ast.GoStmt); ok && why == "" {
				why = "starts a goroutine (" + fset.Position(g.Pos()).String() + ")"
			}
			return why == ""
		})
		if why != "" {
			return why
		}
	}
	return ""
}
