package debuginfo

import (
	"debug/dwarf"
	"encoding/binary"
	"fmt"
)

// DWARF 5 range lists by index.
//
// In a DWARF 5 unit DW_AT_ranges is either DW_FORM_sec_offset, an offset
// in debug_rnglists, or DW_FORM_rnglistx, an index into the offsets table
// that starts at the unit's DW_AT_rnglists_base; the table holds offsets
// relative to that base. clang writes rnglistx for every range list
// (inlined subroutines split around other code, the unit's own ranges).
// debug/dwarf resolves an index while it decodes the DIE and gives the
// attribute as a uint64 offset of class ClassRngList; fastWalk resolves
// it here the same way, and both walks then decode the list with
// Data.Ranges.

// rnglistxOffset returns the offset in debug_rnglists (sec) of range list
// idx of a unit whose DW_AT_rnglists_base is base and whose offsets are
// offSize bytes, as debug/dwarf resolves DW_FORM_rnglistx. It fails where
// debug/dwarf fails the DIE: when the table slot is not within the
// section.
func rnglistxOffset(sec []byte, base, idx uint64, offSize int) (uint64, error) {
	slot := idx*uint64(offSize) + base // wraps as debug/dwarf's does
	if idx > uint64(len(sec)) || slot > uint64(len(sec)) || uint64(len(sec))-slot < uint64(offSize) {
		return 0, fmt.Errorf("range list index %d: its offset at %#x (DW_AT_rnglists_base %#x) is past debug_rnglists (%d bytes)", idx, slot, base, len(sec))
	}
	var rel uint64
	if offSize == 8 {
		rel = binary.LittleEndian.Uint64(sec[slot:])
	} else {
		rel = uint64(binary.LittleEndian.Uint32(sec[slot:]))
	}
	return base + rel, nil
}

// rangesAttrOffset returns the value of a DW_AT_ranges field as an offset
// in its section: debug_ranges or, in DWARF 5, debug_rnglists. ok is
// false for a value of another type.
func rangesAttrOffset(f *dwarf.Field) (off int64, ok bool) {
	switch v := f.Val.(type) {
	case int64:
		return v, true
	case uint64: // DW_FORM_rnglistx, resolved by debug/dwarf
		// An offset past int64 is reported by Data.Ranges.
		return int64(v), f.Class == dwarf.ClassRngList
	}
	return 0, false
}
