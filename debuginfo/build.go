package debuginfo

import (
	"debug/dwarf"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
)

// attrMIPSLinkageName is DW_AT_MIPS_linkage_name, which older compilers
// (and some current ones, for DWARF 2 and 3) emit instead of
// DW_AT_linkage_name.
const attrMIPSLinkageName dwarf.Attr = 0x2007

// maxOriginHops bounds how many abstract_origin/specification links a name
// lookup follows; real chains are two or three long, hostile ones may loop.
const maxOriginHops = 16

// builder holds the state of one Index build.
type builder struct {
	d       *dwarf.Data
	secs    map[string][]byte
	ix      *Index
	strIdx  map[string]int32
	names   map[dwarf.Offset]nameRef // resolved names by DIE offset
	entries *dwarf.Reader            // for following origin links
	links   []link                   // node spans before grouping
	warn    warnings
}

// nameRef is a DIE's resolved name and linkage name, as strs indexes.
type nameRef struct{ name, linkage int32 }

// link is one address range of a node and the node it is nested in.
type link struct {
	parent int32 // node index, or -1 for a top-level subprogram
	lo, hi uint64
	node   int32
}

// build reads every compile unit once, recording line rows and function
// nodes, then sorts them into the Index's search structures. A compile unit
// whose line table or DIEs cannot be read costs only what failed: the
// failure becomes a warning and the other units are indexed as usual.
func build(secs map[string][]byte) (ix *Index, err error) {
	// debug/dwarf is documented as not hardened against hostile input and
	// may panic; turn that into an error rather than crash the caller.
	// (Panics inside one unit are caught per unit, in unit.)
	defer func() {
		if r := recover(); r != nil {
			ix, err = nil, fmt.Errorf("debuginfo: malformed DWARF: %v", r)
		}
	}()
	var warn warnings
	d, err := newData(secs)
	if err != nil {
		// dwarf.New checks every unit header up front, so one bad header
		// would cost all units. When the header scan finds where it goes
		// wrong, index the units before it.
		spans, ok := unitSpans(secs["debug_info"])
		if ok || len(spans) == 0 {
			return nil, fmt.Errorf("debuginfo: %w", err)
		}
		cut := spans[len(spans)-1].end
		info := secs["debug_info"]
		secs["debug_info"] = info[:cut] // secs is New's own copy
		if d, err = newData(secs); err != nil {
			return nil, fmt.Errorf("debuginfo: %w", err)
		}
		warn.add("debug_info: unit header at %#x unreadable: the %d bytes from there to the end of the section are skipped",
			cut, int64(len(info))-cut)
	}
	b := &builder{
		warn:    warn,
		d:       d,
		secs:    secs,
		ix:      &Index{},
		strIdx:  make(map[string]int32),
		names:   make(map[dwarf.Offset]nameRef),
		entries: d.Reader(),
	}
	b.units()
	if len(b.ix.rows) == 0 && len(b.ix.nodes) == 0 && b.warn.count() > 0 {
		// Nothing survived: the DWARF is unusable, not merely damaged.
		return nil, fmt.Errorf("debuginfo: nothing could be indexed: %s", b.warn.kept[0])
	}
	b.finish()
	b.ix.warnings = b.warn.list()
	return b.ix, nil
}

// units walks the compile units one at a time, each from its own first
// DIE, so that one that fails to decode does not hide the ones after it.
func (b *builder) units() {
	r := b.d.Reader()
	spans, ok := unitSpans(b.secs["debug_info"])
	if !ok {
		// The header scan lost its way where debug/dwarf did not (a
		// big-endian file, say): walk everything in one go, as far as it
		// decodes.
		spans = []unitSpan{{first: 0, end: int64(len(b.secs["debug_info"]))}}
	}
	for _, u := range spans {
		b.unit(r, u)
	}
}

// unitLabel names a compile unit in warnings: its DIE offset and, once its
// first DIE is read, its name.
type unitLabel struct {
	off  int64
	name string
}

func (l unitLabel) String() string {
	if l.name == "" {
		return fmt.Sprintf("compile unit at %#x", l.off)
	}
	return fmt.Sprintf("compile unit at %#x (%s)", l.off, l.name)
}

