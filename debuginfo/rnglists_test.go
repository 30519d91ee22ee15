package debuginfo

import (
	"debug/macho"
	"encoding/binary"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// rnglistFixture is the sections of testdata/fixtures/rnglist-dwarf5.o,
// whose inlined subroutines and unit have DW_AT_ranges in
// DW_FORM_rnglistx. Its DIEs (llvm-dwarfdump-16 --debug-info):
// the unit at 0xc (DW_AT_ranges index 9, DW_AT_rnglists_base 0xc), the
// subprogram hot at 0x80, in it the inlined twice at 0xba (index 0) and,
// in that, check at 0xd5 (index 1) and 0xf1 (index 2).
func rnglistFixture(t testing.TB) map[string][]byte {
	return normalize(dwarfSections(t, "testdata/fixtures/rnglist-dwarf5.o", macho.CpuArm64))
}

// attrValueAt returns the offset in debug_info of the value of attribute
// at of the DIE at die, in the fixture's only unit; it reads the
// abbreviation itself.
func attrValueAt(t testing.TB, secs map[string][]byte, die int, at uint64) int {
	t.Helper()
	info := secs["debug_info"]
	spans, _, _ := unitSpans(info)
	u := spans[0]
	f, _ := readUnitFormat(info, u)
	w := &fastWalk{info: info[:u.end], f: f, ok: true}
	code, pos := w.uleb(die)
	a := cursor{b: secs["debug_abbrev"], off: int(u.abbrev)}
	for {
		c := a.uleb()
		if c == 0 || a.err {
			t.Fatalf("DIE at %#x: abbreviation %d not found", die, code)
		}
		a.uleb()
		a.u8()
		for {
			name, form := a.uleb(), a.uleb()
			if name == 0 && form == 0 {
				break
			}
			if form == formImplicitConst {
				a.sleb()
			}
			if c != code {
				continue
			}
			if name == at {
				return pos
			}
			if n := f.formSize(form); n >= 0 {
				pos += n
			} else {
				pos = w.skipVar(pos, uint16(form))
			}
		}
		if c == code {
			t.Fatalf("DIE at %#x has no attribute %#x", die, at)
		}
	}
}

// names returns the function names of frames.
func names(frames []Frame) []string {
	var out []string
	for _, f := range frames {
		out = append(out, f.Function)
	}
	return out
}

// TestHostileRangeLists: a DW_FORM_rnglistx index, range list offset or
// DW_AT_rnglists_base that leads out of debug_rnglists costs the ranges
// of the DIEs concerned, each with a warning naming the unit, the DIE and
// the offset; never the unit's other functions, and never a panic. Both
// walks agree (compareWalks).
func TestHostileRangeLists(t *testing.T) {
	fixture := rnglistFixture(t)
	const attrRanges = 0x55
	const unit = "compile unit at 0xc (rnglist.c): "
	tests := []struct {
		name   string
		mutate func(secs map[string][]byte)
		// at0x24, at0x3c and at0x1e4 are the functions at 0x24 and 0x3c
		// (check, inlined in twice, inlined in hot: the DIEs at 0xd5
		// and 0xf1) and 0x1e4 (check in twice in rare).
		at0x24, at0x3c, at0x1e4 []string
		warnings                int
		warn                    string // substring of the first warning
		err                     string // substring of New's error, "" for success
	}{
		{"fixture", func(map[string][]byte) {}, []string{"check", "twice", "hot"}, []string{"check", "twice", "hot"}, []string{"check", "twice", "rare"}, 0, "", ""},
		{"index past debug_rnglists", func(secs map[string][]byte) {
			secs["debug_info"][attrValueAt(t, secs, 0xba, attrRanges)] = 0x7f
		}, []string{"check", "hot"}, []string{"check", "hot"}, []string{"check", "twice", "rare"}, 1,
			unit + "DIE at 0xba: DW_AT_ranges: range list index 127: its offset at 0x208 (DW_AT_rnglists_base 0xc) is past debug_rnglists (167 bytes) (no DW_AT_low_pc/high_pc: dropped, its children kept)", ""},
		// Index 10 of a 10-entry table: its slot holds the first bytes
		// of the first list, which debug/dwarf takes for an offset.
		{"index past the offsets table", func(secs map[string][]byte) {
			secs["debug_info"][attrValueAt(t, secs, 0xba, attrRanges)] = 10
		}, []string{"check", "hot"}, []string{"check", "hot"}, []string{"check", "twice", "rare"}, 1,
			unit + "DIE at 0xba: ranges: range list index 10 is past the 10 entries of the offsets table at 0xc (dropped)", ""},
		// Index 39 of the DIE at 0xf1 leads to a slot appended to the
		// section that holds index 1's offset, which the DIE at 0xd5
		// names before it: a range list decoded once per offset must not
		// answer for the bad index.
		{"index past the table, offset shared", func(secs map[string][]byte) {
			secs["debug_rnglists"] = append(secs["debug_rnglists"], 0, 0x32, 0, 0, 0) // slot 39 at 0xa8
			secs["debug_info"][attrValueAt(t, secs, 0xf1, attrRanges)] = 39
		}, []string{"check", "twice", "hot"}, []string{"twice", "hot"}, []string{"check", "twice", "rare"}, 1,
			unit + "DIE at 0xf1: ranges: range list index 39 is past the 10 entries of the offsets table at 0xc (dropped)", ""},
		{"offsets table entry past debug_rnglists", func(secs map[string][]byte) {
			binary.LittleEndian.PutUint32(secs["debug_rnglists"][0xc:], 0x1000) // index 0
		}, []string{"check", "hot"}, []string{"check", "hot"}, []string{"check", "twice", "rare"}, 1,
			unit + "DIE at 0xba: ranges: range list at 0x100c is past debug_rnglists (167 bytes) (dropped)", ""},
		{"base past debug_rnglists", func(secs map[string][]byte) {
			binary.LittleEndian.PutUint32(secs["debug_info"][attrValueAt(t, secs, 0xc, attrRnglistsBase):], 0x1000)
		}, []string{"hot"}, []string{"hot"}, []string{"rare"}, 10, // the unit and its nine inlined subroutines
			unit + "unit DIE: DW_AT_ranges: range list index 9: its offset at 0x1024 (DW_AT_rnglists_base 0x1000) is past debug_rnglists (167 bytes) (the unit's functions and lines kept)", ""},
		// debug/dwarf then reads none of the unit's bases.
		{"no debug_rnglists", func(secs map[string][]byte) {
			delete(secs, "debug_rnglists")
		}, nil, nil, nil, 0, "", "compile unit at 0xc: DIEs: unit DIE: DW_AT_ranges is range list index 9, and there is no debug_rnglists section: the unit cannot be read"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			secs := maps.Clone(fixture)
			secs["debug_info"] = slices.Clone(secs["debug_info"])
			secs["debug_rnglists"] = slices.Clone(secs["debug_rnglists"])
			tc.mutate(secs)
			ix := compareWalks(t, secs)
			if tc.err != "" {
				if _, err := New(secs); err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("New = %v, want an error containing %q", err, tc.err)
				}
				return
			}
			if ix == nil {
				_, err := New(secs)
				t.Fatalf("New failed: %v", err)
			}
			for _, c := range []struct {
				addr uint64
				want []string
			}{{0x24, tc.at0x24}, {0x3c, tc.at0x3c}, {0x1e4, tc.at0x1e4}} {
				frames, _ := ix.Lookup(c.addr)
				if got := names(frames); !slices.Equal(got, c.want) {
					t.Errorf("Lookup(%#x) = %q, want %q", c.addr, got, c.want)
				}
			}
			w := ix.Warnings()
			if len(w) != tc.warnings || len(w) > 0 && !strings.Contains(w[0], tc.warn) {
				t.Errorf("Warnings() = %q, want %d, the first containing %q", w, tc.warnings, tc.warn)
			}
		})
	}
}

