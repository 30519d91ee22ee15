// Package compactunwind reads Apple's compact unwind information: the
// linked __TEXT,__unwind_info section of an image, or the __LD,__compact_unwind
// section of an object file. It finds the 32-bit encoding that describes a
// function and translates it into an unwind.Row, and, for the interrupted
// frame, decodes the function's prologue and epilogue to give the row that
// holds at exactly one instruction.
//
// Offsets are image-relative throughout: the distance from the start of the
// image's __TEXT segment (its mach header), which is what __unwind_info
// stores. The caller subtracts the image's load address (or __TEXT vmaddr
// plus slide) from a PC before asking.
//
// The layout follows Apple's <mach-o/compact_unwind_encoding.h>. A Table
// is read-only once parsed, and every function of the package is safe for
// concurrent use. docs/unwind-compact.md describes what is decoded and how
// it is checked.
package compactunwind

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/lookup"
	"github.com/stackimage/stackimage/unwind"
)

// Errors returned by Lookup and RowFor. Malformed data is reported as an
// *unwind.Error instead, with the offset in the section.
var (
	// errNoArch is the error for a nil architecture.
	errNoArch = errors.New("compactunwind: no architecture (nil *archregs.Arch)")

	// ErrNotFound: no entry of the table covers the offset. errors.Is
	// counts it as lookup.ErrNotFound, the "not found" of every Lookup.
	ErrNotFound = lookup.NotFound("compactunwind: no entry covers the address")
	// ErrNoInfo: the function has an entry whose encoding is 0: the linker
	// knew the function and had no unwind information for it (typically
	// hand-written assembly). Neither the compact table nor __eh_frame
	// describes it.
	ErrNoInfo = errors.New("compactunwind: the function has no unwind information (encoding 0)")
	// ErrDWARF: the encoding defers to a DWARF FDE in __eh_frame, at the
	// offset Entry.DWARFOffset returns.
	ErrDWARF = errors.New("compactunwind: the function is described by a DWARF FDE in __eh_frame")
)

// Encoding bits common to all architectures.
const (
	EncodingIsNotFunctionStart uint32 = 0x80000000 // UNWIND_IS_NOT_FUNCTION_START
	EncodingHasLSDA            uint32 = 0x40000000 // UNWIND_HAS_LSDA
	EncodingPersonalityMask    uint32 = 0x30000000 // UNWIND_PERSONALITY_MASK: 1-based index into the personality array
	encodingModeMask           uint32 = 0x0F000000 // UNWIND_*_MODE_MASK, the same on every architecture
	encodingDWARFOffsetMask    uint32 = 0x00FFFFFF // UNWIND_*_DWARF_SECTION_OFFSET
)

// Entry is the compact unwind entry of one function.
type Entry struct {
	// FuncStart and FuncEnd bound the function, [FuncStart, FuncEnd),
	// image-relative. FuncEnd is the start of the next entry (or the end
	// of the table): padding after a function belongs to it. Adjacent
	// functions with the same encoding may share one entry (see Narrow).
	FuncStart, FuncEnd uint32
	// Encoding is the 32-bit compact unwind encoding; RowFor interprets it.
	Encoding uint32
	// Personality is the image-relative address of the pointer to the
	// personality routine (a GOT slot), 0 when there is none.
	Personality uint32
	// LSDA is the image-relative address of the language-specific data
	// area, 0 when there is none or the LSDA index does not list it.
	LSDA uint32
	// Off is the byte offset in the section of the encoding word the entry
	// was read from (in the common or page-local encodings array for
	// compressed pages): the offset errors about the encoding name.
	Off uint32
}

// Narrow returns e limited to the function [start, end), when that lies
// inside e. Linkers fold adjacent functions with the same encoding into one
// entry, whose FuncStart is then the first function's: Frame0Row decodes
// the prologue from FuncStart, so a caller that knows the function's own
// bounds (LC_FUNCTION_STARTS, the symbol table) narrows the entry first.
// An end of 0 keeps e.FuncEnd.
func (e Entry) Narrow(start, end uint32) Entry {
	if end == 0 || end > e.FuncEnd {
		end = e.FuncEnd
	}
	if start < e.FuncStart || start >= end {
		return e
	}
	e.FuncStart, e.FuncEnd = start, end
	return e
}

