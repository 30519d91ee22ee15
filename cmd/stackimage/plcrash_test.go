package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestPLCrashCommand: symbolicate lists .plcrash among its inputs, prints
// one as text and as Apple's .crash text, and aggregate counts its stacks.
func TestPLCrashCommand(t *testing.T) {
	const input = "../../plcrash/testdata/chain-x86_64-O1-deepest.plcrash"
	var out, errOut bytes.Buffer
	if code := run([]string{"symbolicate", "-h"}, nil, &out, &errOut); code != 0 || !strings.Contains(out.String()+errOut.String(), "PLCrashReporter report") {
		t.Errorf("symbolicate -h: status %d, does not list PLCrashReporter reports:\n%s%s", code, out.String(), errOut.String())
	}
	for _, tc := range []struct {
		format string
		want   []string
	}{
		{"text", []string{"Format: PLCrashReporter report", "Thread 0 Crashed:", " deepest + "}},
		{"same", []string{"Code Type:       X86-64", "Last Exception Backtrace:", "Thread 0 Crashed:", " deepest + ", "Binary Images:"}},
		{"crash", []string{"Exception Type:  EXC_BAD_ACCESS (SIGSEGV)", "Thread 0 crashed with X86-64 Thread State:"}},
	} {
		out.Reset()
		errOut.Reset()
		if code := run([]string{"symbolicate", input, "--symbols", "../../fixtures/bin", "--format", tc.format}, nil, &out, &errOut); code != 0 {
			t.Fatalf("--format %s: status %d: %s", tc.format, code, errOut.String())
		}
		for _, w := range tc.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("--format %s: missing %q in:\n%s", tc.format, w, out.String())
			}
		}
	}
	out.Reset()
	errOut.Reset()
	if code := run([]string{"aggregate", input, "--symbols", "../../fixtures/bin"}, nil, &out, &errOut); code != 0 || !strings.Contains(out.String(), "deepest") {
		t.Errorf("aggregate: status %d:\n%s%s", code, out.String(), errOut.String())
	}
}
