package main

import (
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// twoProcessSpindump is a spindump report listing two processes of the
// fixture chain-arm64-O1 (UUID 4C4C444C-...), each with a frame the
// report left as ??? at deepest + 12 (0x1000005dc unslid), loaded at
// different addresses. The header names the second as the target.
const twoProcessSpindump = `Date/Time:        2024-05-01 10:00:00.000 +0000
OS Version:       macOS 14.4 (Build 23E214)
Architecture:     arm64
Report Version:   47

Data Source:      Stackshots

Command:          chain-b
PID:              43

Duration:         1.00s
Steps:            10 (100ms sampling interval)

Process:          chain-a [42]
Path:             /tmp/chain-a
Architecture:     arm64

  Thread 0x10    10 samples (1-10)    priority 4 (base 4)
  10  ??? (chain-a + 1500) [0x1000005dc] 1-10

  Binary Images:
           0x100000000 -        0x100003fff  chain-a  <4C4C444C-5555-3144-A117-3E15AF6B6CFF>  /tmp/chain-a


Process:          chain-b [43]
Path:             /tmp/chain-b
Architecture:     arm64

  Thread 0x20    10 samples (1-10)    priority 4 (base 4)
  10  ??? (chain-b + 1500) [0x1000105dc] 1-10

  Binary Images:
           0x100010000 -        0x100013fff  chain-b  <4C4C444C-5555-3144-A117-3E15AF6B6CFF>  /tmp/chain-b
`

// TestSymbolicateSpindumpProcesses symbolicates a spindump of two
// processes, with its header and as a listing pasted without it: every
// process is reported, in text and JSON (the target first), and --format
// same names the frames of both.
func TestSymbolicateSpindumpProcesses(t *testing.T) {
	listing := twoProcessSpindump[strings.Index(twoProcessSpindump, "Process:"):]
	for name, input := range map[string]string{"with header": twoProcessSpindump, "listing": listing} {
		t.Run(name, func(t *testing.T) {
			path := writeFile(t, filepath.Join(t.TempDir(), "spindump.txt"), []byte(input))
			text := runOK(t, "symbolicate", path, "--symbols", symbolsDir)
			for _, want := range []string{"Format: macOS sample or spindump report\n", "Process:    chain-a [42]\n", "Process:    chain-b [43]\n"} {
				if !strings.Contains(text, want) {
					t.Errorf("text output lacks %q:\n%s", want, text)
				}
			}
			if n := strings.Count(text, "deepest + 12 (chain.c:65)"); n != 2 {
				t.Errorf("text output names deepest in %d processes, want 2:\n%s", n, text)
			}

			var rep jsonReport
			if err := json.Unmarshal([]byte(runOK(t, "symbolicate", path, "--symbols", symbolsDir, "--json")), &rep); err != nil {
				t.Fatal(err)
			}
			// The header's target first; a listing has no target, so its
			// first process.
			first, second := "chain-b", "chain-a"
			if name == "listing" {
				first, second = second, first
			}
			if len(rep.Processes) != 1 || rep.Header == nil || rep.Header.Process != first || rep.Processes[0].Header.Process != second {
				t.Fatalf("JSON: first process %+v, %d others; want %s, then %s", rep.Header, len(rep.Processes), first, second)
			}
			for _, p := range []jsonProcess{rep.JSONProcess, rep.Processes[0]} {
				if len(p.Threads) != 1 || len(p.Threads[0].Frames) != 1 || p.Threads[0].Frames[0].Symbol != "deepest" {
					t.Errorf("JSON process %s: threads %+v, want one frame named deepest", p.Header.Process, p.Threads)
				}
			}

			same := runOK(t, "symbolicate", path, "--symbols", symbolsDir, "--format", "same")
			for _, re := range []*regexp.Regexp{
				regexp.MustCompile(`(?m)^  10  deepest \+ 12 \(chain\.c:65 in chain-a \+ 1500\) \[0x1000005dc\] 1-10$`),
				regexp.MustCompile(`(?m)^  10  deepest \+ 12 \(chain\.c:65 in chain-b \+ 1500\) \[0x1000105dc\] 1-10$`),
			} {
				if !re.MatchString(same) {
					t.Errorf("--format same: no line matching %s:\n%s", re, same)
				}
			}
		})
	}
}
