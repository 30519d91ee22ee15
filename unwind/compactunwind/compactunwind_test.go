package compactunwind

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/unwind"
)

func syntheticFuncs() []Entry {
	return []Entry{
		{FuncStart: 0x1000, Encoding: 0x01010005},
		{FuncStart: 0x1010, Encoding: 0x02020000},
		{FuncStart: 0x1040, Encoding: 0x51010005, LSDA: 0x9000}, // personality 1, has LSDA
		{FuncStart: 0x1100, Encoding: 0x04000123},
		{FuncStart: 0x1180, Encoding: 0x00000000},               // no unwind information
		{FuncStart: 0x1200, Encoding: 0x62030000, LSDA: 0x9100}, // personality 2, has LSDA
		{FuncStart: 0x1300, Encoding: 0x01010005},
	}
}

func TestLookup(t *testing.T) {
	for _, compressed := range []bool{false, true} {
		for _, perPage := range []int{1, 3, 100} {
			name := map[bool]string{false: "regular", true: "compressed"}[compressed]
			funcs := syntheticFuncs()
			tb := &tableBuilder{funcs: funcs, end: 0x1400, common: []uint32{0x01010005}, personalities: []uint32{0x5000, 0x5008}, perPage: perPage, compressed: compressed}
			data := tb.build()
			t.Run(name, func(t *testing.T) {
				table, err := Parse(data)
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				for i, f := range funcs {
					end := uint32(0x1400)
					if i+1 < len(funcs) {
						end = funcs[i+1].FuncStart
					}
					want := Entry{FuncStart: f.FuncStart, FuncEnd: end, Encoding: f.Encoding, LSDA: f.LSDA}
					if p := f.Encoding >> 28 & 3; p != 0 {
						want.Personality = tb.personalities[p-1]
					}
					for _, pc := range []uint32{f.FuncStart, f.FuncStart + 1, end - 1} {
						got, err := table.Lookup(pc)
						if err != nil {
							t.Errorf("Lookup(%#x): %v", pc, err)
							continue
						}
						got.Off = 0
						if diff := cmp.Diff(want, got); diff != "" {
							t.Errorf("Lookup(%#x) (perPage %d) mismatch (-want +got):\n%s", pc, perPage, diff)
						}
					}
				}
				for _, pc := range []uint32{0, 0xfff, 0x1400, 0xffffffff} {
					if e, err := table.Lookup(pc); !errors.Is(err, ErrNotFound) {
						t.Errorf("Lookup(%#x) = %+v, %v; want ErrNotFound", pc, e, err)
					}
				}
			})
		}
	}
}

// wantError checks that err is an *unwind.Error at off whose message
// contains msg.
func wantError(t *testing.T, what string, err error, off uint64, msg string) {
	t.Helper()
	var ue *unwind.Error
	if !errors.As(err, &ue) {
		t.Errorf("%s: error %v, want *unwind.Error", what, err)
		return
	}
	if ue.Source != unwind.SourceCompactUnwind || ue.Off != off || !strings.Contains(ue.Msg, msg) {
		t.Errorf("%s: error %q (source %v, offset %#x), want offset %#x containing %q", what, ue, ue.Source, ue.Off, off, msg)
	}
}

func TestParseErrors(t *testing.T) {
	good := (&tableBuilder{funcs: syntheticFuncs(), end: 0x1400, common: []uint32{0x01010005}, personalities: []uint32{0x5000, 0x5008}, perPage: 3, compressed: true}).build()
	patch := func(off int, v uint32) []byte {
		b := append([]byte(nil), good...)
		binary.LittleEndian.PutUint32(b[off:], v)
		return b
	}
	indexOff := int(binary.LittleEndian.Uint32(good[20:]))
	tests := []struct {
		name string
		data []byte
		off  uint64
		msg  string
	}{
		{"empty", nil, 0, "shorter than the 28-byte header"},
		{"short header", good[:27], 0, "shorter than the 28-byte header"},
		{"version", patch(0, 2), 0, "unsupported version 2"},
		{"common count", patch(8, 1<<30), headerSize, "common encodings array"},
		{"personality offset", patch(12, 1<<31), 1 << 31, "personality array"},
		{"index count", patch(24, 0xffffffff), uint64(indexOff), "first-level index"},
		{"index not sorted", patch(indexOff+indexEntrySize, 0x10), uint64(indexOff + indexEntrySize), "not sorted"},
		{"page out of range", patch(indexOff+4, 0x7fffffff), uint64(indexOff + 4), "second-level page offset"},
		{"page zero", patch(indexOff+4, 0), uint64(indexOff + 4), "second-level page offset"},
		{"lsda out of range", patch(indexOff+8, 0x7fffffff), uint64(indexOff + 8), "LSDA index offset"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table, err := Parse(tt.data)
			if table != nil {
				t.Errorf("Parse returned a table with error %v", err)
			}
			wantError(t, "Parse", err, tt.off, tt.msg)
		})
	}
}

