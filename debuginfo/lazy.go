package debuginfo

import "fmt"

// Bounds on what the sections as a whole may make the index do before any
// lookup.
const (
	// abbrevRatio bounds the bytes of debug_abbrev that dwarf.New parses,
	// summed over the distinct tables the units name, as a multiple of the
	// section's size (plus abbrevSlack). Real units share one table or have
	// one each, disjoint, so the sum is at most the section; units naming
	// different offsets into one long table make it quadratic.
	abbrevRatio = 4
	abbrevSlack = 64 << 10
)

// checkAbbrevs bounds the abbreviation tables dwarf.New will parse: it
// parses the table of every unit's distinct debug_abbrev offset from there
// to its terminating zero code, so units pointing into one long table at
// different offsets cost the square of its size. checkAbbrevs returns how
// many units, from the first, stay within abbrevRatio times the section's
// size; when that is not all of them, msg says why.
func checkAbbrevs(spans []unitSpan, abbrev []byte) (n int, msg string) {
	budget := abbrevRatio*len(abbrev) + abbrevSlack
	seen := make(map[uint64]bool)
	for i, u := range spans {
		if seen[u.abbrev] {
			continue
		}
		seen[u.abbrev] = true
		cost := abbrevTableLen(abbrev, u.abbrev, budget)
		if cost > budget {
			return i, fmt.Sprintf("debug_abbrev: the tables the units name from offset %#x on would parse more than %d bytes (%d times the section's %d)",
				u.abbrev, abbrevRatio*len(abbrev)+abbrevSlack, abbrevRatio, len(abbrev))
		}
		budget -= cost
	}
	return len(spans), ""
}

// abbrevTableLen returns how many bytes debug/dwarf parses for the
// abbreviation table at off: up to and including its zero code, or to the
// section's end. It stops counting past limit.
func abbrevTableLen(abbrev []byte, off uint64, limit int) int {
	if off >= uint64(len(abbrev)) {
		return 0 // debug/dwarf rejects it without parsing
	}
	c := cursor{b: abbrev, off: int(off)}
	for !c.err && c.off-int(off) <= limit {
		if c.uleb() == 0 { // code; 0 ends the table
			break
		}
		c.uleb() // tag
		c.u8()   // has children
		for !c.err {
			attr, form := c.uleb(), c.uleb()
			if form == 0x21 { // DW_FORM_implicit_const carries its value
				c.uleb()
			}
			if attr == 0 && form == 0 {
				break
			}
		}
	}
	return c.off - int(off)
}

// parseAranges reads debug_aranges into unit ranges (link.node is the
// unit's index in spans). ok is false, and the caller then reads each
// unit's own ranges, when the section is absent or not sane: a set whose
// header is not version 2, names no unit's header, has an address size
// other than 4 or 8 or a segment selector, or runs past the section.
func parseAranges(sec []byte, spans []unitSpan) (links []link, ok bool) {
	if len(sec) == 0 {
		return nil, false
	}
	unitAt := make(map[int64]int32, len(spans))
	for i, u := range spans {
		unitAt[u.hdr] = int32(i)
	}
	c := cursor{b: sec}
	for c.off < len(sec) {
		start := c.off
		length := uint64(c.u32())
		dwarf64 := length == 0xffffffff
		if dwarf64 {
			length = c.u64()
		}
		if c.err || length > uint64(len(sec)-c.off) {
			return nil, false
		}
		end := c.off + int(length)
		c.b = sec[:end]
		version := c.u16()
		infoOff := c.offset(dwarf64)
		addrSize, segSize := int(c.u8()), c.u8()
		u, known := unitAt[int64(infoOff)]
		if c.err || version != 2 || !known || (addrSize != 4 && addrSize != 8) || segSize != 0 {
			return nil, false
		}
		// Tuples start aligned to twice the address size from the set.
		if pad := (c.off - start) % (2 * addrSize); pad != 0 {
			c.skip(2*addrSize - pad)
		}
		for {
			var lo, size uint64
			if addrSize == 8 {
				lo, size = c.u64(), c.u64()
			} else {
				lo, size = uint64(c.u32()), uint64(c.u32())
			}
			if c.err {
				return nil, false // no terminating tuple
			}
			if lo == 0 && size == 0 {
				break
			}
			if size > 0 && lo+size > lo {
				links = append(links, link{lo: lo, hi: lo + size, node: u})
			}
		}
		c.b, c.off = sec, end
	}
	return links, true
}
