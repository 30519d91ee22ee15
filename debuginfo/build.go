package debuginfo

import (
	"cmp"
	"debug/dwarf"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync/atomic"

	"github.com/stackimage/stackimage/demangle"
)

// attrMIPSLinkageName is DW_AT_MIPS_linkage_name, which older compilers
// (and some current ones, for DWARF 2 and 3) emit instead of
// DW_AT_linkage_name.
const attrMIPSLinkageName dwarf.Attr = 0x2007

// maxOriginHops bounds how many abstract_origin/specification links a name
// lookup follows; real chains are two or three long, hostile ones may loop.
const maxOriginHops = 16

// build checks the sections, builds the debug/dwarf reader and finds each
// compile unit's address ranges. Units without ranges of their own (no
// aranges entry and no DW_AT_low_pc/high_pc or DW_AT_ranges on the unit
// DIE) are parsed at once, their ranges being those of their functions and
// line sequences.
// With referenceOnly, units are walked with debug/dwarf alone (for the
// tests that compare the walks).
func build(secs map[string][]byte, referenceOnly bool) (ix *Index, err error) {
	// debug/dwarf is documented as not hardened against hostile input and
	// may panic; turn that into an error rather than crash the caller.
	// (Panics inside one unit are caught per unit.)
	defer func() {
		if r := recover(); r != nil {
			ix, err = nil, fmt.Errorf("debuginfo: malformed DWARF: %v", r)
		}
	}()
	ix = &Index{secs: secs, cache: unitCache{budget: cacheBudget}, referenceOnly: referenceOnly}
	info := secs["debug_info"]
	spans, stop, spansOK := unitSpans(info)
	if !spansOK {
		// dwarf.New checks every unit header up front, so one bad header
		// would cost all units: index the units before it. Cutting here,
		// before dwarf.New, also keeps it from parsing the abbreviation
		// tables of units the bound below has not seen.
		if len(spans) == 0 {
			// No unit to keep. Say what debug/dwarf says of the header,
			// without letting it parse any abbreviations.
			probe := maps.Clone(secs)
			delete(probe, "debug_abbrev")
			if _, err := newData(probe); err != nil {
				return nil, fmt.Errorf("debuginfo: %w", err)
			}
			return nil, fmt.Errorf("debuginfo: debug_info: unit header at %#x unreadable", stop)
		}
		ix.warn.add("debug_info: unit header at %#x unreadable: the %d bytes from there to the end of the section are skipped",
			stop, int64(len(info))-stop)
		secs["debug_info"] = info[:stop] // secs is New's own map
	}

	// dwarf.New parses the abbreviation table of every unit before
	// anything else; bound that work first, cutting debug_info before the
	// unit that would exceed it.
	if n, msg := checkAbbrevs(spans, secs["debug_abbrev"]); n < len(spans) {
		if n == 0 {
			return nil, fmt.Errorf("debuginfo: %s", msg)
		}
		cut := spans[n].hdr
		ix.warn.add("%s: the %d bytes of debug_info from its unit at %#x on are skipped", msg, int64(len(secs["debug_info"]))-cut, cut)
		secs["debug_info"] = secs["debug_info"][:cut]
		spans = spans[:n]
	}
	// Units without DIEs have nothing to index.
	spans = slices.DeleteFunc(spans, func(u unitSpan) bool { return u.first >= u.end })

	d, err := newData(secs)
	if err != nil {
		return nil, fmt.Errorf("debuginfo: %w", err)
	}
	ix.d, ix.units = d, spans
	ix.reported = make([]bool, len(spans))
	ix.byAddr = ix.unitRanges()
	if len(ix.byAddr) == 0 && ix.warn.count() > 0 {
		// Nothing survived: the DWARF is unusable, not merely damaged.
		return nil, fmt.Errorf("debuginfo: nothing could be indexed: %s", ix.warn.kept[0])
	}
	return ix, nil
}

// unitRanges finds the address ranges of every unit: from debug_aranges
// when it is sane, else (and for units it leaves out) from each unit DIE,
// else by parsing the unit. It returns them flattened into disjoint
// segments, each naming its unit.
func (ix *Index) unitRanges() []seg {
	var links []link
	covered := make([]bool, len(ix.units))
	if ar, ok := parseAranges(ix.secs["debug_aranges"], ix.units); ok {
		for _, l := range ar {
			covered[l.node] = true
		}
		links = append(links, ar...)
	}
	r := ix.d.Reader()
	seenLines := make(map[*lineTable]bool)
	for u := range ix.units {
		if covered[u] {
			continue
		}
		if rs := ix.unitDIERanges(r, u); len(rs) > 0 {
			for _, rg := range rs {
				links = append(links, link{lo: rg[0], hi: rg[1], node: int32(u)})
			}
			continue
		}
		// No ranges of its own: parse it, and let its functions and line
		// sequences say what it covers. A line program shared with an
		// earlier unit is that unit's already.
		ui := ix.unit(u)
		for _, s := range ui.segs[ui.root.lo:ui.root.hi] {
			links = append(links, link{lo: s.lo, hi: s.hi, node: int32(u)})
		}
		if lt := ui.lines; lt != nil && !seenLines[lt] {
			seenLines[lt] = true
			start := -1
			for i, rw := range lt.rows {
				if start < 0 {
					start = i
				}
				if rw.endSeq {
					links = append(links, link{lo: lt.rows[start].addr, hi: rw.addr, node: int32(u)})
					start = -1
				}
			}
		}
	}
	sortLinks(links)
	return flatten(nil, links)
}

