package debuginfo

import (
	"debug/dwarf"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stackimage/stackimage/demangle"
	"github.com/stackimage/stackimage/internal/leb128"
)

// synthUnit describes one compile unit of hand-built DWARF 4: one function
// of size bytes at lo, whose first instruction is at the given line.
type synthUnit struct {
	name, fn   string
	lo, size   uint64
	line       int
	strayNulls int  // null entries after the unit's tree
	leadNull   bool // a null entry before the compile unit DIE
	nullsOnly  int  // when > 0 the unit holds only this many null entries
}

// synth is hand-built DWARF and where each unit's parts lie, so that a
// test can corrupt exactly one of them.
type synth struct {
	info, abbrev, line []byte
	cuOff              []int // offset of each compile unit DIE in info
	fnOff              []int // offset of each subprogram DIE in info
	lineOff            []int // offset of each line program in line
}

func (s *synth) sections() map[string][]byte {
	return map[string][]byte{"debug_info": s.info, "debug_abbrev": s.abbrev, "debug_line": s.line}
}

// buildSynth lays the units out one after another, each with its own
// line program.
func buildSynth(units []synthUnit) *synth {
	s := &synth{abbrev: []byte{
		1, 0x11, 1, // DW_TAG_compile_unit, has children
		0x03, 0x08, // DW_AT_name, DW_FORM_string
		0x10, 0x17, // DW_AT_stmt_list, DW_FORM_sec_offset
		0, 0,
		2, 0x2e, 0, // DW_TAG_subprogram, no children
		0x03, 0x08, // DW_AT_name, DW_FORM_string
		0x11, 0x01, // DW_AT_low_pc, DW_FORM_addr
		0x12, 0x06, // DW_AT_high_pc, DW_FORM_data4 (a size)
		0, 0,
		0,
	}}
	le := binary.LittleEndian
	for _, u := range units {
		if u.nullsOnly > 0 {
			unit := []byte{0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 8}
			unit = append(unit, make([]byte, u.nullsOnly)...)
			le.PutUint32(unit, uint32(len(unit)-4))
			s.info = append(s.info, unit...)
			s.cuOff, s.fnOff, s.lineOff = append(s.cuOff, -1), append(s.fnOff, -1), append(s.lineOff, -1)
			continue
		}
		s.lineOff = append(s.lineOff, len(s.line))
		s.line = append(s.line, lineProgram(u)...)

		base := len(s.info)
		unit := []byte{0, 0, 0, 0, 4, 0, 0, 0, 0, 0, 8} // length, version 4, abbrev 0, address size 8
		if u.leadNull {
			unit = append(unit, 0)
		}
		s.cuOff = append(s.cuOff, base+len(unit))
		unit = append(unit, 1)
		unit = append(append(unit, u.name...), 0)
		unit = le.AppendUint32(unit, uint32(s.lineOff[len(s.lineOff)-1]))
		s.fnOff = append(s.fnOff, base+len(unit))
		unit = append(unit, 2)
		unit = append(append(unit, u.fn...), 0)
		unit = le.AppendUint64(unit, u.lo)
		unit = le.AppendUint32(unit, uint32(u.size))
		unit = append(unit, 0) // end of the compile unit's children
		unit = append(unit, make([]byte, u.strayNulls)...)
		le.PutUint32(unit, uint32(len(unit)-4))
		s.info = append(s.info, unit...)
	}
	return s
}

// lineProgram is a DWARF 4 line program with one file, u.name, and one
// sequence: u.line at u.lo, ending at u.lo+u.size.
func lineProgram(u synthUnit) []byte {
	hdr := []byte{
		1, 1, 1, 0xfb, 14, // min_inst_length, max_ops, default_is_stmt, line_base -5, line_range
		13, 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1, // opcode_base, standard_opcode_lengths
		0, // no include directories
	}
	hdr = append(append(hdr, u.name...), 0, 0, 0, 0, 0) // dir, mtime, length; end of files
	prog := []byte{0, 9, 2}                             // DW_LNE_set_address
	prog = binary.LittleEndian.AppendUint64(prog, u.lo)
	prog = append(prog, 3) // DW_LNS_advance_line
	prog = leb128.AppendInt(prog, int64(u.line-1))
	prog = append(prog, 1, 2) // DW_LNS_copy, DW_LNS_advance_pc
	prog = leb128.AppendUint(prog, u.size)
	prog = append(prog, 0, 1, 1) // DW_LNE_end_sequence

	b := binary.LittleEndian.AppendUint32(nil, uint32(2+4+len(hdr)+len(prog)))
	b = binary.LittleEndian.AppendUint16(b, 4)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(hdr)))
	return append(append(b, hdr...), prog...)
}

