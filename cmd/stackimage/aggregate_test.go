package main

import (
	"archive/zip"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/stackimage/stackimage/internal/testcorpus"
)

// exampleStream is docs/aggregate.md's example: three stacks of
// fixtures/bin/chain-arm64-O1, from two processes.
func exampleStream(t *testing.T) string {
	t.Helper()
	doc, err := os.ReadFile("../../docs/aggregate.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(doc), "```ndjson\n")
	block, _, _ := strings.Cut(rest, "```")
	return block
}

func TestAggregateSummary(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "stacks.ndjson")
	if err := os.WriteFile(in, []byte(exampleStream(t)), 0o644); err != nil {
		t.Fatal(err)
	}
	status, out, errOut := runCmd(nil, "aggregate", in, "--symbols", "../../fixtures/bin")
	if status != 0 {
		t.Fatalf("status %d, stderr:\n%s", status, errOut)
	}
	for _, want := range []string{"3 stacks, 3 unique, 1 groups", "weight 5 (100.0%)  count 3", "    deepest\n    step_to_deepest\n    inline_host\n",
		"warning: libsystem_kernel.dylib"} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	if errOut != "" {
		t.Errorf("stderr not empty (no progress bar off a terminal): %q", errOut)
	}
}

// Inputs in a zip and a directory, each format, with a bad file and a bad
// record: what can be read is aggregated, the rest named, status 1.
func TestAggregateInputsAndErrors(t *testing.T) {
	dir := t.TempDir()
	zipPath := filepath.Join(dir, "in.zip")
	f, err := os.Create(zipPath)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(f)
	w, _ := zw.Create("day1/stacks.ndjson")
	w.Write([]byte(exampleStream(t) + `{"frames":"oops"}` + "\n"))
	ips, err := os.ReadFile("../../crashreport/testdata/arm64.ips")
	if err != nil {
		t.Fatal(err)
	}
	w, _ = zw.Create("day1/crash.ips")
	w.Write(ips)
	zw.Close()
	f.Close()
	sub := filepath.Join(dir, "more", "deeper")
	os.MkdirAll(sub, 0o755)
	os.WriteFile(filepath.Join(sub, "garbage.bin"), []byte("not a dump"), 0o644)
	snap, err := os.ReadFile("../../fixtures/snapshots/chain-x86_64-O1-deepest.json")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(sub, "snap.json"), snap, 0o644)

	out := filepath.Join(dir, "out.pb.gz")
	status, stdout, errOut := runCmd(nil, "aggregate", zipPath, filepath.Join(dir, "more"), "--symbols", "../../fixtures/bin", "--format", "pprof", "-o", out)
	if status != 1 {
		t.Errorf("status %d, want 1 (a bad file and a bad record)", status)
	}
	for _, want := range []string{"in.zip:day1/stacks.ndjson: line 4: frames:", "garbage.bin: not a stackimage snapshot", "2 inputs or records could not be read"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if stdout != "" {
		t.Errorf("stdout %q, want the profile in -o only", stdout)
	}
	pf, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	p, err := profile.Parse(pf)
	if err != nil {
		t.Fatalf("profile: %v", err)
	}
	var stacks int64
	for _, s := range p.Sample {
		stacks += s.Value[0]
	}
	// 3 stream records, the .ips's crashed thread (of 2) and the
	// snapshot's 1.
	if stacks != 5 {
		t.Errorf("profile holds %d stacks, want 5", stacks)
	}
}

func TestAggregateUsage(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"aggregate"}, "want at least one input"},
		{[]string{"aggregate", "x", "--format", "svg"}, `--format "svg"`},
		{[]string{"aggregate", "x", "--group-by", "colour"}, `--group-by "colour"`},
		{[]string{"aggregate", "x", "--frames", "0"}, "--frames 0"},
		{[]string{"aggregate", "x", "--label", "novalue"}, `--label "novalue"`},
	} {
		status, _, errOut := runCmd(nil, tt.args...)
		if status != 2 || !strings.Contains(errOut, tt.want) {
			t.Errorf("%v: status %d, stderr %q; want 2 and %q", tt.args, status, errOut, tt.want)
		}
	}
}