// FuzzRangeLists mutates debug_info and debug_rnglists of the DWARF 5
// fixture whose ranges are range list indexes (the other sections stay
// fixed, for the indexes to point into) and checks that both walks parse
// every unit to the same, with the same warnings, that nothing panics,
// and that the index stays within the hostile-input allocation budget.
// Seeds: the fixture and TestHostileRangeLists' damaged copies.
func FuzzRangeLists(f *testing.F) {
	base := rnglistFixture(f)
	info, rng := base["debug_info"], base["debug_rnglists"]
	f.Add(info, rng, uint64(0x24))
	pastIndex := slices.Clone(info)
	pastIndex[attrValueAt(f, base, 0xba, 0x55)] = 0x7f
	f.Add(pastIndex, rng, uint64(0x24))
	pastTableIndex := slices.Clone(info)
	pastTableIndex[attrValueAt(f, base, 0xba, 0x55)] = 10
	f.Add(pastTableIndex, rng, uint64(0x24))
	pastTable := slices.Clone(rng)
	binary.LittleEndian.PutUint32(pastTable[0xc:], 0x1000)
	f.Add(info, pastTable, uint64(0x3c))
	pastBase := slices.Clone(info)
	binary.LittleEndian.PutUint32(pastBase[attrValueAt(f, base, 0xc, attrRnglistsBase):], 0x1000)
	f.Add(pastBase, rng, uint64(0x1e4))
	f.Add(info, []byte(nil), uint64(0x1e4))
	f.Fuzz(func(t *testing.T, info, rng []byte, addr uint64) {
		secs := maps.Clone(base)
		secs["debug_info"], secs["debug_rnglists"] = info, rng
		if rng == nil {
			delete(secs, "debug_rnglists")
		}
		compareWalks(t, secs)
		withinBudget(t, sectionsSize(secs), func() {
			ix, err := New(secs)
			if err != nil {
				return
			}
			parseAll(ix)
			for _, a := range []uint64{addr, 0x24, 0x1e4} {
				frames, err := ix.Lookup(a)
				if (err == nil) != (len(frames) > 0) || len(frames) > maxDepth {
					t.Fatalf("Lookup(%#x) = %d frames, %v", a, len(frames), err)
				}
			}
			if w := ix.Warnings(); len(w) > maxWarnings+1 {
				t.Fatalf("Warnings() = %d lines, want at most %d", len(w), maxWarnings+1)
			}
		})
	})
}