// unit indexes the DIEs of one unit, [u.first, u.end) of debug_info. What
// it cannot read becomes a warning; what it read before stays indexed.
func (b *builder) unit(r *dwarf.Reader, u unitSpan) {
	cu := unitLabel{off: u.first}
	defer func() {
		if p := recover(); p != nil {
			b.warn.add("%v: malformed DWARF: %v", cu, p)
		}
	}()
	r.Seek(dwarf.Offset(u.first)) // 0 means the first unit's first DIE
	var (
		files  []int32 // this unit's line-table files as strs indexes
		stack  []int32 // enclosing function node per open DIE, -1 for none
		opened bool    // the unit's first DIE has been read
		nulls  int64   // null entries read
	)
	for {
		e, err := r.Next()
		if err != nil {
			var de dwarf.DecodeError
			if errors.As(err, &de) && de.Name == "info" {
				if int64(de.Offset) >= u.end {
					return // the next unit's failure: its own walk reports it
				}
			} else if opened && len(stack) == 0 {
				// This unit's tree was complete and the error does not say
				// where it arose: most likely in the next unit, whose own
				// walk will meet it again.
				return
			}
			b.warn.add("%v: DIEs: %v", cu, err)
			return
		}
		if e == nil {
			return // the end of debug_info
		}
		if e.Tag == 0 {
			// Each entry takes at least a byte, so the unit holds no more
			// null entries than bytes. More means the reader has left the
			// unit, or is stuck: debug/dwarf reads an abbreviation code
			// whose ULEB128 never ends as 0 without consuming anything,
			// and would return null entries forever.
			if nulls++; nulls > u.end-u.first {
				b.warn.add("%v: DIEs: more null entries than the unit has bytes (an unterminated abbreviation code?)", cu)
				return
			}
			// The null entry that ends a list of children. A stray one, or
			// padding after the unit's tree, closes nothing.
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			continue
		}
		if int64(e.Offset) < u.first || int64(e.Offset) >= u.end {
			return // the reader moved on to the next unit
		}
		switch e.Tag {
		case dwarf.TagCompileUnit, dwarf.TagPartialUnit, dwarf.TagSkeletonUnit:
			opened = true
			cu = unitLabel{off: int64(e.Offset)}
			cu.name, _ = e.Val(dwarf.AttrName).(string)
			files = b.lineTable(e, cu)
			stack = stack[:0]
			if e.Children {
				stack = append(stack, -1)
			}
			continue
		}
		opened = true

		ctx := int32(-1)
		if len(stack) > 0 {
			ctx = stack[len(stack)-1]
		}
		childCtx := ctx
		switch e.Tag {
		case dwarf.TagSubprogram:
			// Functions are top-level even when nested in another DIE
			// (a local class's methods have their own code).
			childCtx = -1
			if n := b.function(e, -1, files, cu); n >= 0 {
				childCtx = n
			}
		case dwarf.TagInlinedSubroutine:
			if n := b.function(e, ctx, files, cu); n >= 0 {
				childCtx = n
			}
		}
		if e.Children {
			stack = append(stack, childCtx)
		}
	}
}

// lineTable reads the unit's line program into rows and returns its file
// table as strs indexes (indexed as DW_AT_call_file values are). A line
// program that fails part way keeps its sequences read before the failure;
// one whose header cannot be read adds no rows and no files. Either way the
// unit's functions are still indexed.
func (b *builder) lineTable(e *dwarf.Entry, cu unitLabel) []int32 {
	if off, ok := e.Val(dwarf.AttrStmtList).(int64); ok {
		if err := checkLineHeader(b.secs["debug_line"], off); err != nil {
			b.warn.add("%v: %v", cu, err)
			return nil
		}
	}
	lr, err := b.d.LineReader(e)
	if err != nil {
		b.warn.add("%v: line table: %v", cu, err)
		return nil
	}
	if lr == nil {
		return nil // no DW_AT_stmt_list
	}
	fileIdx := make(map[*dwarf.LineFile]int32)
	var seq []row
	var le dwarf.LineEntry
	for {
		if err := lr.Next(&le); err != nil {
			if !errors.Is(err, io.EOF) {
				b.warn.add("%v: line table: %v", cu, err)
			}
			break
		}
		f := int32(-1)
		if le.File != nil {
			var ok bool
			if f, ok = fileIdx[le.File]; !ok {
				f = b.intern(le.File.Name)
				fileIdx[le.File] = f
			}
		}
		seq = append(seq, row{addr: le.Address, file: f, line: uint32(le.Line), col: uint32(le.Column), endSeq: le.EndSequence})
		if le.EndSequence {
			b.addSequence(seq)
			seq = seq[:0]
		}
	}
	// A sequence without its end_sequence row is truncated: its last row's
	// extent is unknown, so it is dropped rather than guessed.

	lf := lr.Files()
	files := make([]int32, len(lf))
	for i, f := range lf {
		files[i] = -1
		if f != nil {
			files[i] = b.intern(f.Name)
		}
	}
	return files
}

