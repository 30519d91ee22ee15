package image

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stackimage/stackimage/internal/hostile"
	"github.com/stackimage/stackimage/uuid"
)

// TestDamagedTablesKeepWhatCanBeRead checks that a damaged export trie or
// LC_FUNCTION_STARTS gives the entries read before (or beside) the damage
// together with an error naming where it is.
func TestDamagedTablesKeepWhatCanBeRead(t *testing.T) {
	overflow := append(bytes.Repeat([]byte{0xff}, 10), 0x7f) // ends, but holds bits past the 64th
	starts := append(hostile.ULEB128(hostile.ULEB128(nil, hostile.CodeOffset), 0x40), overflow...)
	m := hostile.MachO{
		UUID:           uuid.UUID{1},
		FunctionStarts: starts,
		ExportTrie:     hostile.ExportTrie([]string{"_a", "_b"}, []uint64{0, 0x40}, true),
	}
	f, err := NewFile(bytes.NewReader(m.Bytes()), "damaged")
	if err != nil {
		t.Fatal(err)
	}
	im := f.Images[0]

	exps, err := im.Exports()
	if diff := cmp.Diff([]Export{{"_a", hostile.CodeAddr}, {"_b", hostile.CodeAddr + 0x40}}, exps); diff != "" {
		t.Errorf("Exports() (-want +got):\n%s", diff)
	}
	trieOff := int64(binary.LittleEndian.Uint32(loadCommand(t, m.Bytes(), lcDyldExportsTrie)[8:]))
	checkFormatError(t, "Exports()", err, trieOff, "export trie: node reached twice")

	fs, err := im.FunctionStarts()
	if diff := cmp.Diff([]uint64{hostile.CodeAddr, hostile.CodeAddr + 0x40}, fs); diff != "" {
		t.Errorf("FunctionStarts() (-want +got):\n%s", diff)
	}
	fsOff := int64(binary.LittleEndian.Uint32(loadCommand(t, m.Bytes(), lcFunctionStarts)[8:]))
	checkFormatError(t, "FunctionStarts()", err, fsOff+int64(len(starts)-len(overflow)), "LEB128 number does not fit in 64 bits")
}

// TestFatKeepsGoodSlices checks that a fat file with one unreadable slice
// still gives its other slices, and says which slice was left out.
func TestFatKeepsGoodSlices(t *testing.T) {
	good := hostile.MachO{UUID: uuid.UUID{1}}.Bytes()
	bad := hostile.MachO{UUID: uuid.UUID{2}}.Bytes()
	binary.LittleEndian.PutUint32(bad[16:], 0xffffffff) // ncmds
	past := append([]byte(nil), good...)

	tests := []struct {
		name      string
		data      []byte
		wantUUIDs []uuid.UUID
		wantErrs  []string
	}{
		{"bad load commands", hostile.Fat([][]byte{bad, good}, []uint32{0, 2}),
			[]uuid.UUID{{1}}, []string{"fat slice 0 (arm64): ncmds 4294967295"}},
		{"slice past the end of the file", func() []byte {
			b := hostile.Fat([][]byte{good, past}, []uint32{0, 2})
			binary.BigEndian.PutUint32(b[8+20+12:], 0x7fffffff) // second slice's size
			return b
		}(), []uuid.UUID{{1}}, []string{"fat slice 1 [0x8000, +0x7fffffff) extends past the end of the file"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := NewFile(bytes.NewReader(tt.data), "fat")
			if err != nil {
				t.Fatalf("NewFile: %v; want the good slice", err)
			}
			var uuids []uuid.UUID
			for _, im := range f.Images {
				uuids = append(uuids, im.UUID)
			}
			if diff := cmp.Diff(tt.wantUUIDs, uuids); diff != "" {
				t.Errorf("slices' UUIDs (-want +got):\n%s", diff)
			}
			if len(f.SliceErrors) != len(tt.wantErrs) {
				t.Fatalf("SliceErrors = %v, want %d", f.SliceErrors, len(tt.wantErrs))
			}
			for i, want := range tt.wantErrs {
				if got := f.SliceErrors[i].Error(); !strings.Contains(got, want) {
					t.Errorf("SliceErrors[%d] = %q, want it to say %q", i, got, want)
				}
			}
		})
	}
}

func checkFormatError(t *testing.T, call string, err error, wantOff int64, wantMsg string) {
	t.Helper()
	var fe *FormatError
	if !errors.As(err, &fe) {
		t.Errorf("%s error = %v, want a *FormatError", call, err)
		return
	}
	if fe.Off != wantOff || !strings.Contains(err.Error(), wantMsg) {
		t.Errorf("%s error = %q at offset %#x, want %q at offset %#x", call, err, fe.Off, wantMsg, wantOff)
	}
}

// loadCommand returns the first load command of the kind in a thin 64-bit
// little-endian file.
func loadCommand(t *testing.T, b []byte, kind uint32) []byte {
	t.Helper()
	le := binary.LittleEndian
	off := 32
	for i := uint32(0); i < le.Uint32(b[16:]); i++ {
		if le.Uint32(b[off:]) == kind {
			return b[off:]
		}
		off += int(le.Uint32(b[off+4:]))
	}
	t.Fatalf("no load command %#x", kind)
	return nil
}
