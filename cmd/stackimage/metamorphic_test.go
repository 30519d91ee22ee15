package main

import (
	"debug/macho"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/stackimage/stackimage/internal/testcorpus"
	"github.com/stackimage/stackimage/symbolize"
)

// A metamorphic test of the walker over every memory dump we have: a walk
// with fewer symbol files may find fewer frames, never other ones. Each
// input is walked with all its symbol files, then with each subset
// (binary only, dSYM only, Breakpad .sym, .sym without STACK CFI, none);
// every reduced walk's machine frames must be, in order, frames of the
// full walk (a subsequence: nothing the full walk lacks, nothing out of
// order). docs/walker.md ("Fewer symbol files, fewer frames") holds the
// table this test logs: go test ./cmd/stackimage -run TestFewerSymbolFiles -v.

// symbolSet is one subset of an input's symbol files.
type symbolSet struct {
	name  string
	files []string // paths to link into the --symbols directory
}

// metamorphicInput is one dump with its symbol files by kind; a kind
// with no file is left out of the subsets.
type metamorphicInput struct {
	name          string
	path          string
	binary, dsym  string
	sym           string // a Breakpad .sym with STACK CFI
	symNoCFI      string // a Breakpad .sym without STACK CFI
	writeSymNoCFI bool   // symNoCFI is made from sym by the test
}

func (in metamorphicInput) subsets() []symbolSet {
	var all []string
	for _, f := range []string{in.binary, in.dsym, in.sym} {
		if f != "" {
			all = append(all, f)
		}
	}
	if in.sym == "" && in.symNoCFI != "" {
		all = append(all, in.symNoCFI)
	}
	sets := []symbolSet{{"all", all}}
	for _, s := range []symbolSet{{"binary", []string{in.binary}}, {"dSYM", []string{in.dsym}},
		{".sym", []string{in.sym}}, {".sym without CFI", []string{in.symNoCFI}}} {
		if s.files[0] != "" {
			sets = append(sets, s)
		}
	}
	return append(sets, symbolSet{"none", nil})
}

// walkedFrames symbolicates path with the files linked into a fresh
// --symbols directory and returns each walked thread's machine frames
// (their addresses), by thread id; a reporter's backtrace is left out.
func walkedFrames(t *testing.T, path string, files []string) map[uint64][]string {
	t.Helper()
	dir := t.TempDir()
	for i, f := range files {
		if err := os.Symlink(f, filepath.Join(dir, fmt.Sprintf("%d-%s", i, filepath.Base(f)))); err != nil {
			t.Fatal(err)
		}
	}
	out := runOK(t, "symbolicate", path, "--symbols", dir, "--json")
	var rep jsonReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	threads := map[uint64][]string{}
	for _, th := range rep.Threads {
		if th.StopReason == symbolize.StopNone {
			continue // a reporter's backtrace, not a walk
		}
		var addrs []string
		for _, f := range th.Frames {
			if !f.Inlined {
				addrs = append(addrs, f.Address)
			}
		}
		threads[th.ID] = addrs
	}
	return threads
}

// isSubsequence reports whether every element of sub is in full, in order.
func isSubsequence(sub, full []string) bool {
	i := 0
	for _, s := range sub {
		for i < len(full) && full[i] != s {
			i++
		}
		if i == len(full) {
			return false
		}
		i++
	}
	return true
}

