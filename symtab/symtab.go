// Package symtab finds the nearest symbol for an address in a Mach-O image,
// fast on tables of millions of entries, with fallbacks for stripped images.
//
// A Table merges three sources, in this order of preference:
//
//  1. LC_SYMTAB: defined section symbols, local and external.
//  2. The export trie: names for exported functions of images whose symbol
//     table was stripped.
//  3. LC_FUNCTION_STARTS: where functions begin, without names.
//
// All entries live in one array sorted by address, with at most one entry
// per address and section, and a bucket index over the address range
// points into it (two levels where the addresses cluster, as code and data
// do), so a lookup reads one or two small tables and two or three cache
// lines of entries; LookupBatch has the reads of many lookups under way at
// once. A function start (or export) above the nearest LC_SYMTAB symbol is
// its own entry, so an address in a function the symbol table does not
// name is answered from the function starts instead of being attributed
// to the previous symbol.
//
// Names stay in the image's string table; a lookup slices the name out of
// it by the offset and length the entry holds, without reading its bytes.
package symtab

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/lookup"
)

// Source says which data answered a lookup. It is a plain value, safe to
// share.
type Source int

const (
	SourceSymtab         Source = iota // LC_SYMTAB
	SourceExports                      // the export trie
	SourceFunctionStarts               // LC_FUNCTION_STARTS: a boundary, no name
)

// String returns the load command or table the source stands for.
func (s Source) String() string {
	switch s {
	case SourceSymtab:
		return "symtab"
	case SourceExports:
		return "exports"
	case SourceFunctionStarts:
		return "function-starts"
	}
	return "Source(" + strconv.Itoa(int(s)) + ")"
}

// SyntheticPrefix starts the name given to a function known only by its
// start address: "func_" and the unslid address in lower-case hex, as in
// "func_100003f6c". Apple's tools print a bare address in that case; a name
// that keeps the address stays unique per image and greps well, and
// fuzzy-matches what other symbolizers print (symbolic's "__func_", radare's
// "fcn."), so nobody mistakes it for a real symbol.
const SyntheticPrefix = "func_"

// Symbol is the answer to a lookup. It is a plain value, safe to copy and
// share; its names are strings of their own, which stay valid however
// long the Table lives.
type Symbol struct {
	// Name is the symbol's name with C's leading underscore removed;
	// for a function known only by its start, "func_<hex address>".
	Name string
	// RawName is the name as the table holds it; empty for a function known
	// only by its start.
	RawName string
	Addr    uint64 // unslid start of the symbol
	Offset  uint64 // the looked-up address minus Addr
	Source  Source
}

// FormatError reports a malformed symbol table: what is wrong, the
// offending value when there is one, and where. Off is the byte offset in
// the nlist array, or the index in the list the error names. It is a plain
// value, safe to share once returned.
type FormatError struct {
	Off int64
	Msg string
	Val any
}

func (e *FormatError) Error() string {
	msg := "symtab: " + e.Msg
	if e.Val != nil {
		msg += fmt.Sprintf(" (%v)", e.Val)
	}
	return msg + fmt.Sprintf(" at offset %#x", e.Off)
}

// nlist constants, as <mach-o/nlist.h> defines them.
const (
	nStab = 0xe0 // N_STAB: any of these bits makes a debugging entry
	nType = 0x0e // N_TYPE: the type bits
	nSect = 0x0e // N_SECT: defined in section n_sect

	nlistSize   = 12 // sizeof(struct nlist)
	nlist64Size = 16 // sizeof(struct nlist_64)

	// maxEntries bounds the table: nlist's n_strx and our name offsets are
	// 32-bit, and no real image comes near 2^32 symbols.
	maxEntries = 1<<32 - 1
)

// noName marks an entry without a name: a bare function start.
const noName = ^uint32(0)

// longName in entry.nameLen marks a name of longName bytes or more, whose
// length a lookup finds by looking for its NUL. Real names are shorter.
const longName = ^uint16(0)