// unit5 wraps DIEs in a DWARF 5 compile unit header (abbreviations at 0,
// 8-byte addresses).
func unit5(dies []byte) []byte {
	u := binary.LittleEndian.AppendUint32(nil, uint32(8+len(dies)))
	u = binary.LittleEndian.AppendUint16(u, 5)
	u = append(u, 1, 8) // DW_UT_compile, address_size
	u = binary.LittleEndian.AppendUint32(u, 0)
	return append(u, dies...)
}

// TestDWARF5RangeListForms: in a DWARF 5 unit, DW_AT_ranges in
// DW_FORM_sec_offset is an offset in debug_rnglists (not debug_ranges,
// which here holds other ranges at the same offsets), and the range list
// entries that name addresses by their index in debug_addr
// (DW_RLE_startx_length, DW_RLE_startx_endx, DW_RLE_base_addressx) read
// them from the unit's DW_AT_addr_base. Without debug_rnglists, such a
// DW_AT_ranges is a warning, not a read of debug_ranges.
func TestDWARF5RangeListForms(t *testing.T) {
	abbrev := []byte{
		1, 0x11, 1, // DW_TAG_compile_unit, children
		0x03, 0x08, // DW_AT_name, DW_FORM_string
		0x11, 0x01, // DW_AT_low_pc, DW_FORM_addr
		0x73, 0x17, // DW_AT_addr_base, DW_FORM_sec_offset
		0x55, 0x17, // DW_AT_ranges, DW_FORM_sec_offset
		0, 0,
		2, 0x2e, 0, // DW_TAG_subprogram, no children
		0x03, 0x08, // DW_AT_name, DW_FORM_string
		0x55, 0x17, // DW_AT_ranges, DW_FORM_sec_offset
		0, 0,
		3, 0x2e, 0, // DW_TAG_subprogram, no children
		0x03, 0x08, // DW_AT_name, DW_FORM_string
		0x11, 0x01, // DW_AT_low_pc, DW_FORM_addr
		0x12, 0x06, // DW_AT_high_pc, DW_FORM_data4 (a size)
		0, 0,
		0,
	}
	// debug_rnglists: a 12-byte header (no offsets table), then the lists.
	lists := []byte{0x07} // DW_RLE_start_length: 0x1000, 0x10
	lists = binary.LittleEndian.AppendUint64(lists, 0x1000)
	lists = append(lists, 0x10, 0x00) // …, DW_RLE_end_of_list
	startx := 12 + len(lists)
	lists = append(lists, 0x03, 1, 0x10, 0x00) // DW_RLE_startx_length: addr[1] = 0x3000, 0x10
	endx := 12 + len(lists)
	lists = append(lists, 0x02, 2, 3, 0x00) // DW_RLE_startx_endx: addr[2], addr[3] = [0x4000, 0x4010)
	basex := 12 + len(lists)
	lists = append(lists, 0x01, 0, 0x04, 0x00, 0x10, 0x00) // DW_RLE_base_addressx addr[0] = 0x2000; DW_RLE_offset_pair 0, 0x10
	unit := 12 + len(lists)
	lists = append(lists, 0x07) // the unit's: DW_RLE_start_length 0x1000, 0x5000
	lists = binary.LittleEndian.AppendUint64(lists, 0x1000)
	lists = append(lists, 0x80, 0xa0, 0x01, 0x00)
	rng := binary.LittleEndian.AppendUint32(nil, uint32(8+len(lists)))
	rng = append(rng, 5, 0, 8, 0, 0, 0, 0, 0) // version, address_size, segment_selector_size, offset_entry_count
	rng = append(rng, lists...)
	// debug_addr: an 8-byte header, then the addresses from offset 8.
	addr := binary.LittleEndian.AppendUint32(nil, 4+4*8)
	addr = append(addr, 5, 0, 8, 0)
	for _, a := range []uint64{0x2000, 0x3000, 0x4000, 0x4010} {
		addr = binary.LittleEndian.AppendUint64(addr, a)
	}
	dies := append([]byte{1}, "a.c\x00"...)
	dies = binary.LittleEndian.AppendUint64(dies, 0) // low_pc
	dies = binary.LittleEndian.AppendUint32(dies, 8) // addr_base
	dies = binary.LittleEndian.AppendUint32(dies, uint32(unit))
	for _, f := range []struct {
		name string
		off  int
	}{{"f", 12}, {"h", startx}, {"e", endx}, {"g", basex}} {
		dies = append(append(append(dies, 2), f.name...), 0)
		dies = binary.LittleEndian.AppendUint32(dies, uint32(f.off))
	}
	dies = append(dies, 3, 'k', 0)
	dies = binary.LittleEndian.AppendUint64(dies, 0x5000)
	dies = binary.LittleEndian.AppendUint32(dies, 0x10)
	dies = append(dies, 0)
	// debug_ranges pairs that would put every function at 0x9000.
	ranges := make([]byte, 64)
	for i := 0; i+16 <= len(ranges); i += 16 {
		binary.LittleEndian.PutUint64(ranges[i:], 0x9000)
		binary.LittleEndian.PutUint64(ranges[i+8:], 0x9100)
	}
	binary.LittleEndian.PutUint64(ranges[unit:], 0x9000) // and the unit at 0x9000 alone
	binary.LittleEndian.PutUint64(ranges[unit+8:], 0x9100)
	clear(ranges[unit+16:])
	secs := map[string][]byte{"debug_info": unit5(dies), "debug_abbrev": abbrev,
		"debug_rnglists": rng, "debug_addr": addr, "debug_ranges": ranges}

	t.Run("debug_rnglists", func(t *testing.T) {
		ix := compareWalks(t, secs)
		if ix == nil {
			t.Fatal("New failed")
		}
		if n := ix.fastUnits.Load(); n != 1 {
			t.Errorf("fastWalk parsed %d units, want 1", n)
		}
		for _, c := range []struct {
			addr uint64
			want string
		}{{0x1008, "f"}, {0x2008, "g"}, {0x3008, "h"}, {0x4008, "e"}, {0x5008, "k"}, {0x9008, ""}} {
			frames, _ := ix.Lookup(c.addr)
			var got string
			if len(frames) > 0 {
				got = frames[0].Function
			}
			if got != c.want {
				t.Errorf("Lookup(%#x) = %q, want %q", c.addr, got, c.want)
			}
		}
		if w := ix.Warnings(); len(w) != 0 {
			t.Errorf("Warnings() = %q, want none", w)
		}
	})
	t.Run("no debug_rnglists", func(t *testing.T) {
		secs := maps.Clone(secs)
		delete(secs, "debug_rnglists")
		ix := compareWalks(t, secs)
		if ix == nil {
			t.Fatal("New failed")
		}
		// Only k, by its low_pc and high_pc: nothing from debug_ranges,
		// for the unit's ranges either (the unit is parsed for them).
		if frames, err := ix.Lookup(0x5008); err != nil || frames[0].Function != "k" {
			t.Errorf("Lookup(0x5008) = %v, %v; want k", frames, err)
		}
		if diff := cmp.Diff([]uint64{0x5000, 0x5010}, ix.Boundaries()); diff != "" {
			t.Errorf("Boundaries() differ (-want +got):\n%s", diff)
		}
		w := ix.Warnings()
		if want := "compile unit at 0xc (a.c): DIE at 0x21: ranges: range list at 0xc: no debug_rnglists section (dropped)"; len(w) != 4 || w[0] != want {
			t.Errorf("Warnings() = %q, want 4, the first %q", w, want)
		}
	})
}

