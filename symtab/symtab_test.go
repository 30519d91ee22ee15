package symtab

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stackimage/stackimage/image"
)

// nl is one nlist entry for a synthetic symbol table.
type nl struct {
	name  string
	typ   uint8
	sect  uint8
	value uint64
}

// nlist n_type values the tests use.
const (
	tSect    = 0x0e // N_SECT
	tSectExt = 0x0f // N_SECT | N_EXT
	tUndf    = 0x01 // N_UNDF | N_EXT
	tAbs     = 0x02 // N_ABS
	tIndr    = 0x0a // N_INDR
	tFun     = 0x24 // N_FUN, a stab
	tOSO     = 0x66 // N_OSO, a stab
)

// rawSymtab lays out syms as an LC_SYMTAB would: nlist or nlist_64 entries
// and a string table starting with the customary " \0" so that offset 0 is
// never a real name.
func rawSymtab(is64 bool, bo binary.ByteOrder, syms []nl) image.RawSymtab {
	strs := []byte(" \x00")
	size := nlistSize
	if is64 {
		size = nlist64Size
	}
	data := make([]byte, len(syms)*size)
	for i, s := range syms {
		b := data[i*size:]
		strx := uint32(0)
		if s.name != "" {
			strx = uint32(len(strs))
			strs = append(strs, s.name...)
			strs = append(strs, 0)
		}
		bo.PutUint32(b[0:], strx)
		b[4], b[5] = s.typ, s.sect
		if is64 {
			bo.PutUint64(b[8:], s.value)
		} else {
			bo.PutUint32(b[8:], uint32(s.value))
		}
	}
	return image.RawSymtab{Is64: is64, ByteOrder: bo, NSyms: len(syms), Syms: data, Strings: strs}
}

// The sections of a small linked executable: __text, then __stubs right
// after it, a gap, then __const in __DATA_CONST.
var testSections = []image.Section{
	{Index: 1, Segment: "__TEXT", Name: "__text", Addr: 0x100003000, Size: 0x1000},
	{Index: 2, Segment: "__TEXT", Name: "__stubs", Addr: 0x100004000, Size: 0x100},
	{Index: 3, Segment: "__DATA_CONST", Name: "__const", Addr: 0x100008000, Size: 0x100},
}

// lookupResult is what a test compares: the answer and whether there was one.
type lookupResult struct {
	Sym Symbol
	OK  bool
}

func lookupResultAt(t *Table, addr uint64) lookupResult {
	s, err := t.Lookup(addr)
	ok := err == nil
	return lookupResult{s, ok}
}

func found(name, raw string, addr, off uint64, src Source) lookupResult {
	return lookupResult{Symbol{Name: name, RawName: raw, Addr: addr, Offset: off, Source: src}, true}
}