// sequences collects whole sequences; finish sorts them by start address.
func (b *builder) addSequence(seq []row) {
	if len(seq) < 2 || seq[0].addr >= seq[len(seq)-1].addr {
		return // covers no address
	}
	b.ix.rows = append(b.ix.rows, seq...)
}

// function records a subprogram or inlined subroutine that has code and
// returns its node index, or -1 when it has none (a declaration, or an
// abstract instance of an inline function) or its ranges cannot be read
// (a warning; its children are still indexed).
func (b *builder) function(e *dwarf.Entry, parent int32, files []int32, cu unitLabel) int32 {
	ranges, err := b.d.Ranges(e)
	if err != nil {
		b.warn.add("%v: DIE at %#x: ranges: %v", cu, e.Offset, err)
		return -1
	}
	ranges = slices.DeleteFunc(ranges, func(r [2]uint64) bool { return r[0] >= r[1] })
	if len(ranges) == 0 {
		return -1
	}
	nr := b.nameOf(e)
	nd := node{name: nr.name, linkage: nr.linkage, callFile: -1, inlined: e.Tag == dwarf.TagInlinedSubroutine}
	nd.display, nd.lang = b.display(nr)
	if nd.inlined {
		if v, ok := e.Val(dwarf.AttrCallFile).(int64); ok && v >= 0 && v < int64(len(files)) {
			nd.callFile = files[v]
		}
		nd.callLine = uint32(attrInt(e, dwarf.AttrCallLine))
		nd.callCol = uint32(attrInt(e, dwarf.AttrCallColumn))
	}
	// The node and its links are added together, after everything that
	// could panic on hostile input, so that a unit abandoned part way never
	// leaves a link to a node that does not exist.
	n := int32(len(b.ix.nodes))
	b.ix.nodes = append(b.ix.nodes, nd)
	for _, r := range ranges {
		b.links = append(b.links, link{parent: parent, lo: r[0], hi: r[1], node: n})
	}
	return n
}

// display picks the readable name: demangled linkage name when the
// language has a demangler, else the DWARF name.
func (b *builder) display(nr nameRef) (int32, Lang) {
	if nr.linkage < 0 {
		if nr.name < 0 {
			return -1, LangC
		}
		_, lang := Demangle(b.ix.strs[nr.name])
		return nr.name, lang
	}
	s, lang := Demangle(b.ix.strs[nr.linkage])
	if lang == LangC && nr.name >= 0 {
		// A linkage name that is not mangled (C, or one we do not know):
		// the DWARF name is as good and is what compilers intend to show.
		return nr.name, lang
	}
	return b.intern(s), lang
}

func attrInt(e *dwarf.Entry, a dwarf.Attr) int64 {
	switch v := e.Val(a).(type) {
	case int64:
		if v < 0 || v > 1<<31 {
			return 0
		}
		return v
	case uint64:
		if v > 1<<31 {
			return 0
		}
		return int64(v)
	}
	return 0
}