// Table is an image's symbols sorted by address.
//
// A Table is immutable once New or NewFromParts returns, and safe for
// concurrent use: Lookup, LookupBatch, End, Entry, Warnings and the size
// methods only read it, NamesPrintable finds its answer once under a
// sync.Once, and it keeps no reference to the image or its file.
//
// Each entry is 16 bytes holding everything a lookup needs (address, name
// offset and length, section, source), so that the answer costs one cache
// line; the bucket index adds about a byte per entry (at most four). Names
// are offsets into strtab (symtab entries) or extra (export names, which
// the trie does not give as one table).
type Table struct {
	entries []entry // sorted by address; unique per (address, section)
	index   bucketIndex

	// strtab is the image's string table, converted to a string once so
	// that a lookup slices a name out of it without allocating.
	strtab string
	extra  string // export names, NUL-terminated

	sections []span // sorted by address; empty when the caller gave none

	// ranges holds, for each n_sect value, the addresses spanOf gives to
	// that section, so that a lookup checks its entry's section with one
	// comparison instead of a search of the sections. Empty for a value
	// no section or several sections have; everything when the table was
	// built without sections.
	ranges [256]addrRange

	// ends holds the offsets of strtab's NULs while the table is built,
	// found once scanBudget is spent, so that finding where a long name
	// ends costs a binary search, not a scan of the name: names may
	// overlap (a hostile table points thousands of symbols into one long
	// string).
	ends []uint32
	// scanBudget is how many bytes the scans for long names' ends may
	// still read while the table is built: the string table's size, so
	// that they cost no more than finding all its NULs would.
	scanBudget int

	printable     sync.Once
	printableSeen bool // every name is printable ASCII; set by printable

	warnings     []error // the first maxWarnings problems
	moreWarnings int     // problems beyond those
}

// addrRange is the half-open range [start, start+size).
type addrRange struct{ start, size uint64 }

// contains reports whether addr is in the range, with one comparison.
func (r *addrRange) contains(addr uint64) bool { return addr-r.start < r.size }

// span is one section's half-open address range; data when its headers
// mark no instructions.
type span struct {
	start, end uint64
	index      uint8
	data       bool
}

// compareEntries orders entries by address, then section, source and name
// offset, so that the entry kept at one address does not depend on the
// order of the input.
func compareEntries(a, b entry) int {
	if c := cmp.Compare(a.addr, b.addr); c != 0 {
		return c
	}
	if c := cmp.Compare(a.sect, b.sect); c != 0 {
		return c
	}
	if c := cmp.Compare(a.kind.source(), b.kind.source()); c != 0 {
		return c
	}
	return cmp.Compare(a.name, b.name)
}

// entry is one symbol of the table.
type entry struct {
	addr    uint64
	name    uint32 // offset of the NUL-terminated name in strtab or extra; noName for none
	nameLen uint16 // length of the name, or longName
	sect    uint8  // 1-based section index (n_sect); 0 when unknown
	kind    kind   // the Source, and whether the name starts with '_'
}

// kind packs an entry's Source and a flag for a leading underscore, so
// that removing it does not read the name.
type kind uint8

const (
	kindSource     kind = 0x03 // the bits holding the Source
	kindUnderscore kind = 0x04 // the name starts with '_'
	// kindFast marks an entry whose name Lookup slices out of strtab or
	// extra by its offset and length: a name shorter than longName, of
	// the symbol table or the export trie.
	kindFast kind = 0x08
)

// makeKind returns the kind of an entry from src with the given name.
func makeKind(src Source, name string) kind {
	k := kind(src)
	if len(name) > 0 && name[0] == '_' {
		k |= kindUnderscore
	}
	if src != SourceFunctionStarts && nameLength(len(name)) != longName {
		k |= kindFast
	}
	return k
}

func (k kind) source() Source { return Source(k & kindSource) }

// nameLength returns what entry.nameLen holds for a name of n bytes.
func nameLength(n int) uint16 {
	if n >= int(longName) {
		return longName
	}
	return uint16(n)
}

// New indexes the image's symbols: LC_SYMTAB, LC_FUNCTION_STARTS and the
// export trie, bounded by its sections. A damaged part costs only itself:
// what could be read of it is kept, and Warnings says what was left out.
func New(im *image.Image) (*Table, error) {
	if im == nil {
		return nil, errors.New("symtab: nil image")
	}
	var warnings []error
	raw, ok, err := im.Symtab()
	if err != nil {
		warnings = append(warnings, fmt.Errorf("symtab: LC_SYMTAB skipped: %w", err))
	}
	if !ok || err != nil {
		raw = image.RawSymtab{}
	}
	starts, err := im.FunctionStarts()
	if err != nil {
		warnings = append(warnings, fmt.Errorf("symtab: LC_FUNCTION_STARTS read up to the damage (%d starts): %w", len(starts), err))
	}
	if im.Arch != nil && im.Arch.CodeBits != 0 {
		// LC_FUNCTION_STARTS sets bit 0 on Thumb functions, as a
		// branch target would; the instruction starts one byte lower.
		starts = codeAddresses(starts, im.Arch)
	}
	exports, err := im.Exports()
	if err != nil {
		warnings = append(warnings, fmt.Errorf("symtab: export trie read in part (%d exports): %w", len(exports), err))
	}
	// The bytes im.Symtab read are ours alone: the table keeps them
	// rather than a copy.
	t, err := newFromParts(raw, unsafe.String(unsafe.SliceData(raw.Strings), len(raw.Strings)), im.Sections, starts, exports)
	if err != nil {
		return nil, err
	}
	for _, w := range warnings {
		t.warn(w)
	}
	return t, nil
}

