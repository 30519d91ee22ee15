package debuginfo

import (
	"bufio"
	"bytes"
	"debug/dwarf"
	"debug/macho"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "regenerate testdata/golden with llvm-symbolizer")

// dsym is a DWARF file of the corpus and the slice of it to read.
type dsym struct {
	name string // golden file name
	path string // relative to the corpus
	cpu  macho.Cpu
	arch string // llvm-symbolizer --default-arch, for fat files
}

var dsyms = []dsym{
	// Built by testdata/src/build.sh (clang 16, dsymutil 16).
	{"inl-dwarf2", "testdata/fixtures/inl-dwarf2.dwarf", macho.CpuArm64, ""},
	{"inl-dwarf4", "testdata/fixtures/inl-dwarf4.dwarf", macho.CpuArm64, ""},
	{"inl-dwarf5", "testdata/fixtures/inl-dwarf5.o", macho.CpuArm64, ""},
	{"pprof-exe_mac_64", "pprof/internal/binutils/testdata/exe_mac_64.dSYM/Contents/Resources/DWARF/exe_mac_64", macho.CpuAmd64, ""},
	{"pprof-lib_mac_64", "pprof/internal/binutils/testdata/lib_mac_64.dSYM/Contents/Resources/DWARF/lib_mac_64", macho.CpuAmd64, ""},
	{"symbolic-crash", "symbolic/symbolic-testutils/fixtures/macos/crash.dSYM/Contents/Resources/DWARF/crash", macho.CpuAmd64, ""},
	{"symbolic-overlapping_funcs", "symbolic/symbolic-testutils/fixtures/macos/overlapping_funcs.dSYM/Contents/Resources/DWARF/overlapping_funcs", macho.CpuAmd64, ""},
	{"CrashingTest-x86_64", "macsymbolicator/MacSymbolicatorTests/Resources/dSYMs/CrashingTest.dSYM/Contents/Resources/DWARF/CrashingTest", macho.CpuAmd64, "x86_64"},
	{"CrashingTest-arm64", "macsymbolicator/MacSymbolicatorTests/Resources/dSYMs/CrashingTest.dSYM/Contents/Resources/DWARF/CrashingTest", macho.CpuArm64, "arm64"},
	// DWARF 5 range lists by index (DW_FORM_rnglistx) on inlined
	// subroutines and the unit (testdata/src/build.sh).
	{"rnglist-dwarf5", "testdata/fixtures/rnglist-dwarf5.o", macho.CpuArm64, ""},
}

// probeStep names the files whose golden test also asks about every
// address a step apart in every function (every arm64 instruction), not
// only where ranges start.
var probeStep = map[string]uint64{"rnglist-dwarf5": 4}

// goldenFrame is one frame as llvm-symbolizer printed it. Raw is the name
// with --no-demangle: the linkage name, else the DWARF name.
type goldenFrame struct {
	Raw, Demangled, File string
	Line, Column         int
	Inlined              bool
}

// probeAddrs lists the addresses the golden test asks about, found with
// debug/dwarf directly rather than through the Index: the low PC and the
// middle of every subprogram with code, and the start of every range of
// every inlined subroutine (where the inline chain is deepest).
func probeAddrs(t *testing.T, secs map[string][]byte) []uint64 {
	t.Helper()
	return probeAddrsStep(t, secs, 0)
}

// probeAddrsStep is probeAddrs, plus every step-th address of every
// subprogram range when step is not 0.
func probeAddrsStep(t *testing.T, secs map[string][]byte, step uint64) []uint64 {
	t.Helper()
	d, err := newData(normalize(secs))
	if err != nil {
		t.Fatal(err)
	}
	var addrs []uint64
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if e == nil {
			break
		}
		if e.Tag != dwarf.TagSubprogram && e.Tag != dwarf.TagInlinedSubroutine {
			continue
		}
		ranges, err := d.Ranges(e)
		if err != nil {
			t.Fatal(err)
		}
		for i, rg := range ranges {
			if rg[0] >= rg[1] {
				continue
			}
			addrs = append(addrs, rg[0])
			if e.Tag == dwarf.TagSubprogram && i == 0 {
				addrs = append(addrs, rg[0]+(rg[1]-rg[0])/2)
			}
			for a := rg[0]; step > 0 && e.Tag == dwarf.TagSubprogram && a < rg[1]; a += step {
				addrs = append(addrs, a)
			}
		}
	}
	slices.Sort(addrs)
	return slices.Compact(addrs)
}

