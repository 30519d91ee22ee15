package debuginfo

import (
	"bytes"
	"debug/dwarf"
	"encoding/binary"
	"math"
	"slices"

	"github.com/stackimage/stackimage/internal/leb128"
)

// The unit walk's own DIE decoder.
//
// debug/dwarf decodes every attribute of every DIE it returns into an
// Entry of interface values, and the walk needs a dozen attributes of its
// functions and nothing of the rest: most DIEs of a C++ unit are struct
// members. fastWalk reads a unit's DIEs itself, with each abbreviation
// turned once into a plan (diePlan: every attribute's form and size in
// the unit, and which of the walk's attributes it is), so that a DIE that
// is not a function is stepped over by its plan's fixed size, or by its
// forms' sizes, without decoding any value, and a function's wanted
// attributes are decoded without an Entry.
//
// It is a fast path, not a second reader: it produces exactly what the
// walk over debug/dwarf produces, and it gives up on a unit (fastWalk.run
// returns false, and the unit is parsed again by the debug/dwarf walk,
// which finds and reports whatever is wrong) at the first thing it does
// not handle as debug/dwarf does or that would be a warning: an unknown
// abbreviation code or form, a value past its unit or section, a wanted
// attribute in a form it does not decode, a DWARF 5 range list index
// whose offset is not in debug_rnglists, a unit DIE that is not the first
// DIE, big-endian DWARF. Values that point into another section (string
// offsets, string and address indexes) are checked even in the DIEs it
// steps over, as debug/dwarf checks them in the DIEs it decodes: the
// debug/dwarf walk decodes some of those, and fails on a bad one. Its
// results are
// checked against the debug/dwarf walk's on the fixtures, the corpus, a
// darwin cmd/go and fuzzed input (fastdie_test.go).

// dieAttr says which of the walk's attributes an abbreviation's attribute
// is.
type dieAttr uint8

const (
	otherAttr       dieAttr = iota // not wanted: skipped
	unsupportedAttr                // wanted, in a form fastWalk does not decode
	nameAttr
	linkageAttr
	mipsLinkageAttr
	lowPCAttr
	highPCAttr
	rangesAttr
	originAttr
	specAttr
	callFileAttr
	callLineAttr
	callColumnAttr
)

// wantedAttr maps the DWARF attributes the walk reads to dieAttr.
func wantedAttr(at uint64) dieAttr {
	switch dwarf.Attr(at) {
	case dwarf.AttrName:
		return nameAttr
	case dwarf.AttrLinkageName:
		return linkageAttr
	case attrMIPSLinkageName:
		return mipsLinkageAttr
	case dwarf.AttrLowpc:
		return lowPCAttr
	case dwarf.AttrHighpc:
		return highPCAttr
	case dwarf.AttrRanges:
		return rangesAttr
	case dwarf.AttrAbstractOrigin:
		return originAttr
	case dwarf.AttrSpecification:
		return specAttr
	case dwarf.AttrCallFile:
		return callFileAttr
	case dwarf.AttrCallLine:
		return callLineAttr
	case dwarf.AttrCallColumn:
		return callColumnAttr
	}
	return otherAttr
}

// DWARF forms fastWalk reads (DWARF 5, section 7.5.6).
const (
	formAddr          = 0x01
	formBlock2        = 0x03
	formBlock4        = 0x04
	formData2         = 0x05
	formData4         = 0x06
	formData8         = 0x07
	formString        = 0x08
	formBlock         = 0x09
	formBlock1        = 0x0a
	formData1         = 0x0b
	formFlag          = 0x0c
	formSdata         = 0x0d
	formStrp          = 0x0e
	formUdata         = 0x0f
	formRefAddr       = 0x10
	formRef1          = 0x11
	formRef2          = 0x12
	formRef4          = 0x13
	formRef8          = 0x14
	formRefUdata      = 0x15
	formIndirect      = 0x16
	formSecOffset     = 0x17
	formExprloc       = 0x18
	formFlagPresent   = 0x19
	formStrx          = 0x1a
	formAddrx         = 0x1b
	formRefSup4       = 0x1c
	formStrpSup       = 0x1d
	formData16        = 0x1e
	formLineStrp      = 0x1f
	formRefSig8       = 0x20
	formImplicitConst = 0x21
	formLoclistx      = 0x22
	formRnglistx      = 0x23
	formRefSup8       = 0x24
	formStrx1         = 0x25
	formStrx2         = 0x26
	formStrx3         = 0x27
	formStrx4         = 0x28
	formAddrx1        = 0x29
	formAddrx2        = 0x2a
	formAddrx3        = 0x2b
	formAddrx4        = 0x2c
	formGNUAddrIndex  = 0x1f01
	formGNUStrIndex   = 0x1f02
	formGNURefAlt     = 0x1f20
	formGNUStrpAlt    = 0x1f21
)

// unitFormat is what a unit's header says of its values' sizes.
type unitFormat struct {
	version  int
	addrSize int
	offSize  int // 8 in 64-bit DWARF
}