// unitDIERanges reads unit u's first DIE alone (not its children) and
// returns its address ranges, nil when it has none or cannot be read.
func (ix *Index) unitDIERanges(r *dwarf.Reader, u int) (rs [][2]uint64) {
	defer func() {
		if recover() != nil {
			rs = nil // the unit's own parse will report it
		}
	}()
	r.Seek(dwarf.Offset(ix.units[u].first))
	e, err := r.Next()
	if err != nil || e == nil || int64(e.Offset) >= ix.units[u].end {
		return nil
	}
	switch e.Tag {
	case dwarf.TagCompileUnit, dwarf.TagPartialUnit, dwarf.TagSkeletonUnit:
	default:
		return nil
	}
	if f := e.AttrField(dwarf.AttrRanges); f != nil && f.Class == dwarf.ClassRangeListPtr && ix.secs["debug_rnglists"] == nil {
		// A DWARF 5 unit's offset is in debug_rnglists, which is absent:
		// Data.Ranges would read debug_ranges. Let the unit's functions
		// say what it covers (each warns of its own offset).
		if uf, ok := readUnitFormat(ix.secs["debug_info"], ix.units[u]); ok && uf.version >= 5 {
			return nil
		}
	}
	rs, err = ix.d.Ranges(e)
	if err != nil {
		return nil
	}
	return slices.DeleteFunc(rs, func(r [2]uint64) bool { return r[0] >= r[1] })
}

// unit returns unit u parsed, from the cache or by parsing it now.
func (ix *Index) unit(u int) *unitIndex {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if ui := ix.cache.get(u); ui != nil {
		return ui
	}
	b := &unitBuilder{ix: ix, u: ix.units[u], lineOff: -1, report: !ix.reported[u], sc: &ix.scratch}
	ui := b.parse()
	ix.reported[u] = true
	ix.cache.put(u, b.lineOff, ui)
	return ui
}

// abbrevTable returns the skipper's abbreviation table at off, decoded on
// first use and shared by every unit naming off. The tables decoded are
// those dwarf.New parsed, which checkAbbrevs bounded, so they cost no more
// than that bound however many units share them. Called under ix.mu.
func (ix *Index) abbrevTable(off uint64) *abbrevTable {
	if t := ix.abbrevs[off]; t != nil {
		return t
	}
	if ix.abbrevs == nil {
		ix.abbrevs = make(map[uint64]*abbrevTable)
	}
	t := decodeAbbrevs(ix.secs["debug_abbrev"], off)
	ix.abbrevs[off] = t
	return t
}

// maxKeptNames bounds the entries of the name and range-list maps a
// scratch keeps from one parse to the next.
const maxKeptNames = 1 << 14

// reusedMapLen bounds the entries of the name and range-list maps a
// unit's parse clears for the next rather than making fresh ones.
const reusedMapLen = 1 << 10

// scratch is Index.scratch: arrays a unit's parse grows, reused.
type scratch struct {
	rows    []row
	nodes   []node
	links   []link
	grouped []link // links grouped by parent (groupLinks)
	segs    []seg
	ranges  [][2]uint64
	// The maps of unitBuilder.names and .ranges, cleared for each unit
	// rather than grown again from nothing while they stay small (see
	// start).
	names     map[dwarf.Offset]nameRef
	rangeMaps map[rangesKey][][2]uint64
}

// unitBuilder parses one unit. It runs under Index.mu, or with shared set
// without it (parseAhead), taking it for the state units share.
type unitBuilder struct {
	ix     *Index
	u      unitSpan
	sc     *scratch // the growing arrays, reused from one parse to the next
	shared bool     // Index.mu is not held: take it for the cache and the abbreviation tables
	report bool     // add warnings (false when the unit was parsed before)
	// pending holds the warnings of a shared parse (at most maxWarnings,
	// then a count) until the unit enters the cache.
	pending        []string
	pendingDropped int
	// holding keeps warnings in held instead (see fast).
	holding bool
	held    []string
	// lineAddrSize, when not 0, is the unit's address size, and
	// fastLines decodes its line program's rows (see fast).
	lineAddrSize int
	cu           unitLabel
	ui           *unitIndex
	lineOff      int64 // the unit's DW_AT_stmt_list, -1 when none or unread
	files        []string
	entries      *dwarf.Reader // for following origin links
	skip         *skipper      // skips type descriptions' children
	names        map[dwarf.Offset]nameRef
	ranges       map[rangesKey][][2]uint64 // decoded range lists by attribute value
	links        []link
	// spansLeft bounds the function ranges one unit may record: each needs
	// a byte of debug_info or of a range list, except where hostile DIEs
	// share one list.
	spansLeft int
	// bases are the unit DIE's DWARF 5 bases, once the walk has read it.
	bases unitBases
	// version is the unit header's DWARF version, 0 when unreadable.
	version int
	// base is the unit's base address for range lists, as
	// Data.Ranges takes it from the unit's first DIE: its DW_AT_entry_pc,
	// else its DW_AT_low_pc, else 0. baseKnown: that DIE has been read.
	base      uint64
	baseKnown bool
}

// rangesKey identifies a DW_AT_ranges value within a unit.
type rangesKey struct {
	class dwarf.Class
	val   int64
}