// TestGolden checks every probe address against llvm-symbolizer's answer:
// function (mangled and demangled), file, line, column and inline chain.
func TestGolden(t *testing.T) {
	for _, ds := range dsyms {
		t.Run(ds.name, func(t *testing.T) {
			path := ds.path
			if !strings.HasPrefix(path, "testdata/") {
				path = corpusFile(t, ds.path)
			}
			secs := dwarfSections(t, path, ds.cpu)
			addrs := probeAddrsStep(t, secs, probeStep[ds.name])
			if len(addrs) == 0 {
				t.Fatalf("%s: no functions with code in the DWARF", ds.path)
			}
			golden := filepath.Join("testdata", "golden", ds.name+".txt")
			if *update {
				writeGolden(t, golden, ds, path, addrs)
			}
			want := readGolden(t, golden)
			gotAddrs := make([]uint64, 0, len(want))
			for a := range want {
				gotAddrs = append(gotAddrs, a)
			}
			slices.Sort(gotAddrs)
			if diff := cmp.Diff(addrs, gotAddrs); diff != "" {
				t.Fatalf("%s probes differ from the golden file's (-dwarf +golden); run go test -update:\n%s", golden, diff)
			}

			ix, err := New(secs)
			if err != nil {
				t.Fatalf("New: %v", err)
			}
			inlined := 0
			var demangleDiffs []string
			for _, a := range addrs {
				frames, _ := ix.Lookup(a)
				var got []goldenFrame
				for _, f := range frames {
					raw := f.LinkageName
					if raw == "" {
						raw = f.Function
					}
					got = append(got, goldenFrame{raw, f.Function, f.File, f.Line, f.Column, f.Inlined})
				}
				if len(got) > 1 {
					inlined++
				}
				for i := range min(len(got), len(want[a])) {
					w, g := want[a][i], &got[i]
					if knownDemangleBugs[g.Raw] && g.Raw == w.Raw && g.Demangled != w.Demangled {
						demangleDiffs = append(demangleDiffs, g.Raw)
						g.Demangled = w.Demangled // checked below, as a set
					}
				}
				if diff := cmp.Diff(want[a], got); diff != "" {
					t.Errorf("Lookup(%#x) differs from llvm-symbolizer (-want +got):\n%s", a, diff)
				}
			}
			t.Logf("%d addresses, %d with inlined frames", len(addrs), inlined)

			// Every known demangler divergence must still happen, so that
			// the list shrinks when the library is fixed.
			slices.Sort(demangleDiffs)
			demangleDiffs = slices.Compact(demangleDiffs)
			var wantDiffs []string
			for name := range knownDemangleBugs {
				if nameIn(want, name) {
					wantDiffs = append(wantDiffs, name)
				}
			}
			slices.Sort(wantDiffs)
			if diff := cmp.Diff(wantDiffs, demangleDiffs); diff != "" {
				t.Errorf("names demangled differently from llvm-symbolizer (-known +seen):\n%s", diff)
			}
		})
	}
}