func TestLookupErrors(t *testing.T) {
	funcs := syntheticFuncs()
	for _, compressed := range []bool{false, true} {
		good := (&tableBuilder{funcs: funcs, end: 0x1400, common: []uint32{0x01010005}, personalities: []uint32{0x5000}, perPage: 100, compressed: compressed}).build()
		indexOff := int(binary.LittleEndian.Uint32(good[20:]))
		page := int(binary.LittleEndian.Uint32(good[indexOff+4:]))
		patch := func(off int, v uint32, size int) []byte {
			b := append([]byte(nil), good...)
			if size == 2 {
				binary.LittleEndian.PutUint16(b[off:], uint16(v))
			} else {
				binary.LittleEndian.PutUint32(b[off:], v)
			}
			return b
		}
		kind := map[bool]string{false: "regular", true: "compressed"}[compressed]
		// Cut after 8 bytes of the page: the whole header of a regular
		// page, without its entries; a compressed page's header is 12.
		truncOff, truncMsg := uint64(page), "extend beyond the end"
		if compressed {
			truncOff, truncMsg = uint64(page), "header is beyond the end of the section"
		}
		tests := []struct {
			name string
			data []byte
			pc   uint32
			off  uint64
			msg  string
		}{
			{"page kind", patch(page, 7, 4), 0x1000, uint64(page), "unknown kind 7"},
			{"entry count", patch(page+6, 0xffff, 2), 0x1000, uint64(page), "extend beyond the end"},
			{"entry offset", patch(page+4, 0xfff0, 2), 0x1000, uint64(page), "extend beyond the end"},
			{"truncated page", good[:page+8], 0x1000, truncOff, truncMsg},
			// Personality 2 of a table with one (function 0x1200).
			{"personality", good, 0x1200, 0, "names personality 2"},
		}
		if compressed {
			tests = append(tests,
				struct {
					name string
					data []byte
					pc   uint32
					off  uint64
					msg  string
				}{"encoding index", patch(page+12, 0x40<<24, 4), 0x1000, uint64(page + 12), "encoding index 64"},
				struct {
					name string
					data []byte
					pc   uint32
					off  uint64
					msg  string
				}{"encodings count", patch(page+10, 0xffff, 2), 0x1000, uint64(page), "encodings at page offset"})
		}
		for _, tt := range tests {
			t.Run(kind+"/"+tt.name, func(t *testing.T) {
				table, err := Parse(tt.data)
				if err != nil {
					t.Fatalf("Parse: %v", err)
				}
				e, err := table.Lookup(tt.pc)
				if tt.name == "personality" {
					tt.off = uint64(e.Off) // where the encoding is; only the message is fixed
					if err == nil {
						t.Fatalf("Lookup(%#x) = %+v, want an error", tt.pc, e)
					}
					var ue *unwind.Error
					if errors.As(err, &ue) {
						tt.off = ue.Off
					}
				}
				wantError(t, "Lookup", err, tt.off, tt.msg)
			})
		}
	}
}