// codeAddresses returns starts without the bits of a code pointer that are
// not part of the address.
func codeAddresses(starts []uint64, arch *archregs.Arch) []uint64 {
	out := make([]uint64, len(starts))
	for i, a := range starts {
		out[i] = arch.CodeAddress(a)
	}
	return out
}

// NewFromParts builds a table from the pieces of an image: its raw
// LC_SYMTAB (the zero value when it has none), its sections (which bound
// every symbol; nil to skip that check), its function starts and its export
// trie entries (either may be nil). It keeps a copy of raw.Strings, not raw.
//
// From the symbol table it keeps defined section symbols (N_SECT), local
// and external, and drops debugging stabs, undefined, absolute and indirect
// entries, unnamed entries, entries at address 0 outside a section that
// starts at 0 (in a linked image that is an external object's placeholder;
// in an object file the first function really is at 0), and the mach
// header's own symbol (__mh_execute_header and its kin), which would
// otherwise swallow every address of a stripped image.
//
// When several symbols share an address, a real name is kept over a
// bitcode-hidden one ("__hidden#12_"), an exported name over a hidden
// symbol table one too, and among equals the greatest name
// (bytewise, leading underscore removed): that is what llvm-symbolizer
// answers (it sorts by address, size and name and keeps the last), and
// agreeing with it makes our answers comparable. Names are compared on
// their first maxNameCompare bytes only, so that a hostile table of long
// names at one address costs linear time; names equal that far are ordered
// by length, the longer kept. The work is linear in the number of symbols
// and the size of the string table.
//
// A symbol whose name lies outside the string table is skipped, a symbol
// table that cannot be read at all is left out, and the table says so in
// Warnings. The error is only for a table too large to index.
func NewFromParts(raw image.RawSymtab, sections []image.Section, starts []uint64, exports []image.Export) (*Table, error) {
	return newFromParts(raw, string(raw.Strings), sections, starts, exports)
}

// newFromParts is NewFromParts with the string table given as the string
// the table keeps.
func newFromParts(raw image.RawSymtab, strtab string, sections []image.Section, starts []uint64, exports []image.Export) (*Table, error) {
	t := &Table{strtab: strtab, scanBudget: len(strtab)}
	t.sections = makeSpans(sections)
	t.ranges = sectionRanges(t.sections)

	// Room for every candidate at once: growing the slice would copy it.
	entries, err := t.readSymtab(raw, len(starts)+len(exports))
	if err != nil {
		// The export trie and function starts still name functions.
		t.warn(err)
	}
	if len(entries)+len(starts)+len(exports) > maxEntries {
		return nil, &FormatError{Msg: "too many symbols", Val: len(entries) + len(starts) + len(exports)}
	}
	var extra []byte
	for _, e := range exports {
		if e.Name == "" || isMachHeader(e.Name) {
			continue
		}
		sect, ok := t.sectionOf(e.Addr)
		if !ok {
			// Exports outside every section (absolute values the image
			// package let through) name no code here.
			continue
		}
		if len(extra)+len(e.Name)+1 > maxEntries {
			return nil, &FormatError{Msg: "export names too long", Val: len(extra)}
		}
		// A lookup answers the name up to its first NUL, as extra
		// holds it.
		name := cstring(e.Name)
		entries = append(entries, entry{addr: e.Addr, name: uint32(len(extra)), nameLen: nameLength(len(name)), sect: sect, kind: makeKind(SourceExports, name)})
		extra = append(extra, e.Name...)
		extra = append(extra, 0)
	}
	t.extra = string(extra)
	for _, a := range starts {
		sect, ok := t.sectionOf(a)
		if !ok {
			continue
		}
		entries = append(entries, entry{addr: a, name: noName, sect: sect, kind: kind(SourceFunctionStarts)})
	}

	// Order by address and section, then source (symtab before exports
	// before function starts), then name offset, which keeps exports in
	// the trie's order. Every comparison is of integers: comparing names
	// here would make a table of many names at one address quadratic.
	sortEntries(entries, compareEntries)
	// Keep one entry per (address, section): among symtab entries the
	// preferred name (see the doc comment), found in one pass over the run;
	// otherwise the run's first.
	n := 0
	for i := 0; i < len(entries); {
		best := entries[i]
		j := i + 1
		for ; j < len(entries) && entries[j].addr == best.addr && entries[j].sect == best.sect; j++ {
			switch e := entries[j]; {
			case e.kind.source() == SourceSymtab && t.preferName(e.name, best.name):
				best = e
			case e.kind.source() == SourceExports && best.kind.source() == SourceSymtab &&
				isHidden(prefix(t.strtab, best.name)) && !isHidden(prefix(t.extra, e.name)):
				// A real exported name over a bitcode-hidden one.
				best = e
			}
		}
		entries[n] = best
		n++
		i = j
	}
	entries = entries[:n]
	t.ends = nil // only needed while building

	// A copy of exactly n entries: the candidates' array is larger.
	t.entries = slices.Clone(entries)
	t.index = newBucketIndex(t.entries)
	return t, nil
}