// formSize returns the bytes of a value of form in a unit of format f:
// -1 when the size is in the value (LEB128, strings, blocks), -2 for a
// form debug/dwarf does not read (it fails the DIE) or DW_FORM_indirect.
func (f unitFormat) formSize(form uint64) int {
	switch form {
	case formFlagPresent, formImplicitConst:
		return 0
	case formData1, formFlag, formRef1, formStrx1, formAddrx1:
		return 1
	case formData2, formRef2, formStrx2, formAddrx2:
		return 2
	case formStrx3, formAddrx3:
		return 3
	case formData4, formRef4, formStrx4, formAddrx4, formRefSup4:
		return 4
	case formData8, formRef8, formRefSig8, formRefSup8:
		return 8
	case formData16:
		return 16
	case formAddr:
		return f.addrSize
	case formStrp, formLineStrp, formSecOffset, formStrpSup, formGNURefAlt, formGNUStrpAlt:
		return f.offSize
	case formRefAddr:
		if f.version == 2 {
			return f.addrSize
		}
		return f.offSize
	case formSdata, formUdata, formRefUdata, formStrx, formAddrx, formLoclistx, formRnglistx,
		formString, formBlock, formBlock1, formBlock2, formBlock4, formExprloc:
		return -1
	}
	return -2
}

// decodable reports whether fastWalk decodes attribute a in form as
// debug/dwarf's Entry.Val gives it to the walk (the type the walk
// asserts).
func decodable(a dieAttr, form uint64) bool {
	switch a {
	case nameAttr, linkageAttr, mipsLinkageAttr: // string
		switch form {
		case formString, formStrp, formLineStrp, formStrx, formStrx1, formStrx2, formStrx3, formStrx4:
			return true
		}
	case lowPCAttr: // uint64
		switch form {
		case formAddr, formAddrx, formAddrx1, formAddrx2, formAddrx3, formAddrx4:
			return true
		}
	case highPCAttr: // an address, or a constant offset from low_pc
		switch form {
		case formAddr, formAddrx, formAddrx1, formAddrx2, formAddrx3, formAddrx4,
			formData1, formData2, formData4, formData8, formSdata, formUdata, formImplicitConst:
			return true
		}
	case rangesAttr: // int64: a debug_ranges or debug_rnglists offset, or a rnglistx index
		switch form {
		case formSecOffset, formData1, formData2, formData4, formData8, formSdata, formUdata, formImplicitConst, formRnglistx:
			return true
		}
	case originAttr, specAttr: // dwarf.Offset
		switch form {
		case formRefAddr, formRef1, formRef2, formRef4, formRef8, formRefUdata:
			return true
		}
	case callFileAttr, callLineAttr, callColumnAttr: // int64
		switch form {
		case formData1, formData2, formData4, formData8, formSdata, formUdata, formImplicitConst:
			return true
		}
	}
	return false
}

// resolvedForm reports whether debug/dwarf resolves a value of form in
// another section when it decodes a DIE, and fails the DIE when it cannot
// (Go's debug/dwarf, buf.entry).
func resolvedForm(form uint64) bool {
	switch form {
	case formStrp, formLineStrp, formStrx, formStrx1, formStrx2, formStrx3, formStrx4,
		formAddrx, formAddrx1, formAddrx2, formAddrx3, formAddrx4, formRnglistx:
		return true
	}
	return false
}

// planAttr is one attribute of an abbreviation.
type planAttr struct {
	form     uint16
	attr     dieAttr
	size     int8   // formSize in the unit's format
	at       uint32 // the DW_AT_ code
	implicit int64  // DW_FORM_implicit_const's value
}

// diePlan is one abbreviation, ready for fastWalk.
type diePlan struct {
	// fixed is the bytes of the attributes when every form has a fixed
	// size in the unit's format, else -1.
	fixed    int32
	known    bool // the table has this code
	children bool
	function bool // DW_TAG_subprogram or DW_TAG_inlined_subroutine
	unitTag  bool // a compile, partial or skeleton unit
	skipOK   bool // every form's size is known: the DIE can be stepped over
	// resolved: an attribute's value points into another section (a
	// debug_str or debug_line_str offset, a string, address or range list
	// index), which debug/dwarf follows when it decodes the DIE, failing
	// the DIE when it points nowhere. Such values are checked even where
	// the DIE is stepped over: the debug/dwarf walk decodes some of the
	// DIEs fastWalk steps over (the first after a function or after a run
	// of null entries), and both walks must give up at the same DIE.
	resolved bool
	// strpAt: when the DIE's size is fixed and its only values resolved
	// elsewhere are debug_str offsets (DW_FORM_strp: most names), where
	// each sits in the DIE, so that a stepped-over DIE is checked without
	// a pass over its attributes; strpOnly says the list is that.
	strpOnly bool
	strpAt   []int32
	tag      dwarf.Tag
	attrs    []planAttr
}

// planKey identifies a plan table: an abbreviation table read for a unit
// format (the attribute sizes depend on it).
type planKey struct {
	abbrev uint64
	format unitFormat
}

// planTable is one abbreviation table's plans by code. It is immutable,
// shared by the units with its key.
type planTable struct {
	plans []diePlan
	ok    bool // read as debug/dwarf reads it, dense enough to index by code
}