// nameRef is a DIE's resolved name and linkage name, "" when absent.
type nameRef struct{ name, linkage string }

// link is one address range of a node and the node it is nested in.
type link struct {
	parent int32 // node index, or -1 for a top-level subprogram
	lo, hi uint64
	node   int32
}

func (b *unitBuilder) warnf(format string, args ...any) {
	if !b.report {
		return
	}
	msg := fmt.Sprintf("%v: "+format, append([]any{b.cu}, args...)...)
	if b.holding {
		b.held = append(b.held, msg)
		return
	}
	b.addWarning(msg)
}

// addWarning adds one warning of the unit.
func (b *unitBuilder) addWarning(msg string) {
	if !b.shared {
		b.ix.warn.add("%s", msg)
		return
	}
	if len(b.pending) >= maxWarnings {
		b.pendingDropped++
		return
	}
	b.pending = append(b.pending, msg)
}

// lock takes Index.mu around access to the state units share when the
// parse runs without it; it returns the function that releases it.
func (b *unitBuilder) lock() (unlock func()) {
	if !b.shared {
		return func() {}
	}
	b.ix.mu.Lock()
	return b.ix.mu.Unlock
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

// parse indexes the DIEs of one unit, [u.first, u.end) of debug_info. What
// it cannot read becomes a warning; what it read before stays indexed.
func (b *unitBuilder) parse() *unitIndex {
	b.ui = &unitIndex{}
	b.entries = b.ix.d.Reader()
	if b.sc.names == nil {
		b.sc.names = make(map[dwarf.Offset]nameRef)
		b.sc.rangeMaps = make(map[rangesKey][][2]uint64)
	}
	b.names, b.ranges = b.sc.names, b.sc.rangeMaps
	b.start()
	if !b.ix.walkTypes && !b.ix.referenceOnly {
		if b.fast() {
			b.ix.fastUnits.Add(1)
			b.finish()
			return b.ui
		}
		// Start again with debug/dwarf, which reads or reports what
		// fastWalk left to it.
		b.start()
	}
	b.skip = &skipper{}
	if !b.ix.walkTypes {
		b.skip = newSkipperWith(b.ix.secs["debug_info"], b.u, func() *abbrevTable {
			defer b.lock()()
			return b.ix.abbrevTable(b.u.abbrev)
		})
	}
	b.walk()
	b.finish()
	return b.ui
}

// start sets the builder's state for a walk of its unit.
func (b *unitBuilder) start() {
	b.cu = unitLabel{off: b.u.first}
	b.ui.lines, b.lineOff, b.files = nil, -1, nil
	b.ui.nodes, b.links = b.sc.nodes[:0], b.sc.links[:0]
	// Clearing a map costs its capacity: after a unit that filled one
	// with more than reusedMapLen entries, the next units get a fresh
	// map, not one the size of the largest unit's.
	if len(b.names) > reusedMapLen {
		b.names = make(map[dwarf.Offset]nameRef)
		b.sc.names = b.names
	}
	clear(b.names)
	if len(b.ranges) > reusedMapLen {
		b.ranges = make(map[rangesKey][][2]uint64)
		b.sc.rangeMaps = b.ranges
	}
	clear(b.ranges)
	b.spansLeft = int(b.u.end-b.u.first) + len(b.ix.secs["debug_ranges"]) + len(b.ix.secs["debug_rnglists"])
	b.base, b.baseKnown = 0, false
	b.bases = unitBases{}
	f, _ := readUnitFormat(b.ix.secs["debug_info"], b.u)
	b.version = f.version
}

// fast walks the unit with fastWalk; false when the unit must be walked
// with debug/dwarf instead (nothing it did is then kept: the caller
// starts again).
func (b *unitBuilder) fast() bool {
	info := b.ix.secs["debug_info"]
	f, ok := readUnitFormat(info, b.u)
	if !ok || f.addrSize != 4 && f.addrSize != 8 {
		return false
	}
	unlock := b.lock()
	plans := b.ix.planTable(b.u.abbrev, f)
	ends := b.ix.stringEnds()
	unlock()
	if !plans.ok {
		return false
	}
	w := &fastWalk{b: b, info: info[:b.u.end], f: f, plans: plans, strEnds: ends, refBase: b.u.refBase, ok: true}
	// The unit DIE, with debug/dwarf: its line program and, in DWARF 5,
	// the bases of its string, address and range list indexes are read
	// from it as the debug/dwarf walk reads them.
	r := b.entries
	r.Seek(dwarf.Offset(b.u.first))
	e, err := r.Next()
	if err != nil || e == nil || int64(e.Offset) != b.u.first || r.ByteOrder() != binary.LittleEndian {
		return false
	}
	switch e.Tag {
	case dwarf.TagCompileUnit, dwarf.TagPartialUnit, dwarf.TagSkeletonUnit:
	default:
		return false
	}
	code, pos := w.uleb(int(b.u.first))
	p := plans.plan(code)
	if !w.ok || p == nil || p.tag != e.Tag {
		return false
	}
	if pos = w.skipAttrs(pos, p); !w.ok || pos > len(w.info) {
		return false
	}
	if f.version >= 5 {
		w.unitBases = dwarf5Bases(e)
	}
	b.base, b.baseKnown = unitBase(e), true
	b.cu.name, _ = e.Val(dwarf.AttrName).(string)
	// The line table's warnings wait for the walk's end: a walk that gives
	// up leaves them to the debug/dwarf walk.
	b.held, b.holding, b.lineAddrSize = b.held[:0], true, f.addrSize
	b.lineTable(e)
	b.holding, b.lineAddrSize = false, 0
	if !w.run(pos, e.Children) {
		return false
	}
	for _, msg := range b.held {
		b.addWarning(msg)
	}
	return true
}

// readUnitFormat reads the version, address size and offset size of unit
// u's header.
func readUnitFormat(info []byte, u unitSpan) (unitFormat, bool) {
	if u.hdr < 0 || u.end > int64(len(info)) {
		return unitFormat{}, false
	}
	c := cursor{b: info[:u.end], off: int(u.hdr)}
	f := unitFormat{offSize: 4}
	if c.u32() == 0xffffffff {
		c.u64()
		f.offSize = 8
	}
	f.version = int(c.u16())
	switch {
	case f.version >= 2 && f.version <= 4:
		c.skip(f.offSize)
		f.addrSize = int(c.u8())
	case f.version == 5:
		c.u8() // unit type
		f.addrSize = int(c.u8())
	default:
		return unitFormat{}, false
	}
	return f, !c.err
}

func (b *unitBuilder) walk() {
	defer func() {
		if p := recover(); p != nil {
			b.warnf("malformed DWARF: %v", p)
		}
	}()
	r := b.ix.d.Reader()
	var (
		stack  []int32 // enclosing function node per open DIE, -1 for none
		opened bool    // the unit's first DIE has been read
		nulls  int64   // null entries read
		// Where the DIE r.Next reads next starts: sought, the offset
		// sought (-1 after a Next); else it follows prev's attributes.
		sought = b.u.first
		prev   = int64(-1)
	)
	seek := func(off int64) {
		r.Seek(dwarf.Offset(off))
		sought = off
	}
	seek(b.u.first) // 0 would mean the first unit's first DIE
	for {
		e, err := r.Next()
		recovered := false
		if err != nil {
			var de dwarf.DecodeError
			if errors.As(err, &de) && de.Name == "rnglists" {
				// debug/dwarf fails a DIE whose DW_AT_ranges index
				// (DW_FORM_rnglistx) names a slot past debug_rnglists:
				// read that DIE without its ranges and go on.
				var re *dwarf.Entry
				var next int64
				var ok bool
				if opened {
					re, next, ok = b.withoutRanges(b.nextDIE(prev, sought))
				} else if sought == b.u.first {
					re, next, err = b.unitWithoutRanges(err)
					ok = err == nil
				}
				if ok {
					seek(next)
					e, err, recovered = re, nil, true
				}
			}
		}
		if err != nil {
			var de dwarf.DecodeError
			if errors.As(err, &de) && de.Name == "info" {
				if int64(de.Offset) >= b.u.end {
					return // the next unit's failure: its own walk reports it
				}
			} else if opened && len(stack) == 0 {
				// This unit's tree was complete and the error does not say
				// where it arose: most likely in the next unit, whose own
				// walk will meet it again.
				return
			}
			b.warnf("DIEs: %v", err)
			return
		}
		if e == nil {
			return // the end of debug_info
		}
		if !recovered {
			sought = -1 // the position now follows e
		}
		prev = int64(e.Offset)
		if e.Tag == 0 {
			// Each entry takes at least a byte, so the unit holds no more
			// null entries than bytes. More means the reader has left the
			// unit, or is stuck: debug/dwarf reads an abbreviation code
			// whose ULEB128 never ends as 0 without consuming anything,
			// and would return null entries forever.
			if nulls++; nulls > b.u.end-b.u.first {
				b.warnf("DIEs: more null entries than the unit has bytes (an unterminated abbreviation code?)")
				return
			}
			// The null entry that ends a list of children. A stray one, or
			// padding after the unit's tree, closes nothing.
			if len(stack) > 0 {
				stack = stack[:len(stack)-1]
			}
			continue
		}
		if int64(e.Offset) < b.u.first || int64(e.Offset) >= b.u.end {
			return // the reader moved on to the next unit
		}
		if int64(e.Offset) == b.u.first {
			b.base, b.baseKnown = unitBase(e), true
		}
		switch e.Tag {
		case dwarf.TagCompileUnit, dwarf.TagPartialUnit, dwarf.TagSkeletonUnit:
			opened = true
			b.cu = unitLabel{off: int64(e.Offset)}
			b.cu.name, _ = e.Val(dwarf.AttrName).(string)
			b.bases = dwarf5Bases(e)
			b.lineTable(e)
			stack = stack[:0]
			if e.Children {
				stack = append(stack, -1)
			}
			continue
		}
		opened = true

		if e.Tag != dwarf.TagSubprogram && e.Tag != dwarf.TagInlinedSubroutine {
			// Types, variables and the like, with their children and the
			// siblings like them after them, hold no code: skip them
			// undecoded (skip.go).
			if next := b.skip.skipRun(int64(e.Offset)); next > int64(e.Offset) {
				seek(next)
				continue
			}
		}

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
			if n := b.function(e, -1); n >= 0 {
				childCtx = n
			}
		case dwarf.TagInlinedSubroutine:
			if n := b.function(e, ctx); n >= 0 {
				childCtx = n
			}
		}
		if e.Children {
			stack = append(stack, childCtx)
		}
		// The DIE after this one (its first child, or its next sibling)
		// is most often a parameter or a variable: skip it and the
		// siblings like it before debug/dwarf decodes any of them, and
		// read the null entries that follow here (debug/dwarf allocates
		// an Entry for each).
		if pos, ok := b.skip.attrsEnd(int64(e.Offset)); ok {
			next := b.skip.skipRun(pos)
			for next < b.u.end && b.skip.info[next] == 0 {
				if len(stack) > 0 {
					stack = stack[:len(stack)-1]
				}
				next++
			}
			if next >= b.u.end {
				return // the unit's last DIE
			}
			if next > pos {
				seek(next)
			}
		}
	}
}

