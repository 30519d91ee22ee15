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
// section (checkRnglistx checks the index against the table's size).
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

// checkRnglistx checks range list index idx against the size of the
// offsets table at base, which its header gives just before it
// (offset_entry_count, 4 bytes in 32- and 64-bit DWARF). debug/dwarf does
// not: an index past the table but not past the section reads a range
// list's bytes as an offset.
func checkRnglistx(sec []byte, base, idx uint64) error {
	if base < 4 || base > uint64(len(sec)) {
		return nil // no header to check against: rnglistxOffset decides
	}
	if n := binary.LittleEndian.Uint32(sec[base-4:]); idx >= uint64(n) {
		return fmt.Errorf("range list index %d is past the %d entries of the offsets table at %#x", idx, n, base)
	}
	return nil
}

// rnglistxIndex returns the DW_FORM_rnglistx index of the DIE at off, as
// the DIE decoder reads it; false when the DIE's DW_AT_ranges is not an
// index or the decoder cannot read the DIE.
func (b *unitBuilder) rnglistxIndex(off int64) (uint64, bool) {
	w, ok := b.dieDecoder()
	if !ok || off < b.u.first || off >= b.u.end {
		return 0, false
	}
	code, pos := w.uleb(int(off))
	p := w.plans.plan(code)
	if !w.ok || p == nil || !p.skipOK {
		return 0, false
	}
	for i := range p.attrs {
		a := &p.attrs[i]
		if a.at == uint32(dwarf.AttrRanges) {
			if a.form != formRnglistx {
				return 0, false
			}
			idx, _ := w.uleb(pos)
			return idx, w.ok
		}
		if a.size >= 0 {
			pos += int(a.size)
		} else {
			pos = w.skipVar(pos, a.form)
		}
		if !w.ok || pos > len(w.info) {
			return 0, false
		}
	}
	return 0, false
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

// unitBases are the bases a DWARF 5 unit DIE gives its DIEs' indexes.
type unitBases struct {
	strOffsetsBase uint64 // DW_AT_str_offsets_base
	addrBase       uint64 // DW_AT_addr_base
	rnglistsBase   uint64 // DW_AT_rnglists_base
}

// dwarf5Bases reads the bases of a unit DIE as debug/dwarf reads them.
func dwarf5Bases(cu *dwarf.Entry) unitBases {
	var ub unitBases
	if v, ok := cu.Val(dwarf.AttrStrOffsetsBase).(int64); ok {
		ub.strOffsetsBase = uint64(v)
	}
	if v, ok := cu.Val(dwarf.AttrAddrBase).(int64); ok {
		ub.addrBase = uint64(v)
	}
	if v, ok := cu.Val(dwarf.AttrRnglistsBase).(int64); ok {
		ub.rnglistsBase = uint64(v)
	}
	return ub
}

// nextDIE returns where the DIE after the one at prev starts, or sought
// when the reader was positioned there; -1 when it cannot tell.
func (b *unitBuilder) nextDIE(prev, sought int64) int64 {
	if sought >= 0 {
		return sought
	}
	if prev < b.u.first || prev >= b.u.end {
		return -1
	}
	if b.ix.secs["debug_info"][prev] == 0 {
		return prev + 1 // a null entry
	}
	w, ok := b.dieDecoder()
	if !ok {
		return -1
	}
	code, pos := w.uleb(int(prev))
	p := w.plans.plan(code)
	if !w.ok || p == nil {
		return -1
	}
	if pos = w.skipAttrs(pos, p); !w.ok || pos > len(w.info) {
		return -1
	}
	return int64(pos)
}

// dieDecoder returns a fastWalk to decode single DIEs of the unit with,
// false when its format or abbreviations are not ones fastWalk reads.
func (b *unitBuilder) dieDecoder() (*fastWalk, bool) {
	info := b.ix.secs["debug_info"]
	f, ok := readUnitFormat(info, b.u)
	if !ok || f.addrSize != 4 && f.addrSize != 8 {
		return nil, false
	}
	unlock := b.lock()
	plans := b.ix.planTable(b.u.abbrev, f)
	unlock()
	if !plans.ok {
		return nil, false
	}
	return &fastWalk{b: b, info: info[:b.u.end], f: f, plans: plans, refBase: b.u.refBase, unitBases: b.bases, ok: true}, true
}

// withoutRanges reads the DIE at off, which debug/dwarf cannot decode
// because its DW_FORM_rnglistx index names a slot past debug_rnglists,
// with everything the walk reads of it but its ranges, and warns that
// they are lost. It returns the entry and where the next DIE starts;
// false when the DIE has another problem (the caller reports the error).
func (b *unitBuilder) withoutRanges(off int64) (*dwarf.Entry, int64, bool) {
	if off <= b.u.first || off >= b.u.end {
		return nil, 0, false
	}
	w, ok := b.dieDecoder()
	if !ok || w.f.version < 5 {
		return nil, 0, false
	}
	code, pos := w.uleb(int(off))
	p := w.plans.plan(code)
	if !w.ok || p == nil || p.unitTag {
		return nil, 0, false
	}
	if pos = w.decode(pos, p); !w.ok {
		return nil, 0, false
	}
	v := &w.vals
	if !v.rangesOK || v.rangesForm != formRnglistx {
		return nil, 0, false
	}
	_, err := rnglistxOffset(b.ix.secs["debug_rnglists"], b.bases.rnglistsBase, uint64(v.ranges), w.f.offSize)
	if err == nil {
		return nil, 0, false // not what failed
	}
	e := &dwarf.Entry{Offset: dwarf.Offset(off), Tag: p.tag, Children: p.children}
	add := func(a dwarf.Attr, val any, c dwarf.Class) {
		e.Field = append(e.Field, dwarf.Field{Attr: a, Val: val, Class: c})
	}
	if v.nameOK {
		add(dwarf.AttrName, v.name, dwarf.ClassString)
	}
	if v.linkageOK {
		add(dwarf.AttrLinkageName, v.linkage, dwarf.ClassString)
	}
	if v.mipsOK {
		add(attrMIPSLinkageName, v.mips, dwarf.ClassString)
	}
	if v.lowOK {
		add(dwarf.AttrLowpc, v.low, dwarf.ClassAddress)
	}
	if v.highAddr {
		add(dwarf.AttrHighpc, v.high, dwarf.ClassAddress)
	} else if v.highConst {
		add(dwarf.AttrHighpc, int64(v.high), dwarf.ClassConstant)
	}
	if v.originOK {
		add(dwarf.AttrAbstractOrigin, v.origin, dwarf.ClassReference)
	}
	if v.specOK {
		add(dwarf.AttrSpecification, v.spec, dwarf.ClassReference)
	}
	if v.callFileOK {
		add(dwarf.AttrCallFile, v.callFile, dwarf.ClassConstant)
	}
	if v.callLineOK {
		add(dwarf.AttrCallLine, v.callLine, dwarf.ClassConstant)
	}
	if v.callColOK {
		add(dwarf.AttrCallColumn, v.callCol, dwarf.ClassConstant)
	}
	kept := "its DW_AT_low_pc/high_pc kept"
	if !v.lowOK || !v.highAddr && !v.highConst {
		kept = "no DW_AT_low_pc/high_pc: dropped, its children kept"
	}
	if p.tag != dwarf.TagSubprogram && p.tag != dwarf.TagInlinedSubroutine {
		kept = "its children kept"
	}
	b.warnf("DIE at %#x: DW_AT_ranges: %v (%s)", off, err, kept)
	return e, int64(pos), true
}

// checkRngList checks a DWARF 5 unit's DW_AT_ranges offset (of class
// ClassRangeListPtr, or ClassRngList for a resolved index) against
// debug_rnglists before Data.Ranges reads it: Data.Ranges reads
// debug_ranges instead when debug_rnglists is absent, and its error for
// an offset past the section gives debug_ranges' size.
func (b *unitBuilder) checkRngList(class dwarf.Class, off int64) error {
	if b.version < 5 || class != dwarf.ClassRangeListPtr && class != dwarf.ClassRngList {
		return nil
	}
	sec, ok := b.ix.secs["debug_rnglists"]
	if !ok {
		return fmt.Errorf("range list at %#x: no debug_rnglists section", off)
	}
	if off < 0 || off >= int64(len(sec)) {
		return fmt.Errorf("range list at %#x is past debug_rnglists (%d bytes)", uint64(off), len(sec))
	}
	return nil
}

// lowHighOf appends to dst the range DW_AT_low_pc and DW_AT_high_pc give
// e, as Data.Ranges reads them, when not empty.
func lowHighOf(e *dwarf.Entry, dst [][2]uint64) [][2]uint64 {
	low, ok := e.Val(dwarf.AttrLowpc).(uint64)
	if !ok {
		return dst
	}
	var high uint64
	hf := e.AttrField(dwarf.AttrHighpc)
	switch {
	case hf == nil:
		return dst
	case hf.Class == dwarf.ClassAddress:
		if high, ok = hf.Val.(uint64); !ok {
			return dst
		}
	case hf.Class == dwarf.ClassConstant:
		c, ok := hf.Val.(int64)
		if !ok {
			return dst
		}
		high = low + uint64(c)
	default:
		return dst
	}
	if low < high {
		dst = append(dst, [2]uint64{low, high})
	}
	return dst
}

// DWARF attributes of a unit DIE that the walk reads and fastWalk does
// not decode.
const (
	attrStrOffsetsBase = 0x72
	attrAddrBase       = 0x73
	attrRnglistsBase   = 0x74
)

// unitWithoutRanges reads the unit DIE, which debug/dwarf cannot decode
// (err) because its DW_FORM_rnglistx index names a slot past
// debug_rnglists, with what the walk reads of it (name, compilation
// directory, line program, base address, DWARF 5 bases) but its ranges,
// and warns that they are lost: the unit's functions and line sequences
// then say what it covers. It returns the entry and where the next DIE
// starts, or err, made clearer where it can be, when it cannot: when
// debug/dwarf could not read the unit's bases either (it resolves the
// index against a base of 0 when it first reads the unit DIE, and reads
// none of them if that fails), since every other DIE of the unit would
// then be read with wrong bases.
func (b *unitBuilder) unitWithoutRanges(err error) (*dwarf.Entry, int64, error) {
	w, ok := b.dieDecoder()
	if !ok || w.f.version < 5 {
		return nil, 0, err
	}
	off := b.u.first
	code, pos := w.uleb(int(off))
	p := w.plans.plan(code)
	if !w.ok || p == nil || !p.unitTag || !p.skipOK {
		return nil, 0, err
	}
	// Where each attribute's value starts, then the bases first: the
	// name and directory may be string indexes.
	at := make([]int, len(p.attrs))
	for i := range p.attrs {
		a := &p.attrs[i]
		at[i] = pos
		if a.size >= 0 {
			pos += int(a.size)
		} else {
			pos = w.skipVar(pos, a.form)
		}
		if !w.ok || pos > len(w.info) {
			return nil, 0, err
		}
	}
	var rangesIdx uint64
	var rangesOK bool
	e := &dwarf.Entry{Offset: dwarf.Offset(off), Tag: p.tag, Children: p.children}
	add := func(a dwarf.Attr, val any, c dwarf.Class) {
		e.Field = append(e.Field, dwarf.Field{Attr: a, Val: val, Class: c})
	}
	for i := range p.attrs {
		a := &p.attrs[i]
		if a.form != formSecOffset {
			if a.at == uint32(dwarf.AttrRanges) && a.form == formRnglistx && !rangesOK {
				rangesIdx, _ = w.uleb(at[i])
				rangesOK = true
			}
			continue
		}
		v, _ := w.fixedUint(at[i], w.f.offSize)
		switch a.at {
		case attrStrOffsetsBase:
			w.strOffsetsBase = v
			add(dwarf.AttrStrOffsetsBase, int64(v), dwarf.ClassStrOffsetsPtr)
		case attrAddrBase:
			w.addrBase = v
			add(dwarf.AttrAddrBase, int64(v), dwarf.ClassAddrPtr)
		case attrRnglistsBase:
			w.rnglistsBase = v
			add(dwarf.AttrRnglistsBase, int64(v), dwarf.ClassRngListsPtr)
		case uint32(dwarf.AttrStmtList):
			add(dwarf.AttrStmtList, int64(v), dwarf.ClassLinePtr)
		}
	}
	sec, secOK := b.ix.secs["debug_rnglists"]
	if !rangesOK {
		return nil, 0, err
	}
	if _, err := rnglistxOffset(sec, 0, rangesIdx, w.f.offSize); err != nil {
		if !secOK {
			return nil, 0, fmt.Errorf("unit DIE: DW_AT_ranges is range list index %d, and there is no debug_rnglists section: the unit cannot be read", rangesIdx)
		}
		return nil, 0, fmt.Errorf("unit DIE: DW_AT_ranges: %v as first read, before DW_AT_rnglists_base: the unit cannot be read", err)
	}
	rangesErr := error(nil)
	if _, rangesErr = rnglistxOffset(sec, w.rnglistsBase, rangesIdx, w.f.offSize); rangesErr == nil {
		return nil, 0, err // something else failed
	}
	for i := range p.attrs {
		a := &p.attrs[i]
		switch a.at {
		case uint32(dwarf.AttrName), uint32(dwarf.AttrCompDir):
			if !isStringForm(a.form) {
				continue
			}
			s, _ := w.str(at[i], a.form)
			add(dwarf.Attr(a.at), s, dwarf.ClassString)
		case uint32(dwarf.AttrLowpc), uint32(dwarf.AttrEntrypc):
			if !isAddressForm(a.form) {
				continue
			}
			v, _ := w.address(at[i], a.form)
			add(dwarf.Attr(a.at), v, dwarf.ClassAddress)
		}
		if !w.ok {
			return nil, 0, err
		}
	}
	b.cu.name, _ = e.Val(dwarf.AttrName).(string)
	b.warnf("unit DIE: DW_AT_ranges: %v (the unit's functions and lines kept)", rangesErr)
	return e, int64(pos), nil
}

func isStringForm(form uint16) bool {
	switch form {
	case formString, formStrp, formLineStrp, formStrx, formStrx1, formStrx2, formStrx3, formStrx4:
		return true
	}
	return false
}

// rnglistxSlot steps over a DW_FORM_rnglistx value that the walk does
// not use, giving up (w.ok false) where debug/dwarf fails the DIE for it:
// the debug/dwarf walk then reads or reports the DIE.
func (w *fastWalk) rnglistxSlot(pos int) int {
	idx, pos := w.uleb(pos)
	if !w.ok {
		return len(w.info)
	}
	if _, err := rnglistxOffset(w.b.ix.secs["debug_rnglists"], w.rnglistsBase, idx, w.f.offSize); err != nil {
		w.ok = false
		return len(w.info)
	}
	return pos
}
