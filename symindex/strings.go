package symindex

import (
	"encoding/binary"
)

// maxStringLen bounds a string a lookup copies out of a hostile file.
const maxStringLen = 1 << 20

// str returns the string with id, or "" when id is absent, outside the
// string table or in a damaged chunk: the string's block is decoded and
// kept on first use.
func (ix *Index) str(id uint32) string {
	ix.makeCaches()
	blk := uint64(id / strBlock)
	if blk >= uint64(len(ix.strCache)) {
		return "" // noString among them
	}
	if b := ix.strCache[blk].Load(); b != nil {
		return b[id%strBlock]
	}
	b, ok := ix.decodeStrBlock(blk)
	if !ok {
		return ""
	}
	ix.strCache[blk].CompareAndSwap(nil, b)
	return b[id%strBlock]
}

// decodeStrBlock decodes string block blk, which exists; ok is false when
// its bytes are damaged (Err says where). Strings from one that cannot be
// decoded on are "". The strings share one allocation.
func (ix *Index) decodeStrBlock(blk uint64) (strs *strBlockStrings, ok bool) {
	nblk := uint64(len(ix.strIndex.b) / 4)
	if !ix.verifyRange(ix.strIndex.off+4*blk, ix.strIndex.off+4*blk+8) {
		return nil, false
	}
	strs = new(strBlockStrings)
	lo, hi := uint64(le.Uint32(ix.strIndex.b[4*blk:])), uint64(len(ix.strings.b))
	if blk+1 < nblk {
		hi = uint64(le.Uint32(ix.strIndex.b[4*blk+4:]))
	}
	if lo > hi || hi > uint64(len(ix.strings.b)) {
		return strs, true
	}
	if !ix.verifyRange(ix.strings.off+lo, ix.strings.off+hi) {
		return nil, false
	}
	b := ix.strings.b[lo:hi]
	var ends [strBlock]int // where each string ends in all
	all := make([]byte, 0, strBlockSize(b))
	prev, n := 0, 0 // where the previous string starts in all; strings decoded
	for ; n < strBlock; n++ {
		shared := uint64(0)
		if n > 0 {
			v, k := binary.Uvarint(b)
			if k <= 0 || v > uint64(len(all)-prev) {
				break
			}
			shared, b = v, b[k:]
		}
		size, k := binary.Uvarint(b)
		if k <= 0 || size > uint64(len(b)-k) || shared+size > maxStringLen {
			break
		}
		start := len(all)
		all = append(all, all[prev:prev+int(shared)]...)
		all = append(all, b[k:k+int(size)]...)
		b = b[k+int(size):]
		prev, ends[n] = start, len(all)
	}
	// all is never written again: the strings share its bytes.
	text := unsafeString(all)
	start := 0
	for i := range n {
		strs[i] = text[start:ends[i]]
		start = ends[i]
	}
	return strs, true
}

// strBlockSize returns the bytes of the strings of block b, as far as
// decodeStrBlock decodes them: it sizes their one allocation.
func strBlockSize(b []byte) int {
	total, prev := uint64(0), uint64(0)
	for n := 0; n < strBlock; n++ {
		shared := uint64(0)
		if n > 0 {
			v, k := binary.Uvarint(b)
			if k <= 0 || v > prev {
				break
			}
			shared, b = v, b[k:]
		}
		size, k := binary.Uvarint(b)
		if k <= 0 || size > uint64(len(b)-k) || shared+size > maxStringLen {
			break
		}
		b = b[k+int(size):]
		prev = shared + size
		total += prev
	}
	return int(total)
}

// stringID returns the id of s in the string table: a binary search of
// the blocks by their first string (stored whole), then a walk of one
// block.
func (ix *Index) stringID(s string) (uint32, bool) {
	nblk := len(ix.strIndex.b) / 4
	if nblk == 0 || !ix.verify(ix.strIndex) {
		return 0, false
	}
	// The first block whose first string sorts after s.
	lo, hi := 0, nblk
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		first, ok := ix.firstString(m)
		if !ok {
			return 0, false
		}
		if first > s {
			hi = m
		} else {
			lo = m + 1
		}
	}
	if lo == 0 {
		return 0, false
	}
	blk := uint32(lo - 1)
	for k := uint32(0); k < strBlock; k++ {
		id := blk*strBlock + k
		got := ix.str(id)
		if got == s && (s != "" || ix.Err() == nil) {
			return id, true
		}
		if got > s {
			break
		}
	}
	return 0, false
}

// firstString returns the first string of string block blk, which is
// stored whole, without copying it.
func (ix *Index) firstString(blk int) (string, bool) {
	lo, hi := uint64(le.Uint32(ix.strIndex.b[4*blk:])), uint64(len(ix.strings.b))
	if blk+1 < len(ix.strIndex.b)/4 {
		hi = uint64(le.Uint32(ix.strIndex.b[4*blk+4:]))
	}
	if lo > hi || hi > uint64(len(ix.strings.b)) || !ix.verifyRange(ix.strings.off+lo, ix.strings.off+hi) {
		return "", false
	}
	b := ix.strings.b[lo:hi]
	size, n := binary.Uvarint(b)
	if n <= 0 || size > uint64(len(b)-n) {
		return "", false
	}
	return unsafeString(b[n : n+int(size)]), true
}