// readSymtab returns the LC_SYMTAB entries worth keeping, in a slice with
// room for extra more.
func (t *Table) readSymtab(raw image.RawSymtab, extra int) ([]entry, error) {
	if raw.NSyms == 0 {
		return make([]entry, 0, extra), nil
	}
	size := nlistSize
	if raw.Is64 {
		size = nlist64Size
	}
	if raw.NSyms < 0 || raw.NSyms > len(raw.Syms)/size {
		return nil, &FormatError{Msg: fmt.Sprintf("LC_SYMTAB skipped: symbol count larger than the %d bytes of nlist data", len(raw.Syms)), Val: raw.NSyms}
	}
	if raw.ByteOrder == nil {
		return nil, &FormatError{Msg: "LC_SYMTAB skipped: symbol table without a byte order"}
	}
	bo := raw.ByteOrder
	// The count is bounded by the data, which the image package bounded
	// by the file: allocating for all of it is safe.
	entries := make([]entry, 0, raw.NSyms+extra)
	for i := 0; i < raw.NSyms; i++ {
		off := i * size
		b := raw.Syms[off : off+size]
		strx := bo.Uint32(b[0:4])
		typ, sect := b[4], b[5]
		var value uint64
		if raw.Is64 {
			value = bo.Uint64(b[8:16])
		} else {
			value = uint64(bo.Uint32(b[8:12]))
		}
		if typ&nStab != 0 || typ&nType != nSect || sect == 0 {
			continue
		}
		if value == 0 && !t.sectionStartsAtZero(sect) {
			continue
		}
		if strx == 0 {
			// n_strx 0 is the null name, whatever the table's first
			// byte (customarily a space) says.
			continue
		}
		if uint64(strx) >= uint64(len(t.strtab)) {
			// One bad entry costs itself, not the table.
			t.warn(&FormatError{Off: int64(off), Msg: fmt.Sprintf("LC_SYMTAB: symbol %d skipped: its name offset is past the %d-byte string table", i, len(t.strtab)), Val: strx})
			continue
		}
		name := t.name(strx)
		if len(name) == 0 || isMachHeader(name) {
			continue
		}
		entries = append(entries, entry{addr: value, name: strx, nameLen: nameLength(len(name)), sect: sect, kind: makeKind(SourceSymtab, name)})
	}
	return entries, nil
}

// sectionStartsAtZero reports whether section n begins at address 0, as
// sections of object files do.
func (t *Table) sectionStartsAtZero(n uint8) bool {
	for _, s := range t.sections {
		if s.index == n {
			return s.start == 0
		}
	}
	return false
}

// isMachHeader reports whether a raw name is the linker's symbol for the
// mach header (__mh_execute_header, __mh_dylib_header, __mh_bundle_header,
// __mh_dylinker_header, ...). It marks the start of __TEXT, not code, and
// on a stripped image it is the only symbol left.
func isMachHeader(raw string) bool {
	const prefix, suffix = "__mh_", "_header"
	return len(raw) >= len(prefix)+len(suffix) && raw[:len(prefix)] == prefix && raw[len(raw)-len(suffix):] == suffix
}

// prefix returns the first bytes of the string at off in a table of
// NUL-terminated strings: enough for isHidden, in constant time.
func prefix(table string, off uint32) string {
	return table[off:min(int(off)+len("___hidden#"), len(table))]
}

// cstring returns s up to its first NUL, or all of s.
func cstring(s string) string {
	if i := strings.IndexByte(s, 0); i >= 0 {
		return s[:i]
	}
	return s
}

// maxNameCompare is how much of two names at one address is compared to
// choose between them. Real names that differ do so well before it; a
// hostile table gains nothing by making names longer.
const maxNameCompare = 4096

// shortNameScan is how far name looks for a NUL before it counts what it
// reads against the table's scan budget.
const shortNameScan = 256

// nulOffsets returns the offsets of s's NUL bytes, in order.
func nulOffsets(s string) []uint32 {
	ends := []uint32{} // not nil: name finds them once even when there are none
	for off := 0; ; {
		i := strings.IndexByte(s[off:], 0)
		if i < 0 {
			return ends
		}
		ends = append(ends, uint32(off+i))
		off += i + 1
	}
}

