package debuginfo

import (
	"encoding/binary"
	"fmt"

	"github.com/stackimage/stackimage/internal/leb128"
)

// checkLineHeader bounds the directory and file counts of a DWARF 5 line
// program header at off in debug_line before debug/dwarf reads it:
// debug/dwarf allocates a slice of whatever count the header states, so a
// hostile count would exhaust memory. A count larger than the bytes left in
// the unit cannot be genuine. Other versions need no check (their tables
// are NUL-terminated lists), nor does anything debug/dwarf rejects itself.
func checkLineHeader(sec []byte, off int64) error {
	if off < 0 || off >= int64(len(sec)) {
		return nil // debug/dwarf reports the bad offset
	}
	c := cursor{b: sec, off: int(off)}
	length := uint64(c.u32())
	dwarf64 := length == 0xffffffff
	if dwarf64 {
		length = c.u64()
	}
	if c.err || length > uint64(len(sec)-c.off) {
		return nil
	}
	c.b = sec[:c.off+int(length)] // the unit's end bounds every count
	if c.u16() < 5 {
		return nil
	}
	c.skip(2) // address_size, segment_selector_size
	if dwarf64 {
		c.skip(8) // header_length
	} else {
		c.skip(4)
	}
	c.skip(5) // min_inst_length, max_ops, default_is_stmt, line_base, line_range
	opcodeBase := c.u8()
	if opcodeBase > 0 {
		c.skip(int(opcodeBase) - 1)
	}
	for _, what := range []string{"directory", "file name"} {
		nforms := int(c.u8())
		forms := make([]uint64, 0, nforms) // nforms < 256
		for range nforms {
			c.uleb() // content type
			forms = append(forms, c.uleb())
		}
		count := c.uleb()
		if c.err {
			return nil
		}
		if count > uint64(len(c.b)-c.off) {
			return fmt.Errorf("line table at %#x: %s count %d exceeds the %d bytes left in the unit",
				off, what, count, len(c.b)-c.off)
		}
		for i := uint64(0); i < count && !c.err; i++ {
			for _, f := range forms {
				c.skipForm(f, dwarf64)
			}
		}
	}
	return nil
}

// cursor reads DWARF values, little-endian unless big is set; past the end
// it sets err and returns zeros. Mach-O DWARF is little-endian on Apple's
// current targets; debug/dwarf also reads big-endian debug_info (PowerPC),
// and the unit scan must follow it there too.
type cursor struct {
	b   []byte
	off int
	err bool
	big bool
}

func (c *cursor) take(n int) []byte {
	if c.err || n < 0 || n > len(c.b)-c.off {
		c.err = true
		return nil
	}
	p := c.b[c.off : c.off+n]
	c.off += n
	return p
}

func (c *cursor) skip(n int) { c.take(n) }

func (c *cursor) u8() uint8 {
	if p := c.take(1); p != nil {
		return p[0]
	}
	return 0
}

func (c *cursor) u16() uint16 {
	if p := c.take(2); p != nil {
		if c.big {
			return binary.BigEndian.Uint16(p)
		}
		return binary.LittleEndian.Uint16(p)
	}
	return 0
}

func (c *cursor) u32() uint32 {
	if p := c.take(4); p != nil {
		if c.big {
			return binary.BigEndian.Uint32(p)
		}
		return binary.LittleEndian.Uint32(p)
	}
	return 0
}

func (c *cursor) u64() uint64 {
	if p := c.take(8); p != nil {
		if c.big {
			return binary.BigEndian.Uint64(p)
		}
		return binary.LittleEndian.Uint64(p)
	}
	return 0
}

// addr reads an address of size bytes, 4 or 8.
func (c *cursor) addr(size int) uint64 {
	if size == 4 {
		return uint64(c.u32())
	}
	return c.u64()
}

// offset reads a section offset: 8 bytes in 64-bit DWARF, else 4.
func (c *cursor) offset(dwarf64 bool) uint64 {
	if dwarf64 {
		return c.u64()
	}
	return uint64(c.u32())
}

func (c *cursor) uleb() uint64 {
	if c.err {
		return 0
	}
	v, next, err := leb128.Uint(c.b, c.off)
	c.off, c.err = next, err == leb128.ErrTruncated // past 64 bits, the low bits are kept as debug/dwarf keeps them
	return v
}

// skipForm skips one attribute value of the form, consuming exactly what
// debug/dwarf's line-header reader consumes (nothing for forms it ignores).
func (c *cursor) skipForm(form uint64, dwarf64 bool) {
	offSize := 4
	if dwarf64 {
		offSize = 8
	}
	switch form {
	case 0x08: // DW_FORM_string
		for !c.err && c.u8() != 0 {
		}
	case 0x0e, 0x1f, 0x1d: // DW_FORM_strp, DW_FORM_line_strp, DW_FORM_strp_sup
		c.skip(offSize)
	case 0x1a, 0x0f: // DW_FORM_strx, DW_FORM_udata
		c.uleb()
	case 0x25, 0x0b: // DW_FORM_strx1, DW_FORM_data1
		c.skip(1)
	case 0x26, 0x05: // DW_FORM_strx2, DW_FORM_data2
		c.skip(2)
	case 0x27: // DW_FORM_strx3
		c.skip(3)
	case 0x28, 0x06: // DW_FORM_strx4, DW_FORM_data4
		c.skip(4)
	case 0x07: // DW_FORM_data8
		c.skip(8)
	case 0x1e: // DW_FORM_data16
		c.skip(16)
	case 0x09: // DW_FORM_block
		n := c.uleb()
		if n > uint64(len(c.b)) {
			c.err = true
			return
		}
		c.skip(int(n))
	}
}
