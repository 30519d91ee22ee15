package debuginfo

import (
	"debug/macho"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stackimage/stackimage/emu/progen"
	"github.com/stackimage/stackimage/internal/testtool"
)

// callSiteBuild is one way a test compiles a program with call sites:
// clang's flags after the target, and whether dsymutil links a dSYM (it
// skips DWARF 5 objects with debug_loclists, so DWARF 5 is read from the
// object file, as a dSYM's own debug map would point at).
type callSiteBuild struct {
	name  string
	flags []string
	dsym  bool
}

var callSiteBuilds = []callSiteBuild{
	{"dwarf4-dsym", []string{"-gdwarf-4"}, true},          // Apple's default: DW_TAG_call_site in DWARF 4
	{"dwarf5-object", []string{"-gdwarf-5"}, false},       // DW_AT_call_return_pc as DW_FORM_addrx
	{"gnu-object", []string{"-gdwarf-4", "-ggdb"}, false}, // DW_TAG_GNU_call_site, DW_AT_low_pc
}

// TestCallReturnMatchesDwarfdump builds a program generated from a fresh
// seed (and one pinned seed) at -O1 for arm64 and x86_64 in each
// callSiteBuild, and checks that
// the addresses CallReturn calls returns are exactly the return pcs
// llvm-dwarfdump lists, and that every other address of a function whose
// calls are all described is known not to be one.
func TestCallReturnMatchesDwarfdump(t *testing.T) {
	cc := testtool.Path(t, "clang-16", "clang-16", "compiles the program with call sites")
	ld := testtool.Path(t, "ld64.lld-16", "lld-16", "links it")
	dsymutil := testtool.Path(t, "dsymutil-16", "llvm-16", "links its dSYM")
	dwarfdump := testtool.Path(t, "llvm-dwarfdump-16", "llvm-16", "lists the call sites")
	seeds := []int64{gnuTailCallAtEndSeed, testtool.FreshSeed(t)}
	for i, seed := range seeds {
		t.Run(strconv.FormatInt(seed, 10), func(t *testing.T) {
			// A drawn program may make no direct call (every callee
			// inlined but those called through a pointer); the pinned
			// one makes both kinds, so the checks always meet some.
			checkCallSitesOfSeed(t, seed, i == 0, cc, ld, dsymutil, dwarfdump)
		})
	}
}

// gnuTailCallAtEndSeed gives a program whose f6 ends in a tail call: its
// DW_TAG_GNU_call_site has DW_AT_GNU_tail_call and a DW_AT_low_pc one
// past the function's end, which no call returns to. Drawn by a CI run
// whose reading of llvm-dwarfdump took it for a return pc.
const gnuTailCallAtEndSeed = 1795961020783530513