// name returns the NUL-terminated string table name at off, while the
// table is built, in time linear in the string table's size over all
// calls.
func (t *Table) name(off uint32) string {
	// Most names are short: look for the NUL nearby.
	near := t.strtab[off:min(int(off)+shortNameScan, len(t.strtab))]
	if i := strings.IndexByte(near, 0); i >= 0 {
		return near[:i]
	}
	if t.ends == nil && t.scanBudget > 0 {
		// A long name (C++ templates, Swift generics): look further,
		// within the budget.
		far := t.strtab[off:min(int(off)+t.scanBudget, len(t.strtab))]
		i := strings.IndexByte(far, 0)
		if i >= 0 {
			t.scanBudget -= i + 1
			return far[:i]
		}
		t.scanBudget -= len(far)
	}
	// Many symbols may point into one long unterminated string: the NULs
	// are found once, in one scan, and each name costs a binary search.
	if t.ends == nil {
		t.ends = nulOffsets(t.strtab)
	}
	i, _ := slices.BinarySearch(t.ends, off)
	if i == len(t.ends) {
		return t.strtab[off:]
	}
	return t.strtab[off:t.ends[i]]
}

// preferName reports whether the string table name at a is preferred to
// the one at b for one address: a real name over a bitcode-hidden one,
// else the greater key on the first maxNameCompare bytes, else the longer.
func (t *Table) preferName(a, b uint32) bool {
	na, nb := t.name(a), t.name(b)
	if ha, hb := isHidden(na), isHidden(nb); ha != hb {
		return hb
	}
	ka, kb := key(na), key(nb)
	if c := strings.Compare(ka[:min(len(ka), maxNameCompare)], kb[:min(len(kb), maxNameCompare)]); c != 0 {
		return c > 0
	}
	return len(ka) > len(kb)
}

// key is what llvm-symbolizer orders same-address symbols by: the raw name
// with one leading underscore removed.
func key(name string) string {
	if len(name) > 0 && name[0] == '_' {
		name = name[1:]
	}
	return name
}

// isHidden reports whether a raw name is one the linker made up for a
// symbol whose name bitcode compilation hid ("__hidden#12_"): any real name
// at the same address says more.
func isHidden(raw string) bool {
	// Look past at most three underscores: a hostile name of nothing but
	// underscores must not cost its length at every comparison.
	i := 0
	for i < len(raw) && i < 3 && raw[i] == '_' {
		i++
	}
	return strings.HasPrefix(raw[i:], "hidden#")
}

// makeSpans returns the sections' ranges sorted by address, leaving out
// empty sections and those n_sect cannot name.
func makeSpans(sections []image.Section) []span {
	spans := make([]span, 0, len(sections))
	for _, s := range sections {
		if s.Size == 0 || s.Index <= 0 || s.Index > 255 || s.Addr+s.Size < s.Addr {
			continue
		}
		spans = append(spans, span{start: s.Addr, end: s.Addr + s.Size, index: uint8(s.Index), data: !s.HoldsInstructions()})
	}
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.start, b.start) })
	return spans
}

// sectionRanges returns, for each n_sect value, the addresses whose
// section (as spanOf finds it) it names: its section's range, cut short
// where the next section starts, since spanOf gives an address in two
// overlapping sections to the later one. A value that names no section, or
// several, gets an empty range. Without sections, every value gets every
// address but the last, which find then answers the slow way.
func sectionRanges(spans []span) [256]addrRange {
	var r [256]addrRange
	if len(spans) == 0 {
		for i := range r {
			r[i] = addrRange{0, ^uint64(0)}
		}
		return r
	}
	var seen [256]int
	for _, s := range spans {
		seen[s.index]++
	}
	for i, s := range spans {
		end := s.end
		if i+1 < len(spans) {
			end = min(end, spans[i+1].start)
		}
		if seen[s.index] == 1 && end > s.start {
			r[s.index] = addrRange{s.start, end - s.start}
		}
	}
	return r
}

// sectionOf returns the index of the section holding addr. Without sections
// every address is accepted, with section 0.
func (t *Table) sectionOf(addr uint64) (uint8, bool) {
	if len(t.sections) == 0 {
		return 0, true
	}
	s, ok := t.spanOf(addr)
	return s.index, ok
}

// spanOf returns the section holding addr.
func (t *Table) spanOf(addr uint64) (span, bool) {
	// Images have a few dozen sections at most: a linear scan beats a
	// binary search here.
	i := len(t.sections) - 1
	for i >= 0 && t.sections[i].start > addr {
		i--
	}
	if i < 0 || addr >= t.sections[i].end {
		return span{}, false
	}
	return t.sections[i], true
}

