package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stackimage/stackimage/crashreport"
	"github.com/stackimage/stackimage/internal/testcorpus"
)

// macsym returns the directory of MacSymbolicator's test resources in the
// corpus, skipping the test when the corpus is absent.
func macsym(t *testing.T) string {
	t.Helper()
	return filepath.Join(testcorpus.Dir(t), "macsymbolicator", "MacSymbolicatorTests", "Resources")
}

// symbolicateOut runs symbolicate and returns its stdout, failing the test
// on a non-zero exit.
func symbolicateOut(t *testing.T, args ...string) []byte {
	t.Helper()
	return []byte(runOK(t, append([]string{"symbolicate"}, args...)...))
}

// expectedDifference is one line of a .differences file.
type expectedDifference struct {
	kind, reason string
}

func readDifferences(t *testing.T, name string) map[int]expectedDifference {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[int]expectedDifference{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		fields := strings.SplitN(line, " ", 3)
		n, err := strconv.Atoi(fields[0])
		if err != nil || len(fields) < 3 {
			t.Fatalf("%s: bad entry %q", name, line)
		}
		out[n] = expectedDifference{kind: fields[1], reason: fields[2]}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// reXcodeFrame splits a frame description as we write it:
// "SYMBOL + OFFSET (FILE:LINE)".
var reXcodeFrame = regexp.MustCompile(`^(.*? 0x[0-9a-f]+ )(.+) \+ \d+ (\([^()]+:\d+\))$`)

// atosStyle rewrites our frame line into the form atos prints and
// MacSymbolicator pastes: "SYMBOL (in IMAGE) (FILE:LINE)".
func atosStyle(line, image string) (string, bool) {
	m := reXcodeFrame.FindStringSubmatch(line)
	if m == nil {
		return "", false
	}
	return m[1] + m[2] + " (in " + image + ") " + m[3], true
}

// TestSameFormatCrashMatchesMacSymbolicator symbolicates MacSymbolicator's
// test crash with --format same and Apple's exact-address convention, and
// compares it line for line with MacSymbolicator's output: every line must
// be the same, or be listed in testdata/macsymbolicator-crash.differences
// with a reason this test checks.
func TestSameFormatCrashMatchesMacSymbolicator(t *testing.T) {
	dir := macsym(t)
	want, err := os.ReadFile(filepath.Join(dir, "Crashes", "single-target-crash_symbolicated.crash"))
	if err != nil {
		t.Fatal(err)
	}
	got := symbolicateOut(t, filepath.Join(dir, "Crashes", "single-target-crash.crash"), "--format", "same", "--exact-addresses",
		"--symbols", filepath.Join(dir, "dSYMs", "CrashingTest.dSYM"))
	wantLines, gotLines := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	if len(wantLines) != len(gotLines) {
		t.Fatalf("%d lines, MacSymbolicator wrote %d", len(gotLines), len(wantLines))
	}
	expected := readDifferences(t, "macsymbolicator-crash.differences")
	for i := range wantLines {
		n := i + 1
		d, listed := expected[n]
		switch {
		case wantLines[i] == gotLines[i] && listed:
			t.Errorf("line %d is listed as a difference (%s) but is the same: %q", n, d.reason, gotLines[i])
		case wantLines[i] == gotLines[i]:
		case !listed:
			t.Errorf("line %d differs and is not listed in the expected differences:\n got  %q\n want %q", n, gotLines[i], wantLines[i])
		case d.kind == "atos-style":
			if atos, ok := atosStyle(gotLines[i], "CrashingTest"); !ok || atos != wantLines[i] {
				t.Errorf("line %d (%s): in atos's style ours reads %q, MacSymbolicator's %q", n, d.reason, atos, wantLines[i])
			}
		default:
			t.Errorf("line %d: unknown kind of difference %q", n, d.kind)
		}
	}

	// Looking callers up one instruction back names the same lines here.
	def := symbolicateOut(t, filepath.Join(dir, "Crashes", "single-target-crash.crash"), "--format", "same",
		"--symbols", filepath.Join(dir, "dSYMs", "CrashingTest.dSYM"))
	if !bytes.Equal(def, got) {
		t.Errorf("call-site lookup and --exact-addresses differ:\n%s", cmp.Diff(string(got), string(def)))
	}
}

// ipsFrameFields are the frame fields symbolication fills in.
var ipsFrameFields = []string{"symbol", "symbolLocation", "sourceFile", "sourceLine"}

// ipsDocs decodes an .ips report's two JSON objects, numbers as written.
func ipsDocs(t *testing.T, data []byte) (meta, body map[string]any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&meta); err != nil {
		t.Fatalf("metadata: %v", err)
	}
	if err := dec.Decode(&body); err != nil {
		t.Fatalf("report: %v", err)
	}
	return meta, body
}

// stripFrameFields removes the filled-in fields from every frame of an
// .ips report and returns them, per thread and frame.
func stripFrameFields(body map[string]any) [][]map[string]any {
	var filled [][]map[string]any
	threads, _ := body["threads"].([]any)
	for _, th := range threads {
		frames, _ := th.(map[string]any)["frames"].([]any)
		var fs []map[string]any
		for _, f := range frames {
			fm := f.(map[string]any)
			got := map[string]any{}
			for _, k := range ipsFrameFields {
				if v, ok := fm[k]; ok {
					got[k] = v
					delete(fm, k)
				}
			}
			fs = append(fs, got)
		}
		filled = append(filled, fs)
	}
	return filled
}

// TestSameFormatIPSMatchesMacSymbolicator symbolicates MacSymbolicator's
// test .ips with --format same. MacSymbolicator writes an .ips back as a
// text report (its single-target-crash_symbolicated.ips is the same text
// as the .crash one), so the comparison is of the fields: our .ips must
// keep every field of the input but the filled-in frame fields, and those
// must name what MacSymbolicator's text names (symbol, file, line; its
// atos-style lines give no offset when they give a line, so the offset is
// compared where it gives one).
func TestSameFormatIPSMatchesMacSymbolicator(t *testing.T) {
	dir := macsym(t)
	in, err := os.ReadFile(filepath.Join(dir, "Crashes", "single-target-crash.ips"))
	if err != nil {
		t.Fatal(err)
	}
	oracle, err := os.ReadFile(filepath.Join(dir, "Crashes", "single-target-crash_symbolicated.ips"))
	if err != nil {
		t.Fatal(err)
	}
	got := symbolicateOut(t, filepath.Join(dir, "Crashes", "single-target-crash.ips"), "--format", "same", "--exact-addresses",
		"--symbols", filepath.Join(dir, "dSYMs", "CrashingTest.dSYM"))

	// The metadata line is kept byte for byte, and so is every field
	// that is not a filled-in frame field.
	if metaLine, _, _ := bytes.Cut(in, []byte("\n")); !bytes.HasPrefix(got, append(metaLine, '\n')) {
		t.Errorf("metadata line changed: %q", firstLine(string(got)))
	}
	inMeta, inBody := ipsDocs(t, in)
	gotMeta, gotBody := ipsDocs(t, got)
	stripFrameFields(inBody)
	filled := stripFrameFields(gotBody)
	if diff := cmp.Diff(inMeta, gotMeta); diff != "" {
		t.Errorf("metadata (-input +ours):\n%s", diff)
	}
	if diff := cmp.Diff(inBody, gotBody); diff != "" {
		t.Errorf("fields other than the frames' symbols changed (-input +ours):\n%s", diff)
	}

	want, err := crashreport.ParseCrash(oracle)
	if err != nil {
		t.Fatalf("ParseCrash(MacSymbolicator's output): %v", err)
	}
	if len(filled) != len(want.Threads) {
		t.Fatalf("%d threads, MacSymbolicator %d", len(filled), len(want.Threads))
	}
	for i, th := range want.Threads {
		if len(filled[i]) != len(th.Frames) {
			t.Fatalf("thread %d: %d frames, MacSymbolicator %d", i, len(filled[i]), len(th.Frames))
		}
		for j, wf := range th.Frames {
			gf := filled[i][j]
			str := func(k string) string { s, _ := gf[k].(string); return s }
			num := func(k string) int64 {
				n, _ := gf[k].(json.Number)
				v, _ := n.Int64()
				return v
			}
			if str("symbol") != wf.Symbol || str("sourceFile") != wf.File || int(num("sourceLine")) != wf.Line {
				t.Errorf("thread %d frame %d = %q (%s:%d), MacSymbolicator %q (%s:%d)", i, j,
					str("symbol"), str("sourceFile"), num("sourceLine"), wf.Symbol, wf.File, wf.Line)
			}
			if wf.SymbolOffset != 0 && uint64(num("symbolLocation")) != wf.SymbolOffset {
				t.Errorf("thread %d frame %d: symbolLocation %d, MacSymbolicator + %d", i, j, num("symbolLocation"), wf.SymbolOffset)
			}
		}
	}
}

// missingImageReport names an image (libsystem_kernel.dylib) that its
// Binary Images lack, as getsentry/symbolicator's apple_crash_report.txt
// does.
const missingImageReport = "Process:         YetAnotherMac [49028]\n" +
	"Code Type:       X86-64\n" +
	"Crashed Thread:  0\n" +
	"\n" +
	"Thread 0 Crashed:\n" +
	"0   libsystem_kernel.dylib              0x00007fff61bc6c2a 0x7fff61bc6000 + 3114\n" +
	"1   YetAnotherMac                       0x0000000108b7092b 0x10864e000 + 5384491\n" +
	"\n" +
	"Binary Images:\n" +
	"0x10864e000 - 0x10ebfffff +YetAnotherMac (0) <9c1b2bd6-bf1b-3a6e-8cf4-a0e4f6eee7a2> /Users/bruno/YetAnotherMac\n"

// TestSymbolicateKeepsMissingImageText: a frame we cannot symbolicate keeps
// the report's own "load + offset" text, in the text output and in
// --format same, never "0x0 + 0".
func TestSymbolicateKeepsMissingImageText(t *testing.T) {
	path := filepath.Join(t.TempDir(), "report.crash")
	if err := os.WriteFile(path, []byte(missingImageReport), 0o644); err != nil {
		t.Fatal(err)
	}
	text := string(symbolicateOut(t, path))
	for _, want := range []string{"0x00007fff61bc6c2a 0x7fff61bc6000 + 3114", "0x0000000108b7092b 0x10864e000 + 5384491"} {
		if !strings.Contains(text, want) {
			t.Errorf("text output lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "0x0 + 0") {
		t.Errorf("text output has 0x0 + 0:\n%s", text)
	}
	if same := string(symbolicateOut(t, path, "--format", "same")); same != missingImageReport {
		t.Errorf("--format same without symbols changed the report:\n%s", same)
	}
}

// TestSymbolicateFormatFlag checks --format's values and --json, its
// synonym.
func TestSymbolicateFormatFlag(t *testing.T) {
	ips := filepath.Join(reportSamples, "arm64.ips")
	if a, b := runOK(t, "symbolicate", ips, "--json"), runOK(t, "symbolicate", ips, "--format", "json"); a != b {
		t.Errorf("--json and --format json differ")
	}
	if a, b := runOK(t, "symbolicate", ips), runOK(t, "symbolicate", ips, "--format", "text"); a != b {
		t.Errorf("the default and --format text differ")
	}
	data, err := os.ReadFile(ips)
	if err != nil {
		t.Fatal(err)
	}
	if same := runOK(t, "symbolicate", ips, "--format", "same"); same != string(data) {
		t.Errorf("--format same without symbols changed the report")
	}
	for _, tt := range []struct {
		name string
		args []string
		code int
	}{
		{"unknown format", []string{ips, "--format", "xml"}, 2},
		{"--json contradicts --format same", []string{ips, "--json", "--format", "same"}, 2},
		{"KSCrash is not written back", []string{filepath.Join(reportSamples, "x86_64-kscrash.json"), "--format", "same"}, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(append([]string{"symbolicate"}, tt.args...), strings.NewReader(""), &stdout, &stderr)
			if code != tt.code || stdout.Len() != 0 || stderr.Len() == 0 {
				t.Errorf("exit %d with %d bytes out and stderr %q; want exit %d, nothing out, a message", code, stdout.Len(), stderr.String(), tt.code)
			}
		})
	}
}