// DWARFOffset returns the offset in the image's __eh_frame section of the
// function's FDE, and true, when the encoding defers to DWARF on arch (the
// case RowFor reports as ErrDWARF).
func (e Entry) DWARFOffset(arch *archregs.Arch) (uint32, bool) {
	mode, ok := dwarfMode(arch)
	if !ok || e.Encoding&encodingModeMask != mode {
		return 0, false
	}
	return e.Encoding & encodingDWARFOffsetMask, true
}

// Table is a parsed compact unwind table. Lookup decodes second-level pages
// on demand and never modifies the Table: it is safe for concurrent use.
type Table struct {
	data []byte

	// __unwind_info
	commonOff, commonCount uint32
	persOff, persCount     uint32
	indexOff, indexCount   uint32 // indexCount includes the end sentinel

	// __compact_unwind (object files): entries sorted by FuncStart.
	object []Entry
}

const (
	headerSize       = 28 // unwind_info_section_header
	indexEntrySize   = 12 // unwind_info_section_header_index_entry
	lsdaEntrySize    = 8  // unwind_info_section_header_lsda_index_entry
	regularEntrySize = 8  // unwind_info_regular_second_level_entry

	compressedHeaderSize = 12 // unwind_info_compressed_second_level_page_header

	pageRegular    = 2 // UNWIND_SECOND_LEVEL_REGULAR
	pageCompressed = 3 // UNWIND_SECOND_LEVEL_COMPRESSED
)

func formatError(off uint64, format string, args ...any) *unwind.Error {
	return &unwind.Error{Source: unwind.SourceCompactUnwind, Off: off, Msg: fmt.Sprintf(format, args...)}
}

// checkArray reports an error unless count elements of size bytes at off fit
// in the section.
func (t *Table) checkArray(off, count uint32, size uint64, what string) error {
	if uint64(off) > uint64(len(t.data)) || uint64(count)*size > uint64(len(t.data))-uint64(off) {
		return formatError(uint64(off), "%s (%d entries of %d bytes) extends beyond the end of the section (%d bytes)", what, count, size, len(t.data))
	}
	return nil
}

// Parse reads the header and the first-level index of an __unwind_info
// section. The second-level pages are read by Lookup, so that parsing costs
// time proportional to the number of pages only. data is kept, not copied,
// and must not be modified while the Table is in use.
func Parse(data []byte) (*Table, error) {
	t := &Table{data: data}
	if len(data) < headerSize {
		return nil, formatError(0, "section is %d bytes, shorter than the %d-byte header", len(data), headerSize)
	}
	h := func(i int) uint32 { return binary.LittleEndian.Uint32(data[4*i:]) }
	if v := h(0); v != 1 {
		return nil, formatError(0, "unsupported version %d (want 1)", v)
	}
	t.commonOff, t.commonCount = h(1), h(2)
	t.persOff, t.persCount = h(3), h(4)
	t.indexOff, t.indexCount = h(5), h(6)
	if err := t.checkArray(t.commonOff, t.commonCount, 4, "common encodings array"); err != nil {
		return nil, err
	}
	if err := t.checkArray(t.persOff, t.persCount, 4, "personality array"); err != nil {
		return nil, err
	}
	if err := t.checkArray(t.indexOff, t.indexCount, indexEntrySize, "first-level index"); err != nil {
		return nil, err
	}
	// The index must be sorted for the binary search, and every page and
	// LSDA range it names must start inside the section. The last entry is
	// the end sentinel, with no page.
	var prevFunc, prevLSDA uint32
	for i := uint32(0); i < t.indexCount; i++ {
		off := uint64(t.indexOff) + uint64(i)*indexEntrySize
		fn := binary.LittleEndian.Uint32(data[off:])
		page := binary.LittleEndian.Uint32(data[off+4:])
		lsda := binary.LittleEndian.Uint32(data[off+8:])
		sentinel := i+1 == t.indexCount
		if i > 0 && fn < prevFunc && !sentinel {
			return nil, formatError(off, "first-level index entry %d: function offset %#x is below the previous entry's %#x (index not sorted)", i, fn, prevFunc)
		}
		if !sentinel && (page == 0 || uint64(page)+8 > uint64(len(data))) {
			return nil, formatError(off+4, "first-level index entry %d: second-level page offset %#x is outside the section (%d bytes)", i, page, len(data))
		}
		if i > 0 && lsda < prevLSDA {
			return nil, formatError(off+8, "first-level index entry %d: LSDA index offset %#x is below the previous entry's %#x", i, lsda, prevLSDA)
		}
		if uint64(lsda) > uint64(len(data)) {
			return nil, formatError(off+8, "first-level index entry %d: LSDA index offset %#x is outside the section (%d bytes)", i, lsda, len(data))
		}
		prevFunc, prevLSDA = fn, lsda
	}
	return t, nil
}