// Lookup returns the closest symbol at or below the unslid address, never
// across a section boundary or past the end of its section. An address in
// no section, or below its section's first symbol, is not found: the
// error is then ErrNotFound.
//
// The common case (an address in a bucket that fits the window, whose
// nearest entry is of its section and has a short name of the string
// table) takes windowStart, inWindow, fastEntry and setSymbol, which
// LookupBatch runs pass by pass; lookup answers everything else.
func (t *Table) Lookup(addr uint64) (Symbol, error) {
	if w, ok := t.windowStart(addr); ok {
		if e := t.fastEntry(addr, t.inWindow(addr, w)); e != nil {
			var s Symbol
			t.setSymbol(&s, e, addr)
			return s, nil
		}
	}
	if s, ok := t.lookup(addr); ok {
		return s, nil
	}
	return Symbol{}, ErrNotFound
}

// ErrNotFound is Lookup's error for an address no symbol covers:
// lookup.ErrNotFound, the one "not found" of every Lookup and Resolve.
var ErrNotFound = lookup.ErrNotFound

// windowStart returns where addr's window starts: at the entry before
// its fine bucket, when the bucket fits the window (see window) and the
// window fits the entries.
func (t *Table) windowStart(addr uint64) (int, bool) {
	f, ok := t.index.fine(addr)
	if !ok {
		return 0, false
	}
	lo, hi := t.index.first[f], t.index.first[f+1]
	return int(lo) - 1, lo > 0 && hi-lo < window && int(lo)-1+window <= len(t.entries)
}

// inWindow returns the index of the nearest entry at or below addr, given
// the start w of its window. The window's first entry, before the bucket,
// is below addr, and entries past the bucket are above it: counting those
// at or below addr among the others gives the answer, without branching on
// them.
func (t *Table) inWindow(addr uint64, w int) int {
	e := (*[window]entry)(t.entries[w : w+window])
	return w + b2i(e[1].addr <= addr) + b2i(e[2].addr <= addr) +
		b2i(e[3].addr <= addr) + b2i(e[4].addr <= addr) +
		b2i(e[5].addr <= addr) + b2i(e[6].addr <= addr) +
		b2i(e[7].addr <= addr)
}

// fastEntry returns entry i when it answers for addr and setSymbol can
// make the answer: nearly always the nearest entry is of addr's section,
// which its section's range says in one test, and has a short name of the
// string table. It returns nil otherwise, and for i < 0.
func (t *Table) fastEntry(addr uint64, i int) *entry {
	if i < 0 || i >= len(t.entries) {
		return nil
	}
	e := &t.entries[i]
	r := &t.ranges[e.sect]
	if addr-r.start >= r.size || e.addr < r.start || e.kind&kindFast == 0 {
		return nil
	}
	return e
}

// setSymbol sets s to the answer for addr from an entry fastEntry
// returned. It sets the fields one by one: a Symbol made and then copied
// goes through the stack, which costs as much as the search.
func (t *Table) setSymbol(s *Symbol, e *entry, addr uint64) {
	names := t.strtab
	if e.kind.source() == SourceExports {
		names = t.extra
	}
	raw := names[e.name : e.name+uint32(e.nameLen)]
	s.Name = raw[int(e.kind&kindUnderscore)>>2:]
	s.RawName = raw
	s.Addr, s.Offset, s.Source = e.addr, addr-e.addr, e.kind.source()
}

// batchChunk is how many addresses each pass of LookupBatch takes at a
// time: enough for many loads from memory to be under way at once, few
// enough that what the chunks in the pipeline bring (four cache lines an
// address) stays in the CPU's first two levels of cache until the next
// pass uses it. Measured on a million symbols, 16 and 32 were 10% and 5%
// slower than 64.
const batchChunk = 64

// LookupBatch looks up addrs[k] as Lookup does and stores the answer in
// syms[k] and whether it was found in found[k], for k below the shortest
// of the three lengths, which it returns.
//
// On a large table it is faster than calling Lookup for each address,
// because it overlaps the lookups' waits for memory. A lookup waits for
// its bucket, then for its entries, and costs too many instructions for
// the CPU to run far enough ahead to start the next lookup's loads
// meanwhile. LookupBatch runs Lookup's steps as passes over a chunk of
// addresses: the loads of one pass are independent of each other, so the
// CPU has many under way at once, and the next pass finds their data in
// its cache. docs/bench.md gives the figures.
func (t *Table) LookupBatch(addrs []uint64, syms []Symbol, found []bool) int {
	n := min(len(addrs), len(syms), len(found))
	chunks := (n + batchChunk - 1) / batchChunk
	chunk := func(j int) (start, end int) {
		return j * batchChunk, min((j+1)*batchChunk, n)
	}
	// A pipeline of three chunks: while the answers of chunk s-2 are
	// made, the entries of chunk s-1 and the buckets of chunk s are on
	// their way, so each pass's loads have a whole step to arrive.
	var windows [3]batchWindows
	for s := 0; s < chunks+2; s++ {
		if s < chunks {
			start, end := chunk(s)
			t.batchBuckets(addrs[start:end], &windows[s%3])
		}
		if j := s - 1; j >= 0 && j < chunks {
			start, end := chunk(j)
			t.batchTouch(&windows[j%3], end-start)
		}
		if j := s - 2; j >= 0 {
			start, end := chunk(j)
			t.batchAnswers(addrs[start:end], &windows[j%3], syms[start:end], found[start:end])
		}
	}
	return n
}

