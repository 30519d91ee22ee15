package dwarfcfi

import (
	"errors"
	"fmt"
	"strings"

	"github.com/stackimage/stackimage/unwind"
)

// FDEInfo describes one FDE: where it is, what it covers, and what its
// CIE's augmentations say about the function.
type FDEInfo struct {
	Offset    uint64 // the FDE's byte offset in the section
	CIEOffset uint64 // its CIE's byte offset in the section
	// PCBegin and PCEnd bound the half-open range [PCBegin, PCEnd) of
	// addresses the FDE covers.
	PCBegin, PCEnd uint64

	// LSDA is the address of the function's language-specific data area
	// (augmentation 'L'), when HasLSDA. When LSDAIndirect, it is the
	// address of a pointer to it (DW_EH_PE_indirect, no PointerReader).
	LSDA                  uint64
	HasLSDA, LSDAIndirect bool
	// Personality is the personality routine's address (augmentation 'P'),
	// when HasPersonality; the address of a pointer to it when
	// PersonalityIndirect.
	Personality                         uint64
	HasPersonality, PersonalityIndirect bool
	// SignalFrame is augmentation 'S': the function is a signal
	// trampoline, and the walker must not subtract a call's size from the
	// return address this frame yields.
	SignalFrame bool
}

// cie is a parsed Common Information Entry.
type cie struct {
	off          int
	version      uint8
	augmentation string
	addrSize     int // pointer size of absptr values and debug_frame addresses
	segSize      int
	codeAlign    uint64
	dataAlign    int64
	raReg        uint64
	fdeEncoding  uint8
	lsdaEncoding uint8
	hasZ         bool // augmentation data with a length: FDEs carry one too
	hasLSDA      bool
	signalFrame  bool

	personality                         uint64
	hasPersonality, personalityIndirect bool

	instrStart, instrEnd int // the initial instructions
}

// fde is a parsed Frame Description Entry.
type fde struct {
	FDEInfo
	cie                  *cie
	instrStart, instrEnd int
}

// header is the part common to CIEs and FDEs: length and CIE id/pointer.
type header struct {
	off        int  // the record's offset
	terminator bool // a zero length in __eh_frame ends the section
	is64       bool // the 64-bit DWARF format
	isCIE      bool
	ciePointer uint64 // for an FDE: the CIE's offset in the section
	body       int    // offset of the first byte after the id/pointer
	next       int    // offset of the next record
}

const (
	cieID32 = 0xffffffff
	cieID64 = 0xffffffffffffffff
)

// header reads the length and id of the record at off.
func (t *Table) header(off int) (header, error) {
	h := header{off: off}
	r := &reader{data: t.data, off: off, end: len(t.data)}
	length := uint64(r.u32())
	if r.err != nil {
		return h, t.errorf(off, "record length truncated: %d bytes left in the section", len(t.data)-off)
	}
	if length == 0 {
		if t.source == unwind.SourceEHFrame {
			h.terminator = true
			return h, nil
		}
		return h, t.errorf(off, "zero-length record")
	}
	if length == 0xffffffff {
		h.is64 = true
		length = r.u64()
		if r.err != nil {
			return h, t.errorf(off, "64-bit record length truncated")
		}
	} else if length >= 0xfffffff0 {
		return h, t.errorf(off, "reserved record length %#x", length)
	}
	if length > uint64(r.left()) {
		return h, t.errorf(off, "record length %#x is past the end of the section (%d bytes left)", length, r.left())
	}
	h.next = r.off + int(length)
	r.end = h.next
	idOff := r.off
	var id uint64
	if h.is64 {
		id = r.u64()
	} else {
		id = uint64(r.u32())
	}
	if r.err != nil {
		return h, t.errorf(off, "record of %d bytes too short for its CIE id", length)
	}
	h.body = r.off
	switch {
	case t.source == unwind.SourceEHFrame:
		// In __eh_frame, 0 marks a CIE; anything else is the distance back
		// from the id field to the CIE.
		if id == 0 {
			h.isCIE = true
		} else if id > uint64(idOff) {
			return h, t.errorf(off, "FDE's CIE pointer %#x points before the section start", id)
		} else {
			h.ciePointer = uint64(idOff) - id
		}
	case !h.is64 && id == cieID32 || h.is64 && id == cieID64:
		h.isCIE = true
	default:
		// In __debug_frame the pointer is the CIE's offset in the section.
		h.ciePointer = id
	}
	return h, nil
}