// lineTable finds the unit's line program, decoded once per debug_line
// offset and shared by the units naming it, and sets the unit's file table
// (indexed as DW_AT_call_file values are). A line program that fails part
// way keeps its sequences read before the failure; one whose header cannot
// be read adds no rows and no files. Either way the unit's functions are
// still indexed.
func (b *unitBuilder) lineTable(e *dwarf.Entry) {
	off, ok := e.Val(dwarf.AttrStmtList).(int64)
	if !ok {
		return // no DW_AT_stmt_list
	}
	unlock := b.lock()
	lt := b.ix.cache.line(off)
	unlock()
	if lt != nil {
		b.ui.lines, b.lineOff, b.files = lt, off, lt.files
		return
	}
	if err := checkLineHeader(b.ix.secs["debug_line"], off); err != nil {
		b.warnf("%v", err)
		return
	}
	lr, err := b.ix.d.LineReader(e)
	if err != nil {
		b.warnf("line table: %v", err)
		return
	}
	if lr == nil {
		return
	}
	lt = &lineTable{}
	// Rows go into the scratch array; seqStart is where the sequence being
	// read began there, and a sequence that covers nothing is dropped by
	// cutting back to it.
	lt.rows = b.sc.rows[:0]
	seqStart := 0
	if b.lineAddrSize > 0 {
		var ok bool
		if lt.rows, lt.names, seqStart, ok = fastLines(b.ix.secs["debug_line"], off, b.lineAddrSize, lr.Files(), lt.rows); ok {
			for _, n := range lt.names {
				lt.size += int64(len(n))
			}
			b.ix.fastLineTables.Add(1)
			b.finishLines(lt, lr, off, seqStart)
			return
		}
		b.ix.slowLineTables.Add(1)
		lt.rows, lt.names = lt.rows[:0], nil
	}
	fileIdx := make(map[*dwarf.LineFile]int32)
	var le dwarf.LineEntry
	var lastFile *dwarf.LineFile
	var lastIdx int32
	for {
		if err := lr.Next(&le); err != nil {
			if !errors.Is(err, io.EOF) {
				b.warnf("line table: %v", err)
			}
			break
		}
		f := int32(-1)
		if le.File == lastFile && lastFile != nil {
			f = lastIdx // most rows name the file the row before named
		} else if le.File != nil {
			var ok bool
			if f, ok = fileIdx[le.File]; !ok {
				f = int32(len(lt.names))
				lt.names = append(lt.names, le.File.Name)
				lt.size += int64(len(le.File.Name))
				fileIdx[le.File] = f
			}
			lastFile, lastIdx = le.File, f
		}
		lt.rows = append(lt.rows, row{addr: le.Address, file: f, line: uint32(le.Line), col: uint32(le.Column), endSeq: le.EndSequence})
		if le.EndSequence {
			if seq := lt.rows[seqStart:]; len(seq) < 2 || seq[0].addr >= seq[len(seq)-1].addr {
				lt.rows = lt.rows[:seqStart]
			}
			seqStart = len(lt.rows)
		}
	}
	b.finishLines(lt, lr, off, seqStart)
}