func objectSection(ptrSize int, entries []Entry) []byte {
	var b []byte
	ptr := func(v uint32) {
		if ptrSize == 8 {
			b = binary.LittleEndian.AppendUint64(b, uint64(v))
		} else {
			b = binary.LittleEndian.AppendUint32(b, v)
		}
	}
	for _, e := range entries {
		ptr(e.FuncStart)
		b = binary.LittleEndian.AppendUint32(b, e.FuncEnd-e.FuncStart)
		b = binary.LittleEndian.AppendUint32(b, e.Encoding)
		ptr(e.Personality)
		ptr(e.LSDA)
	}
	return b
}

func TestParseObject(t *testing.T) {
	entries := []Entry{
		{FuncStart: 0x40, FuncEnd: 0x80, Encoding: 0x02010000, Personality: 0x500, LSDA: 0x600},
		{FuncStart: 0x0, FuncEnd: 0x30, Encoding: 0x01000000},
	}
	for _, ptrSize := range []int{4, 8} {
		table, err := ParseObject(objectSection(ptrSize, entries), ptrSize)
		if err != nil {
			t.Fatalf("ParseObject(%d): %v", ptrSize, err)
		}
		for _, tt := range []struct {
			pc   uint32
			want Entry
			err  error
		}{
			{0x0, entries[1], nil}, {0x2f, entries[1], nil}, {0x30, Entry{}, ErrNotFound},
			{0x40, entries[0], nil}, {0x7f, entries[0], nil}, {0x80, Entry{}, ErrNotFound},
		} {
			got, err := table.Lookup(tt.pc)
			got.Off = 0
			if err != tt.err || got != tt.want {
				t.Errorf("ptr %d: Lookup(%#x) = %+v, %v; want %+v, %v", ptrSize, tt.pc, got, err, tt.want, tt.err)
			}
		}
	}
	overlap := append(entries, Entry{FuncStart: 0x20, FuncEnd: 0x50})
	_, err := ParseObject(objectSection(8, overlap), 8)
	wantError(t, "ParseObject(overlap)", err, 2*objectEntrySize64+12, "overlaps")
	_, err = ParseObject(make([]byte, 33), 8)
	wantError(t, "ParseObject(33 bytes)", err, 32, "not a multiple")
	if _, err := ParseObject(nil, 2); err == nil {
		t.Error("ParseObject(ptrSize 2): no error")
	}
}

func TestNarrow(t *testing.T) {
	e := Entry{FuncStart: 0x100, FuncEnd: 0x200, Encoding: 0x01000000}
	for _, tt := range []struct {
		start, end         uint32
		wantStart, wantEnd uint32
	}{
		{0x140, 0x180, 0x140, 0x180},
		{0x140, 0, 0x140, 0x200},     // end unknown
		{0x140, 0x300, 0x140, 0x200}, // end beyond the entry
		{0x80, 0x180, 0x100, 0x200},  // start outside: unchanged
		{0x200, 0x280, 0x100, 0x200},
	} {
		got := e.Narrow(tt.start, tt.end)
		if got.FuncStart != tt.wantStart || got.FuncEnd != tt.wantEnd || got.Encoding != e.Encoding {
			t.Errorf("Narrow(%#x, %#x) = [%#x, %#x), want [%#x, %#x)", tt.start, tt.end, got.FuncStart, got.FuncEnd, tt.wantStart, tt.wantEnd)
		}
	}
}

// TestConcurrentUse looks up and decodes from several goroutines at once
// (run with -race).
func TestConcurrentUse(t *testing.T) {
	data := (&tableBuilder{funcs: syntheticFuncs(), end: 0x1400, common: []uint32{0x01010005}, personalities: []uint32{0x5000, 0x5008}, perPage: 2, compressed: true}).build()
	table, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	code := codeAt{0x1000, make([]byte, 0x400)}
	want, _ := table.Lookup(0x1044)
	done := make(chan error)
	for g := 0; g < 4; g++ {
		go func() {
			for i := 0; i < 200; i++ {
				e, err := table.Lookup(0x1044)
				if err != nil || e != want {
					done <- fmt.Errorf("Lookup(0x1044) = %+v, %v; want %+v", e, err, want)
					return
				}
				for _, arch := range archregs.All {
					Frame0Row(arch, e, 0x1044, code)
				}
			}
			done <- nil
		}()
	}
	for g := 0; g < 4; g++ {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
