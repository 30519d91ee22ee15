package symtab

import (
	"encoding/binary"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/internal/hostile"
)

// FuzzNewFromParts builds tables from arbitrary nlist bytes and string
// tables, seeded from the symbol tables of corpus binaries and a synthetic
// one, and looks up addresses around every entry, one by one and in
// batches. Nothing may panic, every answer must lie at or below the
// address it answers and agree with referenceLookup. Building the table
// must keep the allocation budget of internal/hostile.
func FuzzNewFromParts(f *testing.F) {
	raw := rawSymtab(true, binary.LittleEndian, []nl{
		{"_main", tSectExt, 1, 0x100003000}, {"_helper", tSect, 1, 0x100003040},
		{"__mh_execute_header", tSectExt, 1, 0x100000000}, {"_stab", tFun, 1, 0x100003050},
	})
	f.Add(raw.Syms, raw.Strings, true, uint64(0x100003044))
	raw32 := rawSymtab(false, binary.LittleEndian, []nl{{"_main", tSectExt, 1, 0x1ff0}})
	f.Add(raw32.Syms, raw32.Strings, false, uint64(0x1ff2))
	for _, rel := range []string{
		"object-testfiles/macho/base-aarch64",
		"object-testfiles/macho/static-x86",
		"object-testfiles/macho/libexports.dylib",
	} {
		file, err := image.Open(filepath.Join("..", "..", "shared", "corpus", rel))
		if err != nil {
			continue // the corpus is optional; the synthetic seeds remain
		}
		im := file.Images[0]
		if r, ok, err := im.Symtab(); err == nil && ok {
			f.Add(r.Syms, r.Strings, r.Is64, uint64(0x100003f6a))
		}
		file.Close()
	}
	f.Fuzz(func(t *testing.T, syms, strs []byte, is64 bool, addr uint64) {
		size := nlistSize
		if is64 {
			size = nlist64Size
		}
		raw := image.RawSymtab{Is64: is64, ByteOrder: binary.LittleEndian, NSyms: len(syms) / size, Syms: syms, Strings: strs}
		sections := testSections
		if addr%2 == 0 {
			sections = nil
		}
		starts := []uint64{addr &^ 0xf, addr + 8}
		exports := []image.Export{{Name: string(strs[:min(len(strs), 8)]), Addr: addr &^ 0x3}}
		var tab *Table
		var err error
		hostile.Budget(t, int64(len(syms)+len(strs)), func() {
			tab, err = NewFromParts(raw, sections, starts, exports)
		})
		if err != nil {
			return
		}
		probes := []uint64{addr, addr - 1, addr + 1, 0, ^uint64(0)}
		for _, e := range tab.entries {
			probes = append(probes, e.addr, e.addr-1, e.addr+1)
		}
		for _, a := range probes {
			s, err := tab.Lookup(a)
			ok := err == nil
			if want, wantOK := referenceLookup(tab, a); ok != wantOK || s != want {
				t.Fatalf("Lookup(%#x) = %+v, %v; want %+v, %v", a, s, ok, want, wantOK)
			}
			if !ok {
				continue
			}
			if s.Addr > a || s.Offset != a-s.Addr {
				t.Fatalf("Lookup(%#x) = %q at %#x + %#x: not at or below the address", a, s.Name, s.Addr, s.Offset)
			}
			if isMachHeader(s.RawName) {
				t.Fatalf("Lookup(%#x) = %q: the mach header's symbol", a, s.RawName)
			}
		}
		checkBatch(t, tab, probes)
	})
}

// referenceLookup answers as Lookup must, the slow way: a binary search
// over the entries, the section check of find, and the name read up to its
// NUL. Lookup's bucket index, window and stored name lengths must agree
// with it for every address.
func referenceLookup(t *Table, addr uint64) (Symbol, bool) {
	i := sort.Search(len(t.entries), func(i int) bool { return t.entries[i].addr > addr }) - 1
	if i < 0 {
		return Symbol{}, false
	}
	if len(t.sections) > 0 {
		sec, ok := t.spanOf(addr)
		if !ok {
			return Symbol{}, false
		}
		at := t.entries[i].addr
		for i >= 0 && t.entries[i].addr == at && (t.entries[i].sect != sec.index || at < sec.start) {
			i--
		}
		if i < 0 || t.entries[i].addr != at {
			return Symbol{}, false
		}
	}
	e := t.entries[i]
	s := Symbol{Addr: e.addr, Offset: addr - e.addr, Source: e.kind.source()}
	switch s.Source {
	case SourceFunctionStarts:
		s.Name = SyntheticPrefix + strconv.FormatUint(e.addr, 16)
		return s, true
	case SourceExports:
		s.RawName = cstring(t.extra[e.name:])
	default:
		s.RawName = cstring(t.strtab[e.name:])
	}
	s.Name = strings.TrimPrefix(s.RawName, "_")
	return s, true
}
