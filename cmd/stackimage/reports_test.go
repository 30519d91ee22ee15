package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// reportSamples are the crash report samples crashreport's tests use,
// written by hand for the project.
const reportSamples = "../../crashreport/testdata"

// TestSymbolicateDetectsFormat runs symbolicate on a report of each format
// and checks that the format was told from the content, not the name.
func TestSymbolicateDetectsFormat(t *testing.T) {
	tests := []struct {
		file, format, text string
	}{
		{"arm64.ips", "ips", "Apple .ips crash report"},
		{"arm64.crash", "crash", "Apple text crash report"},
		{"x86_64-kscrash.json", "kscrash", "KSCrash JSON report"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(reportSamples, tt.file))
			if err != nil {
				t.Fatal(err)
			}
			// A misleading name: only the content may decide.
			path := filepath.Join(t.TempDir(), "dump.txt")
			if err := os.WriteFile(path, data, 0o644); err != nil {
				t.Fatal(err)
			}
			out := runOK(t, "symbolicate", path)
			if !strings.HasPrefix(out, "Format: "+tt.text+"\n") {
				t.Errorf("symbolicate %s printed %q first, want Format: %s", tt.file, firstLine(out), tt.text)
			}
			var rep jsonReport
			if err := json.Unmarshal([]byte(runOK(t, "symbolicate", path, "--json")), &rep); err != nil {
				t.Fatal(err)
			}
			if rep.Format != tt.format || len(rep.Threads) == 0 {
				t.Errorf("--json: format %q with %d threads, want %q with some", rep.Format, len(rep.Threads), tt.format)
			}
		})
	}
}

// TestSymbolicateTruncatedReport cuts a report inside its second thread:
// the first thread is still printed, and the command fails naming where
// the report broke off.
func TestSymbolicateTruncatedReport(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(reportSamples, "arm64.ips"))
	if err != nil {
		t.Fatal(err)
	}
	cut := bytes.Index(data, []byte(`"name" : "worker"`))
	if cut < 0 {
		t.Fatal("sample changed: no worker thread")
	}
	path := filepath.Join(t.TempDir(), "cut.ips")
	if err := os.WriteFile(path, data[:cut], 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	status := run([]string{"symbolicate", path}, strings.NewReader(""), &stdout, &stderr)
	if status != 1 {
		t.Errorf("status %d, want 1 for an incomplete report", status)
	}
	if !strings.Contains(stdout.String(), "mach_msg2_trap") {
		t.Errorf("the thread before the cut was not printed:\n%s", stdout.String())
	}
	if !strings.Contains(stderr.String(), "incomplete Apple .ips crash report") || !strings.Contains(stderr.String(), "threads") {
		t.Errorf("stderr = %q, want it to say the report is incomplete and where", stderr.String())
	}
}

// TestSymbolicateRejectsUnknownInput checks that input in no known format
// is an error that says what was expected.
func TestSymbolicateRejectsUnknownInput(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.json")
	if err := os.WriteFile(path, []byte(`{"hello": "world"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if status := run([]string{"symbolicate", path}, strings.NewReader(""), &stdout, &stderr); status != 1 {
		t.Errorf("status %d, want 1", status)
	}
	if !strings.Contains(stderr.String(), "not a stackimage snapshot") {
		t.Errorf("stderr = %q, want it to list the formats read", stderr.String())
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// TestSymbolicateSaysWhichSymbolFilesItSkipped puts a file that starts like
// a 64-bit Mach-O but is garbage among the symbols: the command names it on
// stderr and still symbolicates with the rest.
func TestSymbolicateSaysWhichSymbolFilesItSkipped(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "Broken.dSYM")
	if err := os.WriteFile(bad, append([]byte{0xcf, 0xfa, 0xed, 0xfe}, bytes.Repeat([]byte{0xff}, 60)...), 0o644); err != nil {
		t.Fatal(err)
	}
	snap := filepath.Join(snapshotsDir, "chain-x86_64-O1-deepest.json")
	var stdout, stderr bytes.Buffer
	status := run([]string{"symbolicate", snap, "--symbols", dir, "--symbols", symbolsDir}, strings.NewReader(""), &stdout, &stderr)
	if status != 0 {
		t.Fatalf("status %d: %s", status, stderr.String())
	}
	if !strings.Contains(stderr.String(), "skipped "+bad) {
		t.Errorf("stderr = %q, want it to name the skipped %s", stderr.String(), bad)
	}
	if !strings.Contains(stdout.String(), "deepest") {
		t.Errorf("the snapshot was not symbolicated with the good files:\n%s", stdout.String())
	}
}

// TestSymbolicateStdinReport reads a crash report from standard input ("-"),
// and tells its format by content as for a file.
func TestSymbolicateStdinReport(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(reportSamples, "arm64.ips"))
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{"symbolicate", "-"}, bytes.NewReader(data), &stdout, &stderr); code != 0 {
		t.Fatalf("symbolicate -: exit status %d, stderr:\n%s", code, stderr.String())
	}
	if !strings.HasPrefix(stdout.String(), "Format: Apple .ips crash report\n") {
		t.Errorf("symbolicate - printed %q first", firstLine(stdout.String()))
	}
}
