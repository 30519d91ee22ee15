package debuginfo

import "debug/dwarf"

// Skipping what holds no code.
//
// Most DIEs of a C++ unit describe types and variables: a struct and its
// members, an enumeration and its enumerators, a global. The index needs
// none of them, yet debug/dwarf decodes every attribute of every DIE it
// returns, so a unit with thousands of types cost far more than its
// functions. After reading a DIE that is not a function, the walk
// therefore skips it and the siblings after it that hold no code, with a
// skipper that reads only abbreviation codes and attribute sizes, then
// seeks debug/dwarf's reader past them. A DIE with code (its abbreviation
// has DW_AT_low_pc, DW_AT_high_pc or DW_AT_ranges: a function, a local
// class's method) or with children that are not a type's (a namespace, a
// lexical block) is read by the walk as before, and so is anything the
// skipper cannot read (an unknown form or abbreviation code, a subtree
// running past its unit): the walk's results and warnings do not depend
// on it. The skipper's work in a unit is bounded by a few times the unit's
// size.

// skippableTags are the tags whose children the skipper may skip: type
// descriptions.
var skippableTags = map[dwarf.Tag]bool{
	dwarf.TagStructType:      true,
	dwarf.TagClassType:       true,
	dwarf.TagUnionType:       true,
	dwarf.TagEnumerationType: true,
	dwarf.TagSubroutineType:  true,
	dwarf.TagArrayType:       true,
}

// abbrev is what the skipper needs of an abbreviation: its tag, whether
// its DIE has children or code, and its attributes' forms.
type abbrev struct {
	tag            dwarf.Tag
	children, code bool
	forms          []uint64
	known          bool // an abbreviation of the table (abbrevTable.dense has holes)
	skippable      bool // skippableTags[tag]
	// size is the bytes of the DIE's attributes when every form has a
	// fixed size in a unit of 8-byte addresses and 4-byte offsets, DWARF
	// 3 or later (a fixedLayout unit), else -1.
	size int32
}

// skipper skips DIE subtrees of one unit.
type skipper struct {
	info     []byte // debug_info up to the unit's end
	abbrevs  *abbrevTable
	fixed    bool // a fixedLayout unit: abbrev.size applies
	addrSize int
	offSize  int
	version  int
	ok       bool // the unit header and abbreviations were read
	// steps bounds the work of all skips in the unit (bytes read plus
	// attributes skipped) to a few times its size: a hostile unit nesting
	// types thousands deep around a DIE with code would otherwise have
	// every level scan down to it. Past the budget nothing is skipped.
	steps int
}

// skipRatio and skipSlack set a skipper's budget: skipRatio times the
// unit's bytes, plus skipSlack.
const (
	skipRatio = 4
	skipSlack = 64 << 10
)

// abbrevTable is one abbreviation table as the skipper reads it: the
// entries from a debug_abbrev offset to the zero code ending the table.
// An Index decodes the table at each offset once and shares it between the
// units naming that offset (Index.abbrevTable): thousands of units naming
// one long table would otherwise each decode all of it. It is immutable.
type abbrevTable struct {
	byCode map[uint64]abbrev
	// dense holds the abbreviations of the codes below its length (most
	// tables number theirs from 1): a slice index is cheaper than a map.
	dense []abbrev
	ok    bool // read to its end without error
}

// lookup returns the abbreviation of code.
func (t *abbrevTable) lookup(code uint64) (abbrev, bool) {
	if code < uint64(len(t.dense)) {
		ab := t.dense[code]
		return ab, ab.known
	}
	ab, ok := t.byCode[code]
	return ab, ok
}

// fixedSize returns the bytes of values of the forms in a fixedLayout
// unit, or -1 when one has a variable or unknown size.
func fixedSize(forms []uint64) int32 {
	n := int32(0)
	for _, form := range forms {
		switch form {
		case 0x19: // flag_present
		case 0x0b, 0x0c, 0x11, 0x25, 0x29: // data1, flag, ref1, strx1, addrx1
			n++
		case 0x05, 0x12, 0x26, 0x2a: // data2, ref2, strx2, addrx2
			n += 2
		case 0x27, 0x2b: // strx3, addrx3
			n += 3
		case 0x06, 0x13, 0x28, 0x2c, 0x1c: // data4, ref4, strx4, addrx4, ref_sup4
			n += 4
		case 0x0e, 0x17, 0x1d, 0x1f, 0x1f20, 0x1f21, 0x10: // offsets, and ref_addr after DWARF 2
			n += 4
		case 0x07, 0x14, 0x20, 0x24, 0x01: // data8, ref8, ref_sig8, ref_sup8, addr
			n += 8
		case 0x1e: // data16
			n += 16
		default:
			return -1
		}
	}
	return n
}

