package main

import (
	"context"
	"debug/macho"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/symbolize"
	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/unwind"
	"github.com/stackimage/stackimage/walker"
)

// The two walks of issue 28, on captures of fixture programs built
// without frame pointers (fixtures/snapshots/chain-nofp-*-O1-deepest,
// emu.SnapshotPoints): with the symbols crash pipelines hold, not the
// binary, the walk must not end where the frame-record chain does.

// trueChain reads a capture's true call chain (its .chain file), the
// sentinel "???" left out.
func trueChain(t *testing.T, name string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(snapshotsDir, name+".chain"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if !strings.HasPrefix(line, "#") && line != "???" {
			names = append(names, line)
		}
	}
	return names
}

// machineSymbols returns the symbols of a walk's machine frames in an
// image (the sentinel return address the run began with is in none).
func machineSymbols(frames []jsonFrame) []string {
	var out []string
	for _, f := range frames {
		if !f.Inlined && f.Image != "" {
			out = append(out, f.Symbol)
		}
	}
	return out
}

// checkAgainstTruth checks that a walk's frames are the true chain's in
// order (a subsequence: never a frame the program was not in), that it
// reaches the outermost function, and finds at least min of them.
func checkAgainstTruth(t *testing.T, got []jsonFrame, truth []string, min int) {
	t.Helper()
	names := machineSymbols(got)
	if !isSubsequence(names, truth) {
		t.Errorf("walk %q is not a subsequence of the true chain %q", names, truth)
	}
	if len(names) < min || names[len(names)-1] != truth[len(truth)-1] {
		t.Errorf("walk %q: want at least %d of the %d true frames, down to %s", names, min, len(truth), truth[len(truth)-1])
	}
}

// With the dSYM alone, an x86_64 program without frame pointers: rbp holds
// what the run began with, so the frame-record step ends the walk at once;
// the callers' return addresses lie on the stack, with a function pointer
// to via_pointer's first instruction among them. Before the scan was
// checked by the symbols, the walk found 2 of the 11 frames.
func TestNoFramePointerDSYMOnly(t *testing.T) {
	const name = "chain-nofp-x86_64-O1-deepest"
	truth := trueChain(t, name)
	th, _ := symbolicateThread(t, filepath.Join(snapshotsDir, name+".json"), "--symbols", filepath.Join(symbolsDir, "chain-nofp-x86_64-O1.dSYM"))
	// recurse calls itself directly: without the code its inner
	// activations are told from stale return addresses by the dSYM's
	// call sites, which say the call is of recurse itself (9 of 11
	// before they were read).
	checkAgainstTruth(t, th.Frames, truth, 11)
	for _, f := range th.Frames {
		if f.Index > 1 && (f.FoundBy != "scan" || f.Trust != walker.TrustScanSymbols) {
			t.Errorf("frame %d (%s): found by %s, trust %s; want scan, scan_symbols", f.Index, f.Symbol, f.FoundBy, f.Trust)
		}
		if f.SymbolOffset == "0x0" {
			t.Errorf("frame %d (%s) at a function's first instruction: a function pointer taken for a return address", f.Index, f.Symbol)
		}
	}
}

// With a Breakpad file whose STACK CFI lacks one function, an arm64
// program without frame pointers: the CFI of the frames below gives
// dispatch (frame 4), which has none and keeps no frame record. x29 holds
// what the run began with (via_pointer, the one function with a record,
// restored it), so the frame-record step ends the walk there: 5 of the 11
// frames before. The scan checked by the .sym's FUNC records finds
// dispatch's caller, and CFI goes on from there to start.
func TestNoFramePointerSymLacksCFI(t *testing.T) {
	const name = "chain-nofp-arm64-O1-deepest"
	truth := trueChain(t, name)
	dir := t.TempDir()
	bin := filepath.Join(symbolsDir, "chain-nofp-arm64-O1")
	writeCFISym(t, bin, "", filepath.Join(dir, "all"))
	writeCFISym(t, bin, "dispatch", filepath.Join(dir, "lacking"))
	path := filepath.Join(snapshotsDir, name+".json")

	full, _ := symbolicateThread(t, path, "--symbols", filepath.Join(dir, "all"))
	if got := machineSymbols(full.Frames); strings.Join(got, " ") != strings.Join(truth, " ") {
		t.Fatalf("with every function's STACK CFI: %q, want the true chain %q (the .sym this test writes is wrong)", got, truth)
	}
	th, _ := symbolicateThread(t, path, "--symbols", filepath.Join(dir, "lacking"))
	checkAgainstTruth(t, th.Frames, truth, len(truth))
	for _, f := range th.Frames {
		if strings.HasPrefix(f.Symbol, "big_frame") && !f.Inlined && (f.FoundBy != "scan" || f.Trust != walker.TrustScanSymbols) {
			t.Errorf("dispatch's caller %s: found by %s, trust %s; want scan, scan_symbols", f.Symbol, f.FoundBy, f.Trust)
		}
	}
}

