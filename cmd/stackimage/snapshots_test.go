package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/snapshot"
	"github.com/stackimage/stackimage/symbolize"
	"github.com/stackimage/stackimage/walker"
)

// The committed emulator snapshots (fixtures/snapshots, written by
// go test -tags unicorn ./emu/ -run TestSnapshots -update) and the fixture
// binaries they were captured from, relative to this package.
const (
	snapshotsDir = "../../fixtures/snapshots"
	fixturesDir  = "../../fixtures"
	symbolsDir   = "../../fixtures/bin"
)

// frame1FoundBy is how frame 1 must be found in the snapshots that were
// taken to exercise one rule of the walker (emu.SnapshotPoints says why
// each was taken); in the others any way of finding it will do.
//
// Without tables the walker reads each function's code before its frame
// records (it has a decoder for every instruction set here): those
// callers are "code", frame 1 "link register" where its return address
// is still in LR.
var frame1FoundBy = map[string]string{
	"chain-arm64-O1-deepest":              "link register", // frameless leaf
	"chain-armv7-O1-deepest":              "link register", // frameless leaf
	"chain-x86_64-O1-deepest":             "code",
	"chain-i386-O1-deepest":               "code",
	"chain-arm64-O1-big_frame-prologue":   "link register", // record not pushed yet
	"chain-x86_64-O1-big_frame-prologue":  "code",          // first instruction
	"chain-arm64-O2-with_alloca-epilogue": "link register", // record popped
}

// readsCode says whether the walker reads the code of the snapshot's
// architecture (walker/inspect.go) before frame records: arm64, arm64e,
// armv7, x86_64 and i386 all have a decoder.
func readsCode(snap *snapshot.Snapshot) bool {
	switch snap.Arch {
	case archregs.ARM64, archregs.ARM64E, archregs.ARMV7, archregs.X86_64, archregs.I386:
		return true
	}
	return false
}

// TestSnapshotsSymbolicate runs `stackimage symbolicate` on every committed
// snapshot, in text and JSON form, and checks that it prints the true call
// chain recorded beside it (<name>.chain), how each frame was found and
// that the walk ended cleanly.
func TestSnapshotsSymbolicate(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join(snapshotsDir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatalf("no snapshots in %s", snapshotsDir)
	}
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		t.Run(name, func(t *testing.T) {
			want := readChain(t, filepath.Join(snapshotsDir, name+".chain"))
			snap := readSnapshot(t, path)
			jt := symbolicateJSON(t, path)
			checkFoundByTables(t, snap, jt.Frames)
			// Without the unwind tables the frame-record rules find the
			// same frames; the snapshots taken to exercise one of them
			// check it.
			fp := symbolicateJSON(t, path, "--no-unwind-info")
			switch {
			case strings.Contains(name, "nofp"):
				// Code without frame pointers keeps no records: without
				// its tables the walk is the code's and the scans', which
				// may miss frames but never take others.
				if got := jsonNames(fp.Frames); !isSubsequence(got, want) {
					t.Errorf("--no-unwind-info: %q is not a subsequence of the true chain %q", got, want)
				}
			case readsCode(snap) && fp.StopReason != symbolize.StopReason(walker.StopPCNotInImage):
				t.Errorf("--no-unwind-info: stop_reason = %q (%s), want pc_not_in_image: the entry's code keeps the sentinel return address", fp.StopReason, fp.StopDetail)
			case !readsCode(snap) && fp.StopReason != symbolize.StopReason(walker.StopFramePointerZero):
				t.Errorf("--no-unwind-info: stop_reason = %q (%s), want fp_zero: the chain ends at the entry's zero FP", fp.StopReason, fp.StopDetail)
			}
			if !strings.Contains(name, "nofp") {
				checkFoundBy(t, name, snap, fp.Frames)
				if diff := cmp.Diff(jsonNames(jt.Frames), jsonNames(fp.Frames)); diff != "" {
					t.Errorf("the walk by unwind tables and by frame records differ (-tables +records):\n%s", diff)
				}
			}

			checkSourceLines(t, name, jt.Frames)

			got := jsonNames(jt.Frames)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("symbolicate --json %s: function names differ from %s.chain (-want +got):\n%s", path, name, diff)
			}
			text := symbolicateText(t, path)
			if diff := cmp.Diff(want, text); diff != "" {
				t.Errorf("symbolicate %s: function names differ from %s.chain (-want +got):\n%s", path, name, diff)
			}
		})
	}
}

