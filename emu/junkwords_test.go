//go:build unicorn

package emu

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/emu/progen"
	"github.com/stackimage/stackimage/fixtures"
	"github.com/stackimage/stackimage/internal/testtool"
	"github.com/stackimage/stackimage/symbolize"
	"github.com/stackimage/stackimage/symindex"
	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/walker"
)

// TestJunkWordsDSYMOnly runs emu/testdata/junkwords.c, built without frame
// pointers, and walks its stack with its dSYM alone (no binary: no code
// bytes; the unwind tables dsymutil copies withheld), as a crash pipeline
// walks an app whose dSYM was uploaded. The program leaves on its real
// stack the words a Breakpad-style scan takes for frames: a function
// pointer at a function's first instruction, a __TEXT constant and a
// pointer into it (past the table's symbol, which the symbol table lists
// as it lists functions) below the return address into start, and a
// second copy of that return address above it. Inside leaf, where all
// are on the stack, the walk must find exactly leaf, middle and start,
// and none of those words, with the
// dSYM's DWARF call sites and without them (its functions alone refuse
// each word); at every instruction boundary of the run, no walk may hold
// a frame the truth lacks.
func TestJunkWordsDSYMOnly(t *testing.T) {
	cc := testtool.Path(t, "clang-16", "clang-16", "the junk-word program is compiled in the test")
	ld := testtool.Path(t, "ld64.lld-16", "lld-16", "the junk-word program is linked as Mach-O")
	dsymutil := testtool.Path(t, "dsymutil-16", "llvm-16", "the junk-word program's dSYM is linked")
	src := filepath.Join(repoRoot(t), "emu", "testdata", "junkwords.c")
	for _, arch := range []string{"arm64", "x86_64"} {
		for _, opt := range []string{"O0", "O1", "O2"} {
			t.Run(arch+"-"+opt, func(t *testing.T) {
				b := progen.Build{Arch: arch, Opt: opt, Tables: true, DSYM: dsymutil}
				out := filepath.Join(t.TempDir(), b.Name("junkwords"))
				cmds, err := b.Commands(cc, ld, src, out)
				if err != nil {
					t.Fatal(err)
				}
				for _, c := range cmds {
					if msg, err := exec.Command(c[0], c[1:]...).CombinedOutput(); err != nil {
						t.Fatalf("%v: %v\n%s", c, err, msg)
					}
				}
				checkJunkWordsInLeaf(t, out, arch, opt)

				cell := SweepCell{Group: GroupFreshDSYM, Arch: arch, Opt: opt}
				misses, _, err := SweepProgram(out, &cell, StaleNone)
				if err != nil {
					t.Fatal(err)
				}
				t.Logf("every boundary: %d checked, %d exact, %d missing, %d extra, %d wrong", cell.Checked, cell.Exact, cell.Missing, cell.Extra, cell.Wrong)
				if cell.Extra+cell.Wrong > 0 {
					for _, m := range misses {
						t.Logf("step %d %s+%d: truth %v, walk %v (%s)", m.Step, m.Function, m.Offset, m.Truth, m.Walk, m.Stop)
					}
					t.Errorf("%d frames the truth lacks, want none", cell.Extra+cell.Wrong)
				}
			})
		}
	}
}

