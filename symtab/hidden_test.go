package symtab

import (
	"encoding/binary"
	"testing"

	"github.com/stackimage/stackimage/image"
)

// TestHiddenNameLosesToExport checks that a bitcode-hidden symbol table
// name never answers where the export trie names the same address: the
// real name says more, whichever source it comes from.
func TestHiddenNameLosesToExport(t *testing.T) {
	tests := []struct {
		name    string
		syms    []nl
		exports []image.Export
		want    string
	}{
		{"hidden symtab, real export", []nl{{"___hidden#3_", tSectExt, 1, 0x100003100}},
			[]image.Export{{Name: "_realName", Addr: 0x100003100}}, "realName"},
		{"real symtab, real export: symtab wins", []nl{{"_fromSymtab", tSectExt, 1, 0x100003100}},
			[]image.Export{{Name: "_fromExports", Addr: 0x100003100}}, "fromSymtab"},
		{"hidden symtab, hidden export: symtab kept", []nl{{"___hidden#3_", tSectExt, 1, 0x100003100}},
			[]image.Export{{Name: "___hidden#4_", Addr: 0x100003100}}, "__hidden#3_"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tab, err := NewFromParts(rawSymtab(true, binary.LittleEndian, tt.syms), testSections, nil, tt.exports)
			if err != nil {
				t.Fatal(err)
			}
			got, err := tab.Lookup(0x100003104)
			ok := err == nil
			if !ok || got.Name != tt.want {
				t.Errorf("Lookup(%#x) = %q, %v, want %q", 0x100003104, got.Name, ok, tt.want)
			}
		})
	}
}