// knownDemangleBugs lists the linkage names that
// github.com/ianlancetaylor/demangle renders differently from LLVM's
// demangler: all are libc++ templates whose enable_if<> argument holds an
// "sr" (scope-resolution) expression, after which the library numbers its
// substitutions differently and prints the wrong type for S3_/S6_ (for
// example "is_move_constructible&" for "unsigned short*&"). The mangled
// name and every other field still match llvm-symbolizer exactly.
var knownDemangleBugs = map[string]bool{
	"_ZNSt3__115__move_backwardIttEENS_9enable_ifIXaasr7is_sameINS_12remove_constIT_E4typeET0_EE5valuesr28is_trivially_copy_assignableIS6_EE5valueEPS6_E4typeEPS3_SA_S7_":                                                                           true,
	"_ZNSt3__116allocator_traitsINS_9allocatorIhEEE20__construct_backwardIhEENS_9enable_ifIXaaoosr7is_sameIS2_NS1_IT_EEEE5valuentsr15__has_constructIS2_PS6_S6_EE5valuesr31is_trivially_move_constructibleIS6_EE5valueEvE4typeERS2_S8_S8_RS8_":      true,
	"_ZNSt3__116allocator_traitsINS_9allocatorIhEEE25__construct_range_forwardIhEENS_9enable_ifIXaaoosr7is_sameIS2_NS1_IT_EEEE5valuentsr15__has_constructIS2_PS6_S6_EE5valuesr31is_trivially_move_constructibleIS6_EE5valueEvE4typeERS2_S8_S8_RS8_": true,
	"_ZNSt3__116allocator_traitsINS_9allocatorItEEE19__construct_forwardItEENS_9enable_ifIXaaoosr7is_sameIS2_NS1_IT_EEEE5valuentsr15__has_constructIS2_PS6_S6_EE5valuesr31is_trivially_move_constructibleIS6_EE5valueEvE4typeERS2_S8_S8_RS8_":       true,
	"_ZNSt3__116allocator_traitsINS_9allocatorItEEE20__construct_backwardItEENS_9enable_ifIXaaoosr7is_sameIS2_NS1_IT_EEEE5valuentsr15__has_constructIS2_PS6_S6_EE5valuesr31is_trivially_move_constructibleIS6_EE5valueEvE4typeERS2_S8_S8_RS8_":      true,
	"_ZNSt3__14swapIN15google_breakpad15DynamicImageRefEEENS_9enable_ifIXaasr21is_move_constructibleIT_EE5valuesr18is_move_assignableIS4_EE5valueEvE4typeERS4_S7_":                                                                                  true,
	"_ZNSt3__14swapIP18MDMemoryDescriptorEENS_9enable_ifIXaasr21is_move_constructibleIT_EE5valuesr18is_move_assignableIS4_EE5valueEvE4typeERS4_S7_":                                                                                                 true,
	"_ZNSt3__14swapIPN15google_breakpad15DynamicImageRefEEENS_9enable_ifIXaasr21is_move_constructibleIT_EE5valuesr18is_move_assignableIS5_EE5valueEvE4typeERS5_S8_":                                                                                 true,
	"_ZNSt3__14swapIPhEENS_9enable_ifIXaasr21is_move_constructibleIT_EE5valuesr18is_move_assignableIS3_EE5valueEvE4typeERS3_S6_":                                                                                                                    true,
	"_ZNSt3__14swapIPtEENS_9enable_ifIXaasr21is_move_constructibleIT_EE5valuesr18is_move_assignableIS3_EE5valueEvE4typeERS3_S6_":                                                                                                                    true,
	"_ZNSt3__16__moveIN15google_breakpad15DynamicImageRefES2_EENS_9enable_ifIXaasr7is_sameINS_12remove_constIT_E4typeET0_EE5valuesr28is_trivially_copy_assignableIS8_EE5valueEPS8_E4typeEPS5_SC_S9_":                                                true,
	"_ZNSt3__16vectorIhNS_9allocatorIhEEE18__construct_at_endIPhEENS_9enable_ifIXsr21__is_forward_iteratorIT_EE5valueEvE4typeES7_S7_m":                                                                                                              true,
}

// nameIn reports whether any golden frame has the raw name.
func nameIn(golden map[uint64][]goldenFrame, raw string) bool {
	for _, frames := range golden {
		for _, f := range frames {
			if f.Raw == raw {
				return true
			}
		}
	}
	return false
}

// symbolizer returns the llvm-symbolizer to generate golden files with.
func symbolizer(t *testing.T) string {
	for _, name := range []string{"llvm-symbolizer-16", "llvm-symbolizer"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("-update needs llvm-symbolizer on PATH")
	return ""
}

// llvmJSON is one line of llvm-symbolizer --output-style=JSON.
type llvmJSON struct {
	Address string
	Symbol  []struct {
		FunctionName, FileName string
		Line, Column           int
	}
}

// runSymbolizer asks llvm-symbolizer about addrs; extra adds flags.
func runSymbolizer(t *testing.T, ds dsym, path string, addrs []uint64, extra ...string) []llvmJSON {
	args := []string{"--obj=" + path, "--inlines", "--functions=linkage", "--output-style=JSON"}
	if ds.arch != "" {
		args = append(args, "--default-arch="+ds.arch)
	}
	args = append(args, extra...)
	var in bytes.Buffer
	for _, a := range addrs {
		fmt.Fprintf(&in, "%#x\n", a)
	}
	cmd := exec.Command(symbolizer(t), args...)
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("llvm-symbolizer %v: %v", args, err)
	}
	var res []llvmJSON
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var j llvmJSON
		if err := json.Unmarshal(sc.Bytes(), &j); err != nil {
			t.Fatalf("llvm-symbolizer output %q: %v", sc.Text(), err)
		}
		res = append(res, j)
	}
	if len(res) != len(addrs) {
		t.Fatalf("llvm-symbolizer answered %d addresses, want %d", len(res), len(addrs))
	}
	return res
}