// checkJunkWordsInLeaf runs the program to every boundary inside leaf
// after the junk words are written, checks they are on the stack, and
// walks with the dSYM alone.
func checkJunkWordsInLeaf(t *testing.T, path, arch, opt string) {
	t.Helper()
	prog := fixtures.Program{Name: filepath.Base(path), Entry: "start", End: fixtures.EndReturn}
	out := fixtures.Output{Path: filepath.Base(path), Program: prog.Name, Frames: fixtures.FramesNoFP, Arch: arch, Opt: opt}
	s, err := newSweeper(filepath.Dir(path), prog, out, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.m.Close()
	slid := func(name string) uint64 {
		a, err := SymbolAddress(s.loaded.Image, name)
		if err != nil {
			t.Fatal(err)
		}
		return a + s.loaded.Slide
	}
	leaf, table := slid("leaf"), slid("table")
	dsym := processWith(t, s.m, path+".dSYM")
	dsym.NoUnwindInfo = true // the __eh_frame dsymutil copies: the scan alone finds the callers
	// The index made of the dSYM (stackimage index) holds its symbols and
	// section ranges, without the Mach-O headers: it must refuse the same
	// words.
	index := processWith(t, s.m, indexStore(t, path+".dSYM"))
	index.NoUnwindInfo = true
	symbols := []struct {
		name string
		proc *symbolize.Process
	}{{"the dSYM", dsym}, {"the dSYM's index", index}}
	walks := 0
	_, err = s.m.Run(RunOptions{OnStep: func(pc uint64) error {
		if fn, ok := s.proc.FunctionStart(pc); !ok || fn != leaf {
			return nil
		}
		calls := s.m.Shadow.Calls // the entry's pseudo-call, start's call of middle, middle's of leaf
		if len(calls) != 3 {
			t.Fatalf("PC %#x in leaf: %d calls on the shadow stack, want 3", pc, len(calls))
		}
		chain := []uint64{pc, calls[2].ReturnAddress, calls[1].ReturnAddress}
		snap, err := s.m.Capture()
		if err != nil {
			return err
		}
		th := snap.Threads[0]
		sp, _ := th.Registers.Get(s.m.Arch.SP)
		words := stackWords(t, snap.Memory, sp, th.StackHigh, s.ptrSize)
		raStart := chain[2]
		for what, n := range map[string]int{"leaf's first instruction": count(words, leaf), "the __TEXT constant": count(words, table),
			"the pointer into the __TEXT constant": count(words, table+20),
			"the return address into start":        count(words, raStart)} {
			want := 1
			if what == "the return address into start" {
				want = 2
			}
			if n < want {
				t.Fatalf("PC %#x: %s is %d times on the stack, want at least %d: the program does not leave its junk words", pc, what, n, want)
			}
		}
		for _, sym := range symbols {
			for _, callSites := range []bool{true, false} {
				opts := walker.Options{StackLow: th.StackLow, StackHigh: th.StackHigh}
				if !callSites {
					opts.Symbols = withoutCallSites{sym.proc}
				}
				checkJunkWalk(t, sym.name, sym.proc, th.Registers, snap.Memory, opts, pc, leaf, chain, s.m.Sentinel, callSites)
			}
		}
		walks++
		return nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	if walks == 0 {
		t.Fatal("the run never reached leaf")
	}
}

// checkJunkWalk walks with the symbols named name alone (opts hiding
// their call sites or not) and checks the frames are chain's, leaf's PC,
// middle and start.
func checkJunkWalk(t *testing.T, name string, syms *symbolize.Process, regs *archregs.Registers, mem walker.Memory, opts walker.Options,
	pc, leaf uint64, chain []uint64, sentinel uint64, callSites bool) {
	t.Helper()
	frames, res := syms.Walk(regs, mem, opts)
	got := returnAddresses(res.Frames)
	if n := len(got); n > 3 && got[n-1] == sentinel {
		got = got[:n-1] // start's caller: the emulator's sentinel, in no image
	}
	if !slices.Equal(got, chain) {
		t.Errorf("%s, PC %#x (leaf+%d), call sites used %v: walk %#x %v (%s), want %#x: leaf, middle, start and no junk word",
			name, pc, pc-leaf, callSites, got, MachineNames(frames), res.StopDetail, chain)
	}
	// start, middle's caller, lies above the function pointer and the
	// constant: only a scan the dSYM checks finds it.
	if f := res.Frames[min(2, len(res.Frames)-1)]; f.FoundBy != walker.FoundByScan || f.Trust != walker.TrustScanSymbols {
		t.Errorf("%s, PC %#x, call sites used %v: frame %d at %#x found by %s, trust %s: want start found by a scan the symbols checked",
			name, pc, callSites, f.Index, f.ReturnAddress, f.FoundBy, f.Trust)
	}
}

// stackWords reads the pointer-sized words from sp to high.
func stackWords(t *testing.T, mem walker.Memory, sp, high, ptr uint64) []uint64 {
	t.Helper()
	buf := make([]byte, high-sp)
	n, _ := mem.ReadMemory(buf, sp)
	var out []uint64
	for i := 0; i+int(ptr) <= n; i += int(ptr) {
		if ptr == 8 {
			out = append(out, binary.LittleEndian.Uint64(buf[i:]))
		} else {
			out = append(out, uint64(binary.LittleEndian.Uint32(buf[i:])))
		}
	}
	return out
}

func count(words []uint64, v uint64) int {
	n := 0
	for _, w := range words {
		if w == v {
			n++
		}
	}
	return n
}

// indexStore writes the index of each image of the dSYM at path into a
// new store directory (STORE/UUID/ARCH.symindex, as stackimage index
// writes it) and returns the directory.
func indexStore(t *testing.T, path string) string {
	t.Helper()
	syms := symstore.NewSymbols()
	defer syms.Close()
	if err := syms.AddDir(context.Background(), path); err != nil {
		t.Fatal(err)
	}
	store := t.TempDir()
	for _, u := range syms.UUIDs() {
		e, err := syms.Lookup(u)
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(store, u.String())
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		err = e.WriteIndex(&buf)
		name := e.Image().ArchName() + symindex.Extension
		e.Release()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return store
}
