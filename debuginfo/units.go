package debuginfo

import "fmt"

// unitSpan is where one unit of debug_info keeps its DIEs: hdr is the
// offset of its header, first the offset of its first DIE (just after the
// header), end the offset just past the unit; abbrev is the debug_abbrev
// offset its header names. A unit whose header fills it has no DIEs
// (first == end): debug/dwarf still parses its abbreviation table.
type unitSpan struct {
	hdr, first, end int64
	abbrev          uint64
	// refBase is where the unit's relative references (DW_FORM_ref4 and
	// the like) count from as debug/dwarf reads them: the end of the unit
	// before (0 for the first), which is hdr unless zero-length padding
	// units lie between them.
	refBase int64
}

// unitSpans splits debug_info into its units by their headers, so that the
// index can start each compile unit afresh after an earlier one failed to
// decode, and bound the abbreviation tables dwarf.New will parse before it
// parses them. It reads the unit length, version and address-size/type
// fields as debug/dwarf does, in the byte order debug/dwarf picks from the
// first unit's version. It returns every unit, those without DIEs
// included, and where it stopped: the header of the first unit it could
// not follow, or the section's end when ok. dwarf.New rejects the whole
// section from a unit the scan cannot follow, so the caller keeps the
// units before stop.
func unitSpans(info []byte) (spans []unitSpan, stop int64, ok bool) {
	c := cursor{b: info}
	// debug/dwarf's sniff: the first unit's 16-bit version is small, so
	// its zero byte says the order.
	ver := 4
	if len(info) >= 4 && info[0] == 0xff && info[1] == 0xff && info[2] == 0xff && info[3] == 0xff {
		ver = 12
	}
	if len(info) >= ver+2 && info[ver] == 0 && info[ver+1] != 0 {
		c.big = true
	}
	refBase := int64(0)
	for c.off < len(info) {
		hdr := int64(c.off)
		length := uint64(c.u32())
		dwarf64 := length == 0xffffffff
		if dwarf64 {
			length = c.u64()
		}
		if c.err || length > uint64(len(info)-c.off) {
			return spans, hdr, false
		}
		if length == 0 {
			continue // padding, which debug/dwarf skips too
		}
		end := c.off + int(length)
		offSize := 4
		if dwarf64 {
			offSize = 8
		}
		c.b = info[:end] // the header must fit in its unit
		var abbrev uint64
		switch v := c.u16(); {
		case v >= 2 && v <= 4:
			abbrev = c.offset(dwarf64)
			c.skip(1) // address_size
		case v == 5:
			utype := c.u8()
			c.skip(1) // address_size
			abbrev = c.offset(dwarf64)
			switch utype {
			case 0x04, 0x05: // DW_UT_skeleton, DW_UT_split_compile: unit ID
				c.skip(8)
			case 0x02, 0x06: // DW_UT_type, DW_UT_split_type: signature, type offset
				c.skip(8 + offSize)
			}
		default:
			return spans, hdr, false
		}
		if c.err {
			return spans, hdr, false
		}
		spans = append(spans, unitSpan{hdr: hdr, first: int64(c.off), end: int64(end), abbrev: abbrev, refBase: refBase})
		c.b, c.off = info, end
		refBase = int64(end)
	}
	return spans, int64(len(info)), true
}

// maxWarnings bounds the warnings an Index keeps: hostile DWARF can fail in
// every one of thousands of units, and the first hundred say enough.
const maxWarnings = 100

// warnings collects what the index had to skip.
type warnings struct {
	kept    []string
	dropped int
}

func (w *warnings) add(format string, args ...any) {
	if len(w.kept) >= maxWarnings {
		w.dropped++
		return
	}
	w.kept = append(w.kept, fmt.Sprintf(format, args...))
}

func (w *warnings) count() int { return len(w.kept) + w.dropped }

// list returns the kept warnings, then one line counting the dropped ones.
func (w *warnings) list() []string {
	if w.count() == 0 {
		return nil
	}
	out := append([]string(nil), w.kept...)
	if w.dropped > 0 {
		out = append(out, fmt.Sprintf("%d more warnings not kept", w.dropped))
	}
	return out
}
