package debuginfo

import (
	"debug/dwarf"
	"encoding/binary"
	"testing"
)

// skipUnit builds a DWARF 4 unit (32-bit, 8-byte addresses) whose unit
// DIE holds a struct with two members; when method is set, a member
// function with code (DW_AT_low_pc) is nested in the struct, as a local
// class's method may be. It returns debug_info, debug_abbrev, the unit's
// span and the struct DIE's offset and the offset just past its subtree.
func skipUnit(method bool) (info, abbrev []byte, u unitSpan, structOff, structEnd int64) {
	abbrev = []byte{
		1, 0x11, 1, 0, 0, // compile_unit, children, no attributes
		2, 0x13, 1, 0x03, 0x08, 0, 0, // structure_type, children, name:string
		3, 0x0d, 0, 0x03, 0x08, 0x38, 0x0b, 0, 0, // member, name:string, data_member_location:data1
		4, 0x2e, 0, 0x11, 0x01, 0x12, 0x06, 0, 0, // subprogram, low_pc:addr, high_pc:data4
		0,
	}
	body := []byte{1}                 // compile unit
	structOff = int64(11 + len(body)) // after the 11-byte header
	body = append(body, 2, 'S', 0)    // struct S
	body = append(body, 3, 'a', 0, 0) // member a at 0
	body = append(body, 3, 'b', 0, 8) // member b at 8
	if method {
		body = append(body, 4)
		body = binary.LittleEndian.AppendUint64(body, 0x1000)
		body = binary.LittleEndian.AppendUint32(body, 0x10)
	}
	body = append(body, 0) // end of S's children
	structEnd = int64(11 + len(body))
	body = append(body, 0) // end of the unit's children
	info = binary.LittleEndian.AppendUint32(nil, uint32(7+len(body)))
	info = binary.LittleEndian.AppendUint16(info, 4)
	info = binary.LittleEndian.AppendUint32(info, 0) // abbreviation offset
	info = append(info, 8)                           // address size
	info = append(info, body...)
	return info, abbrev, unitSpan{hdr: 0, first: 11, end: int64(len(info)), abbrev: 0}, structOff, structEnd
}

