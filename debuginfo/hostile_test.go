package debuginfo

import (
	"encoding/binary"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stackimage/stackimage/demangle"
	"github.com/stackimage/stackimage/internal/leb128"
)

// Hand-built hostile DWARF 4. Each test builds at most about 100 KB of
// sections that made earlier versions allocate a gigabyte or more, and
// checks that New and the lookups stay within 64 bytes per input byte plus
// 64 MiB and still answer what can be answered.

// hostileAbbrev is the abbreviation table the hostile units use.
var hostileAbbrev = []byte{
	1, 0x11, 1, // DW_TAG_compile_unit, children
	0x03, 0x08, // DW_AT_name, DW_FORM_string
	0x10, 0x17, // DW_AT_stmt_list, DW_FORM_sec_offset
	0, 0,
	2, 0x2e, 0, // DW_TAG_subprogram, no children
	0x03, 0x08, // DW_AT_name, DW_FORM_string
	0x11, 0x01, // DW_AT_low_pc, DW_FORM_addr
	0x12, 0x06, // DW_AT_high_pc, DW_FORM_data4 (a size)
	0, 0,
	3, 0x2e, 0, // DW_TAG_subprogram, no children
	0x03, 0x08, // DW_AT_name, DW_FORM_string
	0x55, 0x17, // DW_AT_ranges, DW_FORM_sec_offset
	0, 0,
	4, 0x11, 1, // DW_TAG_compile_unit, children
	0x03, 0x08, // DW_AT_name, DW_FORM_string
	0x11, 0x01, // DW_AT_low_pc, DW_FORM_addr
	0x12, 0x06, // DW_AT_high_pc, DW_FORM_data4
	0, 0,
	0,
}

// unit4 wraps DIEs in a DWARF 4 unit header (abbreviations at abbrevOff,
// 8-byte addresses).
func unit4(abbrevOff uint32, dies []byte) []byte {
	u := binary.LittleEndian.AppendUint32(nil, uint32(7+len(dies)))
	u = binary.LittleEndian.AppendUint16(u, 4)
	u = binary.LittleEndian.AppendUint32(u, abbrevOff)
	u = append(u, 8)
	return append(u, dies...)
}

// subprogram is a DIE of abbreviation 2: name at [lo, lo+size).
func subprogram(name string, lo uint64, size uint32) []byte {
	d := append([]byte{2}, name...)
	d = append(d, 0)
	d = binary.LittleEndian.AppendUint64(d, lo)
	return binary.LittleEndian.AppendUint32(d, size)
}

// lazyCU is a DIE of abbreviation 4, a compile unit with its own range.
func lazyCU(name string, lo uint64, size uint32) []byte {
	d := append([]byte{4}, name...)
	d = append(d, 0)
	d = binary.LittleEndian.AppendUint64(d, lo)
	return binary.LittleEndian.AppendUint32(d, size)
}

func sectionsSize(secs map[string][]byte) int {
	n := 0
	for _, s := range secs {
		n += len(s)
	}
	return n
}

// withinBudget runs f and fails the test when it allocated more than 64
// times the input's size plus 64 MiB.
func withinBudget(t testing.TB, inputSize int, f func()) {
	t.Helper()
	got, limit := allocated(f), uint64(64*inputSize+64<<20)
	t.Logf("%d-byte input: %d bytes allocated (limit %d)", inputSize, got, limit)
	if got > limit {
		t.Errorf("%d-byte input allocated %d bytes, want at most %d", inputSize, got, limit)
	}
}