// nameOf resolves a DIE's name and linkage name, following
// DW_AT_abstract_origin and DW_AT_specification links: an inlined or
// out-of-line instance carries neither name itself.
func (b *builder) nameOf(e *dwarf.Entry) nameRef {
	nr := nameRef{name: -1, linkage: -1}
	var seen []dwarf.Offset
	for hops := 0; e != nil && hops < maxOriginHops; hops++ {
		if cached, ok := b.names[e.Offset]; ok {
			nr = merge(nr, cached)
			break
		}
		seen = append(seen, e.Offset)
		if nr.linkage < 0 {
			if s, ok := e.Val(dwarf.AttrLinkageName).(string); ok && s != "" {
				nr.linkage = b.intern(s)
			} else if s, ok := e.Val(attrMIPSLinkageName).(string); ok && s != "" {
				nr.linkage = b.intern(s)
			}
		}
		if nr.name < 0 {
			if s, ok := e.Val(dwarf.AttrName).(string); ok && s != "" {
				nr.name = b.intern(s)
			}
		}
		if nr.name >= 0 && nr.linkage >= 0 {
			break
		}
		off, ok := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
		if !ok {
			off, ok = e.Val(dwarf.AttrSpecification).(dwarf.Offset)
		}
		if !ok {
			break
		}
		e = b.entryAt(off)
	}
	// Every DIE on the chain resolves to the same names: later instances
	// of the same inline function then stop at the first hop.
	for _, off := range seen {
		b.names[off] = nr
	}
	return nr
}

// merge fills the names a has not found yet from c.
func merge(a, c nameRef) nameRef {
	if a.name < 0 {
		a.name = c.name
	}
	if a.linkage < 0 {
		a.linkage = c.linkage
	}
	return a
}

// entryAt reads the DIE at off, or returns nil when it cannot be read.
func (b *builder) entryAt(off dwarf.Offset) *dwarf.Entry {
	b.entries.Seek(off)
	e, err := b.entries.Next()
	if err != nil {
		return nil
	}
	return e
}

func (b *builder) intern(s string) int32 {
	if i, ok := b.strIdx[s]; ok {
		return i
	}
	i := int32(len(b.ix.strs))
	b.ix.strs = append(b.ix.strs, s)
	b.strIdx[s] = i
	return i
}

// finish sorts the line sequences by address and groups the node spans by
// parent into address-sorted lists.
func (b *builder) finish() {
	b.ix.rows = sortSequences(b.ix.rows)

	links := b.links
	sort.Slice(links, func(i, j int) bool {
		if links[i].parent != links[j].parent {
			return links[i].parent < links[j].parent
		}
		if links[i].lo != links[j].lo {
			return links[i].lo < links[j].lo
		}
		return links[i].hi > links[j].hi // the enclosing range first
	})
	spans := make([]span, len(links))
	for i := 0; i < len(links); {
		j := i
		var maxHi uint64
		for ; j < len(links) && links[j].parent == links[i].parent; j++ {
			maxHi = max(maxHi, links[j].hi)
			spans[j] = span{lo: links[j].lo, hi: links[j].hi, maxHi: maxHi, node: links[j].node}
		}
		g := group{lo: int32(i), hi: int32(j)}
		if p := links[i].parent; p < 0 {
			b.ix.root = g
		} else {
			b.ix.nodes[p].children = g
		}
		i = j
	}
	b.ix.spans = spans
	b.links = nil
}

// sortSequences reorders whole sequences (runs of rows ending with an
// end_sequence row) by their start address, keeping each one's rows in
// order.
func sortSequences(rows []row) []row {
	type seq struct{ start, end int }
	var seqs []seq
	start := 0
	for i, r := range rows {
		if r.endSeq {
			seqs = append(seqs, seq{start, i + 1})
			start = i + 1
		}
	}
	sorted := slices.IsSortedFunc(seqs, func(a, c seq) int {
		return cmpAddr(rows[a.start].addr, rows[c.start].addr)
	})
	if sorted {
		return rows
	}
	slices.SortStableFunc(seqs, func(a, c seq) int {
		return cmpAddr(rows[a.start].addr, rows[c.start].addr)
	})
	out := make([]row, 0, len(rows))
	for _, s := range seqs {
		out = append(out, rows[s.start:s.end]...)
	}
	return out
}

func cmpAddr(a, c uint64) int {
	switch {
	case a < c:
		return -1
	case a > c:
		return 1
	}
	return 0
}
