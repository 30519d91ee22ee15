package symindex

import (
	"encoding/binary"
	"math"

	"github.com/stackimage/stackimage/debuginfo"
	"github.com/stackimage/stackimage/lookup"
	"github.com/stackimage/stackimage/symtab"
)

// Answer is everything an index knows at one address.
type Answer struct {
	Symbol    symtab.Symbol
	HasSymbol bool
	// Frames are the source-level frames, innermost first, as
	// debuginfo.Index.Lookup returns them; nil when the DWARF did not
	// cover the address.
	Frames []debuginfo.Frame
}

// Lookup returns the symbol and the source-level frames at the unslid
// address. The error is ErrNotFound when the index has neither.
func (ix *Index) Lookup(addr uint64) (Answer, error) {
	var a Answer
	a.Symbol, a.HasSymbol = ix.Symbol(addr)
	a.Frames, _ = ix.Source(addr)
	if !a.HasSymbol && len(a.Frames) == 0 {
		return a, ErrNotFound
	}
	return a, nil
}

// ErrNotFound is Lookup's error for an address the index knows nothing
// of: lookup.ErrNotFound, the one "not found" of every Lookup and Resolve.
var ErrNotFound = lookup.ErrNotFound

// Symbol returns the best answer among the index's symbol tables, as
// symstore.Entry.Symbol chooses it: a symbol table name beats an export,
// which beats a bare function start; among equals the closest wins.
func (ix *Index) Symbol(addr uint64) (symtab.Symbol, bool) {
	return ix.symbol(addr, true)
}

// symbol is Symbol, with cached false reading every block entry by entry
// (the way compressed blocks are read) for tests to compare.
func (ix *Index) symbol(addr uint64, cached bool) (symtab.Symbol, bool) {
	var best symtab.Symbol
	found := false
	for i := range ix.tables {
		e, ok := ix.find(&ix.tables[i], addr, cached)
		if !ok {
			continue
		}
		sym := symtab.SymbolAt(e, addr)
		if !found || sym.Source < best.Source || (sym.Source == best.Source && sym.Addr > best.Addr) {
			best, found = sym, true
		}
	}
	return best, found
}

// symEntry is one decoded entry of a symbol block, its name aside.
type symEntry struct {
	addr    uint64
	section uint8
	source  symtab.Source
	shared  uint64 // name bytes shared with the previous entry's
	suffix  []byte // the rest of the name
}

// symDecoder reads the entries of one symbol block.
type symDecoder struct {
	b       []byte
	shift   uint
	prev    symEntry
	nameLen uint64 // the previous entry's name length
}

// next decodes the next entry; shared tells how many bytes of the
// previous entry's name it keeps.
func (d *symDecoder) next() (symEntry, bool) {
	step, n := binary.Uvarint(d.b)
	if n <= 0 || step > math.MaxUint64>>d.shift {
		return symEntry{}, false
	}
	d.b = d.b[n:]
	e := symEntry{addr: d.prev.addr + step<<d.shift, section: d.prev.section}
	head, n := binary.Uvarint(d.b)
	if n <= 0 || head>>3 > d.nameLen {
		return symEntry{}, false
	}
	d.b = d.b[n:]
	e.shared, e.source = d.nameLen-head>>3, symtab.Source(head&3)
	if head&4 != 0 {
		if len(d.b) == 0 {
			return symEntry{}, false
		}
		e.section, d.b = d.b[0], d.b[1:]
	}
	size, n := binary.Uvarint(d.b)
	if n <= 0 || size > uint64(len(d.b)-n) {
		return symEntry{}, false
	}
	e.suffix = d.b[n : n+int(size)]
	d.b = d.b[n+int(size):]
	d.prev, d.nameLen = e, e.shared+size
	return e, true
}