func TestLookup(t *testing.T) {
	syms := []nl{
		{"__mh_execute_header", tSectExt, 1, 0x100000000},
		{"_main", tSectExt, 1, 0x100003000},
		{"_helper", tSect, 1, 0x100003040},
		{"-[Foo bar]", tSect, 1, 0x100003100},
		{"_runtime.main", tSect, 1, 0x100003200},
		{"_last", tSectExt, 1, 0x100003f00},
		{"_stub_one", tSect, 2, 0x100004010},
		{"_table", tSectExt, 3, 0x100008000},
		// Entries that must not be indexed.
		{"_printf", tUndf, 0, 0},
		{"_abs", tAbs, 0, 0x100003080},
		{"_indirect", tIndr, 0, 0x100003090},
		{"_stab_fun", tFun, 1, 0x1000030a0},
		{"/tmp/a.o", tOSO, 0, 0x1000030b0},
		{"_common_object", tSectExt, 3, 0},
		{"", tSect, 1, 0x1000030c0},
	}
	tab, err := NewFromParts(rawSymtab(true, binary.LittleEndian, syms), testSections, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		addr uint64
		want lookupResult
	}{
		{"first symbol exactly", 0x100003000, found("main", "_main", 0x100003000, 0, SourceSymtab)},
		{"inside first symbol", 0x10000303c, found("main", "_main", 0x100003000, 0x3c, SourceSymtab)},
		{"local symbol", 0x100003044, found("helper", "_helper", 0x100003040, 4, SourceSymtab)},
		{"absolute symbol ignored", 0x100003080, found("helper", "_helper", 0x100003040, 0x40, SourceSymtab)},
		{"indirect and stab ignored", 0x1000030b4, found("helper", "_helper", 0x100003040, 0x74, SourceSymtab)},
		{"unnamed symbol ignored", 0x1000030c4, found("helper", "_helper", 0x100003040, 0x84, SourceSymtab)},
		{"objective-c name keeps its first byte", 0x100003104, found("-[Foo bar]", "-[Foo bar]", 0x100003100, 4, SourceSymtab)},
		{"go name loses the underscore", 0x100003210, found("runtime.main", "_runtime.main", 0x100003200, 0x10, SourceSymtab)},
		{"last byte of __text", 0x100003fff, found("last", "_last", 0x100003f00, 0xff, SourceSymtab)},
		{"past __text, before the first stub symbol", 0x100004000, lookupResult{}},
		{"in __stubs", 0x100004014, found("stub_one", "_stub_one", 0x100004010, 4, SourceSymtab)},
		{"past the end of __stubs", 0x100004100, lookupResult{}},
		{"between segments", 0x100006000, lookupResult{}},
		{"data symbol", 0x100008008, found("table", "_table", 0x100008000, 8, SourceSymtab)},
		{"below every section", 0x100000000, lookupResult{}},
		{"in the mach header", 0x100000010, lookupResult{}},
		{"address zero", 0, lookupResult{}},
		{"highest address", ^uint64(0), lookupResult{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := lookupResultAt(tab, tt.addr)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Lookup(%#x) mismatch (-want +got):\n%s", tt.addr, diff)
			}
		})
	}
	if got, want := tab.Len(), 7; got != want {
		t.Errorf("Len() = %d, want %d", got, want)
	}
}

// TestSameAddress checks that of several symbols at one address the one
// llvm-symbolizer answers is kept: the greatest name, compared without the
// leading underscore. The pairs are ones llvm-symbolizer 14 and 16 answer so
// for a Go binary (runtime.text over go:buildid, typerel.* over type:*).
func TestSameAddress(t *testing.T) {
	tests := []struct {
		name  string
		names []string
		want  string
	}{
		{"go text start", []string{"_go:buildid", "_runtime.text"}, "runtime.text"},
		{"go text start, reversed", []string{"_runtime.text", "_go:buildid"}, "runtime.text"},
		{"punctuation sorts low", []string{"_typerel.*", "_type:*"}, "typerel.*"},
		{"four at one address", []string{"_runtime.covctrs", "_runtime.ecovctrs", "_runtime.end", "_runtime.enoptrbss"}, "runtime.enoptrbss"},
		{"underscore removed before comparing", []string{"__zeta", "_alpha"}, "alpha"},
		{"real name over a hidden one", []string{"__hidden#0_", "_Abc"}, "Abc"},
		{"real name over a hidden one, reversed", []string{"_Abc", "__hidden#0_"}, "Abc"},
		{"among hidden names the greatest", []string{"__hidden#1_", "__hidden#2_"}, "_hidden#2_"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var syms []nl
			for _, n := range tt.names {
				syms = append(syms, nl{n, tSect, 1, 0x100003100})
			}
			tab, err := NewFromParts(rawSymtab(true, binary.LittleEndian, syms), testSections, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			got, err := tab.Lookup(0x100003104)
			ok := err == nil
			if !ok || got.Name != tt.want {
				t.Errorf("Lookup(%#x) = %q, %v, want %q", 0x100003104, got.Name, ok, tt.want)
			}
			if tab.Len() != 1 {
				t.Errorf("Len() = %d, want 1: one entry per address", tab.Len())
			}
		})
	}
}

