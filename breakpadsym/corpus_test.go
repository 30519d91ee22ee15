package breakpadsym

import (
	"debug/dwarf"
	"debug/macho"
	"encoding/hex"
	"os"
	"path"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stackimage/stackimage/internal/testcorpus"
)

func readCorpusSym(t *testing.T, rel string) (*File, string) {
	t.Helper()
	data, err := os.ReadFile(testcorpus.File(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	f := mustParse(t, string(data))
	return f, string(data)
}

// textFunc is a FUNC record and its line records as a plain field split
// of the text reads them: a second reading, independent of the parser's.
type textFunc struct {
	addr, size uint64
	name       string
	lines      [][2]uint64 // address, size
}

func splitFuncs(t *testing.T, text string) []textFunc {
	var funcs []textFunc
	hex := func(s string) uint64 {
		v, err := strconv.ParseUint(s, 16, 64)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		return v
	}
	for _, line := range strings.Split(text, "\n") {
		fields := strings.Fields(line)
		switch {
		case len(fields) == 0:
		case fields[0] == "FUNC":
			if fields[1] == "m" {
				fields = fields[1:]
			}
			funcs = append(funcs, textFunc{addr: hex(fields[1]), size: hex(fields[2]), name: strings.Join(fields[4:], " ")})
		case len(fields) == 4 && strings.ToLower(fields[0]) == fields[0] && len(funcs) > 0:
			fn := &funcs[len(funcs)-1]
			fn.lines = append(fn.lines, [2]uint64{hex(fields[0]), hex(fields[1])})
		}
	}
	return funcs
}

// TestCorpusSentryExample checks the arm64 symbol file symbolicator's
// tests use against facts read from its text directly.
func TestCorpusSentryExample(t *testing.T) {
	f, text := readCorpusSym(t, "minidump/sentry_example.sym")
	want := Module{OS: "mac", Arch: "arm64", DebugID: "73781EDEBF5B34EC81B2749A0F1FA5FD0", Name: "sentry_example"}
	if diff := cmp.Diff(want, f.Module); diff != "" {
		t.Errorf("Module (-want +got):\n%s", diff)
	}
	wantUUID := [16]byte{0x73, 0x78, 0x1e, 0xde, 0xbf, 0x5b, 0x34, 0xec, 0x81, 0xb2, 0x74, 0x9a, 0x0f, 0x1f, 0xa5, 0xfd}
	if f.Module.UUID() != wantUUID || f.Module.Age() != 0 {
		t.Errorf("UUID, Age = %x, %d, want %x, 0", f.Module.UUID(), f.Module.Age(), wantUUID)
	}
	m, err := ReadModuleLine(strings.NewReader(text))
	if err != nil || m != want {
		t.Errorf("ReadModuleLine = %+v, %v, want %+v", m, err, want)
	}

	textFuncs := splitFuncs(t, text)
	funcs := f.Funcs()
	if len(funcs) != len(textFuncs) || len(funcs) == 0 {
		t.Fatalf("%d FUNC records parsed, the text has %d", len(funcs), len(textFuncs))
	}
	for i, fn := range funcs {
		tf := textFuncs[i] // the file lists them in address order
		if fn.Address != tf.addr || fn.Size != tf.size || fn.Name != tf.name || len(fn.Lines) != len(tf.lines) {
			t.Errorf("FUNC %d = %#x %#x %q with %d lines, text says %#x %#x %q with %d", i, fn.Address, fn.Size, fn.Name, len(fn.Lines), tf.addr, tf.size, tf.name, len(tf.lines))
		}
		for _, l := range fn.Lines {
			if l.Address < fn.Address || l.Address+uint64(l.Size) > fn.Address+fn.Size {
				t.Errorf("line record %#x+%#x lies outside FUNC %q [%#x, %#x)", l.Address, l.Size, fn.Name, fn.Address, fn.Address+fn.Size)
			}
			sym, err := f.Lookup(l.Address + uint64(l.Size) - 1)
			ok := err == nil
			if !ok || sym.Name != fn.Name || sym.Frames[0].Line != l.Line {
				t.Errorf("Lookup(%#x) = %q line %d, want %q line %d", l.Address+uint64(l.Size)-1, sym.Name, sym.Frames[0].Line, fn.Name, l.Line)
			}
		}
		for _, addr := range []uint64{fn.Address, fn.Address + fn.Size - 1} {
			sym, err := f.Lookup(addr)
			ok := err == nil
			if !ok || sym.Name != fn.Name || sym.Address != fn.Address || sym.Public {
				t.Errorf("Lookup(%#x) = %q at %#x, want FUNC %q at %#x", addr, sym.Name, sym.Address, fn.Name, fn.Address)
			}
		}
	}

	// "STACK CFI INIT d98 24 .cfa: sp 0 + .ra: x30": a leaf whose return
	// address is still in the link register.
	rules, ok := f.CFIRules(0xd98 + 0x23)
	if !ok {
		t.Fatal("CFIRules(0xdbb): none")
	}
	caller, err := rules.Eval(MapRegisters(map[string]uint64{"sp": 0x16fdff000, "x30": 0x100001234}), nil, 8)
	if diff := cmp.Diff(map[string]uint64{".cfa": 0x16fdff000, ".ra": 0x100001234}, caller); err != nil || diff != "" {
		t.Errorf("Eval: %v (-want +got):\n%s", err, diff)
	}
	if _, ok := f.CFIRules(0xd98 + 0x24); ok {
		t.Errorf("CFIRules(0xdbc): found, want none past the INIT record's range")
	}
}

// snapshot holds what symbolicator's expected output for its macOS
// minidump says about one module and the frames in it.
type snapshot struct {
	debugID   string
	imageAddr uint64
	frames    []uint64 // instruction addresses of the frames in the module, innermost first
}

// readSnapshot reads symbolicator-macos.expected.snap (YAML written by
// insta) line by line for the module whose code_file ends in "/"+name.
func readSnapshot(t *testing.T, name string) snapshot {
	data, err := os.ReadFile(testcorpus.File(t, "minidump/symbolicator-macos.expected.snap"))
	if err != nil {
		t.Fatal(err)
	}
	value := func(line string) string {
		_, v, _ := strings.Cut(line, ": ")
		return strings.Trim(v, `"`)
	}
	parseHex := func(s string) uint64 {
		v, err := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 64)
		if err != nil {
			t.Fatalf("snapshot: %q: %v", s, err)
		}
		return v
	}
	var snap snapshot
	var lastAddr uint64
	var block map[string]string
	flush := func() {
		if block != nil && path.Base(block["code_file"]) == name {
			snap.debugID, snap.imageAddr = block["debug_id"], parseHex(block["image_addr"])
		}
		block = nil
	}
	for _, line := range strings.Split(string(data), "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trimmed, "instruction_addr:"):
			lastAddr = parseHex(value(trimmed))
		case strings.HasPrefix(trimmed, "package:") && path.Base(value(trimmed)) == name:
			snap.frames = append(snap.frames, lastAddr)
		case strings.HasPrefix(line, "  - debug_status:"):
			flush()
			block = map[string]string{}
		case block != nil && strings.HasPrefix(line, "    ") && !strings.HasPrefix(line, "     "):
			k, _, _ := strings.Cut(trimmed, ":")
			block[k] = value(trimmed)
		}
	}
	flush()
	if snap.debugID == "" || len(snap.frames) == 0 {
		t.Fatalf("snapshot: no module %q with frames", name)
	}
	return snap
}

