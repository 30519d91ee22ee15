package main

import (
	"bytes"
	"strings"
	"testing"
)

// chainDSYM is a fixture dSYM whose DWARF names start (chain.c) at
// 0x1000002f0 and recurse at 0x100000380.
const (
	chainBinary = "../../fixtures/bin/chain-arm64-O1"
	chainDSYM   = "../../fixtures/bin/chain-arm64-O1.dSYM"
)

// atosRun runs "stackimage atos" and returns its status, stdout and stderr.
func atosRun(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	status := run(append([]string{"atos"}, args...), strings.NewReader(stdin), &stdout, &stderr)
	return status, stdout.String(), stderr.String()
}

// TestAtosBadTokenEchoed checks that a token that is not an address is
// echoed on its own line, as llvm-symbolizer echoes input it cannot parse,
// and the batch goes on; the status stays 0, as llvm-symbolizer-16's does.
func TestAtosBadTokenEchoed(t *testing.T) {
	answer := func(addr string) string {
		status, out, stderr := atosRun(t, "", "-o", chainDSYM, addr)
		if status != 0 || out == "" {
			t.Fatalf("atos %s: status %d, stdout %q, stderr %q", addr, status, out, stderr)
		}
		return out
	}
	first, second := answer("0x1000002f0"), answer("0x100000384")
	tests := []struct {
		name  string
		stdin string
		args  []string
		want  string
	}{
		{"stdin, one line", "0x1000002f0 zzz 0x100000384\n", nil, first + "zzz\n" + second},
		{"stdin, lines", "0x1000002f0\n0xzz\n\n0x100000384\n", nil, first + "0xzz\n" + second},
		{"stdin, too long", "0x1000002f0 0x11112222333344445 0x100000384", nil, first + "0x11112222333344445\n" + second},
		{"arguments", "", []string{"0x1000002f0", "main", "0x100000384"}, first + "main\n" + second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, out, stderr := atosRun(t, tt.stdin, append([]string{"-o", chainDSYM}, tt.args...)...)
			if status != 0 {
				t.Errorf("status %d, want 0 (llvm-symbolizer's); stderr %q", status, stderr)
			}
			if out != tt.want {
				t.Errorf("stdout = %q, want %q", out, tt.want)
			}
		})
	}
}

// TestAtosEscapesEchoedToken checks that an echoed token is escaped like
// every other text from the input.
func TestAtosEscapesEchoedToken(t *testing.T) {
	_, out, _ := atosRun(t, "a\x1bb\n", "-o", chainDSYM)
	if strings.Contains(out, "\x1b") {
		t.Errorf("stdout = %q: the escape character was echoed raw", out)
	}
}
