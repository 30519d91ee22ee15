package main

import (
	"bytes"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stackimage/stackimage/emu"
)

// TestLibraryClientPrintsWhatTheCommandPrints builds testdata/libclient, a
// service-like program that uses the library alone (open, report,
// symbolize; no code of this package), and runs it on an input of each
// format the repository can give: its text, JSON and same-format output
// must be the command's, byte for byte.
func TestLibraryClientPrintsWhatTheCommandPrints(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a program with the go command")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command to build testdata/libclient with")
	}
	dir := t.TempDir()
	client := filepath.Join(dir, "libclient")
	build := exec.Command(goCmd, "build", "-o", client, "./testdata/libclient")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./testdata/libclient: %v\n%s", err, out)
	}
	// It uses the library's door and nothing else of the project.
	parsed, err := parser.ParseFile(token.NewFileSet(), "testdata/libclient/main.go", nil, parser.ImportsOnly)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range parsed.Imports {
		path := strings.Trim(imp.Path.Value, `"`)
		if rest, ok := strings.CutPrefix(path, "github.com/stackimage/stackimage/"); ok && rest != "open" && rest != "report" && rest != "symbolize" && rest != "symstore" {
			t.Errorf("testdata/libclient imports %s; want only open, report, symbolize and symstore of the project", path)
		}
	}

	inputs := doorInputs(t, dir)
	for _, in := range inputs {
		formats := []string{"text", "json"}
		if in.same {
			formats = append(formats, "same")
		}
		for _, format := range formats {
			t.Run(filepath.Base(in.path)+"/"+format, func(t *testing.T) {
				var want, errOut bytes.Buffer
				if status := run([]string{"symbolicate", in.path, "--symbols", symbolsDir, "--format", format}, nil, &want, &errOut); status != 0 {
					t.Fatalf("stackimage symbolicate: status %d: %s", status, errOut.String())
				}
				cmd := exec.Command(client, "-symbols", symbolsDir, "-format", format, in.path)
				var got, stderr bytes.Buffer
				cmd.Stdout, cmd.Stderr = &got, &stderr
				if err := cmd.Run(); err != nil {
					t.Fatalf("libclient: %v: %s", err, stderr.String())
				}
				if want.Len() == 0 {
					t.Fatal("the command printed nothing")
				}
				if diff := cmp.Diff(want.String(), got.String()); diff != "" {
					t.Errorf("libclient's output differs from the command's (-command +libclient):\n%s", diff)
				}
			})
		}
	}
}

// doorInput is an input of the front door's tests, and whether it has a
// layout of its own (--format same).
type doorInput struct {
	path string
	same bool
}

// doorInputs returns an input of each format the repository can give,
// writing those made here (a minidump and a core of a capture, a
// spindump of two processes) into dir.
func doorInputs(t *testing.T, dir string) []doorInput {
	t.Helper()
	snap := readSnapshot(t, filepath.Join(snapshotsDir, "chain-arm64-O1-deepest.json"))
	var md, core bytes.Buffer
	if err := emu.WriteMinidump(&md, snap); err != nil {
		t.Fatal(err)
	}
	if err := emu.WriteCore(&core, snap); err != nil {
		t.Fatal(err)
	}
	spindump := writeFile(t, filepath.Join(dir, "two-processes.spindump.txt"), []byte(twoProcessSpindump))
	return []doorInput{
		{filepath.Join(snapshotsDir, "chain-arm64-O1-deepest.json"), false},
		{filepath.Join(reportSamples, "arm64.crash"), true},
		{filepath.Join(reportSamples, "arm64.ips"), true},
		{filepath.Join(reportSamples, "x86_64-kscrash.json"), false},
		{"../../hangreport/testdata/branches-sample.txt", true},
		{"../../hangreport/testdata/spindump.txt", true},
		{spindump, true},
		{writeFile(t, filepath.Join(dir, "capture.dmp"), md.Bytes()), false},
		{writeFile(t, filepath.Join(dir, "capture.core"), core.Bytes()), false},
	}
}