// TestCorpusSymbolicatorMinidump looks up the frames symbolicator found in
// the "crash" module of its macOS minidump in the two symbol files of
// that module in the corpus: one written by Breakpad's dump_syms, one by
// Mozilla's dump_syms with INLINE records. Symbolicator had no symbols
// for the module (its frames are "missing"), so what is compared is the
// module identity, the two files with each other, and the address the
// corpus manifest lists as symbolicated from the module's dSYM by an
// independent tool (0x10000dc72: callback, main.cpp:9).
func TestCorpusSymbolicatorMinidump(t *testing.T) {
	snap := readSnapshot(t, "crash")
	plain, _ := readCorpusSym(t, "symbolic/symbolic-testutils/fixtures/macos/crash.sym")
	inlines, _ := readCorpusSym(t, "symbolic/symbolic-testutils/fixtures/macos/crash.inlines.sym")

	var snapUUID [16]byte
	if _, err := hex.Decode(snapUUID[:], []byte(strings.ReplaceAll(snap.debugID, "-", ""))); err != nil {
		t.Fatalf("snapshot debug_id %q: %v", snap.debugID, err)
	}
	for _, f := range []*File{plain, inlines} {
		if f.Module.UUID() != snapUUID || f.Module.Name != "crash" || f.Module.PointerSize() != 8 {
			t.Errorf("MODULE %+v does not match the dump's module %s", f.Module, snap.debugID)
		}
	}
	if inlines.Module.CodeID != strings.ToUpper(strings.ReplaceAll(snap.debugID, "-", "")) {
		t.Errorf("CodeID = %q, want the dump's %s", inlines.Module.CodeID, snap.debugID)
	}

	t.Logf("module %s at %#x, frames %#x", snap.debugID, snap.imageAddr, snap.frames)
	for i, addr := range snap.frames {
		rel := addr - snap.imageAddr
		if i > 0 {
			rel-- // a return address: look up the call instruction
		}
		p, perr := plain.Lookup(rel)
		n, nerr := inlines.Lookup(rel)
		pok, nok := perr == nil, nerr == nil
		if pok != nok || p.Name != n.Name {
			t.Errorf("frame %d (%#x): crash.sym says %q (%v), crash.inlines.sym %q (%v)", i, rel, p.Name, pok, n.Name, nok)
			continue
		}
		if !pok {
			continue
		}
		// The innermost line is the same in both; the plain file's names
		// carry a "../macos/" the other's do not.
		pf, nf := p.Frames[0], n.Frames[0]
		if pf.Line != nf.Line || path.Base(pf.File) != path.Base(nf.File) {
			t.Errorf("frame %d (%#x): crash.sym says %s:%d, crash.inlines.sym %s:%d", i, rel, pf.File, pf.Line, nf.File, nf.Line)
		}
		// The outermost frame of the inlined chain is the FUNC itself.
		if last := n.Frames[len(n.Frames)-1]; last.Function != p.Name || last.Inlined {
			t.Errorf("frame %d (%#x): outermost frame %+v, want FUNC %q", i, rel, last, p.Name)
		}
	}

	// Frame 0 is in main (FUNC dba0 c3) with code inlined into it there,
	// and the dump's symbol files carry no CFI for main: symbolicator's
	// frame 1 was found by scanning, as ours would be.
	frame0 := snap.frames[0] - snap.imageAddr
	if sym, _ := inlines.Lookup(frame0); sym.Name != "main" || len(sym.Frames) < 2 {
		t.Errorf("Lookup(%#x) = %+v, want main with inlined frames", frame0, sym)
	}
	if _, ok := plain.CFIRules(frame0); ok {
		t.Errorf("CFIRules(%#x): found, but crash.sym has no STACK CFI for main", frame0)
	}

	for _, f := range []*File{plain, inlines} {
		sym, err := f.Lookup(0x10000dc72 - 0x100000000)
		ok := err == nil
		if !ok || sym.Name != "(anonymous namespace)::callback(char const*, char const*, void*, bool)" ||
			path.Base(sym.Frames[0].File) != "main.cpp" || sym.Frames[0].Line != 9 {
			t.Errorf("Lookup(0xdc72) = %+v, want callback at main.cpp:9", sym)
		}
	}
}