// finishLines completes the line table lt read by lr, its complete
// sequences ending at seqStart, and makes it the unit's.
func (b *unitBuilder) finishLines(lt *lineTable, lr *dwarf.LineReader, off int64, seqStart int) {
	lt.rows = lt.rows[:seqStart]
	// A sequence without its end_sequence row is truncated: its last row's
	// extent is unknown, so it is dropped rather than guessed.

	for _, f := range lr.Files() {
		name := ""
		if f != nil {
			name = f.Name
		}
		lt.files = append(lt.files, name)
	}
	b.sc.rows = lt.rows[:0]
	lt.rows = sortSequences(lt.rows)
	lt.sorted = rowsSorted(lt.rows)
	lt.size += int64(cap(lt.rows))*rowSize + int64(len(lt.names)+len(lt.files))*16
	b.ui.lines, b.lineOff, b.files = lt, off, lt.files
}

// function records a subprogram or inlined subroutine that has code and
// returns its node index, or -1 when it has none (a declaration, or an
// abstract instance of an inline function) or its ranges cannot be read
// (a warning; its children are still indexed).
func (b *unitBuilder) function(e *dwarf.Entry, parent int32) int32 {
	ranges, err := b.rangesOf(e)
	if err != nil {
		// What DW_AT_low_pc and DW_AT_high_pc say still holds.
		ranges = lowHighOf(e, b.sc.ranges[:0])
		b.sc.ranges = ranges[:0]
		kept := "dropped"
		if len(ranges) > 0 {
			kept = "its DW_AT_low_pc/high_pc kept"
		}
		b.warnf("DIE at %#x: ranges: %v (%s)", e.Offset, err, kept)
	}
	if len(ranges) == 0 {
		return -1
	}
	if len(ranges) > b.spansLeft {
		if b.spansLeft >= 0 {
			b.warnf("DIE at %#x: more address ranges than the unit and its range lists have bytes: the unit's remaining functions are dropped", e.Offset)
			b.spansLeft = -1
		}
		return -1
	}
	b.spansLeft -= len(ranges)
	nr := b.nameOf(e)
	nd := node{linkage: nr.linkage, inlined: e.Tag == dwarf.TagInlinedSubroutine, parent: parent}
	nd.display, nd.lang, nd.mangled = display(nr)
	if nd.inlined {
		if v, ok := e.Val(dwarf.AttrCallFile).(int64); ok && v >= 0 && v < int64(len(b.files)) {
			nd.callFile = b.files[v]
		}
		nd.callLine = uint32(attrInt(e, dwarf.AttrCallLine))
		nd.callCol = uint32(attrInt(e, dwarf.AttrCallColumn))
	}
	// The node and its links are added together, after everything that
	// could panic on hostile input, so that a unit abandoned part way never
	// leaves a link to a node that does not exist.
	n := int32(len(b.ui.nodes))
	b.ui.nodes = append(b.ui.nodes, nd)
	for _, r := range ranges {
		b.links = append(b.links, link{parent: parent, lo: r[0], hi: r[1], node: n})
	}
	return n
}