// TestAggregateThreads: by default a crash report counts its crashed
// thread alone; --threads all counts every thread; another value is a
// usage error.
func TestAggregateThreads(t *testing.T) {
	dir := testcorpus.File(t, "kscrash/Example-Reports")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	total := func(folded string) int {
		n := 0
		for _, line := range strings.Split(strings.TrimSpace(folded), "\n") {
			var w int
			fmt.Sscan(line[strings.LastIndexByte(line, ' ')+1:], &w)
			n += w
		}
		return n
	}
	byInput := total(runOK(t, "aggregate", dir, "--format", "folded", "--quiet"))
	all := total(runOK(t, "aggregate", dir, "--format", "folded", "--quiet", "--threads", "all"))
	if byInput != len(entries) || all <= byInput {
		t.Errorf("%d reports: %d stacks counted by input, %d with --threads all; want one a report, and more", len(entries), byInput, all)
	}
	if status, _, stderr := runCmd(nil, "aggregate", dir, "--threads", "crashed"); status != 2 || !strings.Contains(stderr, `--threads "crashed": want input or all`) {
		t.Errorf("--threads crashed: status %d, stderr %q", status, stderr)
	}
}

// A folder of symbolic links to reports is read as the reports; a link
// back up the tree is not followed round.
func TestAggregateFollowsLinks(t *testing.T) {
	ips, err := filepath.Abs("../../crashreport/testdata/arm64.ips")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	links := filepath.Join(dir, "links")
	os.Mkdir(links, 0o755)
	for i := range 5 {
		if err := os.Symlink(ips, filepath.Join(links, fmt.Sprintf("r%d.ips", i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(dir, filepath.Join(links, "loop")); err != nil {
		t.Fatal(err)
	}
	status, out, errOut := runCmd(nil, "aggregate", links, "--format", "folded")
	if status != 0 {
		t.Fatalf("status %d, stderr:\n%s", status, errOut)
	}
	// arm64.ips holds 2 threads, one crashed: 5 stacks from the 5 links
	// (a crash counts its crashed thread), none twice through the loop.
	var stacks int
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		i := strings.LastIndexByte(line, ' ')
		n, err := strconv.Atoi(line[i+1:])
		if i < 0 || err != nil {
			t.Fatalf("folded line %q", line)
		}
		stacks += n
	}
	if stacks != 5 {
		t.Errorf("aggregated %d stacks, want 5:\n%s", stacks, out)
	}
}

// An aggregate that reads no stack fails, and says of each input why.
func TestAggregateNoStack(t *testing.T) {
	ips, err := os.ReadFile("../../crashreport/testdata/arm64.ips")
	if err != nil {
		t.Fatal(err)
	}
	// The report without its threads: read, but no stack in it.
	noThreads := regexp.MustCompile(`(?s)"threads" : \[.*?\n  \],`).ReplaceAll(ips, []byte(`"threads" : [],`))
	noThreads = regexp.MustCompile(`"faultingThread" : \d+,?`).ReplaceAll(noThreads, nil)
	if bytes.Equal(noThreads, ips) {
		t.Fatal("arm64.ips: no threads array found to empty")
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "nothreads.ips"), noThreads, 0o644)
	os.WriteFile(filepath.Join(dir, "garbage.bin"), []byte("not a dump"), 0o644)
	os.Symlink(filepath.Join(dir, "gone.ips"), filepath.Join(dir, "dangling.ips"))
	status, out, errOut := runCmd(nil, "aggregate", dir)
	if status != 1 {
		t.Errorf("status %d, want 1", status)
	}
	for _, want := range []string{filepath.Join(dir, "nothreads.ips") + ": read, but it holds no stack",
		filepath.Join(dir, "garbage.bin") + ": not a stackimage snapshot",
		filepath.Join(dir, "dangling.ips") + ": stat ",
		"read no stack from the 3 inputs looked at"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if out != "" {
		t.Errorf("stdout %q, want nothing", out)
	}
}