// batchWindows holds where the window (windowStart) of each address of a
// chunk starts, or -1 where Lookup's common case does not apply.
type batchWindows [batchChunk]int

// The passes of LookupBatch are functions of their own, each one loop with
// few values live, which the compiler keeps in registers.

// batchBuckets is LookupBatch's first pass: windowStart, for a chunk.
func (t *Table) batchBuckets(addrs []uint64, w *batchWindows) {
	// Copies, which the stores to w cannot change: the compiler then
	// need not read them again after each.
	x, entries := t.index, len(t.entries)
	for k, addr := range addrs[:min(len(addrs), batchChunk)] {
		w[k] = -1
		if f, ok := x.fine(addr); ok {
			lo, hi := x.first[f], x.first[f+1]
			if lo > 0 && hi-lo < window && int(lo)-1+window <= entries {
				w[k] = int(lo) - 1
			}
		}
	}
}

// batchTouch is LookupBatch's second pass: it reads the first, fifth and
// last entry of each window, which starts the loads of all its cache
// lines: eight entries of 16 bytes are at most three 64-byte lines, and
// entries four apart are in consecutive lines.
func (t *Table) batchTouch(w *batchWindows, n int) {
	entries := t.entries
	var sum uint64
	for _, start := range w[:min(n, batchChunk)] {
		if start >= 0 && start+window <= len(entries) {
			sum += entries[start].addr + entries[start+4].addr + entries[start+window-1].addr
		}
	}
	if sum == 1 {
		keep(sum) // the loads must not be left out
	}
}

// batchAnswers is LookupBatch's last pass: inWindow, fastEntry and
// setSymbol, for a chunk whose entries are now in the cache.
func (t *Table) batchAnswers(addrs []uint64, w *batchWindows, syms []Symbol, found []bool) {
	for k, addr := range addrs[:min(len(addrs), batchChunk, len(syms), len(found))] {
		var e *entry
		if start := w[k]; start >= 0 && start+window <= len(t.entries) {
			// inWindow, written out: the compiler does not inline
			// it, and the call made LookupBatch 10% slower.
			v := (*[window]entry)(t.entries[start : start+window])
			i := start + b2i(v[1].addr <= addr) + b2i(v[2].addr <= addr) +
				b2i(v[3].addr <= addr) + b2i(v[4].addr <= addr) +
				b2i(v[5].addr <= addr) + b2i(v[6].addr <= addr) +
				b2i(v[7].addr <= addr)
			e = t.fastEntry(addr, i)
		}
		if e == nil {
			syms[k], found[k] = t.lookup(addr)
			continue
		}
		t.setSymbol(&syms[k], e, addr)
		found[k] = true
	}
}

// keep does nothing with its argument, out of the compiler's sight.
//
//go:noinline
func keep(uint64) {}

// lookup is Lookup for any address and entry.
func (t *Table) lookup(addr uint64) (Symbol, bool) {
	i, ok := t.find(addr)
	if !ok {
		return Symbol{}, false
	}
	return t.symbol(&t.entries[i], addr), true
}

// symbol makes the answer for entry e and the looked-up address.
func (t *Table) symbol(e *entry, addr uint64) Symbol {
	s := Symbol{Addr: e.addr, Offset: addr - e.addr, Source: e.kind.source()}
	if s.Source == SourceFunctionStarts {
		s.Name = SyntheticPrefix + strconv.FormatUint(s.Addr, 16)
		return s
	}
	s.RawName = t.rawName(e)
	s.Name = s.RawName
	if e.kind&kindUnderscore != 0 {
		s.Name = s.Name[1:]
	}
	return s
}

// End returns where the symbol answering for addr ends: the next symbol's
// start, or its section's end, whichever comes first. An unwinder decoding
// a function's epilogue needs to know where the function stops.
func (t *Table) End(addr uint64) (uint64, bool) {
	i, ok := t.find(addr)
	if !ok {
		return 0, false
	}
	j := t.upperBound(t.entries[i].addr)
	end := uint64(0)
	if j < len(t.entries) {
		end = t.entries[j].addr
	}
	if sec, ok := t.spanOf(addr); ok && (end == 0 || sec.end < end) {
		end = sec.end
	}
	return end, end != 0
}