// writeCFISym writes a Breakpad .sym for a Mach-O arm64 binary into dir:
// a FUNC record per text symbol (to the next symbol) and STACK CFI made
// from the binary's own unwind tables at every instruction, except for
// the function named skip, as a .sym from a dump_syms that could not read
// its unwind info would hold. It returns the file's path.
func writeCFISym(t *testing.T, binary, skip, dir string) string {
	t.Helper()
	f, err := macho.Open(binary)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	id := ""
	for _, l := range f.Loads {
		if raw := l.Raw(); len(raw) == 24 && macho.LoadCmd(f.ByteOrder.Uint32(raw)) == 0x1b { // LC_UUID
			id = strings.ToUpper(fmt.Sprintf("%x", raw[8:24])) + "0"
		}
	}
	text, seg := f.Section("__text"), f.Segment("__TEXT")
	if id == "" || text == nil || seg == nil || f.Symtab == nil || f.Cpu != macho.CpuArm64 {
		t.Fatalf("%s: not an arm64 binary with a UUID, __text and symbols", binary)
	}
	type fn struct {
		name  string
		start uint64
	}
	var fns []fn
	seen := map[uint64]bool{}
	for _, s := range f.Symtab.Syms {
		if s.Type&0x0e == 0x0e && s.Value >= text.Addr && s.Value < text.Addr+text.Size && !seen[s.Value] {
			seen[s.Value] = true
			fns = append(fns, fn{strings.TrimPrefix(s.Name, "_"), s.Value})
		}
	}
	sort.Slice(fns, func(i, j int) bool { return fns[i].start < fns[j].start })

	syms := symstore.NewSymbols()
	defer syms.Close()
	if err := syms.AddDir(context.Background(), binary); err != nil {
		t.Fatal(err)
	}
	img, err := image.Open(binary)
	if err != nil {
		t.Fatal(err)
	}
	p, err := (&symbolize.Symbolizer{Symbols: syms}).NewProcess(archregs.ARM64,
		[]*image.Loaded{{Name: binary, UUID: img.Images[0].UUID, LoadAddress: seg.Addr, Size: seg.Memsz}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

	var b strings.Builder
	fmt.Fprintf(&b, "MODULE mac arm64 %s %s\n", id, filepath.Base(binary))
	for i, fn := range fns {
		end := text.Addr + text.Size
		if i+1 < len(fns) {
			end = fns[i+1].start
		}
		fmt.Fprintf(&b, "FUNC %x %x 0 %s\n", fn.start-seg.Addr, end-fn.start, fn.name)
	}
	for i, fn := range fns {
		end := text.Addr + text.Size
		if i+1 < len(fns) {
			end = fns[i+1].start
		}
		if fn.name == skip {
			continue
		}
		prev := ""
		for a := fn.start; a < end; a += 4 {
			row, _, err := p.UnwindRow(walker.UnwindQuery{Address: a, Frame0: a == fn.start})
			if err != nil || row == nil {
				continue
			}
			rules := breakpadRules(t, row)
			switch {
			case prev == "":
				fmt.Fprintf(&b, "STACK CFI INIT %x %x %s\n", a-seg.Addr, end-a, rules)
			case rules != prev:
				fmt.Fprintf(&b, "STACK CFI %x %s\n", a-seg.Addr, rules)
			}
			prev = rules
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, filepath.Base(binary)+".sym")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// breakpadRules writes an arm64 row as Breakpad STACK CFI rules.
func breakpadRules(t *testing.T, row *unwind.Row) string {
	t.Helper()
	name := func(r unwind.Reg) string {
		switch r {
		case 31:
			return "sp"
		case 30:
			return "x30"
		}
		return fmt.Sprintf("x%d", r)
	}
	if row.CFA.Expr != nil {
		t.Fatalf("a CFA expression: not written by this test")
	}
	rules := []string{fmt.Sprintf(".cfa: %s %d +", name(row.CFA.Reg), row.CFA.Offset)}
	ra := ".ra: x30"
	var regs []string
	for _, rr := range row.Regs {
		var expr string
		switch rr.Rule.Kind {
		case unwind.Offset:
			expr = fmt.Sprintf(".cfa %d + ^", rr.Rule.Offset)
		case unwind.SameValue:
			expr = name(rr.Reg)
		default:
			continue
		}
		if rr.Reg == 30 {
			ra = ".ra: " + expr
			continue
		}
		regs = append(regs, name(rr.Reg)+": "+expr)
	}
	sort.Strings(regs)
	return strings.Join(append(append(rules, ra), regs...), " ")
}