// allocated returns the bytes f allocated.
func allocated(f func()) uint64 {
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// indexAndLookup runs New and the lookups within the allocation budget
// and returns the frames found at each address.
func indexAndLookup(t *testing.T, secs map[string][]byte, addrs ...uint64) (*Index, [][]Frame) {
	t.Helper()
	var ix *Index
	var err error
	var got [][]Frame
	withinBudget(t, sectionsSize(secs), func() {
		if ix, err = New(secs); err != nil {
			return
		}
		for _, a := range addrs {
			frames, _ := ix.Lookup(a)
			got = append(got, frames)
		}
	})
	if err != nil {
		t.Fatalf("New = %v, want success", err)
	}
	return ix, got
}

// TestHostileSharedLineProgram: a thousand compile units name one 40 KB
// line program. It is decoded once, not once per unit.
func TestHostileSharedLineProgram(t *testing.T) {
	const rows, units, lo = 40000, 1000, 0x10000
	secs := sharedLineProgram(rows, units, lo)
	_, got := indexAndLookup(t, secs, lo, lo+1234)
	want := [][]Frame{{{File: "u.c", Line: 1}}, {{File: "u.c", Line: 1235}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lookups differ (-want +got):\n%s", diff)
	}
}

// sharedLineProgram returns the sections of units compile units without
// functions naming one line program of rows+1 rows from lo, one a byte.
func sharedLineProgram(rows, units int, lo uint64) map[string][]byte {
	prog := []byte{0, 9, 2} // DW_LNE_set_address
	prog = binary.LittleEndian.AppendUint64(prog, lo)
	prog = append(prog, 1) // DW_LNS_copy: a row at lo, line 1
	for range rows {
		prog = append(prog, 33) // special opcode: address +1, line +1, a row
	}
	prog = append(prog, 2, 1, 0, 1, 1) // advance_pc 1, DW_LNE_end_sequence
	hdr := []byte{
		1, 1, 1, 0xfb, 14, // min_inst_length, max_ops, default_is_stmt, line_base -5, line_range
		13, 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1, // opcode_base, standard_opcode_lengths
		0,                         // no include directories
		'u', '.', 'c', 0, 0, 0, 0, // file u.c
		0, // end of files
	}
	line := binary.LittleEndian.AppendUint32(nil, uint32(2+4+len(hdr)+len(prog)))
	line = binary.LittleEndian.AppendUint16(line, 4)
	line = binary.LittleEndian.AppendUint32(line, uint32(len(hdr)))
	line = append(append(line, hdr...), prog...)

	var info []byte
	for range units {
		info = append(info, unit4(0, []byte{1, 'u', '.', 'c', 0, 0, 0, 0, 0, 0})...) // stmt_list 0, no children
	}
	return map[string][]byte{"debug_info": info, "debug_abbrev": hostileAbbrev, "debug_line": line}
}

// TestHostileSharedRangeList: 8000 functions name one range list of 2500
// ranges. The list is decoded once, and the unit records no more ranges
// than it and its range lists have bytes; the first functions stay.
func TestHostileSharedRangeList(t *testing.T) {
	const ranges, fns, lo = 2500, 8000, 0x10000
	var rl []byte
	for i := range uint64(ranges) {
		rl = binary.LittleEndian.AppendUint64(rl, lo+16*i)
		rl = binary.LittleEndian.AppendUint64(rl, lo+16*i+8)
	}
	rl = append(rl, make([]byte, 16)...)                        // end of list
	dies := []byte{1, 'r', '.', 'c', 0, 0xff, 0xff, 0xff, 0xff} // stmt_list past debug_line: no lines
	for range fns {
		dies = append(dies, 3, 'f', 0, 0, 0, 0, 0) // ranges at 0
	}
	dies = append(dies, 0)
	secs := map[string][]byte{"debug_info": unit4(0, dies), "debug_abbrev": hostileAbbrev, "debug_ranges": rl}
	ix, got := indexAndLookup(t, secs, lo, lo+16*(ranges-1)+7, lo+8)
	want := [][]Frame{{{Function: "f", Lang: demangle.LangC}}, {{Function: "f", Lang: demangle.LangC}}, nil}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lookups differ (-want +got):\n%s", diff)
	}
	if w := strings.Join(ix.Warnings(), "\n"); !strings.Contains(w, "more address ranges than the unit and its range lists have bytes") {
		t.Errorf("Warnings() = %q, want one about too many address ranges", w)
	}
}

// TestHostileAbbrevOffsets: 1500 units name successive entries of one
// 70 KB abbreviation list, each of which debug/dwarf would parse to the
// list's end. Units past the bound on abbreviation parsing are skipped; the
// first unit, which names the list's start, still answers.
func TestHostileAbbrevOffsets(t *testing.T) {
	const entries, units = 10000, 1500
	abbrev := append([]byte(nil), hostileAbbrev[:len(hostileAbbrev)-1]...) // without the table's end
	var offs []uint32
	for code := uint64(5); len(offs) < entries; code++ {
		offs = append(offs, uint32(len(abbrev)))
		abbrev = leb128.AppendUint(abbrev, code)
		abbrev = append(abbrev, 0x34, 0, 0x03, 0x08, 0, 0) // DW_TAG_variable, name string
	}
	abbrev = append(abbrev, 0)

	dies := []byte{1, 'a', '.', 'c', 0, 0xff, 0xff, 0xff, 0xff}
	dies = append(append(dies, subprogram("main", 0x1000, 0x10)...), 0)
	info := unit4(0, dies)
	for i := range units - 1 {
		info = append(info, unit4(offs[i], []byte{0})...)
	}
	secs := map[string][]byte{"debug_info": info, "debug_abbrev": abbrev}
	ix, got := indexAndLookup(t, secs, 0x1008)
	want := [][]Frame{{{Function: "main", Lang: demangle.LangC}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lookups differ (-want +got):\n%s", diff)
	}
	if w := strings.Join(ix.Warnings(), "\n"); !strings.Contains(w, "debug_abbrev: ") {
		t.Errorf("Warnings() = %q, want one about debug_abbrev", w)
	}
}

// hugeRangeSections is one unit whose function "outer" covers 4 GiB
// from 0x1000, around n small functions "f" of 8 bytes every 16.
func hugeRangeSections(n int) map[string][]byte {
	dies := []byte{1, 'h', '.', 'c', 0, 0xff, 0xff, 0xff, 0xff}
	dies = append(dies, subprogram("outer", 0x1000, 0xffffffff)...)
	for i := range uint64(n) {
		dies = append(dies, subprogram("f", 0x2000+16*i, 8)...)
	}
	dies = append(dies, 0)
	return map[string][]byte{"debug_info": unit4(0, dies), "debug_abbrev": hostileAbbrev}
}

// TestHostileHugeRange: one function's range encloses 20,000 others. The
// answers are the innermost function's, and (BenchmarkLookupHugeRange)
// a lookup stays a binary search rather than a scan back over every range
// that starts before the address.
func TestHostileHugeRange(t *testing.T) {
	const n = 20000
	_, got := indexAndLookup(t, hugeRangeSections(n), 0x1000, 0x2000, 0x2008, 0x2000+16*(n-1)+4, 0x2000+16*n, 0x1000+0xffffffff)
	f, outer := []Frame{{Function: "f", Lang: demangle.LangC}}, []Frame{{Function: "outer", Lang: demangle.LangC}}
	want := [][]Frame{outer, f, outer, f, outer, nil}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("lookups differ (-want +got):\n%s", diff)
	}
}

// BenchmarkLookupHugeRange looks up addresses past 20,000 small functions
// that a 4 GiB function encloses.
func BenchmarkLookupHugeRange(b *testing.B) {
	const n = 20000
	ix, err := New(hugeRangeSections(n))
	if err != nil {
		b.Fatal(err)
	}
	ix.Lookup(0x1000)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		ix.Lookup(0x2000 + 16*uint64(n) - 8 + uint64(i%4)) // the gap after the last small function
	}
}