// decodeAbbrevs reads the abbreviation table at off.
func decodeAbbrevs(abbrevSec []byte, off uint64) *abbrevTable {
	t := &abbrevTable{}
	if off >= uint64(len(abbrevSec)) {
		return t
	}
	t.byCode = make(map[uint64]abbrev)
	var maxCode uint64
	a := cursor{b: abbrevSec, off: int(off)}
	for !a.err {
		// debug/dwarf reads a code as 32 bits; the skipper must see the
		// table the walk sees.
		code := uint64(uint32(a.uleb()))
		if code == 0 {
			break
		}
		ab := abbrev{tag: dwarf.Tag(a.uleb())}
		ab.children = a.u8() != 0
		for !a.err {
			attr, form := a.uleb(), a.uleb()
			if attr == 0 && form == 0 {
				break
			}
			if form == 0x21 { // DW_FORM_implicit_const: the value is here
				a.uleb()
				continue
			}
			switch attr {
			case 0x11, 0x12, 0x55: // DW_AT_low_pc, DW_AT_high_pc, DW_AT_ranges
				ab.code = true
			}
			ab.forms = append(ab.forms, form)
		}
		// A code defined twice: debug/dwarf keeps the last definition,
		// and so must the skipper, or it would step over a DIE by a size
		// the walk does not read.
		ab.known, ab.skippable, ab.size = true, skippableTags[ab.tag], fixedSize(ab.forms)
		t.byCode[code] = ab
		maxCode = max(maxCode, code)
	}
	t.ok = !a.err
	if n := uint64(len(t.byCode)); maxCode < 4*n+64 {
		t.dense = make([]abbrev, maxCode+1)
		for code, ab := range t.byCode {
			t.dense[code] = ab
		}
	}
	return t
}

// newSkipper reads unit u's header and decodes its abbreviation table. A
// unit it cannot read gets a skipper that skips nothing.
func newSkipper(info, abbrevSec []byte, u unitSpan) *skipper {
	return newSkipperWith(info, u, func() *abbrevTable { return decodeAbbrevs(abbrevSec, u.abbrev) })
}

// newSkipperWith reads unit u's header and takes its abbreviation table
// from table, called once the header is read.
func newSkipperWith(info []byte, u unitSpan, table func() *abbrevTable) *skipper {
	s := &skipper{}
	if u.hdr < 0 || u.end > int64(len(info)) {
		return s
	}
	c := cursor{b: info[:u.end], off: int(u.hdr)}
	s.offSize = 4
	if c.u32() == 0xffffffff {
		c.u64()
		s.offSize = 8
	}
	s.version = int(c.u16())
	switch {
	case s.version >= 2 && s.version <= 4:
		c.skip(s.offSize) // abbreviation offset, in u.abbrev
		s.addrSize = int(c.u8())
	case s.version == 5:
		c.u8() // unit type
		s.addrSize = int(c.u8())
	default:
		return s
	}
	if c.err || s.addrSize == 0 {
		return s
	}
	t := table()
	if t.byCode == nil {
		return s
	}
	s.abbrevs = t
	s.fixed = s.addrSize == 8 && s.offSize == 4 && s.version >= 3
	s.info = info[:u.end]
	s.ok = t.ok
	s.steps = skipRatio*int(u.end-u.first) + skipSlack
	return s
}

// skipRun returns the offset of the first DIE, from the one at off on
// among its siblings, that the walk must read: one with code in its
// subtree, one that may hold code and is not a type description (a
// namespace, a lexical block), or the null entry ending their parent's
// children. It returns off when the DIE at off is such a DIE, or when
// nothing can be skipped.
func (s *skipper) skipRun(off int64) int64 {
	pos := off
	for s.ok && pos >= 0 && pos < int64(len(s.info)) {
		c := cursor{b: s.info, off: int(pos)}
		code := c.uleb()
		ab, known := s.abbrevs.lookup(code)
		if c.err || code == 0 || !known || ab.code || ab.children && !ab.skippable {
			break
		}
		end, ok := s.subtreeEnd(pos)
		if !ok {
			break
		}
		pos = end
	}
	return pos
}

