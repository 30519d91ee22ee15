package debuginfo

// uleb128 reads an unsigned LEB128 value at pos of b, returning it and
// where the next value starts; ok is false when b ends inside the value
// (next is then len(b)). Bits past the 64th are dropped, as debug/dwarf
// drops them.
func uleb128(b []byte, pos int) (v uint64, next int, ok bool) {
	for shift := uint(0); pos < len(b); shift += 7 {
		c := b[pos]
		pos++
		if shift < 64 {
			v |= uint64(c&0x7f) << shift
		}
		if c&0x80 == 0 {
			return v, pos, true
		}
	}
	return 0, len(b), false
}

// sleb128 reads a signed LEB128 value at pos of b, as uleb128 does.
func sleb128(b []byte, pos int) (v int64, next int, ok bool) {
	for shift := uint(0); pos < len(b); {
		c := b[pos]
		pos++
		if shift < 64 {
			v |= int64(c&0x7f) << shift
		}
		shift += 7
		if c&0x80 == 0 {
			if shift < 64 && c&0x40 != 0 {
				v |= -1 << shift
			}
			return v, pos, true
		}
	}
	return 0, len(b), false
}