func (t *planTable) plan(code uint64) *diePlan {
	if code < uint64(len(t.plans)) && t.plans[code].known {
		return &t.plans[code]
	}
	return nil
}

// buildPlans reads the abbreviation table at off. A table debug/dwarf
// would read differently (a code repeated, in which case it keeps the last;
// values past 32 bits, which it truncates) or whose codes are too sparse
// for a slice is not ok: its units take the debug/dwarf walk.
func buildPlans(abbrevSec []byte, off uint64, f unitFormat) *planTable {
	t := &planTable{}
	if off >= uint64(len(abbrevSec)) {
		return t
	}
	type entry struct {
		code uint64
		plan diePlan
	}
	var entries []entry
	var maxCode uint64
	a := cursor{b: abbrevSec, off: int(off)}
	for {
		code := a.uleb()
		if a.err {
			return t
		}
		if code == 0 {
			break
		}
		p := diePlan{known: true, skipOK: true}
		tag := a.uleb()
		p.children = a.u8() != 0
		if code > math.MaxUint32 || tag > math.MaxUint32 {
			return t
		}
		p.tag = dwarf.Tag(tag)
		switch p.tag {
		case dwarf.TagSubprogram, dwarf.TagInlinedSubroutine:
			p.function = true
		case dwarf.TagCompileUnit, dwarf.TagPartialUnit, dwarf.TagSkeletonUnit:
			p.unitTag = true
		}
		var seen uint32 // wanted attributes met, as bits: Val takes the first
		fixed := 0
		otherResolved := false // a resolved value p.strpAt cannot list
		for {
			at, form := a.uleb(), a.uleb()
			if a.err {
				return t
			}
			if at == 0 && form == 0 {
				break
			}
			if at > math.MaxUint32 || form > math.MaxUint16 {
				return t
			}
			pa := planAttr{form: uint16(form), at: uint32(at)}
			if form == formImplicitConst {
				pa.implicit = a.sleb()
			}
			p.resolved = p.resolved || resolvedForm(form)
			if form == formStrp && fixed >= 0 {
				p.strpAt = append(p.strpAt, int32(fixed))
			} else if resolvedForm(form) {
				otherResolved = true
			}
			size := f.formSize(form)
			if size == -2 {
				p.skipOK = false
			}
			pa.size = int8(size)
			if size >= 0 && fixed >= 0 {
				fixed += size
			} else {
				fixed = -1
			}
			if w := wantedAttr(at); w != otherAttr && seen&(1<<w) == 0 {
				seen |= 1 << w
				pa.attr = w
				if !decodable(w, form) {
					pa.attr = unsupportedAttr
				}
			}
			p.attrs = append(p.attrs, pa)
		}
		p.fixed = int32(fixed)
		p.strpOnly = p.resolved && fixed >= 0 && !otherResolved
		if !p.skipOK {
			p.fixed = -1
		}
		entries = append(entries, entry{code, p})
		maxCode = max(maxCode, code)
		if len(entries) > len(abbrevSec) {
			return t // cannot happen: each entry takes bytes
		}
	}
	if maxCode >= 4*uint64(len(entries))+64 {
		return t
	}
	t.plans = make([]diePlan, maxCode+1)
	for _, e := range entries {
		if t.plans[e.code].known {
			return &planTable{} // a repeated code
		}
		t.plans[e.code] = e.plan
	}
	t.ok = true
	return t
}

// planTable returns the plans of the abbreviation table at off for units
// of format f, built on first use. Called under ix.mu.
func (ix *Index) planTable(off uint64, f unitFormat) *planTable {
	k := planKey{off, f}
	if t := ix.plans[k]; t != nil {
		return t
	}
	if ix.plans == nil {
		ix.plans = make(map[planKey]*planTable)
	}
	t := buildPlans(ix.secs["debug_abbrev"], off, f)
	ix.plans[k] = t
	return t
}

// dieVals are the walk's attributes of one DIE, as Entry.Val would give
// them (the first attribute of each kind).
type dieVals struct {
	name, linkage, mips       string
	nameOK, linkageOK, mipsOK bool

	low          uint64
	lowOK        bool
	high         uint64 // an address (highAddr) or an offset from low (highConst)
	highAddr     bool
	highConst    bool
	ranges       int64 // an offset, or for DW_FORM_rnglistx the index
	rangesOK     bool
	rangesForm   uint16
	origin, spec dwarf.Offset
	originOK     bool
	specOK       bool

	callFile, callLine, callCol       int64
	callFileOK, callLineOK, callColOK bool
}

// fastWalk decodes one unit's DIEs for a unitBuilder.
type fastWalk struct {
	b       *unitBuilder
	info    []byte // debug_info up to the unit's end
	f       unitFormat
	plans   *planTable
	strEnds *strEnds
	refBase int64 // where unit-relative references count from
	unitBases
	ok bool // false once something is met the walk must leave to debug/dwarf
	// maxStrp is the largest debug_str offset of the DIEs checkStrps
	// stepped over (anyStrp: there was one), checked once when the walk
	// ends: one bad offset anywhere sends the whole unit to debug/dwarf,
	// so where it lies does not matter.
	maxStrp uint64
	anyStrp bool
	secs    walkSections
	vals    dieVals
	seen    []dwarf.Offset
	stack   []int32
}