// rangesOf returns a DIE's non-empty address ranges. A range list is
// decoded once per unit, however many DIEs name it.
func (b *unitBuilder) rangesOf(e *dwarf.Entry) ([][2]uint64, error) {
	f := e.AttrField(dwarf.AttrRanges)
	var key rangesKey
	if f != nil {
		v, ok := rangesAttrOffset(f)
		if !ok {
			return nil, fmt.Errorf("DW_AT_ranges of class %v", f.Class)
		}
		if f.Class == dwarf.ClassRngList && b.version >= 5 {
			// debug/dwarf gives the offset the index leads to, unchecked
			// against the table's size: check the index itself, before
			// a valid index leading to the same offset answers for it.
			if idx, ok := b.rnglistxIndex(int64(e.Offset)); ok {
				if err := checkRnglistx(b.ix.secs["debug_rnglists"], b.bases.rnglistsBase, idx); err != nil {
					return nil, err
				}
			}
		}
		key = rangesKey{f.Class, v}
		if rs, ok := b.ranges[key]; ok {
			return rs, nil
		}
		if err := b.checkRngList(f.Class, v); err != nil {
			return nil, err
		}
	}
	var dst [][2]uint64
	if f == nil {
		// Kept only until the caller has recorded them: reuse one array.
		dst = b.sc.ranges[:0]
	}
	rs, err := b.dwarfRanges(e, dst)
	if err != nil {
		return nil, err
	}
	rs = slices.DeleteFunc(rs, func(r [2]uint64) bool { return r[0] >= r[1] })
	if f != nil {
		b.ranges[key] = rs
	} else {
		b.sc.ranges = rs[:0]
	}
	return rs, nil
}

// dwarfRanges returns what debug/dwarf's Data.Ranges returns for e,
// appended to dst when it computes them itself. For
// DWARF 2–4 little-endian units it computes the same itself: Data.Ranges
// decodes the unit's first DIE again, for its base address, at every DIE
// with a range list, which cost more than the rest of a Go unit's parse.
// Anything else is left to Data.Ranges.
func (b *unitBuilder) dwarfRanges(e *dwarf.Entry, dst [][2]uint64) ([][2]uint64, error) {
	s := b.skip
	if !b.baseKnown || s.version < 2 || s.version > 4 || s.addrSize != 4 && s.addrSize != 8 {
		return b.ix.d.Ranges(e)
	}
	ret := dst
	var low, high uint64
	var lowOK, highOK, rangesOK bool
	var ranges int64
	// Exactly as Data.Ranges reads them: the first field of each
	// attribute (Entry.Val and Entry.AttrField stop there).
	low, lowOK = e.Val(dwarf.AttrLowpc).(uint64)
	if hf := e.AttrField(dwarf.AttrHighpc); hf != nil {
		switch hf.Class {
		case dwarf.ClassAddress:
			high, highOK = hf.Val.(uint64)
		case dwarf.ClassConstant:
			if off, ok := hf.Val.(int64); ok {
				high, highOK = low+uint64(off), true
			}
		}
	}
	if lowOK && highOK {
		ret = append(ret, [2]uint64{low, high})
	}
	ranges, rangesOK = e.Val(dwarf.AttrRanges).(int64)
	sec := b.ix.secs["debug_ranges"]
	if !rangesOK || sec == nil {
		return ret, nil
	}
	if ranges < 0 || ranges > int64(len(sec)) {
		return nil, fmt.Errorf("invalid range offset %d (max %d)", ranges, len(sec))
	}
	// Data.dwarf2Ranges: pairs of addresses until (0, 0); a pair whose
	// first is the largest address sets the base. A truncated pair reads
	// as zeros and ends the list.
	c := cursor{b: sec, off: int(ranges)}
	base := b.base
	maxAddr := ^uint64(0) >> uint((8-s.addrSize)*8)
	for c.off < len(sec) && !c.err {
		lo, hi := c.addr(s.addrSize), c.addr(s.addrSize)
		if lo == 0 && hi == 0 {
			break
		}
		if lo == maxAddr {
			base = hi
		} else {
			ret = append(ret, [2]uint64{base + lo, base + hi})
		}
	}
	return ret, nil
}

