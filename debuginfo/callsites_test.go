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
	"time"

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
// seed at -O1 for arm64 and x86_64 in each callSiteBuild, and checks that
// the addresses CallReturn calls returns are exactly the return pcs
// llvm-dwarfdump lists, and that every other address of a function whose
// calls are all described is known not to be one.
func TestCallReturnMatchesDwarfdump(t *testing.T) {
	cc := testtool.Path(t, "clang-16", "clang-16", "compiles the program with call sites")
	ld := testtool.Path(t, "ld64.lld-16", "lld-16", "links it")
	dsymutil := testtool.Path(t, "dsymutil-16", "llvm-16", "links its dSYM")
	dwarfdump := testtool.Path(t, "llvm-dwarfdump-16", "llvm-16", "lists the call sites")
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
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
				if len(want) == 0 {
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
		case d.tag == "DW_TAG_GNU_call_site" && d.attrs["DW_AT_low_pc"] != "":
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