// walkSections are the sections a walk resolves values in, looked up
// once per walk: a map lookup per value was a tenth of a big dSYM's build.
type walkSections struct {
	found                                  bool
	str, lineStr, strOffsets, addr, ranges []byte
}

// sections returns the walk's sections, looking them up on first use.
func (w *fastWalk) sections() *walkSections {
	if !w.secs.found {
		m := w.b.ix.secs
		w.secs = walkSections{found: true, str: m["debug_str"], lineStr: m["debug_line_str"],
			strOffsets: m["debug_str_offsets"], addr: m["debug_addr"], ranges: m["debug_ranges"]}
	}
	return &w.secs
}

func (w *fastWalk) uleb(pos int) (uint64, int) {
	info := w.info
	if pos < len(info) && info[pos] < 0x80 {
		return uint64(info[pos]), pos + 1
	}
	v, next, err := leb128.Uint(info, pos)
	if err == leb128.ErrTruncated { // past 64 bits, the low bits are kept as debug/dwarf keeps them
		w.ok = false
	}
	return v, next
}

func (w *fastWalk) sleb(pos int) (int64, int) {
	v, next, err := leb128.Int(w.info, pos)
	if err == leb128.ErrTruncated {
		w.ok = false
	}
	return v, next
}

// fixedUint reads an n-byte little-endian value at pos (n ≤ 8).
func (w *fastWalk) fixedUint(pos, n int) (uint64, int) {
	if n < 0 || n > len(w.info)-pos {
		w.ok = false
		return 0, len(w.info)
	}
	p := w.info[pos : pos+n]
	switch n {
	case 1:
		return uint64(p[0]), pos + 1
	case 2:
		return uint64(binary.LittleEndian.Uint16(p)), pos + 2
	case 4:
		return uint64(binary.LittleEndian.Uint32(p)), pos + 4
	case 8:
		return binary.LittleEndian.Uint64(p), pos + 8
	}
	var v uint64
	for i := n - 1; i >= 0; i-- {
		v = v<<8 | uint64(p[i])
	}
	return v, pos + n
}

// skipVar steps over one value of a variable-size form.
func (w *fastWalk) skipVar(pos int, form uint16) int {
	if pos > len(w.info) {
		w.ok = false
		return len(w.info)
	}
	var n uint64
	switch form {
	case formSdata, formUdata, formRefUdata, formStrx, formAddrx, formLoclistx, formRnglistx:
		for pos < len(w.info) && w.info[pos]&0x80 != 0 {
			pos++
		}
		if pos >= len(w.info) {
			w.ok = false
			return pos
		}
		return pos + 1
	case formString:
		i := bytes.IndexByte(w.info[pos:], 0)
		if i < 0 {
			w.ok = false
			return len(w.info)
		}
		return pos + i + 1
	case formBlock1:
		n, pos = w.fixedUint(pos, 1)
	case formBlock2:
		n, pos = w.fixedUint(pos, 2)
	case formBlock4:
		n, pos = w.fixedUint(pos, 4)
	case formBlock, formExprloc:
		n, pos = w.uleb(pos)
	default:
		w.ok = false
		return len(w.info)
	}
	if n > uint64(len(w.info)-pos) {
		w.ok = false
		return len(w.info)
	}
	return pos + int(n)
}

// skipAttrs returns the offset past the attributes of a DIE of plan p
// whose attributes start at pos.
func (w *fastWalk) skipAttrs(pos int, p *diePlan) int {
	if p.fixed >= 0 {
		return pos + int(p.fixed) // checked against the unit's end by the caller
	}
	if !p.skipOK {
		w.ok = false
		return len(w.info)
	}
	for i := range p.attrs {
		a := &p.attrs[i]
		if a.size >= 0 {
			pos += int(a.size)
			continue
		}
		pos = w.skipVar(pos, a.form)
		if !w.ok {
			return len(w.info)
		}
	}
	return pos
}

// decode reads the wanted attributes of a DIE of plan p whose attributes
// start at pos into w.vals, and returns the offset past them.
func (w *fastWalk) decode(pos int, p *diePlan) int {
	v := &w.vals
	*v = dieVals{}
	if !p.skipOK {
		w.ok = false
		return len(w.info)
	}
	for i := range p.attrs {
		a := &p.attrs[i]
		if a.attr == otherAttr && resolvedForm(uint64(a.form)) {
			pos = w.checkResolved(pos, a.form)
		} else if a.attr == otherAttr {
			if a.size >= 0 {
				pos += int(a.size)
				if pos > len(w.info) {
					w.ok = false
					return len(w.info)
				}
			} else {
				pos = w.skipVar(pos, a.form)
			}
		} else {
			pos = w.decodeAttr(pos, a, v)
		}
		if !w.ok {
			return len(w.info)
		}
	}
	return pos
}

