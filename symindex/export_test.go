package symindex

import (
	"fmt"
	"io"
	"slices"

	"github.com/stackimage/stackimage/debuginfo"
	"github.com/stackimage/stackimage/symtab"
)

// StoredDemangled returns the demangled form of the linkage name the file
// stores, and whether it stores one: Demangle's answer without its
// fallback to demangling.
func (ix *Index) StoredDemangled(linkage string) (string, bool) {
	id, ok := ix.stringID(linkage)
	if !ok {
		return "", false
	}
	d, ok := ix.demChunk(id)
	if !ok {
		return "", false
	}
	return d.name(id)
}

// WriteReference writes the file as Write does, with the source answers
// made the plain way: every boundary looked up with debuginfo's
// AppendLookup and its frames interned by value. Write must give the same
// bytes; it interns each chain once, by its debuginfo.Leaf.
func WriteReference(w io.Writer, in Input) error {
	b := newBuilder()
	return b.write(w, in, b.referenceLines)
}

func (b *builder) referenceLines(debug []*debuginfo.Index) *lineWriter {
	w := &lineWriter{}
	var frames []debuginfo.Frame
	for _, addr := range boundaries(debug) {
		r := lineRange{addr: addr}
		for _, ix := range debug {
			var err error
			if frames, err = ix.AppendLookup(frames[:0], addr); err != nil {
				continue
			}
			r.ok = true
			r.leaf = b.chain(frames)
			r.file = b.file(frames[0].File)
			r.line, r.col = clampU32(frames[0].Line), clampU32(frames[0].Column)
			break
		}
		w.add(r)
	}
	return w
}

// chain adds the nodes of frames (innermost first; the innermost frame's
// position is not a node's) and returns the innermost node plus one, or 0
// when the frames name no function (a line without a function).
func (b *builder) chain(frames []debuginfo.Frame) uint32 {
	if len(frames) == 0 || len(frames) == 1 && frames[0].Function == "" && frames[0].LinkageName == "" && frames[0].Lang == "" && !frames[0].Inlined {
		return 0
	}
	parent := int32(-1)
	for k := len(frames) - 1; k >= 0; k-- {
		f := frames[k]
		key := nodeKey{parent: parent, function: f.Function, linkage: f.LinkageName, lang: f.Lang, inlined: f.Inlined}
		if k < len(frames)-1 {
			// The frame outside this one stands at this one's call site.
			out := frames[k+1]
			key.callFile, key.callLine, key.callCol = out.File, out.Line, out.Column
		}
		parent = b.node(key)
	}
	return uint32(parent) + 1
}

// SymbolUncached is Symbol reading every symbol block entry by entry, as
// it reads compressed blocks, without the cache of decoded blocks.
func (ix *Index) SymbolUncached(addr uint64) (symtab.Symbol, bool) { return ix.symbol(addr, false) }

// AllGood reports whether every chunk is known good, so that lookups
// check none.
func (ix *Index) AllGood() bool { return ix.allGood.Load() }

// Chunks returns the number of checksummed chunks and the file offset of
// the first.
func (ix *Index) Chunks() (n int, base uint64) { return len(ix.state), ix.chunkBase }

// CheckLineRanges compares, at every range start of every line block and
// one byte either side, the range a lookup finds (through the block
// buckets and the inlined decoder) with the one the plain decoder finds
// reading the block from its start. It returns the first difference and how many addresses
// it checked.
func (ix *Index) CheckLineRanges() (checked int, err error) {
	nb := len(ix.blocks.b) / lineBlockSize
	for blk := range nb {
		rec := ix.blocks.b[lineBlockSize*blk:]
		first, off, count := le.Uint64(rec), uint64(le.Uint32(rec[8:])), le.Uint32(rec[12:])
		shift := uint(min(count>>24, 63))
		count &= maxBlockEntries
		end := uint64(len(ix.stream.b))
		if blk+1 < nb {
			end = uint64(le.Uint32(ix.blocks.b[lineBlockSize*(blk+1)+8:]))
		}
		var ranges []lineRange
		d := decoder{b: ix.stream.b[off:end], shift: shift}
		r := lineRange{addr: first}
		for range count {
			var err error
			if r, err = d.next(r); err != nil {
				break
			}
			ranges = append(ranges, r)
		}
		for _, r := range ranges {
			for _, a := range []uint64{r.addr - 1, r.addr, r.addr + 1} {
				if a < first || blk+1 < nb && a >= le.Uint64(ix.blocks.b[lineBlockSize*(blk+1):]) {
					continue // another block's
				}
				var want lineRange
				for _, c := range ranges {
					if c.addr <= a {
						want = c
					}
				}
				got, _ := ix.lineRange(a)
				if got != want {
					return checked, fmt.Errorf("block %d, address %#x: lineRange = %+v, want %+v", blk, a, got, want)
				}
				checked++
			}
		}
	}
	return checked, nil
}

// boundaries returns the boundaries of every DWARF index, sorted and
// without repeats.
func boundaries(debug []*debuginfo.Index) []uint64 {
	var bounds []uint64
	for i, ix := range debug {
		if i == 0 {
			bounds = ix.Boundaries() // a fresh slice: no copy of it
			continue
		}
		bounds = append(bounds, ix.Boundaries()...)
	}
	if len(debug) == 1 {
		return bounds // Boundaries' are sorted, without repeats
	}
	return sortUnique(bounds)
}

// sortUnique sorts a and drops repeats.
func sortUnique(a []uint64) []uint64 {
	slices.Sort(a)
	return slices.Compact(a)
}

// ranges returns the ranges added to w, read back from what relink makes
// of a copy of them with each node at the offset of its index (leaves
// below 1<<16).
func (w *lineWriter) ranges() []lineRange {
	c := &lineWriter{pending: w.pending, n: w.n, blocks: slices.Clone(w.blocks), stream: slices.Clone(w.stream)}
	offsets := make([]uint32, 1<<16)
	for i := range offsets {
		offsets[i] = uint32(i)
	}
	blocks, stream := c.relink(offsets)
	var out []lineRange
	for i := 0; i+lineBlockSize <= len(blocks); i += lineBlockSize {
		rec := blocks[i:]
		first, off, count := le.Uint64(rec), le.Uint32(rec[8:]), le.Uint32(rec[12:])
		d := decoder{b: stream[off:], shift: uint(count >> 24)}
		r := lineRange{addr: first}
		for range count & maxBlockEntries {
			var err error
			if r, err = d.next(r); err != nil {
				panic(err)
			}
			out = append(out, r)
		}
	}
	return out
}
