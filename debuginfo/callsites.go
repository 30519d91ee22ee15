package debuginfo

import (
	"debug/dwarf"
	"slices"

	"github.com/stackimage/stackimage/internal/leb128"
)

// DWARF codes debug/dwarf does not name.
const (
	tagCallSite         dwarf.Tag  = 0x48   // DW_TAG_call_site (DWARF 5)
	tagGNUCallSite      dwarf.Tag  = 0x4109 // DW_TAG_GNU_call_site (DWARF 4 extension)
	attrCallReturnPC    dwarf.Attr = 0x7d   // DW_AT_call_return_pc (DWARF 5)
	attrCallAllCalls    dwarf.Attr = 0x7a   // DW_AT_call_all_calls (DWARF 5)
	attrGNUAllCallSites dwarf.Attr = 0x2117 // DW_AT_GNU_all_call_sites
	attrCallOrigin      dwarf.Attr = 0x7f   // DW_AT_call_origin (DWARF 5)
	attrCallTailCall    dwarf.Attr = 0x82   // DW_AT_call_tail_call (DWARF 5)
	attrCallTarget      dwarf.Attr = 0x83   // DW_AT_call_target (DWARF 5)
	attrGNUCallTarget   dwarf.Attr = 0x2113 // DW_AT_GNU_call_site_target
	attrGNUTailCall     dwarf.Attr = 0x2115 // DW_AT_GNU_tail_call
	maxCallSitesPerUnit            = 1 << 20
)

// unitCallSites is one unit's call sites: the return addresses of its
// calls, sorted, and the address ranges of its functions whose every call
// is described (DW_AT_call_all_calls), where an address that is no call's
// return is no return address at all.
type unitCallSites struct {
	returns  []uint64
	complete [][2]uint64 // sorted by start
	// calls holds what each call (not a tail call) calls, sorted by its
	// return address; tails, per function entry, what its tail calls
	// jump to.
	calls []callTarget
	tails map[uint64][]callee
	// locals holds, per top-level function whose frame base is a
	// register, how far above that register its variables reach.
	locals []frameLocals
}

// frameLocals is a function's range, its frame base register
// (DW_AT_frame_base DW_OP_regN) and how far above it its variables reach
// (DW_OP_fbreg offset plus size): the least size of its frame above the
// register.
// Parameters are left out: one passed on the stack lies in the caller's
// frame, above the return address.
type frameLocals struct {
	lo, hi uint64
	reg    int
	end    int64
}

// callee is what a call site calls: the entry of a function the DWARF
// places (direct), or something it does not say (a call through a
// register, DW_AT_call_target; a function only declared, in another
// image or reached through a stub).
type callee struct {
	entry  uint64
	direct bool
}

// callTarget is a call's return address and what it calls.
type callTarget struct {
	ret uint64
	callee
}

// CallReturn reports whether addr (unslid) is the return address of a call
// the DWARF describes: a DW_TAG_call_site's DW_AT_call_return_pc, or a
// DW_TAG_GNU_call_site's DW_AT_low_pc. known is true when the answer is
// the DWARF's word: addr is such a return address, or it lies in a
// function whose every call the DWARF describes (DW_AT_call_all_calls,
// DW_AT_GNU_all_call_sites), so that an address there matching no call
// site is no return address. known is false where the DWARF has no call
// sites for addr's function (unoptimized code, an older compiler).
//
// Only the unit covering addr is read, on first use, apart from the
// lookups' parse (their index and cache are unchanged); its call sites are
// kept for the Index's life.
func (ix *Index) CallReturn(addr uint64) (known, isReturn bool) {
	u := findSeg(ix.byAddr, addr)
	if u < 0 {
		return false, false
	}
	cs := ix.callSites(int(u))
	if _, found := slices.BinarySearch(cs.returns, addr); found {
		return true, true
	}
	return cs.completeAt(addr), false
}