// decodeAttr decodes one wanted attribute.
func (w *fastWalk) decodeAttr(pos int, a *planAttr, v *dieVals) int {
	switch a.attr {
	case nameAttr, linkageAttr, mipsLinkageAttr:
		var s string
		s, pos = w.str(pos, a.form)
		switch a.attr {
		case nameAttr:
			v.name, v.nameOK = s, true
		case linkageAttr:
			v.linkage, v.linkageOK = s, true
		default:
			v.mips, v.mipsOK = s, true
		}
	case lowPCAttr:
		v.low, pos = w.address(pos, a.form)
		v.lowOK = true
	case highPCAttr:
		if isAddressForm(a.form) {
			v.high, pos = w.address(pos, a.form)
			v.highAddr = true
		} else {
			var c int64
			c, pos = w.constant(pos, a)
			v.high, v.highConst = uint64(c), true
		}
	case rangesAttr:
		if a.form == formRnglistx {
			var idx uint64
			idx, pos = w.uleb(pos)
			v.ranges = int64(idx)
		} else {
			v.ranges, pos = w.constant(pos, a)
		}
		v.rangesOK, v.rangesForm = true, a.form
	case originAttr, specAttr:
		var off uint64
		if a.form == formRefAddr {
			off, pos = w.fixedUint(pos, int(a.size))
		} else {
			if a.form == formRefUdata {
				off, pos = w.uleb(pos)
			} else {
				off, pos = w.fixedUint(pos, int(a.size))
			}
			off += uint64(w.refBase)
		}
		if a.attr == originAttr {
			v.origin, v.originOK = dwarf.Offset(off), true
		} else {
			v.spec, v.specOK = dwarf.Offset(off), true
		}
	case callFileAttr:
		v.callFile, pos = w.constant(pos, a)
		v.callFileOK = true
	case callLineAttr:
		v.callLine, pos = w.constant(pos, a)
		v.callLineOK = true
	case callColumnAttr:
		v.callCol, pos = w.constant(pos, a)
		v.callColOK = true
	default: // unsupportedAttr
		w.ok = false
		return len(w.info)
	}
	return pos
}

func isAddressForm(form uint16) bool {
	switch form {
	case formAddr, formAddrx, formAddrx1, formAddrx2, formAddrx3, formAddrx4:
		return true
	}
	return false
}

// constant reads a constant-class value as debug/dwarf's Entry.Val gives
// it: int64, the fixed sizes zero-extended.
func (w *fastWalk) constant(pos int, a *planAttr) (int64, int) {
	switch a.form {
	case formImplicitConst:
		return a.implicit, pos
	case formSdata:
		return w.sleb(pos)
	case formUdata:
		u, p := w.uleb(pos)
		return int64(u), p
	}
	u, p := w.fixedUint(pos, int(a.size))
	return int64(u), p
}

// xIndex reads the index a strx or addrx form holds: a ULEB128 for
// DW_FORM_strx and DW_FORM_addrx, else 1 to 4 bytes.
func (w *fastWalk) xIndex(pos int, form uint16) (uint64, int) {
	switch form {
	case formStrx1, formAddrx1:
		return w.fixedUint(pos, 1)
	case formStrx2, formAddrx2:
		return w.fixedUint(pos, 2)
	case formStrx3, formAddrx3:
		return w.fixedUint(pos, 3)
	case formStrx4, formAddrx4:
		return w.fixedUint(pos, 4)
	}
	return w.uleb(pos)
}

// address reads an address-class value: the address itself, or its index
// in debug_addr.
func (w *fastWalk) address(pos int, form uint16) (uint64, int) {
	if form == formAddr {
		return w.fixedUint(pos, w.f.addrSize)
	}
	idx, pos := w.xIndex(pos, form)
	sec := w.sections().addr
	if sec == nil || !w.ok {
		w.ok = false
		return 0, len(w.info)
	}
	off := idx*uint64(w.f.addrSize) + w.addrBase
	if idx > uint64(len(sec)) || off > uint64(len(sec)) || uint64(w.f.addrSize) > uint64(len(sec))-off {
		w.ok = false
		return 0, len(w.info)
	}
	p := sec[off : off+uint64(w.f.addrSize)]
	if w.f.addrSize == 4 {
		return uint64(binary.LittleEndian.Uint32(p)), pos
	}
	return binary.LittleEndian.Uint64(p), pos
}

// str reads a string-class value.
func (w *fastWalk) str(pos int, form uint16) (string, int) {
	return w.strValue(pos, form, false)
}