// writePublicSym writes a Breakpad .sym of a Mach-O binary's text symbols
// as PUBLIC records, without FUNC sizes or STACK CFI: what a symbol server
// holds for a module whose unwind tables were not dumped.
func writePublicSym(t *testing.T, binary, dir string) string {
	t.Helper()
	f, err := macho.Open(binary)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var id string
	for _, l := range f.Loads {
		if raw := l.Raw(); len(raw) == 24 && macho.LoadCmd(f.ByteOrder.Uint32(raw)) == 0x1b { // LC_UUID
			id = strings.ToUpper(fmt.Sprintf("%x", raw[8:24])) + "0"
		}
	}
	text := f.Section("__text")
	textSeg := f.Segment("__TEXT")
	if id == "" || text == nil || textSeg == nil || f.Symtab == nil {
		t.Fatalf("%s: no UUID, __text or symbol table", binary)
	}
	arch := map[macho.Cpu]string{macho.CpuAmd64: "x86_64", macho.CpuArm64: "arm64", macho.CpuArm: "armv7", macho.Cpu386: "x86"}[f.Cpu]
	var b strings.Builder
	fmt.Fprintf(&b, "MODULE mac %s %s %s\n", arch, id, filepath.Base(binary))
	var lines []string
	for _, s := range f.Symtab.Syms {
		if s.Type&0x0e == 0x0e && s.Value >= text.Addr && s.Value < text.Addr+text.Size && s.Name != "" { // N_SECT in __text
			lines = append(lines, fmt.Sprintf("PUBLIC %x 0 %s\n", s.Value-textSeg.Addr, strings.TrimPrefix(s.Name, "_")))
		}
	}
	sort.Strings(lines)
	b.WriteString(strings.Join(slices.Compact(lines), ""))
	path := filepath.Join(dir, filepath.Base(binary)+".sym")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// withoutCFI writes sym's lines but its STACK records to dir.
func withoutCFI(t *testing.T, sym, dir string) string {
	t.Helper()
	data, err := os.ReadFile(sym)
	if err != nil {
		t.Fatal(err)
	}
	var kept []string
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if !strings.HasPrefix(line, "STACK ") {
			kept = append(kept, line)
		}
	}
	path := filepath.Join(dir, "nocfi-"+filepath.Base(sym))
	if err := os.WriteFile(path, []byte(strings.Join(kept, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// metamorphicInputs lists the committed captures, each with its fixture's
// binary, dSYM and a .sym the test writes (arm64: FUNC records and STACK
// CFI from the binary's tables, writeCFISym, and that without its STACK
// records; others: PUBLIC records only), and the corpus's memory dumps
// with the symbol files the corpus holds for them.
func metamorphicInputs(t *testing.T) []metamorphicInput {
	symDir := t.TempDir()
	var ins []metamorphicInput
	paths, err := filepath.Glob(filepath.Join(snapshotsDir, "*.json"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no snapshots in %s (%v)", snapshotsDir, err)
	}
	for _, path := range paths {
		name := strings.TrimSuffix(filepath.Base(path), ".json")
		m := fixtureOfSnapshot.FindStringSubmatch(name)
		if m == nil {
			t.Fatalf("%s: cannot tell its fixture from the name", name)
		}
		in := metamorphicInput{name: "fixtures/snapshots/" + name + ".json", path: path}
		for _, p := range []*string{&in.binary, &in.dsym} {
			f := filepath.Join(symbolsDir, m[1])
			if p == &in.dsym {
				f += ".dSYM"
			}
			if _, err := os.Stat(f); err == nil {
				*p, _ = filepath.Abs(f)
			}
		}
		switch {
		case strings.Contains(name, "arm64") && in.binary != "":
			// A .sym with STACK CFI from the binary's own tables.
			in.sym = writeCFISym(t, in.binary, "", filepath.Join(symDir, name))
			in.symNoCFI = withoutCFI(t, in.sym, symDir)
		case in.binary != "":
			in.symNoCFI = writePublicSym(t, in.binary, symDir)
		}
		ins = append(ins, in)
	}
	corpus, err := testcorpus.Find()
	if err != nil {
		t.Logf("no corpus (%v): the captures alone", err)
		return ins
	}
	macos := filepath.Join(corpus, "symbolic", "symbolic-testutils", "fixtures", "macos")
	sym := filepath.Join(macos, "crash.sym")
	ins = append(ins,
		metamorphicInput{name: "corpus minidump/symbolicator-macos.dmp", path: filepath.Join(corpus, "minidump", "symbolicator-macos.dmp"),
			binary: filepath.Join(macos, "crash"), dsym: filepath.Join(macos, "crash.dSYM"), sym: sym, symNoCFI: withoutCFI(t, sym, symDir)},
		// No symbol file in the corpus has the UUIDs of its modules.
		metamorphicInput{name: "corpus minidump/simple-crashpad.dmp", path: filepath.Join(corpus, "minidump", "simple-crashpad.dmp")})
	return ins
}

func TestFewerSymbolFiles(t *testing.T) {
	var table strings.Builder
	cols := []string{"all", "binary", "dSYM", ".sym", ".sym without CFI", "none"}
	fmt.Fprintf(&table, "| input | %s |\n|---|%s\n", strings.Join(cols, " | "), strings.Repeat("---:|", len(cols)))
	totals := map[string][2]int{}
	for _, in := range metamorphicInputs(t) {
		sets := in.subsets()
		full := walkedFrames(t, in.path, sets[0].files)
		fullFrames := 0
		for _, fr := range full {
			fullFrames += len(fr)
		}
		cells := map[string]string{}
		for _, set := range sets {
			got := walkedFrames(t, in.path, set.files)
			found := 0
			for id, frames := range got {
				if !isSubsequence(frames, full[id]) {
					t.Errorf("%s, thread %d, with %s: frames %q are not a subsequence of the full walk's %q",
						in.name, id, set.name, frames, full[id])
				}
				found += len(frames)
			}
			if len(got) != len(full) {
				t.Errorf("%s with %s: %d walked threads, the full walk %d", in.name, set.name, len(got), len(full))
			}
			cells[set.name] = fmt.Sprintf("%d/%d", found, fullFrames)
			tot := totals[set.name]
			totals[set.name] = [2]int{tot[0] + found, tot[1] + fullFrames}
		}
		row := []string{in.name}
		for _, c := range cols {
			row = append(row, cmpOr(cells[c], "–"))
		}
		fmt.Fprintf(&table, "| %s |\n", strings.Join(row, " | "))
	}
	row := []string{"total"}
	for _, c := range cols {
		row = append(row, fmt.Sprintf("%d/%d", totals[c][0], totals[c][1]))
	}
	fmt.Fprintf(&table, "| %s |\n", strings.Join(row, " | "))
	t.Logf("machine frames found of the full walk's, per input and symbol files:\n%s", table.String())
}

// cmpOr returns s, or dflt when s is empty.
func cmpOr(s, dflt string) string {
	if s == "" {
		return dflt
	}
	return s
}