// checkCallSitesOfSeed builds the program of seed at -O1 for arm64 and
// x86_64 in each callSiteBuild and holds CallReturn and CallReaches to
// llvm-dwarfdump's listing; with mustCall, the program must list call
// sites, and calls that reach and calls that do not.
func checkCallSitesOfSeed(t *testing.T, seed int64, mustCall bool, cc, ld, dsymutil, dwarfdump string) {
	prog := progen.Generate(seed)
	dir := t.TempDir()
	src := filepath.Join(dir, "p.c")
	if err := os.WriteFile(src, []byte(prog.Source), 0o644); err != nil {
		t.Fatal(err)
	}
	targets := []struct {
		arch, triple, version string
		cpu                   macho.Cpu
	}{
		{"arm64", "arm64-apple-macos11", "11.0", macho.CpuArm64},
		{"x86_64", "x86_64-apple-macos10.15", "10.15", macho.CpuAmd64},
	}
	for _, tg := range targets {
		for _, b := range callSiteBuilds {
			t.Run(tg.arch+"-"+b.name, func(t *testing.T) {
				out := filepath.Join(dir, tg.arch+"-"+b.name)
				args := append([]string{"-target", tg.triple, "-O1"}, b.flags...)
				args = append(args, "-ffreestanding", "-nostdlib", "-fno-stack-protector", "-fno-builtin", "-c", "-o", out+".o", src)
				runTool(t, cc, args...)
				file := out + ".o"
				if b.dsym {
					runTool(t, ld, "-arch", tg.arch, "-platform_version", "macos", tg.version, tg.version, "-e", "_start", "-o", out, out+".o")
					runTool(t, dsymutil, out, "-o", out+".dSYM")
					file = filepath.Join(out+".dSYM", "Contents", "Resources", "DWARF", filepath.Base(out))
				}
				want, complete := dwarfdumpCallSites(t, runTool(t, dwarfdump, "--debug-info", file))
				if mustCall && len(want) == 0 {
					t.Fatalf("llvm-dwarfdump lists no call site in %s", file)
				}
				ix, err := New(dwarfSections(t, file, tg.cpu))
				if err != nil {
					t.Fatal(err)
				}
				// First questions, from goroutines beside lookups: the
				// call sites are read apart from the lookups' parse
				// (make race checks them concurrently).
				var wg sync.WaitGroup
				for range 4 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for _, a := range want {
							ix.CallReturn(a)
							ix.Lookup(a - 1)
						}
					}()
				}
				wg.Wait()
				var got []uint64
				for _, r := range complete {
					for a := r[0]; a < r[1]; a++ {
						known, isReturn := ix.CallReturn(a)
						if !known {
							t.Errorf("%#x in a function whose calls are all described: not known", a)
						}
						if isReturn {
							got = append(got, a)
						}
					}
				}
				// Return pcs outside such functions (none with clang) are
				// asked for directly.
				for _, a := range want {
					if !slices.ContainsFunc(complete, func(r [2]uint64) bool { return r[0] <= a && a < r[1] }) {
						if known, isReturn := ix.CallReturn(a); known && isReturn {
							got = append(got, a)
						}
					}
				}
				slices.Sort(got)
				got = slices.Compact(got)
				if !slices.Equal(got, want) {
					t.Errorf("return pcs read %#x, llvm-dwarfdump lists %#x", got, want)
				}
				if known, _ := ix.CallReturn(1 << 62); known {
					t.Errorf("an address no unit covers is known")
				}
				checkCallReaches(t, ix, dwarfdumpCallGraph(t, runTool(t, dwarfdump, "--debug-info", file)), mustCall)
			})
		}
	}
}

func runTool(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

var (
	dumpDIE  = regexp.MustCompile(`^0x[0-9a-f]+:\s+(DW_TAG_\w+)`)
	dumpAttr = regexp.MustCompile(`^\s+(DW_AT_\w+)\s+\((.*)\)$`)
)

// dwarfdumpCallSites reads llvm-dwarfdump --debug-info's text: the return
// pcs of DW_TAG_call_site (DW_AT_call_return_pc) and DW_TAG_GNU_call_site
// (DW_AT_low_pc), sorted, and the [low_pc, high_pc) of the subprograms
// with DW_AT_call_all_calls or DW_AT_GNU_all_call_sites.
func dwarfdumpCallSites(t *testing.T, dump string) (returns []uint64, complete [][2]uint64) {
	type die struct {
		tag   string
		attrs map[string]string
	}
	var dies []die
	for line := range strings.SplitSeq(dump, "\n") {
		if m := dumpDIE.FindStringSubmatch(line); m != nil {
			dies = append(dies, die{m[1], map[string]string{}})
		} else if m := dumpAttr.FindStringSubmatch(line); m != nil && len(dies) > 0 {
			dies[len(dies)-1].attrs[m[1]] = m[2]
		}
	}
	hex := func(s string) uint64 {
		v, err := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 64)
		if err != nil {
			t.Fatalf("llvm-dwarfdump: address %q: %v", s, err)
		}
		return v
	}
	for _, d := range dies {
		switch {
		case d.tag == "DW_TAG_call_site" && d.attrs["DW_AT_call_return_pc"] != "":
			returns = append(returns, hex(d.attrs["DW_AT_call_return_pc"]))
		case d.tag == "DW_TAG_GNU_call_site" && d.attrs["DW_AT_low_pc"] != "" && d.attrs["DW_AT_GNU_tail_call"] != "true":
			// A tail call's low_pc follows its jump: nothing returns there.
			returns = append(returns, hex(d.attrs["DW_AT_low_pc"]))
		case d.tag == "DW_TAG_subprogram" && (d.attrs["DW_AT_call_all_calls"] == "true" || d.attrs["DW_AT_GNU_all_call_sites"] == "true"):
			lo, hi := d.attrs["DW_AT_low_pc"], d.attrs["DW_AT_high_pc"]
			if lo == "" || hi == "" {
				t.Fatalf("llvm-dwarfdump: subprogram without low_pc/high_pc: %v", d.attrs)
			}
			complete = append(complete, [2]uint64{hex(lo), hex(hi)})
		}
	}
	slices.Sort(returns)
	return slices.Compact(returns), complete
}

