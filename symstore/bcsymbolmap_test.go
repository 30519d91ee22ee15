package symstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/symtab"
)

func TestSymbolMapResolve(t *testing.T) {
	m, err := ParseSymbolMap([]byte("BCSymbolMap Version: 2.0\nzero\n/src/App/File.swift\r\n$s3App3fooyyF\n"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"__hidden#0_", "zero", true},
		{"___hidden#2_", "_$s3App3fooyyF", true}, // a symbol table's underscore stays
		{"__hidden#1_", "/src/App/File.swift", true},
		{"__hidden#3_", "__hidden#3_", false}, // beyond the map
		{"__hidden#_", "__hidden#_", false},
		{"__hidden#1", "__hidden#1", false},
		{"__hidden#-1_", "__hidden#-1_", false},
		{"__hidden#99999999999999999999_", "__hidden#99999999999999999999_", false},
		{"_hidden#1_", "_hidden#1_", false},
		{"main", "main", false},
		{"", "", false},
	}
	for _, tt := range tests {
		got, err := m.Resolve(tt.in)
		ok := err == nil
		if got != tt.want || ok != tt.ok {
			t.Errorf("Resolve(%q) = %q, %v, want %q, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
	var none *SymbolMap
	if got, err := none.Resolve("__hidden#0_"); got != "__hidden#0_" || !errors.Is(err, ErrNotFound) {
		t.Errorf("nil map: Resolve = %q, %v; want the name unchanged and ErrNotFound", got, err)
	}
}

func TestParseSymbolMapErrors(t *testing.T) {
	tests := []struct {
		name, in, inErr string
		names           int
	}{
		{"version 1", "BCSymbolMap Version: 1.0\na\nb", "", 2},
		{"empty", "BCSymbolMap Version: 2.0\n", "", 0},
		{"no header", "main\nfoo\n", "line 1", 0},
		{"unknown version", "BCSymbolMap Version: 3.0\na\n", "unknown version", 0},
		{"nothing", "", "line 1", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := ParseSymbolMap([]byte(tt.in))
			if tt.inErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.inErr) {
					t.Errorf("ParseSymbolMap(%q) error = %v, want one mentioning %q", tt.in, err, tt.inErr)
				}
				return
			}
			if err != nil || m.Len() != tt.names {
				t.Errorf("ParseSymbolMap(%q) = %d names, %v; want %d", tt.in, m.Len(), err, tt.names)
			}
		})
	}
}

// hide returns data with every NUL-terminated name old replaced by the
// hidden name new of the same length.
func hide(t *testing.T, data []byte, old, new string) []byte {
	t.Helper()
	if len(old) != len(new) {
		t.Fatalf("hide(%q, %q): lengths differ", old, new)
	}
	if !bytes.Contains(data, []byte(old+"\x00")) {
		t.Fatalf("hide: %q not in the file", old)
	}
	return bytes.ReplaceAll(data, []byte(old+"\x00"), []byte(new+"\x00"))
}

// TestBCSymbolMap hides a function's name in a fixture binary and its dSYM
// as a bitcode build does, and checks that the UUID.bcsymbolmap beside
// them gives it back, in symbol table and DWARF answers alike.
func TestBCSymbolMap(t *testing.T) {
	bin := hide(t, readFixture(t, chainBinary), "_with_alloca", "___hidden#1_")
	dwarf := hide(t, readFixture(t, chainDWARF), "_with_alloca", "___hidden#1_")
	dwarf = hide(t, dwarf, "with_alloca", "__hidden#1_")
	u := uuidOf(t, bin)[0]
	const addr = 0x1000004fc // in with_alloca

	resolve := func(t *testing.T, files map[string][]byte) (symtab.Symbol, []Frame) {
		dir := t.TempDir()
		for name, data := range files {
			if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		syms := NewSymbols()
		if err := syms.AddDir(context.Background(), dir); err != nil {
			t.Fatal(err)
		}
		e, err := syms.Lookup(u)
		if err != nil || e == nil {
			t.Fatalf("Lookup(%s) = %v, %v", u, e, err)
		}
		sym, _ := e.Symbol(addr)
		return sym, e.Resolve(Frame{Address: addr, LookupAddress: addr}, addr, ResolveOptions{})
	}
	symbolMap := []byte("BCSymbolMap Version: 2.0\nunused\nwith_alloca\n")
	tests := []struct {
		name  string
		files map[string][]byte
		want  string
	}{
		{"symbol table, no map", map[string][]byte{"chain": bin}, "__hidden#1_"},
		{"symbol table", map[string][]byte{"chain": bin, u.String() + ".bcsymbolmap": symbolMap}, "with_alloca"},
		{"symbol table, lower-case file name", map[string][]byte{"chain": bin, "maps/" + strings.ToLower(u.String()) + ".bcsymbolmap": symbolMap}, "with_alloca"},
		{"DWARF", map[string][]byte{"chain.dSYM/Contents/Resources/DWARF/chain": dwarf, u.String() + ".bcsymbolmap": symbolMap}, "with_alloca"},
		{"binary and DWARF", map[string][]byte{"chain": bin, "chain.dSYM/Contents/Resources/DWARF/chain": dwarf, u.String() + ".bcsymbolmap": symbolMap}, "with_alloca"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sym, frames := resolve(t, tt.files)
			if sym.Name != tt.want {
				t.Errorf("Symbol(%#x).Name = %q, want %q", addr, sym.Name, tt.want)
			}
			last := frames[len(frames)-1]
			if last.Symbol != tt.want {
				t.Errorf("Resolve(%#x) = %q, want %q", addr, last.Symbol, tt.want)
			}
		})
	}
}