// TestCorpusAgainstDWARF reads the dSYM that crash.sym was made from with
// the standard library's debug/macho and debug/dwarf, and checks that
// each FUNC record is a subprogram and each line record starts a row of
// the line table, once the address is moved by __TEXT's vmaddr: what
// "module-relative" means for Mach-O.
func TestCorpusAgainstDWARF(t *testing.T) {
	f, _ := readCorpusSym(t, "symbolic/symbolic-testutils/fixtures/macos/crash.sym")
	mf, err := macho.Open(testcorpus.File(t, "symbolic/symbolic-testutils/fixtures/macos/crash.dSYM/Contents/Resources/DWARF/crash"))
	if err != nil {
		t.Fatal(err)
	}
	defer mf.Close()
	text := mf.Segment("__TEXT")
	if text == nil {
		t.Fatal("dSYM has no __TEXT segment")
	}
	if uuid := dsymUUID(t, mf); uuid != f.Module.UUID() {
		t.Fatalf("dSYM UUID %x, symbol file %x", uuid, f.Module.UUID())
	}
	d, err := mf.DWARF()
	if err != nil {
		t.Fatal(err)
	}

	subprograms := map[uint64]uint64{} // low_pc -> size
	rows := map[uint64]int{}           // row address -> line
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if e == nil {
			break
		}
		switch e.Tag {
		case dwarf.TagCompileUnit:
			lr, err := d.LineReader(e)
			if err != nil || lr == nil {
				continue
			}
			var row dwarf.LineEntry
			for lr.Next(&row) == nil {
				if !row.EndSequence {
					rows[row.Address] = row.Line
				}
			}
		case dwarf.TagSubprogram:
			low, ok := e.Val(dwarf.AttrLowpc).(uint64)
			if !ok {
				continue
			}
			switch high := e.Val(dwarf.AttrHighpc).(type) {
			case uint64:
				if e.AttrField(dwarf.AttrHighpc).Class == dwarf.ClassConstant {
					subprograms[low] = high
				} else {
					subprograms[low] = high - low
				}
			case int64:
				subprograms[low] = uint64(high)
			}
		}
	}

	var lines, rowMatches int
	for _, fn := range f.Funcs() {
		size, ok := subprograms[text.Addr+fn.Address]
		if !ok || size != fn.Size {
			t.Errorf("FUNC %#x+%#x %q: DWARF subprogram at %#x has size %#x (found %v)", fn.Address, fn.Size, fn.Name, text.Addr+fn.Address, size, ok)
		}
		for _, l := range fn.Lines {
			lines++
			if line, ok := rows[text.Addr+l.Address]; ok && line == int(l.Line) {
				rowMatches++
			}
		}
	}
	// dump_syms starts a line record at every row whose line differs from
	// the previous record's; every record start is a row.
	t.Logf("%d FUNC records, %d line records, __TEXT at %#x", len(f.Funcs()), lines, text.Addr)
	if lines == 0 || rowMatches != lines {
		t.Errorf("%d of %d line records start a DWARF line-table row with the same line", rowMatches, lines)
	}
}