// TestHostileUnitCostsItsOwn: a good unit and a hostile one (a range list
// shared by thousands of functions), each with its own address range.
// Looking up the good unit's addresses does not parse the hostile unit.
func TestHostileUnitCostsItsOwn(t *testing.T) {
	const ranges, fns = 2500, 8000
	var rl []byte
	for i := range uint64(ranges) {
		rl = binary.LittleEndian.AppendUint64(rl, 0x100000+16*i)
		rl = binary.LittleEndian.AppendUint64(rl, 0x100000+16*i+8)
	}
	rl = append(rl, make([]byte, 16)...)
	good := append(lazyCU("good.c", 0x1000, 0x100), subprogram("main", 0x1000, 0x10)...)
	good = append(good, 0)
	bad := lazyCU("bad.c", 0x100000, 16*ranges)
	for range fns {
		bad = append(bad, 3, 'f', 0, 0, 0, 0, 0)
	}
	bad = append(bad, 0)
	secs := map[string][]byte{
		"debug_info":   append(unit4(0, good), unit4(0, bad)...),
		"debug_abbrev": hostileAbbrev,
		"debug_ranges": rl,
	}
	var got []Frame
	var err error
	n := allocated(func() {
		var ix *Index
		if ix, err = New(secs); err == nil {
			got, _ = ix.Lookup(0x1004)
		}
	})
	if err != nil {
		t.Fatalf("New = %v", err)
	}
	if diff := cmp.Diff([]Frame{{Function: "main", Lang: demangle.LangC}}, got); diff != "" {
		t.Errorf("Lookup(0x1004) differs (-want +got):\n%s", diff)
	}
	// The good unit alone is a few hundred bytes of DWARF.
	if limit := uint64(1 << 20); n > limit {
		t.Errorf("New and a lookup in the good unit allocated %d bytes, want at most %d", n, limit)
	}
	t.Logf("%d bytes allocated", n)
}
