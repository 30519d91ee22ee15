package symindex

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"io"
	"math"
	"sync"
	"unsafe"
)

// inflate returns a compressed symbol block's bytes, nil when they are
// damaged or larger than maxInflated or than maxInflateRatio times the
// compressed bytes (what the writer compresses): what is allocated is
// bounded by the file's bytes, not by a size it declares.
func inflate(b []byte) []byte {
	size, n := binary.Uvarint(b)
	if n <= 0 || size > maxInflated || size > maxInflateRatio*uint64(len(b)-n) {
		return nil
	}
	return inflateTo(b[n:], size)
}

// inflateTo returns the size bytes DEFLATE-compressed in b, nil when b
// holds fewer; the caller bounds size.
func inflateTo(b []byte, size uint64) []byte {
	out := make([]byte, size)
	zr := inflaters.Get().(io.ReadCloser)
	defer inflaters.Put(zr)
	if err := zr.(flate.Resetter).Reset(bytes.NewReader(b), nil); err != nil {
		return nil
	}
	if _, err := io.ReadFull(zr, out); err != nil {
		return nil
	}
	return out
}

// inflaters keeps DEFLATE readers for reuse: making one costs more than
// inflating a block.
var inflaters = sync.Pool{New: func() any { return flate.NewReader(bytes.NewReader(nil)) }}

// sat32 is v, or math.MaxUint32 when v is larger.
func sat32(v uint64) uint32 { return uint32(min(v, math.MaxUint32)) }

// uvarintAt decodes the uvarint at b[i:] and returns it with the index
// after it, or -1 when b holds none there (as binary.Uvarint fails: b
// ends, or the value overflows 64 bits). It is small enough to be
// inlined: it decodes every field of the lookups' inner loops. The
// innermost loop, rangeAt's, tests for a one-byte value itself and calls
// uvarintLong for the others.
func uvarintAt(b []byte, i int) (uint64, int) {
	var v uint64
	for s := uint(0); uint(i) < uint(len(b)); s += 7 {
		c := b[i]
		i++
		if c < 0x80 {
			if s == 63 && c > 1 {
				break // overflow
			}
			return v | uint64(c)<<s, i
		}
		if s == 63 {
			break // overflow
		}
		v |= uint64(c&0x7f) << s
	}
	return 0, -1
}

// uvarintLong is uvarintAt, not inlined: for the values of more than one
// byte, which are fewer.
//
//go:noinline
func uvarintLong(b []byte, i int) (uint64, int) { return uvarintAt(b, i) }

// unzigzag turns a uvarint as binary.AppendVarint writes it back into
// the signed value.
func unzigzag(u uint64) int64 {
	x := int64(u >> 1)
	if u&1 != 0 {
		x = ^x
	}
	return x
}

// unsafeString returns b as a string without copying it: for comparisons
// of the file's bytes, never kept.
func unsafeString(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
