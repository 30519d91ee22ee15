package hostile

import "encoding/binary"

// AbbrevLayout says how the compile units of AbbrevListMachO name their
// abbreviation tables.
type AbbrevLayout int

const (
	// AbbrevDistinctBigEndian: each unit names a different entry of the
	// long list, and debug_info is big-endian, which debug/dwarf reads
	// (it picks the order from the first unit's version) but a scan of
	// the unit headers in little-endian order loses at the first unit.
	AbbrevDistinctBigEndian AbbrevLayout = iota
	// AbbrevShared: every unit names the list's start, and none has an
	// address range of its own, so indexing parses each one.
	AbbrevShared
	// AbbrevDistinctEmpty: each unit names a different entry of the list
	// and holds no DIEs: its header fills it.
	AbbrevDistinctEmpty
)

// Sizes of AbbrevListMachO: AbbrevEntries entries of 6 bytes after the
// four the good unit uses, named by AbbrevUnits units after the good one.
const (
	AbbrevEntries = 5000
	AbbrevUnits   = 3000
)

// AbbrevListMachO returns an arm64 Mach-O with a symbol "_good" at
// CodeAddr and DWARF 4 whose first compile unit ("good.c") has a function
// "good" at [CodeAddr, CodeAddr+0x10), followed by units all naming
// tables in one long debug_abbrev list (about 30 KB) without a zero code
// until its end, laid out as layout says: about 85 KB in all. A reader
// that decodes each unit's table to the end of the list decodes units ×
// half the list, about 90 MB for AbbrevUnits units.
func AbbrevListMachO(layout AbbrevLayout) []byte {
	abbrev := []byte{
		1, 0x11, 1, // DW_TAG_compile_unit, children
		0x03, 0x08, // DW_AT_name, DW_FORM_string
		0, 0,
		2, 0x2e, 0, // DW_TAG_subprogram, no children
		0x03, 0x08, // DW_AT_name, DW_FORM_string
		0x11, 0x01, // DW_AT_low_pc, DW_FORM_addr
		0x12, 0x06, // DW_AT_high_pc, DW_FORM_data4 (a size)
		0, 0,
	}
	offs := make([]uint32, 0, AbbrevEntries)
	for code := uint64(3); len(offs) < AbbrevEntries; code++ {
		offs = append(offs, uint32(len(abbrev)))
		abbrev = ULEB128(abbrev, code)
		abbrev = append(abbrev, 0x34, 0, 0x03, 0x08, 0, 0) // DW_TAG_variable, DW_AT_name string
	}
	abbrev = append(abbrev, 0)

	var order binary.AppendByteOrder = binary.LittleEndian
	if layout == AbbrevDistinctBigEndian {
		order = binary.BigEndian
	}
	unit := func(abbrevOff uint32, dies []byte) []byte {
		u := order.AppendUint32(nil, uint32(7+len(dies)))
		u = order.AppendUint16(u, 4)
		u = order.AppendUint32(u, abbrevOff)
		u = append(u, 8)
		return append(u, dies...)
	}
	good := append([]byte{1}, "good.c\x00"...)
	good = append(good, 2)
	good = append(good, "good\x00"...)
	good = order.AppendUint64(good, CodeAddr)
	good = order.AppendUint32(good, 0x10)
	info := unit(0, append(good, 0))
	for i := range AbbrevUnits {
		switch layout {
		case AbbrevShared:
			info = append(info, unit(0, []byte{1, 'u', 0, 0})...) // a unit DIE, no ranges, no children
		case AbbrevDistinctEmpty:
			info = append(info, unit(offs[i], nil)...)
		default:
			info = append(info, unit(offs[i], []byte{0})...)
		}
	}
	return MachO{
		UUID:    [16]byte{0x5b, byte(layout)},
		Symbols: []Symbol{{Name: "_good", Addr: CodeAddr}},
		DWARF:   []Section{{"__debug_info", info}, {"__debug_abbrev", abbrev}},
	}.Bytes()
}
