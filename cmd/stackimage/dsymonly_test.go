package main

import (
	"debug/macho"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stackimage/stackimage/internal/testcorpus"
	"github.com/stackimage/stackimage/symbolize"
	"github.com/stackimage/stackimage/walker"
)

// fixtureOfSnapshot is the fixture a snapshot was captured from: its
// name up to the optimization level ("chain-arm64-O1-big_frame-prologue"
// → "chain-arm64-O1").
var fixtureOfSnapshot = regexp.MustCompile(`^(.*-O[0-9])-`)

// symbolicateThread runs symbolicate --json on path with args and returns
// the report's only thread and its warnings.
func symbolicateThread(t *testing.T, path string, args ...string) (jsonThread, []string) {
	t.Helper()
	out := runOK(t, append([]string{"symbolicate", path, "--json"}, args...)...)
	var rep jsonReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("symbolicate --json output: %v\n%s", err, out)
	}
	if len(rep.Threads) != 1 {
		t.Fatalf("symbolicate --json: %d threads, want 1", len(rep.Threads))
	}
	return rep.Threads[0], rep.Warnings
}

// machineFrames counts the frames that are not inlined.
func machineFrames(frames []jsonFrame) int {
	n := 0
	for _, f := range frames {
		if !f.Inlined {
			n++
		}
	}
	return n
}

// TestSnapshotsDSYMOnly symbolicates every committed capture with its
// dSYM alone, as a crash pipeline that keeps only dSYMs does. A dSYM's
// __TEXT sections (__unwind_info, __eh_frame) are headers without bytes:
// the image then has no unwind table, and the walk must go on by its
// other strategies as it does with no symbols at all, never stop with
// bad_unwind_info at frame 0. So it finds at least as many frames as with
// no symbols, the true chain, and every frame in the image has a file and
// line from the dSYM.
func TestSnapshotsDSYMOnly(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(snapshotsDir, "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no snapshots in %s (%v)", snapshotsDir, err)
	}
	tested := 0
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		m := fixtureOfSnapshot.FindStringSubmatch(name)
		if m == nil {
			t.Fatalf("%s: cannot tell its fixture from the name", name)
		}
		dsym := filepath.Join(symbolsDir, m[1]+".dSYM")
		if _, err := os.Stat(dsym); err != nil {
			t.Logf("%s: no dSYM (%v): the i386 fixtures are object files", name, err)
			continue
		}
		tested++
		t.Run(name, func(t *testing.T) {
			none, _ := symbolicateThread(t, path)
			got, warnings := symbolicateThread(t, path, "--symbols", dsym)
			if got.StopReason == symbolize.StopReason(walker.StopBadUnwindInfo) {
				t.Errorf("with the dSYM alone: stop %s (%s)", got.StopReason, got.StopDetail)
			}
			if n, m := machineFrames(got.Frames), machineFrames(none.Frames); n < m {
				t.Errorf("with the dSYM alone: %d frames (stop %s: %s), with no symbols %d", n, got.StopReason, got.StopDetail, m)
			}
			chain := readChain(t, filepath.Join(snapshotsDir, name+".chain"))
			switch {
			case strings.Contains(name, "nofp"):
				// Without frame records or tables, scans find the callers:
				// never another frame, some missed (TestNoFramePointerDSYMOnly).
				if got := jsonNames(got.Frames); !isSubsequence(got, chain) {
					t.Errorf("with the dSYM alone: %q is not a subsequence of %s.chain %q", got, name, chain)
				}
			default:
				if diff := cmp.Diff(chain, jsonNames(got.Frames)); diff != "" {
					t.Errorf("with the dSYM alone: function names differ from %s.chain (-want +got):\n%s", name, diff)
				}
			}
			checkSourceLines(t, name, got.Frames)
			for _, w := range warnings {
				if strings.Contains(w, "unwind") {
					t.Errorf("warning %q: a dSYM's sections without bytes are absent tables, not damaged or truncated ones", w)
				}
			}
		})
	}
	if tested == 0 {
		t.Fatal("no snapshot has a dSYM")
	}
}