func TestSkipper(t *testing.T) {
	t.Run("types only", func(t *testing.T) {
		info, abbrev, u, off, wantEnd := skipUnit(false)
		end, ok := newSkipper(info, abbrev, u).subtreeEnd(off)
		if !ok || end != wantEnd {
			t.Errorf("subtreeEnd(%#x) = %#x, %v; want %#x, true", off, end, ok, wantEnd)
		}
	})
	t.Run("a nested DIE with code", func(t *testing.T) {
		info, abbrev, u, off, _ := skipUnit(true)
		if end, ok := newSkipper(info, abbrev, u).subtreeEnd(off); ok {
			t.Errorf("subtreeEnd(%#x) = %#x, true; want false: the struct holds a method with code", off, end)
		}
	})
	t.Run("truncated", func(t *testing.T) {
		info, abbrev, u, off, _ := skipUnit(false)
		for cut := off + 1; cut < u.end; cut++ {
			short := u
			short.end = cut
			if end, ok := newSkipper(info[:cut], abbrev, short).subtreeEnd(off); ok {
				t.Errorf("unit cut at %#x: subtreeEnd(%#x) = %#x, true; want false", cut, off, end)
			}
		}
	})
	t.Run("unknown form", func(t *testing.T) {
		info, abbrev, u, off, _ := skipUnit(false)
		abbrev[16] = 0x16 // the member's name as DW_FORM_indirect
		if end, ok := newSkipper(info, abbrev, u).subtreeEnd(off); ok {
			t.Errorf("subtreeEnd(%#x) = %#x, true with DW_FORM_indirect; want false", off, end)
		}
	})
	t.Run("a code defined twice", func(t *testing.T) {
		// The member's code is defined again with a 2-byte location, and
		// the DIEs use it so: debug/dwarf keeps the last definition, and
		// the skipper must step over the struct as the walk reads it.
		_, abbrev, _, _, _ := skipUnit(false)
		abbrev = append(abbrev[:len(abbrev)-1],
			3, 0x0d, 0, 0x03, 0x08, 0x38, 0x05, 0, 0, // member, name:string, data_member_location:data2
			5, 0x24, 0, 0x03, 0x08, 0, 0, // base_type, name:string
			0)
		body := []byte{1, 2, 'S', 0, 3, 'a', 0, 0, 0, 3, 'b', 0, 8, 0, 0, 5, 'T', 0, 0}
		info := binary.LittleEndian.AppendUint32(nil, uint32(7+len(body)))
		info = binary.LittleEndian.AppendUint16(info, 4)
		info = binary.LittleEndian.AppendUint32(info, 0)
		info = append(info, 8)
		info = append(info, body...)
		const structOff = 12
		d, err := dwarf.New(abbrev, nil, nil, info, nil, nil, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		r := d.Reader()
		r.Seek(structOff)
		if e, err := r.Next(); err != nil || e.Tag != dwarf.TagStructType {
			t.Fatalf("debug/dwarf at %#x: %v, %v", structOff, e, err)
		}
		r.SkipChildren()
		after, err := r.Next()
		if err != nil || after == nil || after.Tag != dwarf.TagBaseType {
			t.Fatalf("debug/dwarf after the struct: %v, %v; want the base type", after, err)
		}
		u := unitSpan{hdr: 0, first: 11, end: int64(len(info)), abbrev: 0}
		if end, ok := newSkipper(info, abbrev, u).subtreeEnd(structOff); !ok || end != int64(after.Offset) {
			t.Errorf("subtreeEnd(%#x) = %#x, %v; debug/dwarf steps to %#x", structOff, end, ok, after.Offset)
		}
	})
	t.Run("unknown abbreviation code", func(t *testing.T) {
		info, abbrev, u, off, _ := skipUnit(false)
		info[off+3] = 9 // member a's code
		if end, ok := newSkipper(info, abbrev, u).subtreeEnd(off); ok {
			t.Errorf("subtreeEnd(%#x) = %#x, true with code 9; want false", off, end)
		}
	})
}

// TestSkipTypesIndexesMethods: a function with code nested in a struct is
// indexed whether or not type descriptions are skipped.
func TestSkipTypesIndexesMethods(t *testing.T) {
	info, abbrev, _, _, _ := skipUnit(true)
	for _, walkTypes := range []bool{false, true} {
		ix, err := New(map[string][]byte{"debug_info": info, "debug_abbrev": abbrev})
		if err != nil {
			t.Fatal(err)
		}
		ix.walkTypes = walkTypes
		if frames, err := ix.Lookup(0x1008); err != nil || len(frames) != 1 {
			t.Errorf("walkTypes %v: Lookup(0x1008) = %v, %v; want the method's frame", walkTypes, frames, err)
		}
	}
}

// TestSkipperBudget: types nested thousands deep around a function make
// every level's skip scan down to the function and fail; the unit's
// budget stops that after a few times its size, and the function is still
// found.
func TestSkipperBudget(t *testing.T) {
	const depth = 20000
	abbrev := []byte{
		1, 0x11, 1, 0, 0, // compile_unit, children
		2, 0x13, 1, 0, 0, // structure_type, children, no attributes
		4, 0x2e, 0, 0x11, 0x01, 0x12, 0x06, 0, 0, // subprogram, low_pc:addr, high_pc:data4
		0,
	}
	body := []byte{1}
	var structs []int64
	for range depth {
		structs = append(structs, int64(11+len(body)))
		body = append(body, 2)
	}
	body = append(body, 4)
	body = binary.LittleEndian.AppendUint64(body, 0x1000)
	body = binary.LittleEndian.AppendUint32(body, 0x10)
	for range depth + 1 {
		body = append(body, 0)
	}
	info := binary.LittleEndian.AppendUint32(nil, uint32(7+len(body)))
	info = binary.LittleEndian.AppendUint16(info, 4)
	info = binary.LittleEndian.AppendUint32(info, 0)
	info = append(info, 8)
	info = append(info, body...)
	u := unitSpan{hdr: 0, first: 11, end: int64(len(info))}

	s := newSkipper(info, abbrev, u)
	budget := s.steps
	for _, off := range structs { // as the walk descends level by level
		if end, ok := s.subtreeEnd(off); ok {
			t.Fatalf("subtreeEnd(%#x) = %#x, true; want false: the function is inside", off, end)
		}
	}
	if spent := budget - s.steps; spent > budget+len(info) {
		t.Errorf("skips spent %d steps; want at most the budget %d plus one unit's %d bytes", spent, budget, len(info))
	}
	if s.ok {
		t.Errorf("skipper still skipping after %d failed nested skips; want its budget spent", depth)
	}

	ix, err := New(map[string][]byte{"debug_info": info, "debug_abbrev": abbrev})
	if err != nil {
		t.Fatal(err)
	}
	if frames, err := ix.Lookup(0x1008); err != nil || len(frames) != 1 {
		t.Errorf("Lookup(0x1008) = %v, %v; want the function's frame", frames, err)
	}
}