// find returns the entry answering for addr in t: the last at or below
// it, in addr's section when the table has sections (symtab.Table's rule;
// entries of one address share a block).
func (ix *Index) find(t *table, addr uint64, cached bool) (symtab.Entry, bool) {
	if !ix.verify(t.blocks) || !ix.verify(t.ranges) {
		return symtab.Entry{}, false
	}
	nb := len(t.blocks.b) / symBlockSize
	lo := t.search.count(t.blocks.b, symBlockSize, nb, addr, ix.allGood.Load())
	if lo == 0 {
		return symtab.Entry{}, false
	}
	if c := t.cache[lo-1].Load(); c != nil && cached {
		return c.find(t, addr)
	}
	blk := t.blocks.b[symBlockSize*(lo-1):]
	first, off, count := le.Uint64(blk), uint64(le.Uint32(blk[8:])), le.Uint32(blk[12:])
	shift := uint(min(count>>24, 63))
	deflated := count&blockDeflated != 0
	count &= maxBlockEntries
	end := uint64(len(t.stream.b))
	if lo < nb {
		end = uint64(le.Uint32(t.blocks.b[symBlockSize*lo+8:]))
	}
	if off > end || end > uint64(len(t.stream.b)) || !ix.verifyRange(t.stream.off+off, t.stream.off+end) {
		return symtab.Entry{}, false
	}
	block := t.stream.b[off:end]
	if deflated {
		if block = inflate(block); block == nil {
			return symtab.Entry{}, false
		}
	} else if cached {
		// A block in code is decoded whole once and kept; its chunks
		// were checked before, and checked chunks stay good.
		if c := decodeSymBlock(block, first, shift, count); c != nil {
			t.cache[lo-1].Store(c)
			return c.find(t, addr)
		}
	}

	// A compressed block, or one beyond the cache's bounds, is read
	// entry by entry up to addr. The answer's position in the block: in
	// the last run of entries at or below addr that share an address,
	// the last in addr's section answers (without sections, the last
	// entry). The names are rebuilt on the way (front-coded from the
	// block's first entry); the answer is nearly always the last entry
	// read, whose name is then at hand.
	start, sect, sectioned, ok := t.section(addr)
	if !ok {
		return symtab.Entry{}, false
	}
	d := symDecoder{b: block, shift: shift, prev: symEntry{addr: first}}
	pick, runAddr := -1, uint64(0)
	var buf [256]byte
	name := buf[:0]
	var e, last symEntry
	read, badName := 0, int(count) // entries read; the first whose name is damaged
	for i := uint32(0); i < count; i++ {
		next, ok := d.next()
		if !ok || next.addr > addr {
			break
		}
		e, read = next, int(i)+1
		if badName == int(count) {
			if e.shared > uint64(len(name)) || e.shared+uint64(len(e.suffix)) > maxStringLen {
				badName = int(i)
			} else {
				name = append(name[:e.shared], e.suffix...)
			}
		}
		if i == 0 || e.addr != runAddr {
			pick, runAddr = -1, e.addr
		}
		if !sectioned || (e.section == sect && e.addr >= start) {
			pick, last = int(i), e
		}
	}
	if pick < 0 || pick >= badName {
		return symtab.Entry{}, false
	}
	e = last
	if pick != read-1 {
		// An entry of another section followed at the same address:
		// decode the names again up to the answer.
		d = symDecoder{b: block, shift: shift, prev: symEntry{addr: first}}
		name = name[:0]
		for i := 0; i <= pick; i++ {
			next, _ := d.next() // read before without error
			name = append(name[:next.shared], next.suffix...)
		}
	}
	out := symtab.Entry{Addr: e.addr, Section: e.section, Source: e.source}
	if e.source != symtab.SourceFunctionStarts {
		out.RawName = string(name)
	}
	return out, true
}

// InDataSection reports whether a symbol table of the index places addr
// in a section that holds no instructions (symtab.Table.InDataSection):
// a symbol there names data, not a function.
func (ix *Index) InDataSection(addr uint64) bool {
	for i := range ix.tables {
		if flags, ok := ix.tables[i].rangeFlags(addr); ok {
			return flags&rangeData != 0
		}
	}
	return false
}

// rangeFlags returns the flags of the section range holding addr; ok is
// false when the table has no sections or none holds addr.
func (t *table) rangeFlags(addr uint64) (flags byte, ok bool) {
	k, ok := t.rangeAt(addr)
	if !ok {
		return 0, false
	}
	return t.ranges.b[rangeSize*k+17], true
}

// section returns the section holding addr (the last starting at or
// below it) and its start; sectioned is false when the table has no
// sections, and ok false when addr lies in none of them.
func (t *table) section(addr uint64) (start uint64, sect uint8, sectioned, ok bool) {
	if len(t.ranges.b) < rangeSize {
		return 0, 0, false, true
	}
	k, ok := t.rangeAt(addr)
	if !ok {
		return 0, 0, true, false
	}
	r := t.ranges.b[rangeSize*k:]
	return le.Uint64(r), r[16], true, true
}