// TestStripped covers images whose symbol table holds only the mach
// header's symbol: function starts give boundaries, the export trie names.
func TestStripped(t *testing.T) {
	syms := []nl{{"__mh_execute_header", tSectExt, 1, 0x100000000}}
	starts := []uint64{0x100003000, 0x100003040, 0x100003100, 0x100004000 /* outside __text's end: a stub */, 0x200000000 /* in no section */}
	exports := []image.Export{
		{Name: "__mh_execute_header", Addr: 0x100000000},
		{Name: "_exported", Addr: 0x100003040},
		{Name: "_absolute", Addr: 0x5}, // in no section
	}
	tab, err := NewFromParts(rawSymtab(true, binary.LittleEndian, syms), testSections, starts, exports)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		addr uint64
		want lookupResult
	}{
		{"mach header never answers", 0x100000100, lookupResult{}},
		{"unnamed function", 0x100003008, found("func_100003000", "", 0x100003000, 8, SourceFunctionStarts)},
		{"exported function", 0x100003044, found("exported", "_exported", 0x100003040, 4, SourceExports)},
		{"last function to the end of __text", 0x100003ffc, found("func_100003100", "", 0x100003100, 0xefc, SourceFunctionStarts)},
		{"function start in __stubs", 0x100004004, found("func_100004000", "", 0x100004000, 4, SourceFunctionStarts)},
		{"start in no section is ignored", 0x200000004, lookupResult{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := lookupResultAt(tab, tt.addr)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Lookup(%#x) mismatch (-want +got):\n%s", tt.addr, diff)
			}
		})
	}
}

// TestMerge checks how function starts and exports fill in what the
// symbol table leaves out, and never override it.
func TestMerge(t *testing.T) {
	syms := []nl{
		{"_main", tSectExt, 1, 0x100003000},
		{"_helper", tSect, 1, 0x100003100},
	}
	starts := []uint64{0x100003000, 0x100003080 /* a local function stripped from the symtab */, 0x100003100, 0x100003200}
	exports := []image.Export{{Name: "_main_export_alias", Addr: 0x100003000}, {Name: "_api", Addr: 0x100003200}}
	tab, err := NewFromParts(rawSymtab(true, binary.LittleEndian, syms), testSections, starts, exports)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		addr uint64
		want lookupResult
	}{
		{"symtab wins over export and start at the same address", 0x100003010, found("main", "_main", 0x100003000, 0x10, SourceSymtab)},
		{"start above the nearest symbol: unnamed function", 0x100003090, found("func_100003080", "", 0x100003080, 0x10, SourceFunctionStarts)},
		{"symbol again", 0x100003104, found("helper", "_helper", 0x100003100, 4, SourceSymtab)},
		{"export above the nearest symbol", 0x100003204, found("api", "_api", 0x100003200, 4, SourceExports)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := lookupResultAt(tab, tt.addr)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Lookup(%#x) mismatch (-want +got):\n%s", tt.addr, diff)
			}
		})
	}
	if got, want := tab.Len(), 4; got != want {
		t.Errorf("Len() = %d, want %d (duplicates of symtab entries dropped)", got, want)
	}
}

// TestSectionEdges checks a symbol at the very end of a section (Go's
// runtime.etext) against the first symbol of the next section.
func TestSectionEdges(t *testing.T) {
	syms := []nl{
		{"_code", tSect, 1, 0x100003000},
		{"_runtime.etext", tSect, 1, 0x100004000}, // __text's end
		{"_stub", tSect, 2, 0x100004000},          // __stubs' start
		{"_after", tSect, 1, 0x100004080},         // claims __text but lies in __stubs
	}
	tab, err := NewFromParts(rawSymtab(true, binary.LittleEndian, syms), testSections, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		addr uint64
		want lookupResult
	}{
		{"end of __text belongs to __stubs", 0x100004000, found("stub", "_stub", 0x100004000, 0, SourceSymtab)},
		{"inside the first stub", 0x100004008, found("stub", "_stub", 0x100004000, 8, SourceSymtab)},
		{"nearest symbol is of another section", 0x100004084, lookupResult{}},
		{"last byte of __text", 0x100003fff, found("code", "_code", 0x100003000, 0xfff, SourceSymtab)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := lookupResultAt(tab, tt.addr)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Lookup(%#x) mismatch (-want +got):\n%s", tt.addr, diff)
			}
		})
	}
}