// readChain reads a .chain file: one function per line, # comments.
func readChain(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		names = append(names, line)
	}
	if len(names) < 2 {
		t.Fatalf("%s: %d functions, want a chain", path, len(names))
	}
	return names
}

func readSnapshot(t *testing.T, path string) *snapshot.Snapshot {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := snapshot.Parse(data)
	if err != nil {
		t.Fatalf("snapshot.Parse(%s): %v", path, err)
	}
	return snap
}

// runOK runs the command in-process and fails the test unless it succeeds.
func runOK(t *testing.T, args ...string) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := run(args, strings.NewReader(""), &stdout, &stderr); code != 0 {
		t.Fatalf("stackimage %s: exit status %d, stderr:\n%s", strings.Join(args, " "), code, stderr.String())
	}
	return stdout.String()
}

func symbolicateJSON(t *testing.T, path string, flags ...string) jsonThread {
	t.Helper()
	out := runOK(t, append([]string{"symbolicate", path, "--symbols", symbolsDir, "--json"}, flags...)...)
	var rep jsonReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("symbolicate --json output: %v\n%s", err, out)
	}
	if len(rep.Threads) != 1 {
		t.Fatalf("symbolicate --json: %d threads, want the emulator's one", len(rep.Threads))
	}
	if !rep.Threads[0].Crashed {
		t.Errorf("thread %d not marked crashed", rep.Threads[0].ID)
	}
	return rep.Threads[0]
}

// symbolicateText returns the function name of every machine frame of the
// text output, "???" where it names none.
func symbolicateText(t *testing.T, path string) []string {
	t.Helper()
	out := runOK(t, "symbolicate", path, "--symbols", symbolsDir)
	var names []string
	sawStop := false
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "Walk stopped: ") {
			sawStop = true
			// The last frame is the emulator's sentinel, in no image: the
			// walk by unwind tables ends there, the frame-record walk (armv7,
			// whose fixtures have no tables) at the entry's zero FP.
			if !strings.HasPrefix(line, "Walk stopped: fp_zero") && !strings.HasPrefix(line, "Walk stopped: pc_not_in_image") {
				t.Errorf("text output: %q, want the walk stopped at fp_zero or pc_not_in_image", line)
			}
			continue
		}
		f := strings.Fields(line)
		// "0   chain-arm64-O1   0x000000010000c62c deepest + 12"
		if len(f) < 4 || !isDecimal(f[0]) || !strings.HasPrefix(f[2], "0x") {
			continue
		}
		if strings.HasSuffix(line, "[inlined]") {
			continue
		}
		n := f[3]
		if strings.HasPrefix(n, "0x") {
			n = "???" // load address + offset: an image without symbols
		}
		names = append(names, n)
	}
	if !sawStop {
		t.Errorf("text output has no \"Walk stopped\" line:\n%s", out)
	}
	return names
}

func isDecimal(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil
}

// jsonNames returns the function name of every machine frame.
func jsonNames(frames []jsonFrame) []string {
	var names []string
	for _, f := range frames {
		if f.Inlined {
			continue
		}
		name := f.Symbol
		if name == "" {
			name = "???"
		}
		names = append(names, name)
	}
	return names
}

// checkFoundBy checks how each frame was found: frame 0 from the context;
// frame 1 from LR only on ARM and from the word at SP only on x86, and as
// frame1FoundBy says for the snapshots taken to exercise a rule; every
// later frame from a frame record.
func checkFoundBy(t *testing.T, name string, snap *snapshot.Snapshot, frames []jsonFrame) {
	t.Helper()
	arm := snap.Arch.LR != ""
	for _, f := range frames {
		want := ""
		switch {
		case f.Index == 0:
			want = "context"
		case f.Index == 1 && frame1FoundBy[name] != "":
			want = frame1FoundBy[name]
		case f.Index == 1 && f.FoundBy == "link register" && arm,
			f.Index == 1 && f.FoundBy == "stack pointer" && !arm && !readsCode(snap):
			want = f.FoundBy
		case readsCode(snap):
			want = "code"
		default:
			want = "frame pointer"
		}
		if f.FoundBy != want {
			t.Errorf("frame %d (%s) found_by = %q, want %q", f.Index, f.Symbol, f.FoundBy, want)
		}
	}
}

