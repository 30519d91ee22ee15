package symindex

import (
	"encoding/binary"
	"errors"
)

// errStream marks a damaged line stream.
var errStream = errors.New("damaged line stream")

// lineRange returns the range holding addr.
func (ix *Index) lineRange(addr uint64) (lineRange, bool) {
	if !ix.verify(ix.blocks) {
		return lineRange{}, false
	}
	blocks := ix.blocks.b
	nb := len(blocks) / lineBlockSize
	lo := ix.lineSearch.count(blocks, lineBlockSize, nb, addr, ix.allGood.Load())
	if lo == 0 {
		return lineRange{}, false
	}
	blk := blocks[lineBlockSize*(lo-1):]
	first, off, count := le.Uint64(blk), uint64(le.Uint32(blk[8:])), le.Uint32(blk[12:])
	shift := uint(min(count>>24, 63))
	count &= maxBlockEntries
	end := uint64(len(ix.stream.b))
	if lo < nb {
		end = uint64(le.Uint32(blocks[lineBlockSize*lo+8:]))
	}
	if off > end || end > uint64(len(ix.stream.b)) || count == 0 || count > lineBlockRanges ||
		!ix.verifyRange(ix.stream.off+off, ix.stream.off+end) {
		return lineRange{}, false
	}
	return rangeAt(ix.stream.b[off:end], first, shift, count, addr)
}

// rangeAt returns the last range of a line block starting at or below
// addr: the block's count ranges from first are decoded from b as
// decoder.next decodes them, in one loop with a call per field only for
// values of more than one byte (it is every lookup's inner loop),
// stopping at the first range past addr.
func rangeAt(b []byte, first uint64, shift uint, count uint32, addr uint64) (lineRange, bool) {
	// The range is kept in scalars, which stay in registers: a range is
	// committed to them once all of its fields are decoded, so that a
	// damaged one leaves the range before it.
	curAddr, ok, leaf, file, line, col := first, false, uint32(0), uint32(0), uint32(0), uint32(0)
	found := false
	i := 0
	for k := uint32(0); k < count; k++ {
		var head, v uint64
		if uint(i) < uint(len(b)) && b[i] < 0x80 {
			head, i = uint64(b[i]), i+1
		} else if head, i = uvarintLong(b, i); i < 0 {
			break
		}
		a := curAddr + head>>lineFlagBits<<shift
		if a > addr {
			break
		}
		nleaf, nfile, ncol := leaf, file, uint32(0)
		if head&flagLeaf != 0 {
			if uint(i) < uint(len(b)) && b[i] < 0x80 {
				v, i = uint64(b[i]), i+1
			} else if v, i = uvarintLong(b, i); i < 0 {
				break
			}
			nleaf = uint32(int64(leaf) + unzigzag(v))
		}
		if head&flagFile != 0 {
			if uint(i) < uint(len(b)) && b[i] < 0x80 {
				v, i = uint64(b[i]), i+1
			} else if v, i = uvarintLong(b, i); i < 0 {
				break
			}
			nfile = uint32(int64(file) + unzigzag(v))
		}
		if uint(i) < uint(len(b)) && b[i] < 0x80 {
			v, i = uint64(b[i]), i+1
		} else if v, i = uvarintLong(b, i); i < 0 {
			break
		}
		nline := uint32(int64(line) + unzigzag(v))
		if head&flagColumn != 0 {
			if uint(i) < uint(len(b)) && b[i] < 0x80 {
				v, i = uint64(b[i]), i+1
			} else if v, i = uvarintLong(b, i); i < 0 {
				break
			}
			ncol = uint32(v)
		}
		curAddr, ok, leaf, file, line, col, found = a, head&flagFound != 0, nleaf, nfile, nline, ncol, true
	}
	if !found {
		return lineRange{}, false
	}
	return lineRange{addr: curAddr, ok: ok, leaf: leaf, file: file, line: line, col: col}, true
}

// decoder reads ranges written by encodeRange.
type decoder struct {
	b     []byte
	shift uint // of the address steps
}

func (d *decoder) uvarint() (uint64, error) {
	v, k := binary.Uvarint(d.b)
	if k <= 0 {
		return 0, errStream
	}
	d.b = d.b[k:]
	return v, nil
}

func (d *decoder) varint() (int64, error) {
	v, k := binary.Varint(d.b)
	if k <= 0 {
		return 0, errStream
	}
	d.b = d.b[k:]
	return v, nil
}

func (d *decoder) next(prev lineRange) (lineRange, error) {
	head, err := d.uvarint()
	if err != nil {
		return lineRange{}, err
	}
	r := prev
	r.addr = prev.addr + head>>lineFlagBits<<d.shift
	r.ok = head&flagFound != 0
	r.col = 0
	if head&flagLeaf != 0 {
		v, err := d.varint()
		if err != nil {
			return r, err
		}
		r.leaf = uint32(int64(prev.leaf) + v)
	}
	if head&flagFile != 0 {
		v, err := d.varint()
		if err != nil {
			return r, err
		}
		r.file = uint32(int64(prev.file) + v)
	}
	v, err := d.varint()
	if err != nil {
		return r, err
	}
	r.line = uint32(int64(prev.line) + v)
	if head&flagColumn != 0 {
		col, err := d.uvarint()
		if err != nil {
			return r, err
		}
		r.col = uint32(col)
	}
	return r, nil
}