// TestLayouts checks 32-bit nlist, big-endian tables, object files (whose
// first function is at 0) and tables without sections.
func TestLayouts(t *testing.T) {
	objSections := []image.Section{{Index: 1, Segment: "__TEXT", Name: "__text", Addr: 0, Size: 0x40}}
	tests := []struct {
		name     string
		raw      image.RawSymtab
		sections []image.Section
		addr     uint64
		want     lookupResult
	}{
		{
			name:     "32-bit little-endian",
			raw:      rawSymtab(false, binary.LittleEndian, []nl{{"_main", tSectExt, 1, 0x1ff0}}),
			sections: []image.Section{{Index: 1, Name: "__text", Addr: 0x1f00, Size: 0x100}},
			addr:     0x1ff2,
			want:     found("main", "_main", 0x1ff0, 2, SourceSymtab),
		},
		{
			name:     "32-bit big-endian (ppc)",
			raw:      rawSymtab(false, binary.BigEndian, []nl{{"_main", tSectExt, 1, 0x1ff0}}),
			sections: []image.Section{{Index: 1, Name: "__text", Addr: 0x1f00, Size: 0x100}},
			addr:     0x1ff2,
			want:     found("main", "_main", 0x1ff0, 2, SourceSymtab),
		},
		{
			name:     "64-bit big-endian",
			raw:      rawSymtab(true, binary.BigEndian, []nl{{"_main", tSectExt, 1, 0x100001ff0}}),
			sections: []image.Section{{Index: 1, Name: "__text", Addr: 0x100001f00, Size: 0x100}},
			addr:     0x100001ff2,
			want:     found("main", "_main", 0x100001ff0, 2, SourceSymtab),
		},
		{
			name:     "object file: function at 0",
			raw:      rawSymtab(true, binary.LittleEndian, []nl{{"_main", tSectExt, 1, 0}, {"ltmp0", tSect, 1, 0}}),
			sections: objSections,
			addr:     0x6,
			want:     found("main", "_main", 0, 6, SourceSymtab),
		},
		{
			name: "no sections: nearest symbol, unbounded",
			raw:  rawSymtab(true, binary.LittleEndian, []nl{{"_a", tSect, 1, 0x1000}, {"_b", tSect, 5, 0x2000}}),
			addr: 0x9000,
			want: found("b", "_b", 0x2000, 0x7000, SourceSymtab),
		},
		{
			name: "no symbol table",
			raw:  image.RawSymtab{},
			addr: 0x1000,
			want: lookupResult{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab, err := NewFromParts(tt.raw, tt.sections, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			got := lookupResultAt(tab, tt.addr)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Lookup(%#x) mismatch (-want +got):\n%s", tt.addr, diff)
			}
		})
	}
}

// TestBadInput checks that a damaged symbol table costs only what is
// damaged: a bad entry is skipped, an unreadable table is left out, and
// the export trie still answers; each problem is a warning naming where.
func TestBadInput(t *testing.T) {
	good := rawSymtab(true, binary.LittleEndian, []nl{{"_main", tSectExt, 1, 0x100003000}, {"_second", tSectExt, 1, 0x100003040}})
	exports := []image.Export{{Name: "_exported", Addr: 0x100003080}}
	tests := []struct {
		name      string
		raw       func() image.RawSymtab
		want      []string // names found at 0x100003000, 0x100003040, 0x100003080
		wantWarns []string
	}{
		{"count larger than data", func() image.RawSymtab { r := good; r.NSyms = 1 << 40; return r },
			[]string{"", "", "exported"},
			[]string{"symtab: LC_SYMTAB skipped: symbol count larger than the 32 bytes of nlist data (1099511627776) at offset 0x0"}},
		{"negative count", func() image.RawSymtab { r := good; r.NSyms = -1; return r },
			[]string{"", "", "exported"},
			[]string{"symtab: LC_SYMTAB skipped: symbol count larger than the 32 bytes of nlist data (-1) at offset 0x0"}},
		{"name past the string table", func() image.RawSymtab {
			r := good
			r.Syms = append([]byte(nil), r.Syms...)
			binary.LittleEndian.PutUint32(r.Syms[16:], 0x7fffffff)
			return r
		},
			[]string{"main", "main", "exported"},
			[]string{"symtab: LC_SYMTAB: symbol 1 skipped: its name offset is past the 16-byte string table (2147483647) at offset 0x10"}},
		{"no byte order", func() image.RawSymtab { r := good; r.ByteOrder = nil; return r },
			[]string{"", "", "exported"},
			[]string{"symtab: LC_SYMTAB skipped: symbol table without a byte order at offset 0x0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab, err := NewFromParts(tt.raw(), testSections, nil, exports)
			if err != nil {
				t.Fatalf("NewFromParts error = %v, want a table and warnings", err)
			}
			var got []string
			for _, a := range []uint64{0x100003000, 0x100003040, 0x100003080} {
				s, _ := tab.Lookup(a)
				got = append(got, s.Name)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("names (-want +got):\n%s", diff)
			}
			var warns []string
			for _, w := range tab.Warnings() {
				var fe *FormatError
				if !errors.As(w, &fe) {
					t.Errorf("warning %v is a %T, want a *FormatError", w, w)
				}
				warns = append(warns, w.Error())
			}
			if diff := cmp.Diff(tt.wantWarns, warns); diff != "" {
				t.Errorf("Warnings() (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWarningsBounded checks that a table of many bad entries keeps a few
// warnings and counts the rest.
func TestWarningsBounded(t *testing.T) {
	var syms []nl
	for i := 0; i < 100; i++ {
		syms = append(syms, nl{"_f", tSectExt, 1, 0x100003000 + uint64(i)})
	}
	raw := rawSymtab(true, binary.LittleEndian, syms)
	raw.Strings = raw.Strings[:2]
	tab, err := NewFromParts(raw, testSections, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	w := tab.Warnings()
	if len(w) != maxWarnings+1 || w[maxWarnings].Error() != "symtab: and 90 more problems like these" {
		t.Errorf("Warnings() = %d warnings ending %v; want %d and a count of 90 more", len(w), w[len(w)-1], maxWarnings+1)
	}
}

func TestSourceString(t *testing.T) {
	tests := []struct {
		name string
		src  Source
		want string
	}{
		{"symtab", SourceSymtab, "symtab"},
		{"exports", SourceExports, "exports"},
		{"function starts", SourceFunctionStarts, "function-starts"},
		{"unknown", Source(9), "Source(9)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.src.String(); got != tt.want {
				t.Errorf("Source(%d).String() = %q, want %q", int(tt.src), got, tt.want)
			}
		})
	}
}

// TestEnd checks that a symbol ends at the next one's start, or at its
// section's end for the last.
func TestEnd(t *testing.T) {
	syms := []nl{{"_a", tSectExt, 1, 0x1000}, {"_b", tSectExt, 1, 0x1010}, {"_b2", tSectExt, 1, 0x1010}, {"_c", tSectExt, 1, 0x1040}}
	tab, err := NewFromParts(rawSymtab(true, binary.LittleEndian, syms),
		[]image.Section{{Index: 1, Segment: "__TEXT", Name: "__text", Addr: 0x1000, Size: 0x80}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ addr, want uint64 }{{0x1000, 0x1010}, {0x100f, 0x1010}, {0x1010, 0x1040}, {0x1050, 0x1080}} {
		if got, ok := tab.End(tt.addr); !ok || got != tt.want {
			t.Errorf("End(%#x) = %#x, %v; want %#x", tt.addr, got, ok, tt.want)
		}
	}
	if _, ok := tab.End(0x2000); ok {
		t.Error("End of an address in no section found an end")
	}
}

// TestPrintableOrNUL checks the word test against a byte loop for every
// byte value at every position of strings of every length up to 20.
func TestPrintableOrNUL(t *testing.T) {
	for n := 1; n <= 20; n++ {
		for pos := 0; pos < n; pos++ {
			for c := 0; c < 256; c++ {
				b := []byte(strings.Repeat("a\x00", n)[:n])
				b[pos] = byte(c)
				want := c == 0 || c >= 0x20 && c < 0x7f
				if got := printableOrNUL(string(b)); got != want {
					t.Fatalf("printableOrNUL(%q) = %v, want %v", b, got, want)
				}
			}
		}
	}
}

// TestNamesPrintable checks the answer for tables whose string table is
// all printable names, holds an escape byte in a name, or holds a byte
// beyond ASCII in an export's name.
func TestNamesPrintable(t *testing.T) {
	tests := []struct {
		name    string
		syms    []nl
		exports []image.Export
		want    bool
	}{
		{"printable", []nl{{"_main", tSect, 1, 0x100003000}, {"_f", tSect, 1, 0x100003100}}, nil, true},
		{"escape in a name", []nl{{"_ma\x1bin", tSect, 1, 0x100003000}}, nil, false},
		{"DEL in a name", []nl{{"_ma\x7fin", tSect, 1, 0x100003000}}, nil, false},
		{"export beyond ASCII", []nl{{"_main", tSect, 1, 0x100003000}}, []image.Export{{Name: "_größe", Addr: 0x100003100}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab, err := NewFromParts(rawSymtab(true, binary.LittleEndian, tt.syms), testSections, nil, tt.exports)
			if err != nil {
				t.Fatal(err)
			}
			if got := tab.NamesPrintable(); got != tt.want {
				t.Errorf("NamesPrintable() = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestInDataSection: an address in a section whose flags mark no
// instructions is in data; one in a code section, between sections, or
// in a table built without sections is not. Of two overlapping sections,
// the later one decides, as lookups bound by it.
func TestInDataSection(t *testing.T) {
	const code, none = 0x80000400, 0
	sections := []image.Section{
		{Index: 1, Segment: "__TEXT", Name: "__text", Addr: 0x1000, Size: 0x100, Flags: code},
		{Index: 2, Segment: "__TEXT", Name: "__stubs", Addr: 0x1100, Size: 0x20, Flags: 0x80000408},
		{Index: 3, Segment: "__TEXT", Name: "__const", Addr: 0x1120, Size: 0x40, Flags: none},
		{Index: 4, Segment: "__TEXT", Name: "__cstring", Addr: 0x1160, Size: 0x20, Flags: 0x2},
		{Index: 5, Segment: "__TEXT", Name: "__late", Addr: 0x1170, Size: 0x20, Flags: code},
	}
	tb, err := NewFromParts(image.RawSymtab{}, sections, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		addr uint64
		want bool
	}{
		{0xfff, false}, {0x1000, false}, {0x10ff, false}, {0x1100, false}, {0x111f, false},
		{0x1120, true}, {0x115f, true}, {0x1160, true}, {0x116f, true},
		{0x1170, false}, {0x118f, false}, {0x1190, false},
	} {
		if got := tb.InDataSection(c.addr); got != c.want {
			t.Errorf("InDataSection(%#x) = %v, want %v", c.addr, got, c.want)
		}
	}
	bare, err := NewFromParts(image.RawSymtab{}, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if bare.InDataSection(0x1120) {
		t.Error("a table without sections puts an address in data")
	}
}