// unitBase returns the base address Data.Ranges finds in a unit's first
// DIE.
func unitBase(cu *dwarf.Entry) uint64 {
	if pc, ok := cu.Val(dwarf.AttrEntrypc).(uint64); ok {
		return pc
	}
	if low, ok := cu.Val(dwarf.AttrLowpc).(uint64); ok {
		return low
	}
	return 0
}

// display picks the readable name: the demangled linkage name when the
// language has a demangler (mangled is then true, and the name is
// demangled when a lookup first needs it), else the DWARF name.
func display(nr nameRef) (name string, lang demangle.Lang, mangled bool) {
	if nr.linkage == "" {
		if nr.name == "" {
			return "", demangle.LangC, false
		}
		return nr.name, demangle.Language(nr.name), false
	}
	switch lang := demangle.Language(nr.linkage); lang {
	case demangle.LangCPP, demangle.LangRust, demangle.LangSwift:
		return "", lang, true
	case demangle.LangC:
		if nr.name != "" {
			// A linkage name that is not mangled (C, or one we do not
			// know): the DWARF name is as good and is what compilers
			// intend to show.
			return nr.name, lang, false
		}
		return nr.linkage, lang, false
	default: // ObjC: the linkage name is the readable one
		return nr.linkage, lang, false
	}
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
func (b *unitBuilder) nameOf(e *dwarf.Entry) nameRef {
	var nr nameRef
	var seen []dwarf.Offset
	for hops := 0; e != nil && hops < maxOriginHops; hops++ {
		if cached, ok := b.names[e.Offset]; ok {
			nr = merge(nr, cached)
			break
		}
		seen = append(seen, e.Offset)
		if nr.linkage == "" {
			if s, ok := e.Val(dwarf.AttrLinkageName).(string); ok && s != "" {
				nr.linkage = s
			} else if s, ok := e.Val(attrMIPSLinkageName).(string); ok && s != "" {
				nr.linkage = s
			}
		}
		if nr.name == "" {
			if s, ok := e.Val(dwarf.AttrName).(string); ok {
				nr.name = s
			}
		}
		if nr.name != "" && nr.linkage != "" {
			break
		}
		off, ok := e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
		if !ok {
			off, ok = e.Val(dwarf.AttrSpecification).(dwarf.Offset)
		}
		if !ok {
			break
		}
		if cached, ok := b.names[off]; ok && hops+1 < maxOriginHops {
			// Resolved before: do not decode the DIE again (the loop's
			// next step would find it in b.names too).
			nr = merge(nr, cached)
			break
		}
		e = b.entryAt(off)
	}
	// Every DIE on the chain resolves to the same names: later instances
	// of the same inline function then stop at the first hop.
	for _, off := range seen[min(1, len(seen)):] {
		b.names[off] = nr
	}
	return nr
}

// merge fills the names a has not found yet from c.
func merge(a, c nameRef) nameRef {
	if a.name == "" {
		a.name = c.name
	}
	if a.linkage == "" {
		a.linkage = c.linkage
	}
	return a
}

// entryAt reads the DIE at off, or returns nil when it cannot be read.
func (b *unitBuilder) entryAt(off dwarf.Offset) *dwarf.Entry {
	b.entries.Seek(off)
	e, err := b.entries.Next()
	if err != nil {
		return nil
	}
	return e
}

// addSegments flattens links, sorted by parent, into ui's segments: each
// parent's links become one group of segments, the children of that node
// (the unit's root for parent -1).
func (ui *unitIndex) addSegments(links []link) {
	for i := 0; i < len(links); {
		j := i
		for j < len(links) && links[j].parent == links[i].parent {
			j++
		}
		lo := int32(len(ui.segs))
		ui.segs = flatten(ui.segs, links[i:j])
		g := group{lo: lo, hi: int32(len(ui.segs))}
		if p := links[i].parent; p < 0 {
			ui.root = g
		} else {
			ui.nodes[p].children = g
		}
		i = j
	}
}

// finish groups the node ranges by parent into disjoint, address-sorted
// segments and estimates the unit's size.
func (b *unitBuilder) finish() {
	links := b.links
	sorted, ok := groupLinks(links, b.sc.grouped[:0], len(b.ui.nodes))
	if ok {
		// links stays the scratch array it was; sorted is the other.
		b.sc.grouped = links[:0]
		links = sorted
	} else {
		sortLinks(links)
	}
	ui := b.ui
	nodes := ui.nodes
	ui.nodes = slices.Clone(nodes)
	clear(nodes) // the scratch array keeps no strings alive
	b.sc.nodes = nodes[:0]
	ui.segs = b.sc.segs[:0]
	ui.addSegments(links)
	b.sc.links = links[:0]
	b.links = nil
	if len(b.names) > maxKeptNames || len(b.ranges) > maxKeptNames {
		// Kept, maps this large would hold their memory for as long as
		// the Index lives.
		b.sc.names, b.sc.rangeMaps = nil, nil
	}
	b.sc.segs = ui.segs[:0]
	ui.segs = slices.Clone(ui.segs)
	ui.demangled = make([]atomic.Pointer[string], len(ui.nodes))
	ui.size = int64(cap(ui.nodes))*nodeSize + int64(cap(ui.segs))*segSize + int64(len(ui.demangled))*8
	for i := range ui.nodes {
		// A demangled name is about as long as its linkage name.
		ui.size += int64(len(ui.nodes[i].display) + len(ui.nodes[i].linkage))
		if ui.nodes[i].mangled {
			ui.size += int64(len(ui.nodes[i].linkage))
		}
	}
}

// sortLinks orders links by parent, then start, the enclosing range first
// among those starting together.
// (slices.SortFunc runs the same pdqsort as sort.Slice, which this used,
// without its reflection-based swaps: equal links end in the same order.)
func sortLinks(links []link) {
	slices.SortFunc(links, func(a, b link) int {
		if a.parent != b.parent {
			return cmp.Compare(a.parent, b.parent)
		}
		if a.lo != b.lo {
			return cmp.Compare(a.lo, b.lo)
		}
		return cmp.Compare(b.hi, a.hi)
	})
}

// groupLinks returns links in sortLinks' order, in out (grown as
// needed), comparing fewer of them: links are grouped by parent (a
// counting sort), and within each parent a unit's DIEs mostly list their
// ranges in address order already (a Go unit's top-level functions are
// the exception: its generic instantiations lie apart), so that only the
// parents whose links are out of order are sorted. It gives up (ok false)
// when two links of a parent have the same bounds: sortLinks orders those
// as its sort happens to, while without them its order is the only one.
// nodes bounds the parents.
func groupLinks(links, out []link, nodes int) (_ []link, ok bool) {
	// starts[p+1] is where parent p's links go (p -1 for the top level).
	starts := make([]int32, nodes+2)
	for _, l := range links {
		if l.parent < -1 || int(l.parent) >= nodes {
			return out, false
		}
		starts[l.parent+2]++
	}
	for i := 1; i < len(starts); i++ {
		starts[i] += starts[i-1]
	}
	out = slices.Grow(out[:0], len(links))[:len(links)]
	for _, l := range links {
		out[starts[l.parent+1]] = l
		starts[l.parent+1]++
	}
	// Each parent's links, sorted by start (the enclosing first) where
	// they are not in that order already.
	for lo := 0; lo < len(out); {
		hi := lo + 1
		sorted := true
		for ; hi < len(out) && out[hi].parent == out[lo].parent; hi++ {
			a, c := &out[hi-1], &out[hi]
			if a.lo > c.lo || a.lo == c.lo && a.hi <= c.hi {
				sorted = false
			}
		}
		if !sorted {
			group := out[lo:hi]
			slices.SortFunc(group, func(a, c link) int {
				if a.lo != c.lo {
					return cmp.Compare(a.lo, c.lo)
				}
				return cmp.Compare(c.hi, a.hi)
			})
			for i := 1; i < len(group); i++ {
				if group[i-1].lo == group[i].lo && group[i-1].hi == group[i].hi {
					return out, false // a tie: sortLinks' order is its own
				}
			}
		}
		lo = hi
	}
	return out, true
}

// flatten appends to out the disjoint segments of links (one parent's,
// sorted by sortLinks): each address goes to the covering range that sorts
// last, which starts last, the innermost in practice. It keeps a stack of
// the ranges enclosing the current position, so the result has at most
// twice as many segments as links, and a lookup is one binary search
// however the ranges overlap.
func flatten(out []seg, links []link) []seg {
	emit := func(lo, hi uint64, n int32) {
		if lo >= hi {
			return
		}
		if k := len(out) - 1; k >= 0 && out[k].node == n && out[k].hi == lo {
			out[k].hi = hi
			return
		}
		out = append(out, seg{lo: lo, hi: hi, node: n})
	}
	var stack []link
	var pos uint64 // where the next segment starts
	for _, l := range links {
		// Close the ranges that end before l starts, innermost first.
		for len(stack) > 0 && stack[len(stack)-1].hi <= l.lo {
			top := stack[len(stack)-1]
			if top.hi > pos {
				emit(pos, top.hi, top.node)
				pos = top.hi
			}
			stack = stack[:len(stack)-1]
		}
		if len(stack) > 0 {
			emit(pos, l.lo, stack[len(stack)-1].node)
		}
		pos = max(pos, l.lo)
		stack = append(stack, l)
	}
	for len(stack) > 0 {
		top := stack[len(stack)-1]
		if top.hi > pos {
			emit(pos, top.hi, top.node)
			pos = top.hi
		}
		stack = stack[:len(stack)-1]
	}
	return out
}

// sortSequences returns a copy of rows with whole sequences (runs of rows
// ending with an end_sequence row) ordered by their start address, each
// one's rows in order.
func sortSequences(rows []row) []row {
	// Sequences mostly come in address order: then the rows are copied
	// as they are, without listing the sequences.
	sorted := true
	start, prev := 0, -1
	for i, r := range rows {
		if r.endSeq {
			if prev >= 0 && rows[start].addr < rows[prev].addr {
				sorted = false
				break
			}
			prev, start = start, i+1
		}
	}
	if sorted {
		return slices.Clone(rows)
	}
	type seq struct{ start, end int }
	var seqs []seq
	start = 0
	for i, r := range rows {
		if r.endSeq {
			seqs = append(seqs, seq{start, i + 1})
			start = i + 1
		}
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

// rowsSorted reports whether every row's address is at or above the one
// before (a loop the compiler keeps tight, where IsSortedFunc called a
// comparison per row).
func rowsSorted(rows []row) bool {
	for i := 1; i < len(rows); i++ {
		if rows[i].addr < rows[i-1].addr {
			return false
		}
	}
	return true
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