// callGraph is what llvm-dwarfdump lists of a program's calls: per return
// address, the callee's entry (0 and false for a call through a register
// or to a function without code); per function entry, its tail calls'
// targets the same way, and whether its calls are all described.
type callGraph struct {
	calls    map[uint64]dumpCallee
	tails    map[uint64][]dumpCallee
	complete map[uint64]bool
	entries  []uint64
}

type dumpCallee struct {
	entry  uint64
	direct bool
}

// reaches is the answer CallReaches must give for the call returning to
// ret and the function at entry, by a search over g's tail calls.
func (g callGraph) reaches(ret, entry uint64) (known, reaches bool) {
	c, ok := g.calls[ret]
	if !ok || !c.direct {
		return false, false
	}
	seen := map[uint64]bool{c.entry: true}
	queue := []uint64{c.entry}
	sure := true
	for len(queue) > 0 {
		h := queue[0]
		queue = queue[1:]
		if h == entry {
			return true, true
		}
		sure = sure && g.complete[h]
		for _, t := range g.tails[h] {
			if !t.direct {
				sure = false
			} else if !seen[t.entry] {
				seen[t.entry] = true
				queue = append(queue, t.entry)
			}
		}
	}
	return sure, false
}

// checkCallReaches asks CallReaches of every listed call and every
// function, and of the calls' return addresses past the last one, and
// wants g's answers; with mustCall, the program's calls must give some
// of each.
func checkCallReaches(t *testing.T, ix *Index, g callGraph, mustCall bool) {
	t.Helper()
	var yes, no, unknown int
	for ret := range g.calls {
		for _, entry := range g.entries {
			wantKnown, wantReaches := g.reaches(ret, entry)
			known, reaches := ix.CallReaches(ret, entry)
			if known != wantKnown || reaches != wantReaches {
				t.Errorf("CallReaches(%#x, %#x) = %v, %v; llvm-dwarfdump's call sites say %v, %v", ret, entry, known, reaches, wantKnown, wantReaches)
			}
			switch {
			case !wantKnown:
				unknown++
			case wantReaches:
				yes++
			default:
				no++
			}
		}
		if known, _ := ix.CallReaches(ret+1, g.calls[ret].entry); known {
			if _, listed := g.calls[ret+1]; !listed {
				t.Errorf("CallReaches(%#x): no call returns there, but the answer is known", ret+1)
			}
		}
	}
	t.Logf("%d calls, %d functions: %d reach, %d refuted, %d not known", len(g.calls), len(g.entries), yes, no, unknown)
	if mustCall && (yes == 0 || no == 0) {
		t.Errorf("the program's calls gave %d reaching and %d refuted answers: want some of each", yes, no)
	}
}