// writeGolden records llvm-symbolizer's answers: one line per frame,
// address, frame number, raw name, demangled name, file, line, column,
// tab-separated.
func writeGolden(t *testing.T, golden string, ds dsym, path string, addrs []uint64) {
	raw := runSymbolizer(t, ds, path, addrs, "--no-demangle")
	dem := runSymbolizer(t, ds, path, addrs)
	var b bytes.Buffer
	obj := ds.path
	if !strings.HasPrefix(obj, "testdata/") {
		obj = "CORPUS/" + obj
	}
	fmt.Fprintf(&b, "# llvm-symbolizer --obj=%s --inlines --functions=linkage --output-style=JSON [--no-demangle]", obj)
	if ds.arch != "" {
		fmt.Fprintf(&b, " --default-arch=%s", ds.arch)
	}
	v, _ := exec.Command(symbolizer(t), "--version").Output()
	fmt.Fprintf(&b, "\n# %s\n", strings.Join(strings.Fields(string(v)), " "))
	b.WriteString("# F<tab>n<tab>path: file n; N<tab>n<tab>raw name<tab>demangled name (= when the same): name n;\n")
	b.WriteString("# then addr<tab>frame<tab>name n<tab>file n<tab>line<tab>column\n")
	fileNum := map[string]int{"": 0}
	nameNum := map[[2]string]int{{"", ""}: 0}
	var lines bytes.Buffer
	for i, a := range addrs {
		if len(raw[i].Symbol) != len(dem[i].Symbol) {
			t.Fatalf("%#x: llvm-symbolizer gave %d frames mangled, %d demangled", a, len(raw[i].Symbol), len(dem[i].Symbol))
		}
		for k, s := range raw[i].Symbol {
			n, ok := fileNum[s.FileName]
			if !ok {
				n = len(fileNum)
				fileNum[s.FileName] = n
				fmt.Fprintf(&b, "F\t%d\t%s\n", n, s.FileName)
			}
			d := dem[i].Symbol[k].FunctionName
			if d == s.FunctionName {
				d = "="
			}
			nn, ok := nameNum[[2]string{s.FunctionName, d}]
			if !ok {
				nn = len(nameNum)
				nameNum[[2]string{s.FunctionName, d}] = nn
				fmt.Fprintf(&b, "N\t%d\t%s\t%s\n", nn, s.FunctionName, d)
			}
			fmt.Fprintf(&lines, "%#x\t%d\t%d\t%d\t%d\t%d\n", a, k, nn, n, s.Line, s.Column)
		}
	}
	b.Write(lines.Bytes())
	if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// readGolden parses a golden file into the frames Lookup should return per
// address. llvm-symbolizer marks a frame as inlined by placing it before
// the last one; it prints an empty frame when it knows nothing.
func readGolden(t *testing.T, golden string) map[uint64][]goldenFrame {
	data, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to generate it)", err)
	}
	want := make(map[uint64][]goldenFrame)
	files := map[string]string{"0": ""}
	names := map[string][2]string{"0": {"", ""}}
	for n, line := range strings.Split(string(data), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) == 3 && f[0] == "F" {
			files[f[1]] = f[2]
			continue
		}
		if len(f) == 4 && f[0] == "N" {
			if f[3] == "=" {
				f[3] = f[2]
			}
			names[f[1]] = [2]string{f[2], f[3]}
			continue
		}
		if len(f) != 6 {
			t.Fatalf("%s:%d: %d fields, want 6", golden, n+1, len(f))
		}
		addr, err1 := strconv.ParseUint(f[0], 0, 64)
		ln, err2 := strconv.Atoi(f[4])
		col, err3 := strconv.Atoi(f[5])
		if err1 != nil || err2 != nil || err3 != nil {
			t.Fatalf("%s:%d: malformed line %q", golden, n+1, line)
		}
		file, ok1 := files[f[3]]
		name, ok2 := names[f[2]]
		if !ok1 || !ok2 {
			t.Fatalf("%s:%d: file %s or name %s not declared", golden, n+1, f[3], f[2])
		}
		if file != "" {
			// debug/dwarf joins directory and file name with path.Join,
			// which cleans "dir/../x"; llvm-symbolizer keeps the raw text.
			file = path.Clean(file)
		}
		fr := goldenFrame{Raw: name[0], Demangled: name[1], File: file, Line: ln, Column: col}
		if fr == (goldenFrame{}) {
			want[addr] = nil
			continue
		}
		want[addr] = append(want[addr], fr)
	}
	for a, frames := range want {
		for i := range frames {
			frames[i].Inlined = i < len(frames)-1
		}
		want[a] = frames
	}
	return want
}
