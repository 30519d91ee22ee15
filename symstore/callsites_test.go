package symstore

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/stackimage/stackimage/emu/progen"
	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/internal/testtool"
)

// TestEntryCallReturn links a dSYM for a program generated from a fresh
// seed (and for one pinned seed), built at -O1 with -g for arm64 and
// x86_64, and checks that the entry of the dSYM alone answers every
// return address llvm-dwarfdump lists as a call's return, and the first
// address of every function whose calls are all listed as known to be
// none, and that every direct call it lists reaches its callee
// (CallReaches). A drawn program may make no direct call (every callee
// inlined but those called through a pointer); the pinned one makes
// several, so the checks always meet some.
func TestEntryCallReturn(t *testing.T) {
	cc := testtool.Path(t, "clang-16", "clang-16", "compiles the program with call sites")
	ld := testtool.Path(t, "ld64.lld-16", "lld-16", "links it")
	dsymutil := testtool.Path(t, "dsymutil-16", "llvm-16", "links its dSYM")
	dwarfdump := testtool.Path(t, "llvm-dwarfdump-16", "llvm-16", "lists the call sites")
	drawn := testtool.FreshSeed(t)
	for _, c := range []struct {
		seed int64
		// mustCall: the program has calls of every kind the checks need.
		mustCall bool
	}{{directCallsSeed, true}, {drawn, false}} {
		t.Run(strconv.FormatInt(c.seed, 10), func(t *testing.T) {
			checkEntryCallReturn(t, c.seed, c.mustCall, cc, ld, dsymutil, dwarfdump)
		})
	}
}

// directCallsSeed gives a program with direct calls, calls through a
// pointer and functions whose calls are all listed, on both
// architectures.
const directCallsSeed = 1

// checkEntryCallReturn is TestEntryCallReturn for the program of seed;
// with mustCall, the program must list direct calls and call sites.
func checkEntryCallReturn(t *testing.T, seed int64, mustCall bool, cc, ld, dsymutil, dwarfdump string) {
	dir := t.TempDir()
	src := filepath.Join(dir, "p.c")
	if err := os.WriteFile(src, []byte(progen.Generate(seed).Source), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(name string, args ...string) string {
		out, err := exec.Command(name, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("%s %v: %v\n%s", name, args, err, out)
		}
		return string(out)
	}
	// A subprogram's offset and low_pc; a call site's callee and return pc.
	dieLowPC := regexp.MustCompile(`(0x[0-9a-f]+):\s+DW_TAG_subprogram\n\s+DW_AT_low_pc\s+\((0x[0-9a-f]+)\)`)
	callOrigin := regexp.MustCompile(`DW_AT_call_origin\s+\((0x[0-9a-f]+)[^)]*\)\n\s+DW_AT_call_return_pc\s+\((0x[0-9a-f]+)\)`)
	returnPC := regexp.MustCompile(`DW_AT_call_return_pc\s+\((0x[0-9a-f]+)\)`)
	// A subprogram's low_pc followed, before the next DIE, by call_all_calls.
	complete := regexp.MustCompile(`DW_AT_low_pc\s+\((0x[0-9a-f]+)\)\n(?:\s+DW_AT_[a-z_]+\s+\(.*\)\n)*?\s+DW_AT_call_all_calls\s+\(true\)`)
	for _, tg := range []struct{ arch, triple, version string }{
		{"arm64", "arm64-apple-macos11", "11.0"},
		{"x86_64", "x86_64-apple-macos10.15", "10.15"},
	} {
		t.Run(tg.arch, func(t *testing.T) {
			out := filepath.Join(dir, tg.arch)
			run(cc, "-target", tg.triple, "-O1", "-gdwarf-4", "-ffreestanding", "-nostdlib", "-fno-stack-protector", "-fno-builtin", "-c", "-o", out+".o", src)
			run(ld, "-arch", tg.arch, "-platform_version", "macos", tg.version, tg.version, "-e", "_start", "-o", out, out+".o")
			run(dsymutil, out, "-o", out+".dSYM")
			dump := run(dwarfdump, "--debug-info", out+".dSYM")
			f, err := image.Open(out + ".dSYM")
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			e, err := NewEntry(f.Images[0])
			if err != nil {
				t.Fatal(err)
			}
			returns := map[uint64]bool{}
			for _, m := range returnPC.FindAllStringSubmatch(dump, -1) {
				pc, _ := strconv.ParseUint(m[1][2:], 16, 64)
				returns[pc] = true
				if known, isReturn := e.CallReturn(pc); !known || !isReturn {
					t.Errorf("%#x: call return %v %v, llvm-dwarfdump lists it", pc, known, isReturn)
				}
			}
			starts := complete.FindAllStringSubmatch(dump, -1)
			if mustCall && (len(returns) == 0 || len(starts) == 0) {
				t.Fatalf("llvm-dwarfdump lists %d call sites, %d functions with all calls described", len(returns), len(starts))
			}
			for _, m := range starts {
				pc, _ := strconv.ParseUint(m[1][2:], 16, 64)
				if returns[pc] {
					continue
				}
				if known, isReturn := e.CallReturn(pc); !known || isReturn {
					t.Errorf("%#x, a function's first instruction: call return %v %v, want known, not a return", pc, known, isReturn)
				}
			}
			// Every direct call reaches its callee's entry (the low_pc of
			// the DIE its DW_AT_call_origin names).
			entries := map[string]uint64{}
			for _, m := range dieLowPC.FindAllStringSubmatch(dump, -1) {
				entries[m[1]], _ = strconv.ParseUint(m[2][2:], 16, 64)
			}
			direct := 0
			for _, m := range callOrigin.FindAllStringSubmatch(dump, -1) {
				entry, ok := entries[m[1]]
				if !ok {
					continue
				}
				direct++
				ret, _ := strconv.ParseUint(m[2][2:], 16, 64)
				if known, reaches := e.CallReaches(ret, entry); !known || !reaches {
					t.Errorf("the call returning to %#x: reaches its callee at %#x %v %v, want known, reaches", ret, entry, known, reaches)
				}
			}
			t.Logf("%d call sites, %d functions with all calls described, %d direct calls", len(returns), len(starts), direct)
			if mustCall && direct == 0 {
				t.Errorf("llvm-dwarfdump lists no direct call of a function with code")
			}
		})
	}
}