var dumpIndent = regexp.MustCompile(`^0x([0-9a-f]+):( +)(DW_TAG_\w+|NULL)`)

// dwarfdumpCallGraph reads llvm-dwarfdump --debug-info's text into a
// callGraph, placing callees by their DIE offset: the DIE's low_pc, or
// that of the out-of-line copy or definition naming it
// (DW_AT_abstract_origin, DW_AT_specification).
func dwarfdumpCallGraph(t *testing.T, dump string) callGraph {
	type die struct {
		off, depth int
		tag        string
		attrs      map[string]string
	}
	var dies []*die
	for line := range strings.SplitSeq(dump, "\n") {
		if m := dumpIndent.FindStringSubmatch(line); m != nil {
			off, _ := strconv.ParseUint(m[1], 16, 64)
			dies = append(dies, &die{int(off), len(m[2]), m[3], map[string]string{}})
		} else if m := dumpAttr.FindStringSubmatch(line); m != nil && len(dies) > 0 {
			dies[len(dies)-1].attrs[m[1]] = m[2]
		}
	}
	num := func(s string) uint64 {
		v, err := strconv.ParseUint(strings.TrimPrefix(strings.Fields(s)[0], "0x"), 16, 64)
		if err != nil {
			t.Fatalf("llvm-dwarfdump: number %q: %v", s, err)
		}
		return v
	}
	entryOf := map[uint64]uint64{}
	for _, d := range dies {
		if d.tag != "DW_TAG_subprogram" || d.attrs["DW_AT_low_pc"] == "" {
			continue
		}
		lo := num(d.attrs["DW_AT_low_pc"])
		entryOf[uint64(d.off)] = lo
		for _, a := range []string{"DW_AT_abstract_origin", "DW_AT_specification"} {
			if v := d.attrs[a]; v != "" {
				if _, seen := entryOf[num(v)]; !seen {
					entryOf[num(v)] = lo
				}
			}
		}
	}
	g := callGraph{calls: map[uint64]dumpCallee{}, tails: map[uint64][]dumpCallee{}, complete: map[uint64]bool{}}
	var fn uint64 // the entry of the top-level function being read
	fnDepth := -1
	for _, d := range dies {
		if d.tag == "NULL" {
			continue
		}
		if d.depth <= fnDepth {
			fnDepth = -1
		}
		switch d.tag {
		case "DW_TAG_subprogram":
			if fnDepth >= 0 || d.attrs["DW_AT_low_pc"] == "" {
				continue
			}
			fn, fnDepth = num(d.attrs["DW_AT_low_pc"]), d.depth
			g.entries = append(g.entries, fn)
			g.complete[fn] = d.attrs["DW_AT_call_all_calls"] == "true" || d.attrs["DW_AT_GNU_all_call_sites"] == "true"
		case "DW_TAG_call_site", "DW_TAG_GNU_call_site":
			var c dumpCallee
			origin := d.attrs["DW_AT_call_origin"] + d.attrs["DW_AT_abstract_origin"]
			if origin != "" && d.attrs["DW_AT_call_target"]+d.attrs["DW_AT_GNU_call_site_target"] == "" {
				c.entry, c.direct = entryOf[num(origin)]
			}
			switch {
			case d.attrs["DW_AT_call_tail_call"] == "true" || d.attrs["DW_AT_GNU_tail_call"] == "true":
				if fnDepth < 0 {
					t.Fatalf("llvm-dwarfdump: a tail call at %#x outside every function", d.off)
				}
				g.tails[fn] = append(g.tails[fn], c)
			case d.attrs["DW_AT_call_return_pc"] != "":
				g.calls[num(d.attrs["DW_AT_call_return_pc"])] = c
			case d.attrs["DW_AT_low_pc"] != "":
				g.calls[num(d.attrs["DW_AT_low_pc"])] = c
			}
		}
	}
	return g
}