// cieResult is a parsed CIE or why it could not be parsed.
type cieResult struct {
	cie *cie
	err error
}

// cieAt parses the CIE a header describes. Results are cached in the
// table, errors included, so the FDEs naming one CIE cost one parse.
func (t *Table) cieAt(h header) (*cie, error) {
	if r, ok := t.cies.Load(uint64(h.off)); ok {
		r := r.(cieResult)
		return r.cie, r.err
	}
	c, err := t.parseCIE(h)
	t.cies.Store(uint64(h.off), cieResult{c, err})
	return c, err
}

func (t *Table) parseCIE(h header) (*cie, error) {
	c := &cie{off: h.off, addrSize: t.ptrSize, fdeEncoding: pointerAbs, lsdaEncoding: pointerOmit}
	r := &reader{data: t.data, off: h.body, end: h.next}
	field := func(name string) error {
		if r.err == nil {
			return nil
		}
		return t.errorf(h.off, "CIE %s: %v", name, r.err)
	}
	c.version = r.u8()
	if err := field("version"); err != nil {
		return nil, err
	}
	switch c.version {
	case 1, 3, 4:
	default:
		return nil, t.errorf(h.off, "CIE version %d unsupported (want 1, 3 or 4)", c.version)
	}
	c.augmentation = r.cstring()
	if err := field("augmentation"); err != nil {
		return nil, err
	}
	aug := c.augmentation
	if strings.HasPrefix(aug, "eh") {
		// GCC's old "eh" augmentation: a pointer to exception data.
		r.bytes(t.ptrSize)
		aug = aug[2:]
	}
	if c.version >= 4 {
		c.addrSize = int(r.u8())
		c.segSize = int(r.u8())
		if err := field("address size"); err != nil {
			return nil, err
		}
		if c.addrSize != 4 && c.addrSize != 8 {
			return nil, t.errorf(h.off, "CIE address size %d unsupported", c.addrSize)
		}
		if c.segSize > 8 {
			return nil, t.errorf(h.off, "CIE segment selector size %d unsupported", c.segSize)
		}
	}
	c.codeAlign = r.uleb()
	c.dataAlign = r.sleb()
	if c.version == 1 {
		c.raReg = uint64(r.u8())
	} else {
		c.raReg = r.uleb()
	}
	if err := field("alignment factors"); err != nil {
		return nil, err
	}
	if c.raReg > 0xffff {
		return nil, t.errorf(h.off, "CIE return address register %d out of range", c.raReg)
	}
	c.instrStart = r.off
	if strings.HasPrefix(aug, "z") {
		c.hasZ = true
		n := r.uleb()
		if r.err == nil && n > uint64(r.left()) {
			return nil, t.errorf(h.off, "CIE augmentation data length %d is longer than the %d bytes left in the CIE", n, r.left())
		}
		if err := field("augmentation data length"); err != nil {
			return nil, err
		}
		augEnd := r.off + int(n)
		ar := &reader{data: t.data, off: r.off, end: augEnd}
	chars:
		for i := 1; i < len(aug); i++ {
			switch aug[i] {
			case 'R':
				c.fdeEncoding = ar.u8()
			case 'L':
				c.lsdaEncoding = ar.u8()
				c.hasLSDA = c.lsdaEncoding != pointerOmit
			case 'P':
				enc := ar.u8()
				if ar.err != nil {
					break chars
				}
				if enc == pointerOmit {
					continue
				}
				p, err := t.readEncoded(ar, enc, encodingBases{}, c.addrSize)
				if err != nil && !errors.Is(err, errIndirect) {
					return nil, t.errorf(h.off, "CIE personality pointer: %v", err)
				}
				c.personality, c.hasPersonality = p, true
				c.personalityIndirect = errors.Is(err, errIndirect)
			case 'S':
				c.signalFrame = true
			default:
				// An augmentation we do not know (Arm's 'B' and 'G' for
				// pointer-authentication keys and memory tagging among them):
				// its data, if any, ends the known data, and the length
				// lets us skip it.
				break chars
			}
		}
		if ar.err != nil {
			return nil, t.errorf(h.off, "CIE augmentation data %q: %v", c.augmentation, ar.err)
		}
		r.off = augEnd
		c.instrStart = augEnd
	} else if aug != "" {
		return nil, t.errorf(h.off, "CIE augmentation %q unsupported", c.augmentation)
	}
	c.instrEnd = h.next
	if c.fdeEncoding != pointerOmit && c.fdeEncoding&0x70 > pointerAligned {
		return nil, t.errorf(h.off, "CIE FDE pointer encoding %#x unsupported", c.fdeEncoding)
	}
	return c, nil
}

