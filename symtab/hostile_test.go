package symtab

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
	"time"

	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/internal/hostile"
)

// sharedSuffixSymtab returns n symbols at one address whose names are the
// suffixes of one string of length letters (length > n), in a shuffled order (a sorted one
// would let the sort finish in one pass). The
// string table stays n+2 bytes while the names add up to n²/2 bytes, so a
// sort that compares whole names does quadratic work on a linear input.
func sharedSuffixSymtab(n, length int) image.RawSymtab {
	strs := append([]byte{0}, bytes.Repeat([]byte{'a'}, length)...)
	strs = append(strs, 0)
	syms := make([]byte, n*nlist64Size)
	for i := 0; i < n; i++ {
		b := syms[i*nlist64Size:]
		// 7919 is prime and does not divide n: i*7919 mod n visits every
		// offset once.
		binary.LittleEndian.PutUint32(b[0:], uint32(1+(i*7919)%n))
		b[4], b[5] = tSectExt, 1
		binary.LittleEndian.PutUint64(b[8:], 0x100003100)
	}
	return image.RawSymtab{Is64: true, ByteOrder: binary.LittleEndian, NSyms: n, Syms: syms, Strings: strs}
}

// TestSameAddressSharedSuffixes builds the table of a 980 KB symbol table
// whose 20,000 symbols share one address and name suffixes of one 660 KB
// string. Breaking those ties by comparing whole names takes minutes; the
// bound here is generous, for a slow machine: the work must be linear.
func TestSameAddressSharedSuffixes(t *testing.T) {
	const n, length = 20000, 660000
	raw := sharedSuffixSymtab(n, length)
	var tab *Table
	var err error
	hostile.Returns(t, 5*time.Second, nil, func() {
		hostile.Budget(t, int64(len(raw.Syms)+len(raw.Strings)), func() {
			tab, err = NewFromParts(raw, testSections, nil, nil)
		})
	})
	if t.Failed() {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	got, err := tab.Lookup(0x100003104)
	ok := err == nil
	// The longest name is the greatest: it is the one kept, as before.
	if want := string(raw.Strings[1 : length+1]); !ok || got.Name != want {
		t.Errorf("Lookup(%#x) = %d-byte name, %v; want the %d-byte name", 0x100003104, len(got.Name), ok, len(want))
	}
}

// BenchmarkNewSameAddress measures NewFromParts on the 980 KB table of
// TestSameAddressSharedSuffixes.
func BenchmarkNewSameAddress(b *testing.B) {
	raw := sharedSuffixSymtab(20000, 660000)
	b.SetBytes(int64(len(raw.Syms) + len(raw.Strings)))
	for b.Loop() {
		if _, err := NewFromParts(raw, testSections, nil, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// TestNewKeepsReadableParts opens an image whose three symbol sources are
// each damaged in one place: an nlist whose name is past the string table,
// an export trie with an edge back to its root, and LC_FUNCTION_STARTS
// ending in an overflowing ULEB128. Everything else must still answer,
// and each damage must be a warning naming its part and offset.
func TestNewKeepsReadableParts(t *testing.T) {
	strs := []byte("\x00_good\x00")
	m := hostile.MachO{
		UUID:    [16]byte{1},
		Strings: strs,
		Symbols: []hostile.Symbol{
			{Strx: 1, Addr: hostile.CodeAddr},
			{Strx: 0x7fffffff, Addr: hostile.CodeAddr + 0x20},
		},
		FunctionStarts: append(hostile.ULEB128(hostile.ULEB128(nil, hostile.CodeOffset), 0x80), bytes.Repeat([]byte{0xff}, 11)...),
		ExportTrie:     hostile.ExportTrie([]string{"_exported"}, []uint64{0x40}, true),
	}
	f, err := image.NewFile(bytes.NewReader(m.Bytes()), "damaged")
	if err != nil {
		t.Fatal(err)
	}
	tab, err := New(f.Images[0])
	if err != nil {
		t.Fatalf("New: %v; want a table of the readable parts", err)
	}
	tests := []struct {
		addr uint64
		want string
	}{
		{hostile.CodeAddr + 4, "good"},
		{hostile.CodeAddr + 0x24, "good"}, // the bad nlist is skipped
		{hostile.CodeAddr + 0x44, "exported"},
		{hostile.CodeAddr + 0x84, "func_100001080"},
	}
	for _, tt := range tests {
		if got, err := tab.Lookup(tt.addr); err != nil || got.Name != tt.want {
			t.Errorf("Lookup(%#x) = %q, %v; want %q", tt.addr, got.Name, err, tt.want)
		}
	}
	var warns []string
	for _, w := range tab.Warnings() {
		warns = append(warns, w.Error())
	}
	wantParts := []string{"LC_SYMTAB: symbol 1 skipped", "LC_FUNCTION_STARTS", "export trie: node reached twice"}
	if len(warns) != len(wantParts) {
		t.Fatalf("Warnings() = %q, want %d", warns, len(wantParts))
	}
	for i, part := range wantParts {
		if !strings.Contains(warns[i], part) || !strings.Contains(warns[i], "at offset 0x") {
			t.Errorf("Warnings()[%d] = %q, want it to name %q and an offset", i, warns[i], part)
		}
	}
}
