package leb128

import "errors"

// The errors Uint and Int return.
var (
	// ErrTruncated is a number the bytes end inside of.
	ErrTruncated = errors.New("truncated LEB128 number")
	// ErrOverflow is a number with significant bits past the 64th.
	ErrOverflow = errors.New("LEB128 number does not fit in 64 bits")
)

// Uint reads the unsigned LEB128 number at b[pos:] and returns it and the
// index after it. err is ErrTruncated when b ends inside the number (v is
// then 0 and next len(b)), and ErrOverflow when a bit past the 64th is set:
// v then holds the low 64 bits and next is after the number, so a reader
// that drops the excess as debug/dwarf does goes on. Padding (more bytes
// whose bits are all zero) is not overflow.
//
// Uint is small enough to be inlined: the DWARF readers decode every
// attribute and line-program operand with it.
func Uint(b []byte, pos int) (v uint64, next int, err error) {
	for shift := uint(0); pos < len(b); shift += 7 {
		c := b[pos]
		pos++
		x := uint64(c & 0x7f)
		v |= x << shift
		if x<<shift>>shift != x { // bits shifted out past the 64th (Go shifts by ≥ 64 to zero)
			err = ErrOverflow
		}
		if c < 0x80 {
			return v, pos, err
		}
	}
	return 0, len(b), ErrTruncated
}

// Int reads the signed LEB128 number at b[pos:] as Uint reads an unsigned
// one. ErrOverflow is a number outside the int64 range: bit 63 and every
// bit past it must repeat the sign. v then holds the low 64 bits.
func Int(b []byte, pos int) (v int64, next int, err error) {
	for shift := uint(0); pos < len(b); shift += 7 {
		c := b[pos]
		pos++
		x := int64(c & 0x7f)
		v |= x << shift
		if shift >= 63 && x != v>>63&0x7f { // bit 63 on: every bit the sign
			err = ErrOverflow
		}
		if c < 0x80 {
			if c&0x40 != 0 {
				v |= -1 << (shift + 7) // sign-extend; 0 from the 64th bit on
			}
			return v, pos, err
		}
	}
	return 0, len(b), ErrTruncated
}

// AppendUint appends v's unsigned LEB128 encoding, in the fewest bytes, to
// b.
func AppendUint(b []byte, v uint64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}

// AppendInt appends v's signed LEB128 encoding, in the fewest bytes, to b.
func AppendInt(b []byte, v int64) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if v == 0 && c&0x40 == 0 || v == -1 && c&0x40 != 0 {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}