// completeAt reports whether addr lies in a function whose every call is
// described.
func (cs *unitCallSites) completeAt(addr uint64) bool {
	// complete[i-1] is the last range starting at or below addr; the
	// ranges of top-level functions do not overlap.
	i, _ := slices.BinarySearchFunc(cs.complete, addr, func(r [2]uint64, a uint64) int {
		if r[0] <= a {
			return -1
		}
		return 1
	})
	return i > 0 && addr < cs.complete[i-1][1]
}

// maxTailFunctions bounds the functions CallReaches follows tail calls
// through: a longer chain is not known.
const maxTailFunctions = 64

// CallReaches reports whether the call returning to ret (unslid) can have
// entered the function whose entry is entry, by what the DWARF's call
// sites say it calls: a direct call of that function, or of a function
// that tail-calls into it (DW_AT_call_tail_call, DW_AT_GNU_tail_call),
// followed through at most maxTailFunctions functions. known is false
// where the DWARF does not say: no call site returns to ret, the call
// goes through a register (DW_AT_call_target) or to a function only
// declared (in another image, through a stub), or a function on the way
// may make tail calls it does not list (no DW_AT_call_all_calls) or makes
// one whose target is not known. Otherwise the answer is the DWARF's: a
// stale return address of a call to another function is refuted.
func (ix *Index) CallReaches(ret, entry uint64) (known, reaches bool) {
	u := findSeg(ix.byAddr, ret)
	if u < 0 {
		return false, false
	}
	cs := ix.callSites(int(u))
	i, found := slices.BinarySearchFunc(cs.calls, ret, func(c callTarget, a uint64) int { return cmpAddr(c.ret, a) })
	if !found || !cs.calls[i].direct {
		return false, false
	}
	from := cs.calls[i].entry
	if from == entry {
		return true, true
	}
	seen := map[uint64]bool{from: true}
	queue := []uint64{from}
	sure := true // every tail call on the way is listed and placed
	for len(queue) > 0 {
		h := queue[0]
		queue = queue[1:]
		tails, complete := ix.tailCalls(h)
		sure = sure && complete
		for _, t := range tails {
			switch {
			case !t.direct:
				sure = false
			case t.entry == entry:
				return true, true
			case !seen[t.entry]:
				if len(seen) == maxTailFunctions {
					return false, false
				}
				seen[t.entry] = true
				queue = append(queue, t.entry)
			}
		}
	}
	return sure, false
}

// tailCalls returns what the function whose entry is entry tail-calls,
// and whether that list is complete: the function's every call is
// described (DW_AT_call_all_calls).
func (ix *Index) tailCalls(entry uint64) (tails []callee, complete bool) {
	u := findSeg(ix.byAddr, entry)
	if u < 0 {
		return nil, false
	}
	cs := ix.callSites(int(u))
	return cs.tails[entry], cs.completeAt(entry)
}

// callSites returns unit u's call sites, reading them on first use.
func (ix *Index) callSites(u int) *unitCallSites {
	ix.callMu.Lock()
	defer ix.callMu.Unlock()
	if cs, ok := ix.calls[u]; ok {
		return cs
	}
	if ix.calls == nil {
		ix.calls = map[int]*unitCallSites{}
	}
	cs := ix.readCallSites(u)
	ix.calls[u] = cs
	return cs
}

