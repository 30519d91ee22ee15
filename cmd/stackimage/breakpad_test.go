package main

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stackimage/stackimage/breakpadsym"
	"github.com/stackimage/stackimage/internal/testcorpus"
	"github.com/stackimage/stackimage/minidump"
	"github.com/stackimage/stackimage/symbolize"
	"github.com/stackimage/stackimage/walker"
)

// snapshotFrames reads the instruction addresses of the frames in
// symbolicator's expected answer for a dump (an insta .snap file), in
// order, and the crashed thread's registers.
func snapshotFrames(t *testing.T, path string) (addrs []uint64, regs map[string]uint64) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	regs = map[string]uint64{}
	reg := regexp.MustCompile(`^\s+(r[a-z0-9]+): "0x([0-9a-f]+)"$`)
	for _, line := range strings.Split(string(data), "\n") {
		if m := reg.FindStringSubmatch(line); m != nil {
			v, _ := strconv.ParseUint(m[2], 16, 64)
			regs[m[1]] = v
		}
		if _, hex, ok := strings.Cut(line, `instruction_addr: "0x`); ok {
			v, err := strconv.ParseUint(strings.TrimSuffix(hex, `"`), 16, 64)
			if err != nil {
				t.Fatalf("%s: %q: %v", path, line, err)
			}
			addrs = append(addrs, v)
		}
	}
	if len(addrs) == 0 || regs["rbp"] == 0 {
		t.Fatalf("%s: no frames or no rbp read", path)
	}
	return addrs, regs
}