// checkFoundByTables checks how each frame was found when the images'
// unwind tables are read: frame 0 from the context, and every caller from
// a table (compact unwind or CFI) or, for frame 1, from frame 0's decoded
// prologue or epilogue; never by frame records or scanning. ld64.lld-16
// writes no unwind tables for armv7, so the armv7 fixtures' callers come
// from the functions' code and the link register.
func checkFoundByTables(t *testing.T, snap *snapshot.Snapshot, frames []jsonFrame) {
	t.Helper()
	for _, f := range frames {
		ok := false
		switch {
		case f.Index == 0:
			ok = f.FoundBy == "context"
		case snap.Arch == archregs.ARMV7:
			ok = f.FoundBy == "code" || f.Index == 1 && f.FoundBy == "link register"
		case f.Index == 1:
			ok = f.FoundBy == "compact unwind" || f.FoundBy == "cfi" || f.FoundBy == "link register" || f.FoundBy == "stack pointer"
		default:
			ok = f.FoundBy == "compact unwind" || f.FoundBy == "cfi"
		}
		if !ok {
			t.Errorf("%s frame %d (%s) found_by = %q, want it from the unwind tables", snap.Arch.Name, f.Index, f.Symbol, f.FoundBy)
		}
	}
}

// checkSourceLines checks that every frame in the fixture image has a file
// and line: the executables' dSYMs are in fixtures/bin beside them, with
// the same UUID. The source is the program the snapshot's fixture was
// built from (the name's first field: "chain-arm64-O1-deepest" →
// chain.c). The i386 fixtures are object files that --symbols cannot match
// (no UUID), so their frames have no symbols to check.
func checkSourceLines(t *testing.T, name string, frames []jsonFrame) {
	t.Helper()
	if strings.Contains(name, "-i386-") {
		return
	}
	src, _, _ := strings.Cut(name, "-")
	src += ".c"
	inFixture := 0
	for _, f := range frames {
		if f.Image == "" {
			continue // the sentinel return address
		}
		inFixture++
		if !strings.HasSuffix(f.File, "/"+src) && f.File != src || f.Line <= 0 {
			t.Errorf("frame %d (%s): file %q line %d, want %s and a line from the dSYM", f.Index, f.Symbol, f.File, f.Line, src)
		}
	}
	if inFixture == 0 {
		t.Errorf("no frame in the fixture image")
	}
}

// TestSymbolicateAsyncChain walks the Swift-async capture with --async, as
// thread_stack_async_pcs does: the thread's frames up to the first frame
// with an extended frame record (level2 here, from async-arm64-O1-deepest's
// .chain), then the resume functions of the async contexts from that
// frame's context outwards. The truth for those is the fixture's recorded
// context chain (fixtures/src/async.asyncchain), from level2's own
// context: the entries after level2_resume, the resume point level2's
// caller left in level2's child.
func TestSymbolicateAsyncChain(t *testing.T) {
	path := filepath.Join(snapshotsDir, "async-arm64-O1-deepest.json")
	chain := readChain(t, filepath.Join(fixturesDir, "src", "async.asyncchain"))
	i := slices.Index(chain, "level2_resume")
	if i < 0 {
		t.Fatalf("async.asyncchain has no level2_resume: %q", chain)
	}
	want := append([]string{"deepest", "level2"}, chain[i+1:]...)
	jt := symbolicateJSON(t, path, "--async")
	if diff := cmp.Diff(want, jsonNames(jt.Frames)); diff != "" {
		t.Errorf("--async frames (-want +got):\n%s", diff)
	}
	if jt.StopReason != symbolize.StopReason(walker.StopAsyncChainEnd) {
		t.Errorf("stop_reason = %q, want async_chain_end", jt.StopReason)
	}
	for _, f := range jt.Frames[2:] {
		if f.FoundBy != "async" {
			t.Errorf("frame %d (%s) found_by = %q, want async", f.Index, f.Symbol, f.FoundBy)
		}
	}
	// Without --async the same capture walks the thread's stack, the tag of
	// the saved frame pointers stripped.
	stack := readChain(t, filepath.Join(snapshotsDir, "async-arm64-O1-deepest.chain"))
	if diff := cmp.Diff(stack, jsonNames(symbolicateJSON(t, path).Frames)); diff != "" {
		t.Errorf("frames without --async (-want +got):\n%s", diff)
	}
}
