package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/hangreport"
	"github.com/stackimage/stackimage/internal/testcorpus"
	"github.com/stackimage/stackimage/open"
	"github.com/stackimage/stackimage/report"
	"github.com/stackimage/stackimage/symbolize"
	"github.com/stackimage/stackimage/symstore"
)

// macSymbolicatorResources is MacSymbolicator's test data in the corpus.
func macSymbolicatorResources(t *testing.T) string {
	return filepath.Join(testcorpus.Dir(t), "macsymbolicator", "MacSymbolicatorTests", "Resources")
}

// TestSampleMatchesMacSymbolicator symbolicates MacSymbolicator's hang
// sample against its dSYM, in MacSymbolicator's style, and compares with
// MacSymbolicator's own output line for line: the two ??? frames become
// "main (in SingleThreadHangingTest) (main.m:30) [0x103c0deb0]" and
// "-[MyClass hangingMethod] ... (main.m:24) ...", every other byte as it
// was. main.m:24 (not 23) is the line of the address itself, as atos
// gives it: the sample's addresses are looked up as written.
func TestSampleMatchesMacSymbolicator(t *testing.T) {
	res := macSymbolicatorResources(t)
	sample := filepath.Join(res, "Samples", "singlethread-sample.txt")
	want, err := os.ReadFile(filepath.Join(res, "Samples", "singlethread-sample_symbolicated.txt"))
	if err != nil {
		t.Fatal(err)
	}
	syms := symstore.NewSymbols()
	defer syms.Close()
	if err := syms.AddDir(context.Background(), filepath.Join(res, "dSYMs", "SingleThreadHangingTest.dSYM")); err != nil {
		t.Fatal(err)
	}
	in, err := open.File(context.Background(), sample)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	if in.Format.Format != dump.FormatSample || in.Hang == nil {
		t.Fatalf("%s not told as a sample", sample)
	}
	var out bytes.Buffer
	if err := report.WriteHang(context.Background(), &symbolize.Symbolizer{Symbols: syms}, in.Hang, &out, hangreport.StyleAtos); err != nil {
		t.Fatalf("WriteHang: %v", err)
	}
	if diff := cmp.Diff(strings.Split(string(want), "\n"), strings.Split(out.String(), "\n")); diff != "" {
		t.Errorf("symbolicated sample differs from MacSymbolicator's (-want +got):\n%s", diff)
	}
}

// TestSymbolicateSampleSame runs symbolicate --format same on the sample:
// the output is the input with the two ??? frames named in sample's own
// layout (name, offset, address, file:line).
func TestSymbolicateSampleSame(t *testing.T) {
	res := macSymbolicatorResources(t)
	sample := filepath.Join(res, "Samples", "singlethread-sample.txt")
	input, err := os.ReadFile(sample)
	if err != nil {
		t.Fatal(err)
	}
	out := runOK(t, "symbolicate", sample, "--symbols", filepath.Join(res, "dSYMs"), "--format", "same")
	inLines, outLines := strings.Split(string(input), "\n"), strings.Split(out, "\n")
	if len(inLines) != len(outLines) {
		t.Fatalf("output has %d lines, input %d", len(outLines), len(inLines))
	}
	named := map[int]*regexp.Regexp{
		25: regexp.MustCompile(`^        2449 main  \(in SingleThreadHangingTest\) \+ \d+  \[0x103c0deb0\]  main\.m:30$`),
		26: regexp.MustCompile(`^          2449 -\[MyClass hangingMethod\]  \(in SingleThreadHangingTest\) \+ \d+  \[0x103c0de6f\]  main\.m:24$`),
	}
	for i := range inLines {
		if re := named[i]; re != nil {
			if !re.MatchString(outLines[i]) {
				t.Errorf("line %d = %q, want it to match %s", i+1, outLines[i], re)
			}
		} else if outLines[i] != inLines[i] {
			t.Errorf("line %d = %q, want it unchanged: %q", i+1, outLines[i], inLines[i])
		}
	}

	// The default text output and JSON read the same call graph.
	text := runOK(t, "symbolicate", sample, "--symbols", filepath.Join(res, "dSYMs"))
	if !strings.HasPrefix(text, "Format: macOS sample or spindump report\n") || !strings.Contains(text, "main + ") {
		t.Errorf("text output:\n%s", text)
	}
	var rep jsonReport
	if err := json.Unmarshal([]byte(runOK(t, "symbolicate", sample, "--format", "json")), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Format != "sample" || len(rep.Threads) != 1 || len(rep.Threads[0].Frames) != 6 {
		t.Errorf("--format json: format %q, %d threads", rep.Format, len(rep.Threads))
	}
}

// TestSymbolicateSameErrors: --format same writes back only the formats
// that have a layout of their own (not KSCrash JSON), and --format takes
// only its three values.
func TestSymbolicateSameErrors(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		status   int
		inStderr string
	}{
		{"KSCrash report", []string{"symbolicate", filepath.Join(reportSamples, "x86_64-kscrash.json"), "--format", "same"}, 1,
			"--format same writes .crash, .ips, .plcrash, sample, spindump and microstackshot reports; this is a KSCrash JSON report"},
		{"unknown format", []string{"symbolicate", filepath.Join(reportSamples, "arm64.crash"), "--format", "xml"}, 2,
			`--format "xml": want text, json, same or crash`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			if status := run(tt.args, strings.NewReader(""), &stdout, &stderr); status != tt.status || !strings.Contains(stderr.String(), tt.inStderr) {
				t.Errorf("status %d, stderr %q; want %d and %q", status, stderr.String(), tt.status, tt.inStderr)
			}
		})
	}
}

// TestSymbolicateTruncatedSample prints what a cut sample had and fails
// naming the line where it broke off.
func TestSymbolicateTruncatedSample(t *testing.T) {
	data, err := os.ReadFile("../../hangreport/testdata/spindump.txt")
	if err != nil {
		t.Fatal(err)
	}
	cut := bytes.Index(data, []byte("  <thread QoS"))
	path := filepath.Join(t.TempDir(), "cut.txt")
	if err := os.WriteFile(path, data[:cut], 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	status := run([]string{"symbolicate", path, "--format", "same"}, strings.NewReader(""), &stdout, &stderr)
	if status != 1 || stdout.String() != string(data[:cut]) {
		t.Errorf("status %d, output %d bytes; want 1 and the %d bytes read", status, stdout.Len(), cut)
	}
	if !strings.Contains(stderr.String(), "incomplete macOS sample or spindump report") || !strings.Contains(stderr.String(), "line ") {
		t.Errorf("stderr = %q, want it to say the report is incomplete and where", stderr.String())
	}
}