// fdeFromHeader parses the FDE a header describes.
func (t *Table) fdeFromHeader(h header) (fde, error) {
	f := fde{FDEInfo: FDEInfo{Offset: uint64(h.off), CIEOffset: h.ciePointer}}
	if h.ciePointer >= uint64(len(t.data)) {
		return fde{}, t.errorf(h.off, "FDE's CIE pointer %#x is past the end of the %d-byte section", h.ciePointer, len(t.data))
	}
	if h.ciePointer == uint64(h.off) {
		return fde{}, t.errorf(h.off, "FDE's CIE pointer points at the FDE itself")
	}
	ch, err := t.header(int(h.ciePointer))
	if err != nil {
		return fde{}, t.errorf(h.off, "FDE's CIE at %#x: %s", h.ciePointer, errMsg(err))
	}
	if !ch.isCIE || ch.terminator {
		return fde{}, t.errorf(h.off, "FDE's CIE pointer %#x does not point at a CIE", h.ciePointer)
	}
	c, err := t.cieAt(ch)
	if err != nil {
		return fde{}, t.errorf(h.off, "FDE's CIE at %#x: %s", h.ciePointer, errMsg(err))
	}
	f.cie = c
	f.SignalFrame = c.signalFrame
	f.Personality, f.HasPersonality, f.PersonalityIndirect = c.personality, c.hasPersonality, c.personalityIndirect

	r := &reader{data: t.data, off: h.body, end: h.next}
	if t.source != unwind.SourceEHFrame && c.segSize > 0 {
		r.bytes(c.segSize)
	}
	enc := c.fdeEncoding
	if t.source != unwind.SourceEHFrame {
		enc = pointerAbs // __debug_frame addresses are plain target addresses
	}
	begin, err := t.readEncoded(r, enc, encodingBases{}, c.addrSize)
	if err != nil {
		return fde{}, t.errorf(h.off, "FDE pc_begin: %v", err)
	}
	// pc_range is a length: the encoding's format without its application.
	length, err := t.readEncoded(r, enc&0x0f, encodingBases{}, c.addrSize)
	if err != nil {
		return fde{}, t.errorf(h.off, "FDE pc_range: %v", err)
	}
	end := begin + length
	if c.addrSize == 4 {
		end &= 0xffffffff
	}
	if end < begin {
		return fde{}, t.errorf(h.off, "FDE range [%#x, +%#x) wraps around the address space", begin, length)
	}
	f.PCBegin, f.PCEnd = begin, end
	f.instrStart = r.off
	if c.hasZ {
		n := r.uleb()
		if r.err != nil {
			return fde{}, t.errorf(h.off, "FDE augmentation data length: %v", r.err)
		}
		if n > uint64(r.left()) {
			return fde{}, t.errorf(h.off, "FDE augmentation data length %d is longer than the %d bytes left in the FDE", n, r.left())
		}
		augEnd := r.off + int(n)
		if c.hasLSDA {
			ar := &reader{data: t.data, off: r.off, end: augEnd}
			lsda, err := t.readEncoded(ar, c.lsdaEncoding, encodingBases{funcBase: begin, haveFunc: true}, c.addrSize)
			if err != nil && !errors.Is(err, errIndirect) {
				return fde{}, t.errorf(h.off, "FDE LSDA pointer: %v", err)
			}
			f.LSDA, f.HasLSDA, f.LSDAIndirect = lsda, true, errors.Is(err, errIndirect)
		}
		f.instrStart = augEnd
	}
	if r.err != nil {
		return fde{}, t.errorf(h.off, "FDE: %v", r.err)
	}
	f.instrEnd = h.next
	return f, nil
}