// TestCorpusDumpDSYMOnly does the same for the real-world corpus's
// minidump whose dSYM is committed beside it (symbolicator's crash, built
// by Apple's toolchain): the dSYM alone walks as far as no symbols, and
// names the frames with file and line.
func TestCorpusDumpDSYMOnly(t *testing.T) {
	dir := testcorpus.Dir(t)
	dump := filepath.Join(dir, "minidump", "symbolicator-macos.dmp")
	dsym := filepath.Join(dir, "symbolic", "symbolic-testutils", "fixtures", "macos", "crash.dSYM")
	var none, got jsonReport
	for _, c := range []struct {
		rep  *jsonReport
		args []string
	}{{&none, nil}, {&got, []string{"--symbols", dsym}}} {
		out := runOK(t, append([]string{"symbolicate", dump, "--json"}, c.args...)...)
		if err := json.Unmarshal([]byte(out), c.rep); err != nil {
			t.Fatal(err)
		}
	}
	if len(got.Threads) != len(none.Threads) || len(got.Threads) == 0 {
		t.Fatalf("%d threads with the dSYM, %d without", len(got.Threads), len(none.Threads))
	}
	for i, th := range got.Threads {
		if th.StopReason == symbolize.StopReason(walker.StopBadUnwindInfo) {
			t.Errorf("thread %d: stop %s (%s)", th.ID, th.StopReason, th.StopDetail)
		}
		if n, m := machineFrames(th.Frames), machineFrames(none.Threads[i].Frames); n < m {
			t.Errorf("thread %d: %d frames with the dSYM alone, %d with no symbols", th.ID, n, m)
		}
		if !th.Crashed {
			continue
		}
		for _, f := range th.Frames {
			if f.Image == "crash" && (f.File == "" || f.Line <= 0) {
				t.Errorf("thread %d frame %d (%s): no file and line from the dSYM", th.ID, f.Index, f.Symbol)
			}
		}
	}
}

// TestSymbolicateTruncatedBinary symbolicates captures with binaries cut
// short inside an unwind table (a truncated download): the table is left
// out with a warning naming the image and the section, and the walk goes
// on by the image's other tables and strategies, finding at least the
// frames it finds with no symbols; with the dSYM beside the binary every
// frame has its file and line. Cutting __eh_frame of a binary whose
// compact unwind defers to it leaves those functions without a rule, not
// with a broken one.
func TestSymbolicateTruncatedBinary(t *testing.T) {
	for _, c := range []struct {
		name, snapshot, section string
	}{
		{"chain-arm64-O1", "chain-arm64-O1-deepest", "__unwind_info"},
		{"chain-x86_64-O1", "chain-x86_64-O1-big_frame-prologue", "__unwind_info"},
		{"dwarf-x86_64-O1", "dwarf-x86_64-O1-deepest", "__eh_frame"},
	} {
		t.Run(c.name+"/"+c.section, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(symbolsDir, c.name))
			if err != nil {
				t.Fatal(err)
			}
			off := sectionOffset(t, filepath.Join(symbolsDir, c.name), c.section)
			dir := t.TempDir()
			bin := filepath.Join(dir, c.name)
			if err := os.WriteFile(bin, data[:off+16], 0o644); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(snapshotsDir, c.snapshot+".json")
			none, _ := symbolicateThread(t, path)
			for _, withDSYM := range []bool{false, true} {
				args := []string{"--symbols", bin}
				if withDSYM {
					args = append(args, "--symbols", filepath.Join(symbolsDir, c.name+".dSYM"))
				}
				got, warnings := symbolicateThread(t, path, args...)
				if got.StopReason == symbolize.StopReason(walker.StopBadUnwindInfo) {
					t.Errorf("dSYM %v: stop %s (%s), want the walk to go on", withDSYM, got.StopReason, got.StopDetail)
				}
				if n, m := machineFrames(got.Frames), machineFrames(none.Frames); n < m {
					t.Errorf("dSYM %v: %d frames (stop %s: %s), with no symbols %d", withDSYM, n, got.StopReason, got.StopDetail, m)
				}
				warned := false
				for _, w := range warnings {
					warned = warned || strings.Contains(w, bin) && strings.Contains(w, "__TEXT,"+c.section) && strings.Contains(w, "left out")
				}
				if !warned {
					t.Errorf("dSYM %v: no warning names %s and its truncated %s: %q", withDSYM, bin, c.section, warnings)
				}
				if withDSYM {
					if diff := cmp.Diff(readChain(t, filepath.Join(snapshotsDir, c.snapshot+".chain")), jsonNames(got.Frames)); diff != "" {
						t.Errorf("function names differ from %s.chain (-want +got):\n%s", c.snapshot, diff)
					}
					checkSourceLines(t, c.snapshot, got.Frames)
				}
			}
		})
	}
}

// sectionOffset returns the file offset of __TEXT,name in a thin Mach-O
// file.
func sectionOffset(t *testing.T, path, name string) int {
	t.Helper()
	f, err := macho.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := f.Section(name)
	if s == nil || s.Offset == 0 {
		t.Fatalf("%s has no %s with file data", path, name)
	}
	return int(s.Offset)
}
