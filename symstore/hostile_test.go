package symstore

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stackimage/stackimage/internal/hostile"
	"github.com/stackimage/stackimage/uuid"
)

// damagedMachO is a symbol file whose three symbol sources are each damaged
// in one place, with one good symbol, "_good", at hostile.CodeAddr.
func damagedMachO(id uuid.UUID) []byte {
	return hostile.MachO{
		UUID:    id,
		Strings: []byte("\x00_good\x00"),
		Symbols: []hostile.Symbol{
			{Strx: 1, Addr: hostile.CodeAddr},
			{Strx: 0x7fffffff, Addr: hostile.CodeAddr + 0x20},
		},
		FunctionStarts: append(hostile.ULEB128(nil, hostile.CodeOffset), bytes.Repeat([]byte{0xff}, 11)...),
		ExportTrie:     hostile.ExportTrie([]string{"_exported"}, []uint64{0x40}, true),
	}.Bytes()
}

func writeFile(t *testing.T, path string, data []byte) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestDamagedSymbolFileStillAnswers checks that a symbol file with damaged
// parts gives the symbols of its other parts, never an error, and says
// what was skipped.
func TestDamagedSymbolFileStillAnswers(t *testing.T) {
	dir := t.TempDir()
	id := uuid.UUID{0xd1}
	writeFile(t, filepath.Join(dir, "Damaged"), damagedMachO(id))
	syms := NewSymbols()
	defer syms.Close()
	if err := syms.AddDir(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	e, err := syms.Lookup(id)
	if err != nil || e == nil {
		t.Fatalf("Lookup(%s) = %v, %v; want the entry and no error", id, e, err)
	}
	if sym, ok := e.Symbol(hostile.CodeAddr + 8); !ok || sym.Name != "good" {
		t.Errorf("Symbol(%#x) = %q, %v; want \"good\"", hostile.CodeAddr+8, sym.Name, ok)
	}
	warns := strings.Join(syms.Warnings(), "\n")
	for _, part := range []string{"LC_SYMTAB: symbol 1 skipped", "LC_FUNCTION_STARTS", "export trie: node reached twice"} {
		if !strings.Contains(warns, part) {
			t.Errorf("Warnings() = %q; want one naming %q", warns, part)
		}
	}
	if got := e.Warnings(); len(got) != 3 {
		t.Errorf("Entry.Warnings() = %q, want the 3 damaged parts", got)
	}
}

// TestFatWithOneBadSlice checks that a fat symbol file with an unreadable
// slice still gives its good slice by UUID, and that the bad slice is
// reported as skipped.
func TestFatWithOneBadSlice(t *testing.T) {
	dir := t.TempDir()
	good := hostile.MachO{UUID: uuid.UUID{0xa1}, Symbols: []hostile.Symbol{{Name: "_good", Addr: hostile.CodeAddr}}}.Bytes()
	bad := hostile.MachO{UUID: uuid.UUID{0xa2}}.Bytes()
	binary.LittleEndian.PutUint32(bad[16:], 0xffffffff) // ncmds
	writeFile(t, filepath.Join(dir, "Fat"), hostile.Fat([][]byte{good, bad}, []uint32{0, 2}))
	syms := NewSymbols()
	defer syms.Close()
	if err := syms.AddDir(context.Background(), dir); err != nil {
		t.Fatal(err)
	}
	e, err := syms.Lookup(uuid.UUID{0xa1})
	if err != nil || e == nil {
		t.Fatalf("Lookup(good slice) = %v, %v; want the entry", e, err)
	}
	if sym, ok := e.Symbol(hostile.CodeAddr); !ok || sym.Name != "good" {
		t.Errorf("Symbol(%#x) = %q, %v; want \"good\"", hostile.CodeAddr, sym.Name, ok)
	}
	if skipped := strings.Join(syms.Skipped, "\n"); !strings.Contains(skipped, "fat slice 1 (arm64e)") {
		t.Errorf("Skipped = %q; want the bad slice named", skipped)
	}
}