// strValue is str; with checkOnly it only checks that the value names a
// string (one ended by a NUL in its section), as debug/dwarf does, and
// returns "".
func (w *fastWalk) strValue(pos int, form uint16, checkOnly bool) (string, int) {
	var off uint64
	var sec []byte
	switch form {
	case formString:
		if checkOnly {
			return "", w.skipVar(pos, form)
		}
		i := bytes.IndexByte(w.info[min(pos, len(w.info)):], 0)
		if i < 0 {
			w.ok = false
			return "", len(w.info)
		}
		return string(w.info[pos : pos+i]), pos + i + 1
	case formStrp, formLineStrp:
		off, pos = w.fixedUint(pos, w.f.offSize)
		sec = w.sections().str
		if form == formLineStrp {
			sec = w.sections().lineStr
			if len(sec) == 0 {
				w.ok = false
			}
		}
	default: // strx
		var idx uint64
		idx, pos = w.xIndex(pos, form)
		offs := w.sections().strOffsets
		if len(offs) == 0 || !w.ok || idx > uint64(len(offs)) {
			w.ok = false
			return "", len(w.info)
		}
		at := idx*uint64(w.f.offSize) + w.strOffsetsBase
		if at > uint64(len(offs)) || uint64(w.f.offSize) > uint64(len(offs))-at {
			w.ok = false
			return "", len(w.info)
		}
		if w.f.offSize == 8 {
			off = binary.LittleEndian.Uint64(offs[at:])
		} else {
			off = uint64(binary.LittleEndian.Uint32(offs[at:]))
		}
		sec = w.sections().str
	}
	if !w.ok || off >= uint64(len(sec)) {
		w.ok = false
		return "", len(w.info)
	}
	if checkOnly {
		if !w.strEnds.holds(form == formLineStrp, off) {
			w.ok = false
			return "", len(w.info)
		}
		return "", pos
	}
	i := bytes.IndexByte(sec[off:], 0)
	if i < 0 {
		w.ok = false
		return "", len(w.info)
	}
	return string(sec[off : off+uint64(i)]), pos
}

// run walks the unit's DIEs after its unit DIE, which the caller has read
// (with debug/dwarf) and which ends at pos, into b's nodes and links. It
// returns false when the unit must be walked by debug/dwarf instead.
func (w *fastWalk) run(pos int, unitChildren bool) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false // never expected; the debug/dwarf walk decides
		}
	}()
	w.ok = true
	w.maxStrp, w.anyStrp = 0, false
	stack := w.stack[:0]
	if unitChildren {
		stack = append(stack, -1)
	}
	info := w.info
	for pos < len(info) {
		off := pos
		var code uint64
		if c := info[pos]; c < 0x80 {
			code, pos = uint64(c), pos+1
		} else if code, pos = w.uleb(pos); !w.ok {
			return false
		}
		if code == 0 {
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			continue
		}
		p := w.plans.plan(code)
		if p == nil || p.unitTag {
			return false
		}
		ctx := int32(-1)
		if len(stack) > 0 {
			ctx = stack[len(stack)-1]
		}
		if !p.function {
			if p.strpOnly {
				pos = w.checkStrps(pos, p)
			} else if p.resolved {
				pos = w.checkAttrs(pos, p)
			} else {
				pos = w.skipAttrs(pos, p)
			}
			if !w.ok || pos > len(info) {
				return false
			}
			if p.children {
				stack = append(stack, ctx)
			}
			continue
		}
		if pos = w.decode(pos, p); !w.ok {
			return false
		}
		childCtx := ctx
		if p.tag == dwarf.TagSubprogram {
			childCtx = -1
			ctx = -1
		}
		n, ok := w.function(int64(off), p.tag, ctx)
		if !ok {
			return false
		}
		if n >= 0 {
			childCtx = n
		}
		if p.children {
			stack = append(stack, childCtx)
		}
	}
	w.stack = stack[:0]
	if last := w.strEnds.str; w.anyStrp && (last < 0 || w.maxStrp > uint64(last)) {
		return false // a debug_str offset past its last string
	}
	return pos == len(info)
}

// function is unitBuilder.function over w.vals.
func (w *fastWalk) function(off int64, tag dwarf.Tag, parent int32) (int32, bool) {
	b := w.b
	v := &w.vals
	ranges, ok := w.rangesOf(off, tag)
	if !ok {
		return -1, false
	}
	if len(ranges) == 0 {
		return -1, true
	}
	if len(ranges) > b.spansLeft {
		return -1, false // a warning: the debug/dwarf walk gives it
	}
	b.spansLeft -= len(ranges)
	inlined := tag == dwarf.TagInlinedSubroutine
	var callFile, callLine, callCol int64
	var callFileOK bool
	if inlined {
		// Read before nameOf reuses w.vals.
		callFile, callFileOK = v.callFile, v.callFileOK
		callLine, callCol = clampCall(v.callLine, v.callLineOK), clampCall(v.callCol, v.callColOK)
	}
	nr, ok := w.nameOf(dwarf.Offset(off))
	if !ok {
		return -1, false
	}
	nd := node{linkage: nr.linkage, inlined: inlined, parent: parent}
	nd.display, nd.lang, nd.mangled = display(nr)
	if inlined {
		if callFileOK && callFile >= 0 && callFile < int64(len(b.files)) {
			nd.callFile = b.files[callFile]
		}
		nd.callLine, nd.callCol = uint32(callLine), uint32(callCol)
	}
	n := int32(len(b.ui.nodes))
	b.ui.nodes = append(b.ui.nodes, nd)
	for _, r := range ranges {
		b.links = append(b.links, link{parent: parent, lo: r[0], hi: r[1], node: n})
	}
	return n, true
}