// subtreeEnd returns the offset just past the DIE at off and all its
// descendants (after the null entry ending its children). ok is false
// when the subtree holds a DIE with code or cannot be read; the caller
// then walks it.
func (s *skipper) subtreeEnd(off int64) (end int64, ok bool) {
	if !s.ok || off < 0 || off >= int64(len(s.info)) {
		return 0, false
	}
	c := cursor{b: s.info, off: int(off)}
	depth := 0
	forms := 0
	defer func() { s.steps -= c.off - int(off) + forms }()
	for {
		if c.off-int(off)+forms > s.steps {
			s.ok = false // the unit's budget is spent: skip nothing more
			return 0, false
		}
		code := c.uleb()
		if c.err {
			return 0, false
		}
		if code == 0 {
			if depth == 0 {
				return 0, false // a null entry, not a DIE, at off
			}
			if depth--; depth == 0 {
				break
			}
			continue
		}
		ab, known := s.abbrevs.lookup(code)
		if !known || ab.code {
			return 0, false
		}
		forms += len(ab.forms)
		if !s.skipAttrs(&c, &ab) {
			return 0, false
		}
		if ab.children {
			depth++
		} else if depth == 0 {
			break // the DIE at off has no children
		}
	}
	if c.err || c.off >= len(s.info) {
		return 0, false // a subtree ends inside its unit, before its last null
	}
	return int64(c.off), true
}

// attrsEnd returns the offset just past the attributes of the DIE at off:
// where its first child starts, or when it has none its next sibling (or
// the null entry ending its parent's children). ok is false when the DIE
// cannot be read, the skipper is off or its budget is spent.
func (s *skipper) attrsEnd(off int64) (end int64, ok bool) {
	if !s.ok || off < 0 || off >= int64(len(s.info)) {
		return 0, false
	}
	c := cursor{b: s.info, off: int(off)}
	code := c.uleb()
	ab, known := s.abbrevs.lookup(code)
	if c.err || code == 0 || !known || len(ab.forms)+c.off-int(off) > s.steps {
		return 0, false
	}
	if !s.skipAttrs(&c, &ab) {
		return 0, false
	}
	s.steps -= c.off - int(off) + len(ab.forms)
	if c.off >= len(s.info) {
		return 0, false
	}
	return int64(c.off), true
}

// skipAttrs skips the attribute values of a DIE of abbreviation ab; false
// for a form it does not know or a value past the end.
func (s *skipper) skipAttrs(c *cursor, ab *abbrev) bool {
	if s.fixed && ab.size >= 0 {
		c.skip(int(ab.size))
		return !c.err
	}
	for _, form := range ab.forms {
		if !s.skipValue(c, form) {
			return false
		}
	}
	return true
}

// skipValue skips one attribute value; false for a form it does not know.
func (s *skipper) skipValue(c *cursor, form uint64) bool {
	switch form {
	case 0x19: // flag_present
	case 0x0b, 0x0c, 0x11, 0x25, 0x29: // data1, flag, ref1, strx1, addrx1
		c.skip(1)
	case 0x05, 0x12, 0x26, 0x2a: // data2, ref2, strx2, addrx2
		c.skip(2)
	case 0x27, 0x2b: // strx3, addrx3
		c.skip(3)
	case 0x06, 0x13, 0x28, 0x2c, 0x1c: // data4, ref4, strx4, addrx4, ref_sup4
		c.skip(4)
	case 0x07, 0x14, 0x20, 0x24: // data8, ref8, ref_sig8, ref_sup8
		c.skip(8)
	case 0x1e: // data16
		c.skip(16)
	case 0x01: // addr
		c.skip(s.addrSize)
	case 0x0e, 0x17, 0x1d, 0x1f, 0x1f20, 0x1f21: // strp, sec_offset, strp_sup, line_strp, GNU_ref_alt, GNU_strp_alt
		c.skip(s.offSize)
	case 0x10: // ref_addr: an address's size in DWARF 2
		if s.version == 2 {
			c.skip(s.addrSize)
		} else {
			c.skip(s.offSize)
		}
	case 0x0d, 0x0f, 0x15, 0x1a, 0x1b, 0x22, 0x23, 0x1f01, 0x1f02: // sdata, udata, ref_udata, strx, addrx, loclistx, rnglistx, GNU_addr_index, GNU_str_index
		c.uleb()
	case 0x08: // string
		for !c.err && c.u8() != 0 {
		}
	case 0x0a: // block1
		c.skip(int(c.u8()))
	case 0x03: // block2
		c.skip(int(c.u16()))
	case 0x04: // block4
		c.skip(int(c.u32()))
	case 0x09, 0x18: // block, exprloc
		n := c.uleb()
		if n > uint64(len(c.b)) {
			return false
		}
		c.skip(int(n))
	default: // DW_FORM_indirect among them: walked by debug/dwarf
		return false
	}
	return !c.err
}