// readCallSites walks unit u's DIEs with debug/dwarf for its call sites.
// A unit it cannot read to the end keeps what was read before the damage
// (the lookups' parse warns of it).
func (ix *Index) readCallSites(u int) (cs *unitCallSites) {
	cs = &unitCallSites{tails: map[uint64][]callee{}}
	// entries holds the entry of each function the unit places, by the
	// offset of its DIE and of the DIEs it completes (the abstract one an
	// out-of-line copy of an inlined function names, the declaration a
	// definition names): a call site names its callee by either.
	entries := map[dwarf.Offset]uint64{}
	sizes := typeSizer{r: ix.d.Reader(), known: map[dwarf.Offset]int64{}}
	var sites []pendingSite
	defer func() {
		if recover() != nil {
			cs.sort()
		}
	}()
	defer func() { ix.resolveSites(cs, sites, entries) }()
	span := ix.units[u]
	r := ix.d.Reader()
	r.Seek(dwarf.Offset(span.first))
	// funcDepth is the depth of the outermost function being read, and
	// funcComplete whether its calls are all described; depth counts the
	// open DIEs with children. funcEntry is that function's entry, when
	// hasEntry.
	depth, funcDepth := 0, -1
	var funcEntry uint64
	hasEntry := false
	curLocals := -1
	for {
		e, err := r.Next()
		if err != nil || e == nil || int64(e.Offset) >= span.end {
			break
		}
		if e.Tag == 0 {
			depth--
			if depth <= funcDepth {
				funcDepth = -1
			}
			if depth <= 0 {
				break
			}
			continue
		}
		switch e.Tag {
		case dwarf.TagSubprogram:
			entry, ok := ix.subprogramEntry(e)
			if ok && len(entries) < maxCallSitesPerUnit {
				entries[e.Offset] = entry
				for _, a := range []dwarf.Attr{dwarf.AttrAbstractOrigin, dwarf.AttrSpecification} {
					if off, isRef := e.Val(a).(dwarf.Offset); isRef {
						if _, seen := entries[off]; !seen {
							entries[off] = entry
						}
					}
				}
			}
			if funcDepth < 0 {
				funcEntry, hasEntry = entry, ok
			}
			if funcDepth < 0 && (flagSet(e, attrCallAllCalls) || flagSet(e, attrGNUAllCallSites)) {
				if rs, err := ix.d.Ranges(e); err == nil {
					for _, rg := range rs {
						if rg[0] < rg[1] {
							cs.complete = append(cs.complete, rg)
						}
					}
				}
			}
			if funcDepth < 0 && e.Children {
				funcDepth = depth
				curLocals = -1
				if reg, ok := registerLocation(e.Val(dwarf.AttrFrameBase)); ok {
					if rs, err := ix.d.Ranges(e); err == nil && len(rs) == 1 && len(cs.locals) < maxCallSitesPerUnit {
						cs.locals = append(cs.locals, frameLocals{lo: rs[0][0], hi: rs[0][1], reg: reg})
						curLocals = len(cs.locals) - 1
					}
				}
			}
		case dwarf.TagVariable:
			if funcDepth >= 0 && curLocals >= 0 {
				if off, ok := fbregLocation(e.Val(dwarf.AttrLocation)); ok {
					if top := off + sizes.variableSize(e); top > cs.locals[curLocals].end {
						cs.locals[curLocals].end = top
					}
				}
			}
		case tagCallSite, tagGNUCallSite:
			attr, originAttr, targetAttr, tailAttr := attrCallReturnPC, attrCallOrigin, attrCallTarget, attrCallTailCall
			if e.Tag == tagGNUCallSite {
				attr, originAttr, targetAttr, tailAttr = dwarf.AttrLowpc, dwarf.AttrAbstractOrigin, attrGNUCallTarget, attrGNUTailCall
			}
			pc, hasPC := e.Val(attr).(uint64)
			site := pendingSite{ret: pc, tail: flagSet(e, tailAttr), function: funcEntry}
			// A GNU tail call's DW_AT_low_pc is the address after its
			// jump, often the next function's entry: nothing returns
			// there.
			if hasPC && !site.tail && len(cs.returns) < maxCallSitesPerUnit {
				cs.returns = append(cs.returns, pc)
			}
			origin, hasOrigin := e.Val(originAttr).(dwarf.Offset)
			if !hasOrigin && e.Tag == tagCallSite {
				// clang names the callee by DW_AT_call_origin; the DWARF
				// 5 standard allows DW_AT_abstract_origin too.
				origin, hasOrigin = e.Val(dwarf.AttrAbstractOrigin).(dwarf.Offset)
			}
			site.origin, site.hasOrigin = origin, hasOrigin && e.Val(targetAttr) == nil
			if (site.tail && funcDepth >= 0 && hasEntry || !site.tail && hasPC) && len(sites) < maxCallSitesPerUnit {
				sites = append(sites, site)
			}
		}
		if e.Children {
			depth++
		}
	}
	return cs
}