// clampCall is attrInt for a constant.
func clampCall(v int64, ok bool) int64 {
	if !ok || v < 0 || v > 1<<31 {
		return 0
	}
	return v
}

// rangesOf is unitBuilder.rangesOf over w.vals, for the DIE at off.
func (w *fastWalk) rangesOf(off int64, tag dwarf.Tag) ([][2]uint64, bool) {
	b := w.b
	v := &w.vals
	var key rangesKey
	if v.rangesOK {
		key = rangesKey{dwarf.ClassRangeListPtr, v.ranges}
		switch {
		case v.rangesForm == formRnglistx:
			if w.f.version < 5 {
				return nil, false // read as debug/dwarf reads it by the debug/dwarf walk
			}
			sec := b.ix.secs["debug_rnglists"]
			off, err := rnglistxOffset(sec, w.rnglistsBase, uint64(v.ranges), w.f.offSize)
			if err == nil {
				err = checkRnglistx(sec, w.rnglistsBase, uint64(v.ranges))
			}
			if err != nil {
				return nil, false // debug/dwarf fails the DIE: the debug/dwarf walk reports it
			}
			key = rangesKey{dwarf.ClassRngList, int64(off)}
		case w.f.version >= 4 && v.rangesForm != formSecOffset:
			key.class = dwarf.ClassConstant
		}
		if rs, ok := b.ranges[key]; ok {
			return rs, true
		}
	}
	var dst [][2]uint64
	if !v.rangesOK {
		dst = b.sc.ranges[:0]
	}
	var rs [][2]uint64
	if w.f.version >= 5 && v.rangesOK && b.checkRngList(key.class, key.val) != nil {
		return nil, false // a warning: the debug/dwarf walk gives it
	}
	if w.f.version >= 5 && v.rangesOK {
		// Data.Ranges reads DWARF 5 range lists; it needs an Entry.
		var val any = key.val
		switch key.class {
		case dwarf.ClassRangeListPtr:
		case dwarf.ClassRngList:
			val = uint64(key.val) // as debug/dwarf gives a resolved rnglistx
		default:
			return nil, false // ignored by Data.Ranges: leave it to it
		}
		e := &dwarf.Entry{Offset: dwarf.Offset(off), Tag: tag}
		if v.lowOK {
			e.Field = append(e.Field, dwarf.Field{Attr: dwarf.AttrLowpc, Val: v.low, Class: dwarf.ClassAddress})
		}
		if v.highAddr {
			e.Field = append(e.Field, dwarf.Field{Attr: dwarf.AttrHighpc, Val: v.high, Class: dwarf.ClassAddress})
		} else if v.highConst {
			e.Field = append(e.Field, dwarf.Field{Attr: dwarf.AttrHighpc, Val: int64(v.high), Class: dwarf.ClassConstant})
		}
		e.Field = append(e.Field, dwarf.Field{Attr: dwarf.AttrRanges, Val: val, Class: key.class})
		var err error
		if rs, err = b.ix.d.Ranges(e); err != nil {
			return nil, false
		}
	} else {
		rs = dst
		if v.lowOK && (v.highAddr || v.highConst) {
			high := v.high
			if v.highConst {
				high += v.low
			}
			rs = append(rs, [2]uint64{v.low, high})
		}
		if sec := w.sections().ranges; v.rangesOK && sec != nil {
			if v.ranges < 0 || v.ranges > int64(len(sec)) {
				return nil, false // a warning
			}
			c := cursor{b: sec, off: int(v.ranges)}
			base := b.base
			maxAddr := ^uint64(0) >> uint((8-w.f.addrSize)*8)
			for c.off < len(sec) && !c.err {
				lo, hi := c.addr(w.f.addrSize), c.addr(w.f.addrSize)
				if lo == 0 && hi == 0 {
					break
				}
				if lo == maxAddr {
					base = hi
				} else {
					rs = append(rs, [2]uint64{base + lo, base + hi})
				}
			}
		}
	}
	rs = slices.DeleteFunc(rs, func(r [2]uint64) bool { return r[0] >= r[1] })
	if v.rangesOK {
		b.ranges[key] = rs
	} else {
		b.sc.ranges = rs[:0]
	}
	return rs, true
}

// nameOf is unitBuilder.nameOf for the DIE whose attributes are in
// w.vals; it decodes the DIEs an origin or specification names itself
// when they are in the unit.
func (w *fastWalk) nameOf(off dwarf.Offset) (nameRef, bool) {
	b := w.b
	var nr nameRef
	seen := w.seen[:0]
	v := &w.vals
	for hops := 0; v != nil && hops < maxOriginHops; hops++ {
		if cached, ok := b.names[off]; ok {
			nr = merge(nr, cached)
			break
		}
		seen = append(seen, off)
		if nr.linkage == "" {
			if v.linkageOK && v.linkage != "" {
				nr.linkage = v.linkage
			} else if v.mipsOK && v.mips != "" {
				nr.linkage = v.mips
			}
		}
		if nr.name == "" && v.nameOK {
			nr.name = v.name
		}
		if nr.name != "" && nr.linkage != "" {
			break
		}
		var next dwarf.Offset
		switch {
		case v.originOK:
			next = v.origin
		case v.specOK:
			next = v.spec
		default:
			v = nil
			continue
		}
		if cached, ok := b.names[next]; ok && hops+1 < maxOriginHops {
			nr = merge(nr, cached)
			break
		}
		off = next
		var ok bool
		if v, ok = w.valsAt(off); !ok {
			w.seen = seen
			return nameRef{}, false
		}
	}
	for _, o := range seen[min(1, len(seen)):] {
		b.names[o] = nr
	}
	w.seen = seen[:0]
	return nr, true
}

