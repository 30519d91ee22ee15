package dwarfcfi

import (
	"encoding/binary"
	"errors"

	"github.com/stackimage/stackimage/internal/leb128"
)

// errShort is the cause of every read past the end of the bytes a reader
// may use; callers turn it into an *unwind.Error naming the field.
var errShort = errors.New("truncated")

// reader reads little-endian fields from data[off:end]. Apple's
// architectures are all little-endian. The first error sticks: later reads
// return zero, so a parser checks err once after a group of fields.
type reader struct {
	data []byte
	off  int // next byte to read, an index into data (= the section offset)
	end  int // the reader may not read at or past end
	err  error
}

func (r *reader) fail(err error) {
	if r.err == nil {
		r.err = err
	}
}

func (r *reader) left() int { return r.end - r.off }

func (r *reader) bytes(n int) []byte {
	if r.err != nil {
		return nil
	}
	if n < 0 || n > r.left() {
		r.fail(errShort)
		r.off = r.end
		return nil
	}
	b := r.data[r.off : r.off+n]
	r.off += n
	return b
}

func (r *reader) u8() uint8 {
	b := r.bytes(1)
	if b == nil {
		return 0
	}
	return b[0]
}

func (r *reader) u16() uint16 {
	b := r.bytes(2)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint16(b)
}

func (r *reader) u32() uint32 {
	b := r.bytes(4)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(b)
}

func (r *reader) u64() uint64 {
	b := r.bytes(8)
	if b == nil {
		return 0
	}
	return binary.LittleEndian.Uint64(b)
}

// uint reads an unsigned number of size bytes (1, 2, 4 or 8).
func (r *reader) uint(size int) uint64 {
	switch size {
	case 1:
		return uint64(r.u8())
	case 2:
		return uint64(r.u16())
	case 4:
		return uint64(r.u32())
	default:
		return r.u64()
	}
}

// uleb reads an unsigned LEB128 number; one past 64 bits fails the
// reader with leb128.ErrOverflow.
func (r *reader) uleb() uint64 {
	if r.err != nil {
		return 0
	}
	v, next, err := leb128.Uint(r.data[:r.end], r.off)
	return r.leb(v, next, err)
}

// sleb reads a signed LEB128 number, as uleb does.
func (r *reader) sleb() int64 {
	if r.err != nil {
		return 0
	}
	v, next, err := leb128.Int(r.data[:r.end], r.off)
	return int64(r.leb(uint64(v), next, err))
}

// leb moves past a number leb128 read and returns it, or fails the reader
// and returns 0.
func (r *reader) leb(v uint64, next int, err error) uint64 {
	r.off = next
	switch err {
	case nil:
		return v
	case leb128.ErrTruncated:
		r.fail(errShort)
	default:
		r.fail(err)
	}
	return 0
}

// cstring reads a NUL-terminated string, without the NUL.
func (r *reader) cstring() string {
	if r.err != nil {
		return ""
	}
	for i := r.off; i < r.end; i++ {
		if r.data[i] == 0 {
			s := string(r.data[r.off:i])
			r.off = i + 1
			return s
		}
	}
	r.fail(errShort)
	r.off = r.end
	return ""
}