// rangeAt returns the index of the section range holding addr: the last
// starting at or below it, if addr lies before its end.
func (t *table) rangeAt(addr uint64) (int, bool) {
	n := len(t.ranges.b) / rangeSize
	k := n - 1
	if t.rangesSorted {
		// The first starting above addr, less one.
		lo, hi := 0, n
		for lo < hi {
			m := int(uint(lo+hi) >> 1)
			if le.Uint64(t.ranges.b[rangeSize*m:]) > addr {
				hi = m
			} else {
				lo = m + 1
			}
		}
		k = lo - 1
	} else {
		for k >= 0 && le.Uint64(t.ranges.b[rangeSize*k:]) > addr {
			k--
		}
	}
	if k < 0 || addr >= le.Uint64(t.ranges.b[rangeSize*k+8:]) {
		return 0, false
	}
	return k, true
}

// symBlock is a symbol block in code decoded once and kept (table.cache):
// lookups in code meet the same few thousand blocks again and again, and
// decoding one, its names rebuilt, costs more than the rest of a symbol
// lookup. Compressed blocks (outside code) are decoded per lookup.
type symBlock struct {
	entries []blockSymbol // as decoded, up to the first that could not be
	badName int           // the first entry whose name is damaged; len(entries) when none
}

// blockSymbol is one entry of a symBlock; its name is part of one string
// holding the block's names.
type blockSymbol struct {
	addr    uint64
	name    string
	section uint8
	source  symtab.Source
}

// Bounds of what a symBlock may hold: blocks in code hold about blockSize
// entries with their names front-coded, which rebuilt take a few times
// the block's bytes. A block beyond them (only a hostile file makes one)
// is decoded per lookup instead, as compressed blocks are.
const (
	maxCachedEntries   = 256
	cachedNamesPerByte = 16
	cachedNamesSlack   = 4096
)

// decodeSymBlock decodes a symbol block as find reads it, nil when it is
// beyond the bounds above.
func decodeSymBlock(block []byte, first uint64, shift uint, count uint32) *symBlock {
	if count > maxCachedEntries {
		return nil
	}
	limit := cachedNamesPerByte*len(block) + cachedNamesSlack
	c := &symBlock{entries: make([]blockSymbol, 0, count), badName: -1}
	type span struct{ lo, hi int }
	spans := make([]span, 0, count)
	var names []byte
	prev := span{}
	d := symDecoder{b: block, shift: shift, prev: symEntry{addr: first}}
	for i := uint32(0); i < count; i++ {
		e, ok := d.next()
		if !ok {
			break
		}
		c.entries = append(c.entries, blockSymbol{addr: e.addr, section: e.section, source: e.source})
		if c.badName >= 0 {
			spans = append(spans, span{})
			continue
		}
		if e.shared > uint64(prev.hi-prev.lo) || e.shared+uint64(len(e.suffix)) > maxStringLen {
			c.badName = int(i)
			spans = append(spans, span{})
			continue
		}
		if len(names)+int(e.shared)+len(e.suffix) > limit {
			return nil
		}
		lo := len(names)
		names = append(names, names[prev.lo:prev.lo+int(e.shared)]...)
		names = append(names, e.suffix...)
		prev = span{lo, len(names)}
		spans = append(spans, prev)
	}
	if c.badName < 0 {
		c.badName = len(c.entries)
	}
	all := unsafeString(names) // never written again: the names share its bytes
	for i, sp := range spans {
		c.entries[i].name = all[sp.lo:sp.hi]
	}
	return c
}

// find is Index.find in a decoded block of t.
func (c *symBlock) find(t *table, addr uint64) (symtab.Entry, bool) {
	start, sect, sectioned, ok := t.section(addr)
	if !ok {
		return symtab.Entry{}, false
	}
	// As in Index.find: the last entry in addr's section of the last run
	// of entries at or below addr that share an address.
	pick, runAddr := -1, uint64(0)
	for i := range c.entries {
		e := &c.entries[i]
		if e.addr > addr {
			break
		}
		if i == 0 || e.addr != runAddr {
			pick, runAddr = -1, e.addr
		}
		if !sectioned || (e.section == sect && e.addr >= start) {
			pick = i
		}
	}
	if pick < 0 || pick >= c.badName {
		return symtab.Entry{}, false
	}
	e := &c.entries[pick]
	out := symtab.Entry{Addr: e.addr, Section: e.section, Source: e.source}
	if e.source != symtab.SourceFunctionStarts {
		out.RawName = e.name
	}
	return out, true
}
