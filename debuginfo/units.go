package debuginfo

import "fmt"

// unitSpan is where one unit of debug_info keeps its DIEs: hdr is the
// offset of its header, first the offset of its first DIE (just after the
// header), end the offset just past the unit; abbrev is the debug_abbrev
// offset its header names.
type unitSpan struct {
	hdr, first, end int64
	abbrev          uint64
}

// unitSpans splits debug_info into its units by their headers, so that the
// index can start each compile unit afresh after an earlier one failed to
// decode. debug/dwarf has already accepted these headers (dwarf.New parses
// them all), so the scan only needs to find the same boundaries: it reads
// the unit length, version and address-size/type fields as debug/dwarf
// does. It stops at the first header it cannot follow and reports whether
// it reached the end of the section; when it did not, the caller falls back
// to one walk over everything.
func unitSpans(info []byte) (spans []unitSpan, ok bool) {
	c := cursor{b: info}
	for c.off < len(info) {
		hdr := int64(c.off)
		length := uint64(c.u32())
		dwarf64 := length == 0xffffffff
		if dwarf64 {
			length = c.u64()
		}
		if c.err || length > uint64(len(info)-c.off) {
			return spans, false
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
			return spans, false
		}
		if c.err {
			return spans, false
		}
		if c.off < end {
			spans = append(spans, unitSpan{hdr: hdr, first: int64(c.off), end: int64(end), abbrev: abbrev})
		}
		c.b, c.off = info, end
	}
	return spans, true
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