// valsAt decodes the DIE at off for nameOf: itself when off is in the
// unit, else with debug/dwarf as the reference walk does (nil when it
// cannot be read). ok is false when the walk must give up.
func (w *fastWalk) valsAt(off dwarf.Offset) (*dieVals, bool) {
	u := w.b.u
	if int64(off) >= u.first && int64(off) < u.end {
		pos := int(off)
		code, pos := w.uleb(pos)
		if !w.ok || code == 0 {
			return nil, false
		}
		p := w.plans.plan(code)
		if p == nil {
			return nil, false
		}
		if w.decode(pos, p); !w.ok {
			return nil, false
		}
		return &w.vals, true
	}
	e := w.b.entryAt(off)
	if e == nil {
		return nil, true
	}
	v := &w.vals
	*v = dieVals{}
	v.name, v.nameOK = e.Val(dwarf.AttrName).(string)
	v.linkage, v.linkageOK = e.Val(dwarf.AttrLinkageName).(string)
	v.mips, v.mipsOK = e.Val(attrMIPSLinkageName).(string)
	v.origin, v.originOK = e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
	v.spec, v.specOK = e.Val(dwarf.AttrSpecification).(dwarf.Offset)
	return v, true
}

// sleb reads a signed LEB128 value.
func (c *cursor) sleb() int64 {
	if c.err {
		return 0
	}
	v, next, err := leb128.Int(c.b, c.off)
	c.off, c.err = next, err == leb128.ErrTruncated
	return v
}

// strEnds says where the strings of debug_str and debug_line_str end: an
// offset names a string, as debug/dwarf reads it, when a NUL follows it in
// its section.
type strEnds struct {
	str, lineStr int // the offset of each section's last NUL, -1 for none
}

// holds reports whether off names a string of debug_line_str (lineStr)
// or debug_str.
func (e *strEnds) holds(lineStr bool, off uint64) bool {
	last := e.str
	if lineStr {
		last = e.lineStr
	}
	return last >= 0 && off <= uint64(last)
}

// stringEnds returns the Index's string section bounds, found on first use.
// Called under ix.mu.
func (ix *Index) stringEnds() *strEnds {
	if ix.strEnds == nil {
		ix.strEnds = &strEnds{
			str:     bytes.LastIndexByte(ix.secs["debug_str"], 0),
			lineStr: bytes.LastIndexByte(ix.secs["debug_line_str"], 0),
		}
	}
	return ix.strEnds
}

// checkResolved steps over one value of a form debug/dwarf resolves in
// another section (resolvedForm), checking that it resolves as
// debug/dwarf requires; fastWalk gives up when it does not.
func (w *fastWalk) checkResolved(pos int, form uint16) int {
	switch form {
	case formRnglistx:
		return w.rnglistxSlot(pos)
	case formAddrx, formAddrx1, formAddrx2, formAddrx3, formAddrx4:
		_, pos = w.address(pos, form)
		return pos
	}
	_, pos = w.strValue(pos, form, true)
	return pos
}

// checkStrps steps over a DIE of a strpOnly plan, keeping the largest of
// its debug_str offsets for run to check (strValue's check, without a pass
// over the attributes or a branch per offset).
func (w *fastWalk) checkStrps(pos int, p *diePlan) int {
	end := pos + int(p.fixed)
	if end > len(w.info) {
		w.ok = false
		return len(w.info)
	}
	die := w.info[pos:end]
	most := w.maxStrp
	if w.f.offSize == 8 {
		for _, at := range p.strpAt {
			most = max(most, binary.LittleEndian.Uint64(die[at:]))
		}
	} else {
		for _, at := range p.strpAt {
			most = max(most, uint64(binary.LittleEndian.Uint32(die[at:])))
		}
	}
	w.maxStrp, w.anyStrp = most, true
	return end
}

// checkAttrs is skipAttrs for a DIE with a value debug/dwarf resolves in
// another section (diePlan.resolved), checking those values on the way.
func (w *fastWalk) checkAttrs(pos int, p *diePlan) int {
	if !p.skipOK {
		w.ok = false
		return len(w.info)
	}
	for i := range p.attrs {
		a := &p.attrs[i]
		switch {
		case resolvedForm(uint64(a.form)):
			pos = w.checkResolved(pos, a.form)
		case a.size >= 0:
			pos += int(a.size)
		default:
			pos = w.skipVar(pos, a.form)
		}
		if !w.ok || pos > len(w.info) {
			w.ok = false
			return len(w.info)
		}
	}
	return pos
}