// TestLexicalBlockRangeIndex: a lexical block's DW_AT_ranges in
// DW_FORM_rnglistx is not used, but debug/dwarf fails the block when its
// slot is past debug_rnglists; the walk then reads the block without it,
// with a warning, and keeps the functions in it and after it. The DIE
// decoder, which steps over the block, gives such a unit to the
// debug/dwarf walk rather than answer without the warning.
func TestLexicalBlockRangeIndex(t *testing.T) {
	abbrev := []byte{
		1, 0x11, 1, // DW_TAG_compile_unit, children
		0x03, 0x08, // DW_AT_name, DW_FORM_string
		0x11, 0x01, // DW_AT_low_pc, DW_FORM_addr
		0x74, 0x17, // DW_AT_rnglists_base, DW_FORM_sec_offset
		0, 0,
		2, 0x0b, 1, // DW_TAG_lexical_block, children
		0x55, 0x23, // DW_AT_ranges, DW_FORM_rnglistx
		0, 0,
		3, 0x2e, 0, // DW_TAG_subprogram, no children
		0x03, 0x08, // DW_AT_name, DW_FORM_string
		0x11, 0x01, // DW_AT_low_pc, DW_FORM_addr
		0x12, 0x06, // DW_AT_high_pc, DW_FORM_data4 (a size)
		0, 0,
		0,
	}
	fn := func(name string, lo uint64) []byte {
		d := append(append([]byte{3}, name...), 0)
		d = binary.LittleEndian.AppendUint64(d, lo)
		return binary.LittleEndian.AppendUint32(d, 0x10)
	}
	// One list, index 0: [0x2000, 0x2100).
	rng := binary.LittleEndian.AppendUint32(nil, 8+4+12)
	rng = append(rng, 5, 0, 8, 0, 1, 0, 0, 0) // version, address_size, segment_selector_size, offset_entry_count 1
	rng = binary.LittleEndian.AppendUint32(rng, 4)
	rng = append(rng, 0x07) // DW_RLE_start_length
	rng = binary.LittleEndian.AppendUint64(rng, 0x2000)
	rng = append(rng, 0x80, 0x02, 0x00) // 0x100, DW_RLE_end_of_list
	for _, tc := range []struct {
		name  string
		index byte
		fast  int64
		warn  string
	}{
		{"index in the table", 0, 1, ""},
		{"slot past debug_rnglists", 0x7f, 0, "compile unit at 0xc (b.c): DIE at 0x2d: DW_AT_ranges: range list index 127: its offset at 0x208 (DW_AT_rnglists_base 0xc) is past debug_rnglists (28 bytes) (its children kept)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dies := append([]byte{1}, "b.c\x00"...)
			dies = binary.LittleEndian.AppendUint64(dies, 0)
			dies = binary.LittleEndian.AppendUint32(dies, 12) // rnglists_base
			dies = append(dies, fn("s1", 0x1000)...)
			dies = append(dies, 2, tc.index)
			dies = append(dies, fn("s2", 0x2000)...)
			dies = append(dies, 0)
			dies = append(dies, fn("s3", 0x3000)...)
			dies = append(dies, 0)
			secs := map[string][]byte{"debug_info": unit5(dies), "debug_abbrev": abbrev, "debug_rnglists": rng}
			ix := compareWalks(t, secs)
			if ix == nil {
				t.Fatal("New failed")
			}
			if n := ix.fastUnits.Load(); n != tc.fast {
				t.Errorf("fastWalk parsed %d units, want %d", n, tc.fast)
			}
			for _, c := range []struct {
				addr uint64
				want string
			}{{0x1008, "s1"}, {0x2008, "s2"}, {0x3008, "s3"}} {
				if frames, err := ix.Lookup(c.addr); err != nil || frames[0].Function != c.want {
					t.Errorf("Lookup(%#x) = %v, %v; want %s", c.addr, frames, err, c.want)
				}
			}
			w := ix.Warnings()
			if tc.warn == "" && len(w) != 0 || tc.warn != "" && (len(w) != 1 || w[0] != tc.warn) {
				t.Errorf("Warnings() = %q, want %q", w, tc.warn)
			}
		})
	}
}