// pendingSite is a call site read, its callee not yet placed: the DIE
// that names it may come later in the unit, or lie in another.
type pendingSite struct {
	ret       uint64 // the return address, of a call that is no tail call
	function  uint64 // the entry of the function holding a tail call
	tail      bool
	origin    dwarf.Offset // the callee's DIE, when hasOrigin
	hasOrigin bool
}

// resolveSites places each call site's callee by entries, or, for a DIE
// of another unit, by reading that DIE: a callee without an entry (only
// declared, abstract without an out-of-line copy) is not direct. It
// sorts cs.
func (ix *Index) resolveSites(cs *unitCallSites, sites []pendingSite, entries map[dwarf.Offset]uint64) {
	defer cs.sort()
	for _, s := range sites {
		var c callee
		if s.hasOrigin {
			entry, ok := entries[s.origin]
			if !ok {
				entry, ok = ix.entryAt(s.origin)
			}
			c = callee{entry: entry, direct: ok}
		}
		if s.tail {
			cs.tails[s.function] = append(cs.tails[s.function], c)
		} else {
			cs.calls = append(cs.calls, callTarget{ret: s.ret, callee: c})
		}
	}
}

// entryAt returns the entry of the function whose DIE is at off, outside
// the unit being read; ok is false where that DIE places no code.
func (ix *Index) entryAt(off dwarf.Offset) (entry uint64, ok bool) {
	defer func() {
		if recover() != nil {
			entry, ok = 0, false
		}
	}()
	r := ix.d.Reader()
	r.Seek(off)
	e, err := r.Next()
	if err != nil || e == nil || e.Offset != off || e.Tag != dwarf.TagSubprogram {
		return 0, false
	}
	return ix.subprogramEntry(e)
}

// subprogramEntry returns a function DIE's entry: its DW_AT_low_pc, or
// the lowest address of its ranges.
func (ix *Index) subprogramEntry(e *dwarf.Entry) (uint64, bool) {
	if lo, ok := e.Val(dwarf.AttrLowpc).(uint64); ok {
		return lo, true
	}
	if e.Val(dwarf.AttrRanges) == nil {
		return 0, false
	}
	rs, err := ix.d.Ranges(e)
	if err != nil || len(rs) == 0 {
		return 0, false
	}
	lo := rs[0][0]
	for _, rg := range rs[1:] {
		lo = min(lo, rg[0])
	}
	return lo, true
}

func (cs *unitCallSites) sort() {
	slices.SortFunc(cs.calls, func(a, b callTarget) int { return cmpAddr(a.ret, b.ret) })
	slices.Sort(cs.returns)
	cs.returns = slices.Compact(cs.returns)
	slices.SortFunc(cs.complete, func(a, b [2]uint64) int { return cmpAddr(a[0], b[0]) })
	slices.SortFunc(cs.locals, func(a, b frameLocals) int { return cmpAddr(a.lo, b.lo) })
}

// flagSet reports whether e has the flag attribute a set.
func flagSet(e *dwarf.Entry, a dwarf.Attr) bool {
	v, ok := e.Val(a).(bool)
	return ok && v
}

// registerLocation returns N of a location that is DW_OP_regN alone.
func registerLocation(v any) (int, bool) {
	b, ok := v.([]byte)
	if !ok || len(b) != 1 || b[0] < 0x50 || b[0] > 0x6f {
		return 0, false
	}
	return int(b[0] - 0x50), true
}

// fbregLocation returns the offset of a location that is DW_OP_fbreg
// alone.
func fbregLocation(v any) (int64, bool) {
	b, ok := v.([]byte)
	if !ok || len(b) < 2 || b[0] != 0x91 {
		return 0, false
	}
	off, next, err := leb128.Int(b, 1)
	return off, err == nil && next == len(b)
}

// maxVariableSize bounds the size variableSize gives one variable: a
// bound on where a frame's caller's return address may lie need not be
// tight, and a corrupt type must not put it past the stack.
const maxVariableSize = 64 << 10

// typeSizer tells the sizes of a unit's types, each read once (many
// variables share one), with one reader.
type typeSizer struct {
	r     *dwarf.Reader
	known map[dwarf.Offset]int64
}