var synthUnits = []synthUnit{
	{name: "a.c", fn: "alpha", lo: 0x1000, size: 0x40, line: 10},
	{name: "b.c", fn: "beta", lo: 0x2000, size: 0x80, line: 20},
	{name: "c.c", fn: "gamma", lo: 0x3000, size: 0x20, line: 30},
}

// TestUnitFailures corrupts one compile unit of three in each case and
// checks that the other two answer exactly as when nothing is corrupted,
// that the corrupted one keeps what could still be read, and that the
// warning names it.
func TestUnitFailures(t *testing.T) {
	whole := func(u synthUnit) []Frame {
		return []Frame{{Function: u.fn, Lang: demangle.LangC, File: u.name, Line: u.line}}
	}
	nameOnly := func(u synthUnit) []Frame { return []Frame{{Function: u.fn, Lang: demangle.LangC}} }
	lineOnly := func(u synthUnit) []Frame { return []Frame{{File: u.name, Line: u.line}} }
	none := func(synthUnit) []Frame { return nil }

	tests := []struct {
		name    string
		units   func([]synthUnit) []synthUnit // nil: synthUnits as they are
		corrupt func(s *synth)                // applied to unit 1 (b.c)
		middle  func(synthUnit) []Frame       // what unit 1 still answers
		warn    string                        // "" for no warning, else the text after the unit's label
	}{
		{name: "intact", middle: whole},
		{
			name:    "line table version",
			corrupt: func(s *synth) { s.line[s.lineOff[1]+4] = 99 },
			middle:  nameOnly,
			warn:    "line table: ",
		},
		{
			name:    "line table length past the section",
			corrupt: func(s *synth) { binary.LittleEndian.PutUint32(s.line[s.lineOff[1]:], 0xfffffff0) },
			middle:  nameOnly,
			warn:    "line table: ",
		},
		{
			name: "stmt_list past debug_line",
			corrupt: func(s *synth) {
				// The stmt_list value follows the abbrev code and "b.c\0".
				binary.LittleEndian.PutUint32(s.info[s.cuOff[1]+1+4:], uint32(len(s.line)+100))
			},
			middle: nameOnly,
			warn:   "line table: AttrStmtList value out of range",
		},
		{
			name:    "unknown abbreviation in the function",
			corrupt: func(s *synth) { s.info[s.fnOff[1]] = 0x7f },
			middle:  lineOnly,
			warn:    "DIEs: decoding dwarf section info at offset 0x",
		},
		{
			name:    "unknown abbreviation in the compile unit DIE",
			corrupt: func(s *synth) { s.info[s.cuOff[1]] = 0x7f },
			middle:  none,
			warn:    "DIEs: decoding dwarf section info at offset 0x",
		},
		{
			// debug/dwarf reads an abbreviation code that never ends as a
			// null entry without moving on, forever.
			name:    "unterminated abbreviation code at the unit's end",
			corrupt: func(s *synth) { s.info[s.cuOff[2]-11-1] = 0x80 },
			middle:  whole,
			warn:    "DIEs: more null entries than the unit has bytes (an unterminated abbreviation code?)",
		},
		{
			name: "stray nulls between units",
			units: func(us []synthUnit) []synthUnit {
				us[0].strayNulls, us[1].strayNulls, us[2].leadNull = 3, 1, true
				return us
			},
			middle: whole,
		},
		{
			name: "a unit of nulls only between units",
			units: func(us []synthUnit) []synthUnit {
				return []synthUnit{us[0], {nullsOnly: 2}, us[1], us[2]}
			},
			middle: whole,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			units := append([]synthUnit(nil), synthUnits...)
			if tt.units != nil {
				units = tt.units(units)
			}
			s := buildSynth(units)
			if tt.corrupt != nil {
				tt.corrupt(s)
			}
			ix, err := New(s.sections())
			if err != nil {
				t.Fatalf("New = %v, want success", err)
			}
			for i, u := range units {
				if u.nullsOnly > 0 {
					continue
				}
				want := whole(u)
				if i == 1 {
					want = tt.middle(u)
				}
				for _, a := range []uint64{u.lo, u.lo + u.size - 1} {
					got, err := ix.Lookup(a)
					ok := err == nil
					if diff := cmp.Diff(want, got); diff != "" || ok != (want != nil) {
						t.Errorf("Lookup(%#x) = %v, ok %v; differs (-want +got):\n%s", a, got, ok, diff)
					}
				}
			}
			var want []string
			if tt.warn != "" {
				label := fmt.Sprintf("compile unit at %#x", s.cuOff[1])
				if tt.middle(units[1]) != nil {
					label += " (b.c)" // the compile unit DIE was read
				}
				want = []string{label + ": " + tt.warn}
			}
			got := ix.Warnings()
			if len(got) == 1 && len(want) == 1 && strings.HasPrefix(got[0], want[0]) {
				got = want // the rest is debug/dwarf's wording
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Warnings() differ (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBadUnitHeader: dwarf.New rejects a whole debug_info for one bad unit
// header; the units before it are still indexed.
func TestBadUnitHeader(t *testing.T) {
	tests := []struct {
		name    string
		unit    int // the unit whose header is corrupted; it and later ones are lost
		corrupt func(info []byte, header int)
	}{
		{"version", 2, func(info []byte, h int) { binary.LittleEndian.PutUint16(info[h+4:], 99) }},
		{"length past the section", 1, func(info []byte, h int) { binary.LittleEndian.PutUint32(info[h:], 0xfffffff0) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := buildSynth(synthUnits)
			header := s.cuOff[tt.unit] - 11 // a DWARF 4 unit header is 11 bytes
			tt.corrupt(s.info, header)
			ix, err := New(s.sections())
			if err != nil {
				t.Fatalf("New = %v, want success", err)
			}
			for _, u := range synthUnits[:tt.unit] {
				want := []Frame{{Function: u.fn, Lang: demangle.LangC, File: u.name, Line: u.line}}
				got, _ := ix.Lookup(u.lo)
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("Lookup(%#x) differs (-want +got):\n%s", u.lo, diff)
				}
			}
			want := []string{fmt.Sprintf("debug_info: unit header at %#x unreadable: the %d bytes from there to the end of the section are skipped",
				header, len(s.info)-header)}
			if diff := cmp.Diff(want, ix.Warnings()); diff != "" {
				t.Errorf("Warnings() differ (-want +got):\n%s", diff)
			}
			if got, err := ix.Lookup(synthUnits[2].lo); err == nil {
				t.Errorf("Lookup(%#x) = %+v, want nothing: its unit was skipped", synthUnits[2].lo, got)
			}
		})
	}
}

// TestNothingIndexed: when every unit fails New reports the first failure
// rather than returning an empty index.
func TestNothingIndexed(t *testing.T) {
	s := buildSynth(synthUnits)
	for _, off := range s.cuOff {
		s.info[off] = 0x7f
	}
	ix, err := New(s.sections())
	want := fmt.Sprintf("debuginfo: nothing could be indexed: compile unit at %#x: DIEs: ", s.cuOff[0])
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("New = %v, %v; want an error starting %q", ix, err, want)
	}
}

// TestWarningsBounded: a thousand bad units keep a hundred warnings and a
// count of the rest, and the good unit after them is still indexed.
func TestWarningsBounded(t *testing.T) {
	const bad = 1000
	units := make([]synthUnit, bad+1)
	for i := range units {
		units[i] = synthUnit{name: fmt.Sprintf("u%d.c", i), fn: fmt.Sprintf("f%d", i), lo: uint64(0x1000 * (i + 1)), size: 0x10, line: i + 1}
	}
	s := buildSynth(units)
	for i := range bad {
		s.line[s.lineOff[i]+4] = 99 // unsupported line table version
	}
	ix, err := New(s.sections())
	if err != nil {
		t.Fatalf("New = %v, want success", err)
	}
	w := ix.Warnings()
	if len(w) != maxWarnings+1 {
		t.Fatalf("len(Warnings()) = %d, want %d", len(w), maxWarnings+1)
	}
	for i, line := range w[:maxWarnings] {
		if want := fmt.Sprintf("compile unit at %#x (u%d.c): line table: ", s.cuOff[i], i); !strings.HasPrefix(line, want) {
			t.Errorf("Warnings()[%d] = %q, want it to start %q", i, line, want)
		}
	}
	if got, want := w[maxWarnings], fmt.Sprintf("%d more warnings not kept", bad-maxWarnings); got != want {
		t.Errorf("Warnings()[%d] = %q, want %q", maxWarnings, got, want)
	}
	last := units[bad]
	got, _ := ix.Lookup(last.lo)
	want := []Frame{{Function: last.fn, Lang: demangle.LangC, File: last.name, Line: last.line}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Lookup(%#x) differs (-want +got):\n%s", last.lo, diff)
	}
	if got, _ := ix.Lookup(units[0].lo); len(got) != 1 || got[0].Function != units[0].fn || got[0].Line != 0 {
		t.Errorf("Lookup(%#x) = %+v, want %s without a line", units[0].lo, got, units[0].fn)
	}
}

// TestUnitSpans checks the unit boundaries found from the headers against
// debug/dwarf's own walk: each span must start at a unit's first DIE.
func TestUnitSpans(t *testing.T) {
	files := []dsym{dsyms[0], dsyms[1], dsyms[2]} // the fixtures: DWARF 2, 4, 5
	if _, err := findCorpus(); err == nil {
		files = dsyms
	}
	for _, ds := range files {
		t.Run(ds.name, func(t *testing.T) {
			path := ds.path
			if !strings.HasPrefix(path, "testdata/") {
				path = corpusFile(t, ds.path)
			}
			secs := normalize(dwarfSections(t, path, ds.cpu))
			d, err := newData(secs)
			if err != nil {
				t.Fatal(err)
			}
			var want []int64
			r := d.Reader()
			for {
				e, err := r.Next()
				if err != nil {
					t.Fatal(err)
				}
				if e == nil {
					break
				}
				if e.Tag == dwarf.TagCompileUnit {
					want = append(want, int64(e.Offset))
				}
				r.SkipChildren()
			}
			spans, _, ok := unitSpans(secs["debug_info"])
			if !ok {
				t.Errorf("unitSpans: did not reach the end of debug_info")
			}
			var got []int64
			for i, sp := range spans {
				got = append(got, sp.first)
				if i > 0 && sp.first <= spans[i-1].end {
					t.Errorf("span %d starts at %#x, inside the previous one (ends %#x)", i, sp.first, spans[i-1].end)
				}
			}
			if end := spans[len(spans)-1].end; end != int64(len(secs["debug_info"])) {
				t.Errorf("last span ends at %#x, want the end of debug_info %#x", end, len(secs["debug_info"]))
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("unit first DIEs differ from debug/dwarf's (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCorruptUnitInDSYM corrupts the line table of one compile unit of
// symbolic's crash.dSYM (16 units) and, in another, the abbreviation code
// of a function part way through the unit, and checks every golden
// address: in the 14 intact units the answer is exactly llvm-symbolizer's;
// in the unit without a line table the functions and inline chains still
// are, without file names or the innermost line; in the unit whose DIEs
// fail, the functions before the bad one are exact and the rest answer
// from the line table alone.
func TestCorruptUnitInDSYM(t *testing.T) {
	ds := dsyms[5]
	if ds.name != "symbolic-crash" {
		t.Fatalf("dsyms[5] = %s, want symbolic-crash", ds.name)
	}
	secs := normalize(dwarfSections(t, corpusFile(t, ds.path), ds.cpu))
	want := readGolden(t, "testdata/golden/"+ds.name+".txt")
	const noLines, badDIE = 4, 2 // minidump_generator.cc, dynamic_images.cc

	// Find the units, which unit and subprogram each golden address is in,
	// and in unit badDIE the first top-level function whose abbreviation
	// code takes two bytes, so that an unused two-byte code can replace it.
	d, err := newData(secs)
	if err != nil {
		t.Fatal(err)
	}
	type cuInfo struct {
		off      dwarf.Offset
		name     string
		stmtList int64
	}
	var cus []cuInfo
	type owner struct {
		unit int
		fn   dwarf.Offset
	}
	ownerOf := make(map[uint64]owner)
	var badFn dwarf.Offset
	depth := 0
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
			depth--
			continue
		}
		atDepth := depth // the compile unit's children are at depth 1
		if e.Children {
			depth++
		}
		switch e.Tag {
		case dwarf.TagCompileUnit:
			name, _ := e.Val(dwarf.AttrName).(string)
			stmt, _ := e.Val(dwarf.AttrStmtList).(int64)
			cus = append(cus, cuInfo{off: e.Offset, name: name, stmtList: stmt})
			depth = 1
			continue
		case dwarf.TagSubprogram:
		default:
			continue
		}
		ranges, err := d.Ranges(e)
		if err != nil {
			t.Fatal(err)
		}
		u := len(cus) - 1
		if u == badDIE && badFn == 0 && atDepth == 1 && len(ranges) > 0 &&
			secs["debug_info"][e.Offset] >= 0x80 && secs["debug_info"][e.Offset+1] < 0x80 {
			badFn = e.Offset
		}
		for a := range want {
			for _, rg := range ranges {
				if rg[0] <= a && a < rg[1] {
					ownerOf[a] = owner{u, e.Offset}
				}
			}
		}
	}
	if len(cus) != 16 {
		t.Fatalf("%d compile units, want 16", len(cus))
	}
	if badFn == 0 {
		t.Fatalf("unit %d: no top-level function with a two-byte abbreviation code", badDIE)
	}
	perUnit := make(map[int]int)
	before, after := 0, 0
	for _, o := range ownerOf {
		perUnit[o.unit]++
		if o.unit == badDIE && o.fn < badFn {
			before++
		} else if o.unit == badDIE {
			after++
		}
	}
	if perUnit[noLines] == 0 || before == 0 || after == 0 {
		t.Fatalf("golden addresses: %v per unit, %d before and %d after %#x; want some in each", perUnit, before, after, badFn)
	}

	line := append([]byte(nil), secs["debug_line"]...)
	binary.LittleEndian.PutUint16(line[cus[noLines].stmtList+4:], 99) // line table version
	info := append([]byte(nil), secs["debug_info"]...)
	// The unit header (DWARF 4, 32-bit) ends at the compile unit DIE; its
	// debug_abbrev offset is 6 bytes into it.
	abbrevOff := binary.LittleEndian.Uint32(info[cus[badDIE].off-11+6:])
	code := unusedAbbrevCode(t, secs["debug_abbrev"], int(abbrevOff))
	info[badFn], info[badFn+1] = byte(code)|0x80, byte(code>>7)
	bad := make(map[string][]byte, len(secs))
	for k, v := range secs {
		bad[k] = v
	}
	bad["debug_line"], bad["debug_info"] = line, info

	ix, err := New(bad)
	if err != nil {
		t.Fatalf("New = %v, want success", err)
	}
	wantWarn := []string{
		fmt.Sprintf("compile unit at %#x (%s): DIEs: decoding dwarf section info at offset %#x: unknown abbreviation table index",
			cus[badDIE].off, cus[badDIE].name, badFn+2),
		fmt.Sprintf("compile unit at %#x (%s): line table: ", cus[noLines].off, cus[noLines].name),
	}

	checked := make(map[int]int)
	for a, frames := range want {
		o, ok := ownerOf[a]
		if !ok {
			continue // an address no subprogram covers: not part of this test
		}
		w := append([]goldenFrame(nil), frames...)
		switch {
		case o.unit == noLines:
			// Names and call lines come from the DIEs; file names and the
			// innermost position from the missing line table.
			for i := range w {
				w[i].File = ""
				if i == 0 {
					w[i].Line, w[i].Column = 0, 0
				}
			}
		case o.unit == badDIE && o.fn >= badFn:
			w = []goldenFrame{{File: w[0].File, Line: w[0].Line, Column: w[0].Column}}
		}
		got := toGolden(ix, a)
		for i := range min(len(got), len(w)) {
			if knownDemangleBugs[got[i].Raw] && got[i].Raw == w[i].Raw {
				got[i].Demangled = w[i].Demangled // TestGolden checks these
			}
		}
		if diff := cmp.Diff(w, got); diff != "" {
			t.Errorf("unit %d (%s): Lookup(%#x) differs (-want +got):\n%s", o.unit, cus[o.unit].name, a, diff)
		}
		checked[o.unit]++
	}
	if diff := cmp.Diff(perUnit, checked); diff != "" {
		t.Errorf("addresses checked per unit differ (-want +got):\n%s", diff)
	}
	// Units are parsed by the lookups that need them: the warnings are
	// complete once every unit has been looked into, in lookup order.
	parseAll(ix)
	gotWarn := ix.Warnings()
	slices.Sort(gotWarn)
	slices.Sort(wantWarn)
	for i := range min(len(gotWarn), len(wantWarn)) {
		if strings.HasPrefix(gotWarn[i], wantWarn[i]) {
			gotWarn[i] = wantWarn[i] // the rest is debug/dwarf's wording
		}
	}
	if diff := cmp.Diff(wantWarn, gotWarn); diff != "" {
		t.Errorf("Warnings() differ (-want +got):\n%s", diff)
	}
	t.Logf("%d addresses checked in %d units; in unit %d, %d before the bad DIE at %#x, %d after",
		len(ownerOf), len(checked), badDIE, before, badFn, after)
}

// toGolden returns Lookup's frames in the golden files' form.
func toGolden(ix *Index, a uint64) []goldenFrame {
	frames, _ := ix.Lookup(a)
	var out []goldenFrame
	for _, f := range frames {
		raw := f.LinkageName
		if raw == "" {
			raw = f.Function
		}
		out = append(out, goldenFrame{raw, f.Function, f.File, f.Line, f.Column, f.Inlined})
	}
	return out
}

// unusedAbbrevCode returns an abbreviation code of two ULEB128 bytes
// (128 to 16383) that the table at off in debug_abbrev does not define.
func unusedAbbrevCode(t *testing.T, abbrev []byte, off int) uint64 {
	t.Helper()
	c := cursor{b: abbrev, off: off}
	used := make(map[uint64]bool)
	for {
		code := c.uleb()
		if c.err {
			t.Fatalf("abbreviation table at %#x: truncated", off)
		}
		if code == 0 {
			break
		}
		used[code] = true
		c.uleb() // tag
		c.u8()   // has children
		for !c.err {
			attr, form := c.uleb(), c.uleb()
			if form == 0x21 { // DW_FORM_implicit_const carries a value
				c.uleb()
			}
			if attr == 0 && form == 0 {
				break
			}
		}
	}
	for code := uint64(128); code < 1<<14; code++ {
		if !used[code] {
			return code
		}
	}
	t.Fatalf("abbreviation table at %#x: all two-byte codes used", off)
	return 0
}

// parseAll parses every unit of ix, as lookups spread over all of them
// would, so that Warnings and Stats cover the whole DWARF.
func parseAll(ix *Index) {
	for u := range ix.units {
		ix.unit(u)
	}
}

// TestUnitSpansByteOrderAndEmptyUnits: the header scan reads big-endian
// debug_info as debug/dwarf does (its order comes from the first unit's
// version), and lists units whose header fills them, whose abbreviation
// tables debug/dwarf parses too. Either left out, the bound on
// abbreviation parsing (checkAbbrevs) would not see every table.
func TestUnitSpansByteOrderAndEmptyUnits(t *testing.T) {
	for _, order := range []binary.AppendByteOrder{binary.LittleEndian, binary.BigEndian} {
		unit := func(abbrevOff uint32, dies []byte) []byte {
			u := order.AppendUint32(nil, uint32(7+len(dies)))
			u = order.AppendUint16(u, 4)
			u = order.AppendUint32(u, abbrevOff)
			return append(append(u, 8), dies...)
		}
		info := append(unit(0, []byte{1, 'a', 0, 0}), unit(5, nil)...)
		info = append(info, unit(9, []byte{0})...)
		spans, stop, ok := unitSpans(info)
		want := []unitSpan{
			{hdr: 0, first: 11, end: 15, abbrev: 0},
			{hdr: 15, first: 26, end: 26, abbrev: 5, refBase: 15},
			{hdr: 26, first: 37, end: 38, abbrev: 9, refBase: 26},
		}
		if diff := cmp.Diff(want, spans, cmp.AllowUnexported(unitSpan{})); diff != "" || !ok || stop != int64(len(info)) {
			t.Errorf("%v: unitSpans = %v, %d, %v; want all of debug_info (-want +got):\n%s", order, spans, stop, ok, diff)
		}
	}
}