// dsymUUID returns the LC_UUID of a Mach-O file.
func dsymUUID(t *testing.T, mf *macho.File) [16]byte {
	for _, l := range mf.Loads {
		raw := l.Raw()
		if len(raw) >= 24 && mf.ByteOrder.Uint32(raw) == 0x1b { // LC_UUID
			var u [16]byte
			copy(u[:], raw[8:24])
			return u
		}
	}
	t.Fatal("no LC_UUID")
	return [16]byte{}
}

// inlinedSub is a DW_TAG_inlined_subroutine: its nesting among inlined
// subroutines, its ranges, call line and the name of its origin.
type inlinedSub struct {
	depth    int
	ranges   [][2]uint64
	callLine int64
	name     string
}

// TestCorpusInlinesAgainstDWARF checks the inlined frames Lookup builds
// from crash.inlines.sym against the dSYM's DW_TAG_inlined_subroutine
// entries, read with debug/dwarf: at the start of every INLINE range the
// chain has the same length, and each outer frame's line is the call line
// of the inlined subroutine it calls, as llvm-symbolizer reports.
func TestCorpusInlinesAgainstDWARF(t *testing.T) {
	f, _ := readCorpusSym(t, "symbolic/symbolic-testutils/fixtures/macos/crash.inlines.sym")
	mf, err := macho.Open(testcorpus.File(t, "symbolic/symbolic-testutils/fixtures/macos/crash.dSYM/Contents/Resources/DWARF/crash"))
	if err != nil {
		t.Fatal(err)
	}
	defer mf.Close()
	base := mf.Segment("__TEXT").Addr
	d, err := mf.DWARF()
	if err != nil {
		t.Fatal(err)
	}

	nameOf := func(off dwarf.Offset) string {
		r := d.Reader()
		for range 4 { // follow abstract_origin and specification links
			r.Seek(off)
			e, err := r.Next()
			if err != nil || e == nil {
				return ""
			}
			if name, ok := e.Val(dwarf.AttrName).(string); ok {
				return name
			}
			next, ok := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
			if !ok {
				next, ok = e.Val(dwarf.AttrSpecification).(dwarf.Offset)
			}
			if !ok {
				return ""
			}
			off = next
		}
		return ""
	}
	var subs []inlinedSub
	var stack []dwarf.Tag // tags of the open DIEs with children
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if e == nil {
			break
		}
		if e.Tag == 0 {
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			continue
		}
		if e.Tag == dwarf.TagInlinedSubroutine {
			depth := 0
			for _, tag := range stack {
				if tag == dwarf.TagInlinedSubroutine {
					depth++
				}
			}
			ranges, err := d.Ranges(e)
			if err != nil {
				t.Fatal(err)
			}
			callLine, _ := e.Val(dwarf.AttrCallLine).(int64)
			origin, _ := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
			subs = append(subs, inlinedSub{depth, ranges, callLine, nameOf(origin)})
		}
		if e.Children {
			stack = append(stack, e.Tag)
		}
	}
	if len(subs) == 0 {
		t.Fatal("no inlined subroutines in the dSYM")
	}
	chainAt := func(addr uint64) []inlinedSub { // outermost first
		var chain []inlinedSub
		for _, s := range subs {
			for _, rg := range s.ranges {
				if rg[0] <= addr && addr < rg[1] {
					chain = append(chain, s)
					break
				}
			}
		}
		sort.Slice(chain, func(i, j int) bool { return chain[i].depth < chain[j].depth })
		return chain
	}

	checked := 0
	for _, fn := range f.Funcs() {
		for _, in := range fn.Inlines {
			addr := in.Address
			sym, err := f.Lookup(addr)
			if err != nil {
				t.Errorf("Lookup(%#x): nothing", addr)
				continue
			}
			chain := chainAt(base + addr)
			n := len(chain)
			if len(sym.Frames) != n+1 {
				t.Errorf("Lookup(%#x): %d inlined frames, DWARF has %d", addr, len(sym.Frames)-1, n)
				continue
			}
			for j := 1; j <= n; j++ {
				c := chain[n-j]
				if int64(sym.Frames[j].Line) != c.callLine {
					t.Errorf("Lookup(%#x): frame %d (%s) at line %d, DWARF call line %d", addr, j, sym.Frames[j].Function, sym.Frames[j].Line, c.callLine)
				}
				// DWARF's name is unqualified and spells template
				// arguments and operators its own way ("const T &" for
				// "T const&", "operator T *" for "operator T*()"):
				// compare up to the first "<", without spaces.
				short, _, _ := strings.Cut(c.name, "<")
				noSpace := func(s string) string { return strings.ReplaceAll(s, " ", "") }
				if !strings.Contains(noSpace(sym.Frames[j-1].Function), noSpace(short)) {
					t.Errorf("Lookup(%#x): frame %d is %q, DWARF says %q", addr, j-1, sym.Frames[j-1].Function, c.name)
				}
			}
			checked++
		}
	}
	t.Logf("%d INLINE ranges checked against %d inlined subroutines", checked, len(subs))
}