// indexEntry returns the fields of first-level index entry i, which Parse
// checked to be inside the section.
func (t *Table) indexEntry(i uint32) (fn, page, lsda uint32) {
	off := uint64(t.indexOff) + uint64(i)*indexEntrySize
	return binary.LittleEndian.Uint32(t.data[off:]), binary.LittleEndian.Uint32(t.data[off+4:]), binary.LittleEndian.Uint32(t.data[off+8:])
}

// Lookup returns the entry of the function containing funcOffset, an
// image-relative address. It returns ErrNotFound when no entry covers it,
// and an *unwind.Error when the page that should is malformed. An entry
// with encoding 0 is returned as found: RowFor reports it as ErrNoInfo.
//
// The search is binary in the first-level index and in the page, and
// reads only that page.
func (t *Table) Lookup(funcOffset uint32) (Entry, error) {
	if t.object != nil || t.data == nil {
		return t.lookupObject(funcOffset)
	}
	// The last index entry is a sentinel: its function offset is the end
	// of the last function, and it has no page.
	if t.indexCount < 2 {
		return Entry{}, ErrNotFound
	}
	// The first page whose first function is above funcOffset.
	i, hi := uint32(0), t.indexCount-1
	for i < hi {
		mid := i + (hi-i)/2
		if fn, _, _ := t.indexEntry(mid); fn > funcOffset {
			hi = mid
		} else {
			i = mid + 1
		}
	}
	if i == 0 {
		return Entry{}, ErrNotFound
	}
	i--
	first, page, lsdaStart := t.indexEntry(i)
	next, _, lsdaEnd := t.indexEntry(i + 1)
	if i+2 == t.indexCount && next < first {
		// A sentinel below the last page (hand-made tables have 0): the
		// end of the last function is unknown.
		next = 0xFFFFFFFF
	}
	if funcOffset >= next {
		return Entry{}, ErrNotFound
	}
	kind := binary.LittleEndian.Uint32(t.data[page:]) // Parse checked the page starts 8 bytes before the end
	var e Entry
	var err error
	switch kind {
	case pageRegular:
		e, err = t.lookupRegular(uint64(page), funcOffset, next)
	case pageCompressed:
		e, err = t.lookupCompressed(uint64(page), first, funcOffset, next)
	default:
		return Entry{}, formatError(uint64(page), "second-level page of first-level entry %d has unknown kind %d (want 2 or 3)", i, kind)
	}
	if err != nil {
		return Entry{}, err
	}
	if err := t.fillExtras(&e, lsdaStart, lsdaEnd); err != nil {
		return Entry{}, err
	}
	return e, nil
}