// TestBCSymbolMapDWARF hides the name of an inlined function, which only
// DWARF knows, and checks that the map gives it back.
func TestBCSymbolMapDWARF(t *testing.T) {
	dwarf := hide(t, readFixture(t, chainDWARF), "step_to_deepest", "__hidden#00001_")
	u := uuidOf(t, dwarf)[0]
	const addr = 0x1000005b8 // step_to_deepest inlined in inline_host
	for _, tt := range []struct {
		name string
		maps bool
		want string
	}{{"no map", false, "__hidden#00001_"}, {"map", true, "step_to_deepest"}} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "chain"), dwarf, 0o644); err != nil {
				t.Fatal(err)
			}
			if tt.maps {
				if err := os.WriteFile(filepath.Join(dir, u.String()+".bcsymbolmap"), []byte("BCSymbolMap Version: 2.0\nunused\nstep_to_deepest\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			syms := NewSymbols()
			if err := syms.AddDir(context.Background(), dir); err != nil {
				t.Fatal(err)
			}
			e, err := syms.Lookup(u)
			if err != nil || e == nil {
				t.Fatalf("Lookup(%s) = %v, %v", u, e, err)
			}
			frames := e.Resolve(Frame{Address: addr, LookupAddress: addr}, addr, ResolveOptions{})
			if len(frames) != 2 || !frames[0].Inlined || frames[0].Symbol != tt.want || frames[1].Symbol != "inline_host" {
				t.Errorf("Resolve(%#x) = %q, want [%q (inlined) inline_host]", addr, frameText(frames), tt.want)
			}
		})
	}
}

// TestUnhideFrame checks that DWARF's hidden file names and linkage names
// are restored too.
func TestUnhideFrame(t *testing.T) {
	m, err := ParseSymbolMap([]byte("BCSymbolMap Version: 2.0\n/src/App/File.swift\n$s3App3fooyyF\nfoo()\n"))
	if err != nil {
		t.Fatal(err)
	}
	e := &Entry{SymbolMap: m}
	f := Frame{Symbol: "__hidden#2_", MangledSymbol: "__hidden#1_", File: "__hidden#0_", Line: 0}
	e.unhideFrame(&f)
	want := Frame{Symbol: "foo()", MangledSymbol: "$s3App3fooyyF", File: "/src/App/File.swift"}
	if diff := cmp.Diff(want, f); diff != "" {
		t.Errorf("unhideFrame (-want +got):\n%s", diff)
	}
}

// oneSymbolTable returns a table with the named symbols at addresses in
// one __text section.
func oneSymbolTable(t *testing.T, names []string, addrs []uint64) *symtab.Table {
	t.Helper()
	strs := []byte(" \x00")
	syms := make([]byte, 16*len(names))
	for i, n := range names {
		b := syms[16*i:]
		binary.LittleEndian.PutUint32(b, uint32(len(strs)))
		strs = append(append(strs, n...), 0)
		b[4], b[5] = 0x0f, 1
		binary.LittleEndian.PutUint64(b[8:], addrs[i])
	}
	tab, err := symtab.NewFromParts(image.RawSymtab{Is64: true, ByteOrder: binary.LittleEndian, NSyms: len(names), Syms: syms, Strings: strs},
		[]image.Section{{Index: 1, Segment: "__TEXT", Name: "__text", Addr: 0x1000, Size: 0x1000}}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return tab
}

// TestEntryPrefersRealName checks that where a binary's symbol table has
// a hidden name and a dSYM's a real one for the same function, the real
// one answers; a hidden name closer to the address still wins over a real
// one of another function.
func TestEntryPrefersRealName(t *testing.T) {
	tests := []struct {
		name   string
		tables [][]string
		addrs  [][]uint64
		want   string
	}{
		{"hidden first", [][]string{{"___hidden#4_"}, {"_real"}}, [][]uint64{{0x1100}, {0x1100}}, "real"},
		{"hidden second", [][]string{{"_real"}, {"___hidden#4_"}}, [][]uint64{{0x1100}, {0x1100}}, "real"},
		{"hidden closer", [][]string{{"___hidden#4_"}, {"_other"}}, [][]uint64{{0x1100}, {0x1080}}, "__hidden#4_"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := &Entry{}
			for i := range tt.tables {
				e.Tables = append(e.Tables, oneSymbolTable(t, tt.tables[i], tt.addrs[i]))
			}
			got, ok := e.Symbol(0x1104)
			if !ok || got.Name != tt.want {
				t.Errorf("Symbol(0x1104) = %q, %v, want %q", got.Name, ok, tt.want)
			}
			checkSymbolBatch(t, e, []uint64{0x1000, 0x1080, 0x1100, 0x1104, 0x1fff, 0x3000})
		})
	}
}

// FuzzParseSymbolMap checks that any input parses or fails cleanly, with
// no more names than lines, and that Resolve never panics.
func FuzzParseSymbolMap(f *testing.F) {
	f.Add([]byte("BCSymbolMap Version: 2.0\nmain\n/src/a.c\n"), "__hidden#1_")
	f.Add([]byte("BCSymbolMap Version: 1.0\n"), "___hidden#0_")
	f.Add([]byte("garbage"), "x")
	f.Fuzz(func(t *testing.T, data []byte, name string) {
		m, err := ParseSymbolMap(data)
		if err != nil {
			return
		}
		if m.Len() > bytes.Count(data, []byte("\n"))+1 {
			t.Errorf("%d names from %d lines", m.Len(), bytes.Count(data, []byte("\n"))+1)
		}
		got, err := m.Resolve(name)
		if err != nil && got != name {
			t.Errorf("Resolve(%q) = %q, false: changed an unresolved name", name, got)
		}
	})
}