// TestSymbolicateMinidumpBreakpad symbolicates symbolicator's macOS
// minidump with crash.sym, the Breakpad file of its main module, as the
// only symbols, and compares with symbolicator's answer for the dump
// (which had no symbols: its frames carry addresses and how they were
// found).
func TestSymbolicateMinidumpBreakpad(t *testing.T) {
	corpus := testcorpus.Dir(t)
	dmp := filepath.Join(corpus, "minidump", "symbolicator-macos.dmp")
	symPath := filepath.Join(corpus, "symbolic", "symbolic-testutils", "fixtures", "macos", "crash.sym")
	snapAddrs, snapRegs := snapshotFrames(t, filepath.Join(corpus, "minidump", "symbolicator-macos.expected.snap"))

	// The symbol file is the dump's module: same debug id.
	f, err := os.Open(dmp)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	md, err := minidump.Parse(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	symData, err := os.ReadFile(symPath)
	if err != nil {
		t.Fatal(err)
	}
	sym, err := breakpadsym.Parse(symData)
	if err != nil {
		t.Fatal(err)
	}
	var crash *minidump.Module
	for i := range md.Modules {
		if md.Modules[i].Name == "crash" {
			crash = &md.Modules[i]
		}
	}
	if crash == nil || crash.DebugID != sym.Module.DebugID {
		t.Fatalf("dump's module crash = %+v; want debug id %s, crash.sym's", crash, sym.Module.DebugID)
	}

	// --symbols names a directory holding a link to the file, in the
	// symbol-store layout.
	dir := t.TempDir()
	store := filepath.Join(dir, "crash", sym.Module.DebugID)
	if err := os.MkdirAll(store, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(symPath, filepath.Join(store, "crash.sym")); err != nil {
		t.Fatal(err)
	}
	text := runOK(t, "symbolicate", dmp, "--symbols", dir)
	if want := "0   crash                          0x0000000109ba8c15 main + 117 (main.cpp:21)\n"; !strings.Contains(text, want) {
		t.Errorf("symbolicate --symbols: output lacks %q:\n%s", want, text)
	}
	var rep jsonReport
	if err := json.Unmarshal([]byte(runOK(t, "symbolicate", dmp, "--symbols", dir, "--json")), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Threads) != 1 || len(rep.Threads[0].Frames) == 0 {
		t.Fatalf("--json: %d threads; want one with frames", len(rep.Threads))
	}
	th := rep.Threads[0]
	for _, m := range rep.MissingImages {
		if m.Name == crash.Path || strings.HasSuffix(m.Name, "/crash") {
			t.Errorf("crash listed as missing symbols: %+v", m)
		}
	}

	// Frame 0 is symbolicator's frame 0.
	if got := th.Frames[0].Address; got != hex(snapAddrs[0]) {
		t.Errorf("frame 0 at %s, want symbolicator's %#x", got, snapAddrs[0])
	}
	// Every frame in crash is named from crash.sym: a FUNC, with its line.
	for _, fr := range th.Frames {
		if fr.Image != "crash" {
			continue
		}
		lookup, err := strconv.ParseUint(strings.TrimPrefix(fr.LookupAddress, "0x"), 16, 64)
		if err != nil {
			t.Fatal(err)
		}
		want, err := sym.Lookup(lookup - crash.Base)
		ok := err == nil
		if !ok || want.Public {
			t.Errorf("frame %d (%s): crash.sym has no FUNC at %#x", fr.Index, fr.Address, lookup-crash.Base)
			continue
		}
		if fr.Symbol != want.Name || fr.SymbolSource != "breakpad" || fr.Line == 0 {
			t.Errorf("frame %d (%s) = %q from %q line %d; want %q from breakpad with a line", fr.Index, fr.Address, fr.Symbol, fr.SymbolSource, fr.Line, want.Name)
		}
	}

	// Symbolicator went on by scanning (trust: scan) to 0x109ba8c70 in
	// crash, 0x7fffe7eeb235 in libdyld, and that again. We take the
	// libdyld frame alone, and the reasons are checked here:
	//
	//  1. crash.sym has no STACK CFI for main, where frame 0 is, so there
	//     is no rule to find frame 1 by; the walk takes main's frame record.
	//  2. main keeps no frame record: rbp still points at the outermost
	//     record dyld made, whose saved rbp is 0, and the return address
	//     into libdyld (symbolicator's frame 2) lies just below it, in
	//     main's frame, not above it as in a record. The chain ends at
	//     once (fp_zero) in a function no table describes, which is no
	//     end of the stack: the scan finds the libdyld frame, in an image
	//     without symbols (trust scan), and no stale copy of it.
	//  3. 0x109ba8c70 is the first byte of FUNC callback, so not a return
	//     address (that follows a call instruction, inside a function):
	//     it is the callback's address passed as an argument, a false
	//     positive of symbolicator's scan.
	if len(snapAddrs) < 3 {
		t.Fatalf("snapshot has %d frames; want symbolicator's 4", len(snapAddrs))
	}
	if rules, ok := sym.CFIRules(snapAddrs[0] - crash.Base); ok {
		t.Errorf("crash.sym has STACK CFI at frame 0 (%+v): the walk should have used it", rules)
	}
	if len(th.Frames) != 2 || th.StopReason != symbolize.StopReason(walker.StopFramePointerZero) ||
		th.Frames[1].Address != fmt.Sprintf("%#x", snapAddrs[2]) || th.Frames[1].Trust != walker.TrustScan {
		t.Errorf("walk: %d frames (%+v), stop %q (%s); want frame 0 and libdyld's %#x by a scan, stopped at fp_zero",
			len(th.Frames), th.Frames, th.StopReason, th.StopDetail, snapAddrs[2])
	}
	rbp := snapRegs["rbp"]
	var words [3]uint64 // at rbp-8, rbp, rbp+8
	for i := range words {
		var b [8]byte
		if n, err := md.Memory.ReadMemory(b[:], rbp-8+8*uint64(i)); n != len(b) {
			t.Fatalf("reading the stack at %#x: %v", rbp-8+8*uint64(i), err)
		}
		words[i] = binary.LittleEndian.Uint64(b[:])
	}
	if words[0] != snapAddrs[2] || words[1] != 0 || words[2] == snapAddrs[2] {
		t.Errorf("stack at rbp %#x - 8: %#x; want symbolicator's libdyld frame %#x below rbp, 0 at rbp, and not the return address above it", rbp, words, snapAddrs[2])
	}
	if m := md.ModuleAt(snapAddrs[2]); m == nil || m.Name != "libdyld.dylib" {
		t.Errorf("symbolicator's frame 2 %#x is in %v, want libdyld.dylib", snapAddrs[2], m)
	}
	callback := snapAddrs[1] - crash.Base
	if got, err := sym.Lookup(callback); err != nil || got.Address != callback || !strings.Contains(got.Name, "callback") {
		t.Errorf("symbolicator's frame 1 %#x (%#x in crash) = %+v; want the first byte of callback", snapAddrs[1], callback, got)
	}

	// With the binary beside the .sym (same UUID), the Mach-O file answers
	// first: frame 0's name comes from its symbol table, and its compact
	// unwind info for main finds the libdyld frame the .sym could not.
	bin := filepath.Join(filepath.Dir(symPath), "crash")
	if err := os.Mkdir(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(bin, filepath.Join(dir, "bin", "crash")); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(runOK(t, "symbolicate", dmp, "--symbols", dir, "--json")), &rep); err != nil {
		t.Fatal(err)
	}
	fr := rep.Threads[0].Frames
	if len(fr) < 2 || fr[0].Symbol != "main" || fr[0].SymbolSource != "symtab" ||
		fr[1].Address != hex(snapAddrs[2]) || fr[1].FoundBy != "compact unwind" {
		t.Errorf("with the binary: frames %+v; want main from symtab, then symbolicator's libdyld frame %#x by compact unwind", fr, snapAddrs[2])
	}
}