// lookupRegular searches a regular page: entries of {function offset,
// encoding}, function offsets absolute.
func (t *Table) lookupRegular(page uint64, funcOffset, next uint32) (Entry, error) {
	entryOff, count := binary.LittleEndian.Uint16(t.data[page+4:]), binary.LittleEndian.Uint16(t.data[page+6:]) // the 8-byte header Parse checked
	base := page + uint64(entryOff)
	if base > uint64(len(t.data)) || uint64(count)*regularEntrySize > uint64(len(t.data))-base {
		return Entry{}, formatError(page, "regular page's %d entries at page offset %#x extend beyond the end of the section (%d bytes)", count, entryOff, len(t.data))
	}
	fnAt := func(j int) uint32 { return binary.LittleEndian.Uint32(t.data[base+uint64(j)*regularEntrySize:]) }
	j, hi := 0, int(count) // the first entry above funcOffset
	for j < hi {
		mid := int(uint(j+hi) >> 1)
		if fnAt(mid) > funcOffset {
			hi = mid
		} else {
			j = mid + 1
		}
	}
	if j == 0 {
		return Entry{}, ErrNotFound
	}
	j--
	off := base + uint64(j)*regularEntrySize
	e := Entry{FuncStart: fnAt(j), FuncEnd: next, Encoding: binary.LittleEndian.Uint32(t.data[off+4:]), Off: uint32(off + 4)}
	if j+1 < int(count) {
		e.FuncEnd = fnAt(j + 1)
	}
	if e.FuncEnd < e.FuncStart || e.FuncEnd > next {
		return Entry{}, formatError(off, "regular page entry %d: function %#x is out of order (next function at %#x)", j, e.FuncStart, e.FuncEnd)
	}
	return e, nil
}

// lookupCompressed searches a compressed page: 32-bit entries holding a
// 24-bit function offset from the page's first function and an 8-bit
// index into the common encodings, then the page's own.
func (t *Table) lookupCompressed(page uint64, first, funcOffset, next uint32) (Entry, error) {
	if page+compressedHeaderSize > uint64(len(t.data)) {
		return Entry{}, formatError(page, "compressed page header is beyond the end of the section (%d bytes)", len(t.data))
	}
	h := t.data[page+4:]
	entryOff, count := binary.LittleEndian.Uint16(h), binary.LittleEndian.Uint16(h[2:])
	encOff, encCount := binary.LittleEndian.Uint16(h[4:]), binary.LittleEndian.Uint16(h[6:])
	base := page + uint64(entryOff)
	if base > uint64(len(t.data)) || uint64(count)*4 > uint64(len(t.data))-base {
		return Entry{}, formatError(page, "compressed page's %d entries at page offset %#x extend beyond the end of the section (%d bytes)", count, entryOff, len(t.data))
	}
	encBase := page + uint64(encOff)
	if encBase > uint64(len(t.data)) || uint64(encCount)*4 > uint64(len(t.data))-encBase {
		return Entry{}, formatError(page, "compressed page's %d encodings at page offset %#x extend beyond the end of the section (%d bytes)", encCount, encOff, len(t.data))
	}
	word := func(j int) uint32 { return binary.LittleEndian.Uint32(t.data[base+uint64(j)*4:]) }
	fnAt := func(j int) uint64 { return uint64(first) + uint64(word(j)&0x00FFFFFF) }
	j, hi := 0, int(count) // the first entry above funcOffset
	for j < hi {
		mid := int(uint(j+hi) >> 1)
		if fnAt(mid) > uint64(funcOffset) {
			hi = mid
		} else {
			j = mid + 1
		}
	}
	if j == 0 {
		return Entry{}, ErrNotFound
	}
	j--
	off := base + uint64(j)*4
	start, end := fnAt(j), uint64(next)
	if j+1 < int(count) {
		end = fnAt(j + 1)
	}
	if end < start || end > uint64(next) {
		return Entry{}, formatError(off, "compressed page entry %d: function %#x is out of order (next function at %#x)", j, start, end)
	}
	e := Entry{FuncStart: uint32(start), FuncEnd: uint32(end)}
	idx := word(j) >> 24
	var encAt uint64
	switch {
	case idx < t.commonCount:
		encAt = uint64(t.commonOff) + 4*uint64(idx)
	case idx-t.commonCount < uint32(encCount):
		encAt = encBase + 4*uint64(idx-t.commonCount)
	default:
		return Entry{}, formatError(off, "compressed page entry %d: encoding index %d is beyond the %d common and %d page encodings", j, idx, t.commonCount, encCount)
	}
	e.Encoding = binary.LittleEndian.Uint32(t.data[encAt:])
	e.Off = uint32(encAt)
	return e, nil
}