// find returns the index of the entry answering for addr.
func (t *Table) find(addr uint64) (int, bool) {
	i := t.upperBound(addr) - 1
	if i < 0 {
		return 0, false
	}
	// Nearly always the nearest entry is of addr's section, and its
	// section's range says so in one test.
	e := &t.entries[i]
	r := &t.ranges[e.sect]
	if b2i(r.contains(addr))&b2i(e.addr >= r.start) != 0 {
		return i, true
	}
	return t.findInSection(addr, i)
}

// findInSection is find for an address whose nearest entry, entry i, is
// not known to be of its section: the address may be in no section, below
// its section's first symbol, or share its nearest address with entries of
// other sections.
func (t *Table) findInSection(addr uint64, i int) (int, bool) {
	if len(t.sections) == 0 {
		return i, true
	}
	sec, ok := t.spanOf(addr)
	if !ok {
		return 0, false
	}
	if e := &t.entries[i]; e.sect == sec.index && e.addr >= sec.start {
		return i, true
	}
	return t.findShared(i, sec)
}

// findShared returns the entry of sec among those at the address of entry
// i, which is not of sec. Entries sharing an address may belong to
// different sections (a symbol at one section's end, the next section's
// first symbol). An entry of another section nearer than any of sec's
// means the address precedes sec's first symbol.
func (t *Table) findShared(i int, sec span) (int, bool) {
	at := t.entries[i].addr
	if at < sec.start {
		return 0, false
	}
	for j := i - 1; j >= 0 && t.entries[j].addr == at; j-- {
		if t.entries[j].sect == sec.index {
			return j, true
		}
	}
	return 0, false
}

// rawName returns the name of an entry that has one, as the table holds
// it. It reads the name's bytes only for a name of longName bytes or more.
func (t *Table) rawName(e *entry) string {
	names := t.strtab
	if e.kind.source() == SourceExports {
		names = t.extra
	}
	if e.nameLen == longName {
		return cstring(names[e.name:])
	}
	return names[e.name : int(e.name)+int(e.nameLen)]
}

// maxWarnings bounds the problems a table keeps one by one; beyond it they
// are counted. A hostile table can have a million bad entries.
const maxWarnings = 10

// warn records a part of the image that was skipped.
func (t *Table) warn(err error) {
	if len(t.warnings) < maxWarnings {
		t.warnings = append(t.warnings, err)
		return
	}
	t.moreWarnings++
}

// Warnings returns what of the image could not be read and was left out of
// the table: symbols with a bad name, or a whole part (LC_SYMTAB, the
// export trie, LC_FUNCTION_STARTS) that was damaged, each naming the part
// and the byte offset. The table answers from the rest. It is nil when
// nothing was left out.
func (t *Table) Warnings() []error {
	if t.moreWarnings == 0 {
		return t.warnings
	}
	return append(t.warnings[:len(t.warnings):len(t.warnings)],
		fmt.Errorf("symtab: and %d more problems like these", t.moreWarnings))
}

// Len returns the number of symbols indexed: one per address and section,
// from all sources.
func (t *Table) Len() int { return len(t.entries) }

// Bytes returns the memory the table holds besides its string table
// (StringBytes).
func (t *Table) Bytes() int {
	return cap(t.entries)*int(unsafe.Sizeof(entry{})) + t.index.bytes() + len(t.extra) + cap(t.sections)*int(unsafe.Sizeof(span{}))
}

// NamesPrintable reports whether every name the table can answer is
// printable ASCII (bytes 0x20-0x7e), so that text output can show any of
// them without looking for bytes to escape. The first call reads the
// string tables, eight bytes at a time; later calls cost nothing. It is
// conservative: a byte outside that range anywhere in the image's string
// table, even in a name the table left out, makes it false.
func (t *Table) NamesPrintable() bool {
	t.printable.Do(func() {
		t.printableSeen = printableOrNUL(t.strtab) && printableOrNUL(t.extra)
	})
	return t.printableSeen
}

// printableOrNUL reports whether every byte of s is printable ASCII
// (0x20-0x7e) or the NUL that ends a name.
func printableOrNUL(s string) bool {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	// atLeast(w, lo) sets the high bit of each byte of w that is at least
	// lo; with every byte below 0x80, adding to one cannot carry into the
	// next.
	atLeast := func(w uint64, lo uint64) uint64 { return (w + (0x80-lo)*ones) & highs }
	i := 0
	for ; i+8 <= len(s); i += 8 {
		b := s[i : i+8]
		w := uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
		if w&highs != 0 {
			return false
		}
		printable := atLeast(w, 0x20) &^ atLeast(w, 0x7f)
		nul := highs &^ atLeast(w, 1)
		if printable|nul != highs {
			return false
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c != 0 && (c < 0x20 || c >= 0x7f) {
			return false
		}
	}
	return true
}

// StringBytes returns the size of the string table the table keeps.
func (t *Table) StringBytes() int { return len(t.strtab) }