// Pointer encodings (DW_EH_PE_*), as the LSB's .eh_frame description and
// LLVM's Dwarf.h define them.
const (
	pointerAbs     = 0x00 // DW_EH_PE_absptr
	pointerULEB128 = 0x01
	pointerUData2  = 0x02
	pointerUData4  = 0x03
	pointerUData8  = 0x04
	pointerSigned  = 0x08 // DW_EH_PE_signed: a signed pointer-sized value
	pointerSLEB128 = 0x09
	pointerSData2  = 0x0a
	pointerSData4  = 0x0b
	pointerSData8  = 0x0c

	pointerPCRel   = 0x10
	pointerTextRel = 0x20
	pointerDataRel = 0x30
	pointerFuncRel = 0x40
	pointerAligned = 0x50

	pointerIndirect = 0x80
	pointerOmit     = 0xff
)

// errIndirect reports an indirect pointer not resolved, for want of a
// PointerReader or because it failed: the value returned with it is the
// address of the pointer.
var errIndirect = errors.New("indirect pointer")

// encodingBases are the bases of the relative encodings that depend on
// where the pointer is used rather than where it is stored.
type encodingBases struct {
	funcBase uint64
	haveFunc bool
}

// readEncoded reads a pointer in encoding enc. An indirect pointer that is
// not resolved returns the pointer's address with an error wrapping
// errIndirect.
func (t *Table) readEncoded(r *reader, enc uint8, b encodingBases, addrSize int) (uint64, error) {
	if enc == pointerOmit {
		return 0, errors.New("omitted pointer where one is required")
	}
	fieldAddr := t.addr + uint64(r.off)
	if enc&0x70 == pointerAligned {
		// The value is an absolute pointer at the next address aligned to
		// the pointer size.
		pad := int((uint64(addrSize) - fieldAddr%uint64(addrSize)) % uint64(addrSize))
		r.bytes(pad)
		fieldAddr += uint64(pad)
	}
	var v uint64
	switch enc & 0x0f {
	case pointerAbs:
		v = r.uint(addrSize)
	case pointerSigned:
		v = r.uint(addrSize)
		if addrSize == 4 {
			v = uint64(int64(int32(v)))
		}
	case pointerULEB128:
		v = r.uleb()
	case pointerUData2:
		v = uint64(r.u16())
	case pointerUData4:
		v = uint64(r.u32())
	case pointerUData8:
		v = r.u64()
	case pointerSLEB128:
		v = uint64(r.sleb())
	case pointerSData2:
		v = uint64(int64(int16(r.u16())))
	case pointerSData4:
		v = uint64(int64(int32(r.u32())))
	case pointerSData8:
		v = r.u64()
	default:
		return 0, fmt.Errorf("pointer encoding %#x: unknown value format %#x", enc, enc&0x0f)
	}
	if r.err != nil {
		return 0, r.err
	}
	switch enc & 0x70 {
	case pointerAbs, pointerAligned:
	case pointerPCRel:
		v += fieldAddr
	case pointerTextRel:
		if !t.haveBases {
			return 0, fmt.Errorf("pointer encoding %#x (textrel) needs a text base", enc)
		}
		v += t.textBase
	case pointerDataRel:
		if !t.haveBases {
			return 0, fmt.Errorf("pointer encoding %#x (datarel) needs a data base", enc)
		}
		v += t.dataBase
	case pointerFuncRel:
		if !b.haveFunc {
			return 0, fmt.Errorf("pointer encoding %#x (funcrel) outside an FDE", enc)
		}
		v += b.funcBase
	default:
		return 0, fmt.Errorf("pointer encoding %#x: unknown application %#x", enc, enc&0x70)
	}
	if addrSize == 4 {
		v &= 0xffffffff
	}
	if enc&pointerIndirect != 0 {
		if t.readPointer == nil {
			return v, errIndirect
		}
		p, err := t.readPointer(v)
		if err != nil {
			// Like a missing reader: the caller gets the pointer's address.
			return v, fmt.Errorf("%w: reading the pointer at %#x: %v", errIndirect, v, err)
		}
		if addrSize == 4 {
			p &= 0xffffffff
		}
		return p, nil
	}
	return v, nil
}

// errMsg returns an error's message without the section and offset an
// *unwind.Error adds, for errors nested in another record's.
func errMsg(err error) string {
	var ue *unwind.Error
	if errors.As(err, &ue) {
		return ue.Msg
	}
	return err.Error()
}
