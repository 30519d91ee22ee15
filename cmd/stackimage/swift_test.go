package main

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAtosSwiftNames looks up three functions whose symbols are Swift's
// manglings (testdata/swift/names.c) and expects the names as Apple's
// crash reports and atos print them.
func TestAtosSwiftNames(t *testing.T) {
	out := runOK(t, "atos", "-o", "testdata/swift/swift-names", "0x1000002a4", "0x1000002b8", "0x1000002d0")
	want := []string{
		"specialized static CrashClass.pleaseCrash() (in swift-names) + 4",
		"closure #1 in ViewController.viewDidLoad() (in swift-names) + 12",
		"@objc ViewController.viewDidLoad() (in swift-names) + 12",
	}
	if diff := cmp.Diff(want, strings.Split(strings.TrimSpace(out), "\n")); diff != "" {
		t.Errorf("atos (-want +got):\n%s", diff)
	}
	raw := runOK(t, "atos", "--no-demangle", "-o", "testdata/swift/swift-names", "0x1000002a4")
	if !strings.HasPrefix(raw, "$s15iOSCrashingTest10CrashClassC06pleaseC0yyFZTf4d_n (in swift-names)") {
		t.Errorf("atos --no-demangle = %q, want the symbol as the binary spells it", raw)
	}
}