// variableSize returns how many bytes the variable e occupies, by its
// type (DW_AT_type, through typedefs and qualifiers, arrays by their
// element size and bounds), at most maxVariableSize, or 1 where the type
// does not say: at least its first byte is the variable's. The walker
// takes no return address of the function's caller below its variables
// (FrameLocals), so an array a function leaves unwritten, where stale
// return addresses of earlier calls lie, is skipped whole.
func (ts *typeSizer) variableSize(e *dwarf.Entry) int64 {
	off, ok := e.Val(dwarf.AttrType).(dwarf.Offset)
	if !ok {
		return 1
	}
	if n := ts.size(off, 8); n > 0 {
		return n
	}
	return 1
}

// size returns the byte size of the type at off, at most
// maxVariableSize, or 0 where it cannot be told within depth more type
// entries.
func (ts *typeSizer) size(off dwarf.Offset, depth int) int64 {
	if n, ok := ts.known[off]; ok {
		return n
	}
	n := min(ts.read(off, depth), maxVariableSize)
	ts.known[off] = n
	return n
}

func (ts *typeSizer) read(off dwarf.Offset, depth int) int64 {
	if depth == 0 {
		return 0
	}
	ts.r.Seek(off)
	t, err := ts.r.Next()
	if err != nil || t == nil {
		return 0
	}
	if n, ok := t.Val(dwarf.AttrByteSize).(int64); ok {
		return n
	}
	elem, ok := t.Val(dwarf.AttrType).(dwarf.Offset)
	switch t.Tag {
	case dwarf.TagTypedef, dwarf.TagConstType, dwarf.TagVolatileType, dwarf.TagRestrictType, dwarf.TagAtomicType:
		if !ok {
			return 0
		}
		return ts.size(elem, depth-1)
	case dwarf.TagArrayType:
		if !ok || !t.Children {
			return 0
		}
		// The subranges first: sizing the element moves the reader.
		count := int64(1)
		for {
			sub, err := ts.r.Next()
			if err != nil || sub == nil || sub.Tag == 0 {
				break
			}
			if sub.Tag != dwarf.TagSubrangeType {
				ts.r.SkipChildren()
				continue
			}
			n, ok := sub.Val(dwarf.AttrCount).(int64)
			if !ok {
				upper, ok := sub.Val(dwarf.AttrUpperBound).(int64)
				if !ok {
					return 0 // a bound only the run knows (a VLA)
				}
				lower, _ := sub.Val(dwarf.AttrLowerBound).(int64)
				n = upper - lower + 1
			}
			if n <= 0 {
				return 0 // empty, or a flexible array member: its extent is not the type's
			}
			count = min(count, maxVariableSize) * min(n, maxVariableSize) // no overflow: both at most 2^16
		}
		size := ts.size(elem, depth-1)
		if size <= 0 {
			return 0
		}
		if size > maxVariableSize/count {
			return maxVariableSize
		}
		return size * count
	}
	return 0
}

// FrameLocals reports, for the function holding pc (unslid), the DWARF
// register its frame base is (DW_AT_frame_base DW_OP_regN) and how many
// bytes above that register its variables reach (the highest DW_OP_fbreg
// offset plus the variable's size, variableSize). known is false where
// the function's frame base is no register or none of its variables lies
// in the frame.
func (ix *Index) FrameLocals(pc uint64) (reg int, end int64, known bool) {
	u := findSeg(ix.byAddr, pc)
	if u < 0 {
		return 0, 0, false
	}
	cs := ix.callSites(int(u))
	// locals[i-1] is the last function starting at or below pc; the
	// ranges of top-level functions do not overlap.
	i, _ := slices.BinarySearchFunc(cs.locals, pc, func(l frameLocals, a uint64) int {
		if l.lo <= a {
			return -1
		}
		return 1
	})
	if i == 0 || pc >= cs.locals[i-1].hi {
		return 0, 0, false
	}
	l := cs.locals[i-1]
	return l.reg, l.end, l.end > 0
}