// fillExtras sets the personality and LSDA of e from the personality array
// and the LSDA index entries [lsdaStart, lsdaEnd) of e's page.
func (t *Table) fillExtras(e *Entry, lsdaStart, lsdaEnd uint32) error {
	if p := (e.Encoding & EncodingPersonalityMask) >> 28; p != 0 {
		if p > t.persCount {
			return formatError(uint64(e.Off), "encoding %#08x names personality %d, beyond the %d of the personality array", e.Encoding, p, t.persCount)
		}
		e.Personality = binary.LittleEndian.Uint32(t.data[uint64(t.persOff)+4*uint64(p-1):])
	}
	if e.Encoding&EncodingHasLSDA == 0 || lsdaEnd <= lsdaStart {
		return nil
	}
	// Parse checked both bounds are inside the section and ordered.
	n := int((lsdaEnd - lsdaStart) / lsdaEntrySize)
	at := func(j int) uint64 { return uint64(lsdaStart) + uint64(j)*lsdaEntrySize }
	j := sort.Search(n, func(j int) bool { return binary.LittleEndian.Uint32(t.data[at(j):]) >= e.FuncStart })
	if j < n && binary.LittleEndian.Uint32(t.data[at(j):]) == e.FuncStart {
		e.LSDA = binary.LittleEndian.Uint32(t.data[at(j)+4:])
	}
	return nil
}

// Object-file __LD,__compact_unwind entries: {address, length, encoding,
// personality, lsda}, pointers of the object's size.
const (
	objectEntrySize64 = 32
	objectEntrySize32 = 20
)

// ParseObject reads the __LD,__compact_unwind section of an object file
// (MH_OBJECT), whose entries the linker turns into __unwind_info. ptrSize is
// 8 for 64-bit objects and 4 for 32-bit ones. Function addresses are the
// values stored in the section, which for an object file's own functions
// are their addresses in the object (unrelocated); personality and LSDA
// pointers are kept only when they fit in 32 bits.
func ParseObject(data []byte, ptrSize int) (*Table, error) {
	size := objectEntrySize64
	switch ptrSize {
	case 8:
	case 4:
		size = objectEntrySize32
	default:
		return nil, fmt.Errorf("compactunwind: pointer size %d, want 4 or 8", ptrSize)
	}
	if len(data) == 0 {
		return nil, formatError(0, "empty __compact_unwind section")
	}
	if len(data)%size != 0 {
		return nil, formatError(uint64(len(data)-len(data)%size), "section size %d is not a multiple of the %d-byte entry", len(data), size)
	}
	ptr := func(off int) uint64 {
		if ptrSize == 8 {
			return binary.LittleEndian.Uint64(data[off:])
		}
		return uint64(binary.LittleEndian.Uint32(data[off:]))
	}
	entries := make([]Entry, 0, len(data)/size) // bounded by the section's size
	for off := 0; off < len(data); off += size {
		addr := ptr(off)
		length := binary.LittleEndian.Uint32(data[off+ptrSize:])
		if addr > 0xFFFFFFFF || addr+uint64(length) > 0xFFFFFFFF {
			return nil, formatError(uint64(off), "function %#x+%#x does not fit in 32 bits", addr, length)
		}
		e := Entry{FuncStart: uint32(addr), FuncEnd: uint32(addr) + length,
			Encoding: binary.LittleEndian.Uint32(data[off+ptrSize+4:]), Off: uint32(off + ptrSize + 4)}
		if p := ptr(off + ptrSize + 8); p <= 0xFFFFFFFF {
			e.Personality = uint32(p)
		}
		if l := ptr(off + 2*ptrSize + 8); l <= 0xFFFFFFFF {
			e.LSDA = uint32(l)
		}
		entries = append(entries, e)
	}
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].FuncStart < entries[j].FuncStart })
	for i := 1; i < len(entries); i++ {
		if entries[i].FuncStart < entries[i-1].FuncEnd {
			return nil, formatError(uint64(entries[i].Off), "function %#x overlaps the previous one [%#x, %#x)", entries[i].FuncStart, entries[i-1].FuncStart, entries[i-1].FuncEnd)
		}
	}
	return &Table{object: entries}, nil
}

func (t *Table) lookupObject(funcOffset uint32) (Entry, error) {
	i := sort.Search(len(t.object), func(i int) bool { return t.object[i].FuncStart > funcOffset })
	if i == 0 || funcOffset >= t.object[i-1].FuncEnd {
		return Entry{}, ErrNotFound
	}
	return t.object[i-1], nil
}
