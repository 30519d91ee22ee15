package debuginfo

import (
	"debug/dwarf"
	"slices"
)

// DWARF codes debug/dwarf does not name.
const (
	tagCallSite         dwarf.Tag  = 0x48   // DW_TAG_call_site (DWARF 5)
	tagGNUCallSite      dwarf.Tag  = 0x4109 // DW_TAG_GNU_call_site (DWARF 4 extension)
	attrCallReturnPC    dwarf.Attr = 0x7d   // DW_AT_call_return_pc (DWARF 5)
	attrCallAllCalls    dwarf.Attr = 0x7a   // DW_AT_call_all_calls (DWARF 5)
	attrGNUAllCallSites dwarf.Attr = 0x2117 // DW_AT_GNU_all_call_sites
	maxCallSitesPerUnit            = 1 << 20
)

// unitCallSites is one unit's call sites: the return addresses of its
// calls, sorted, and the address ranges of its functions whose every call
// is described (DW_AT_call_all_calls), where an address that is no call's
// return is no return address at all.
type unitCallSites struct {
	returns  []uint64
	complete [][2]uint64 // sorted by start
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
	// complete[i-1] is the last range starting at or below addr; the
	// ranges of top-level functions do not overlap.
	i, _ := slices.BinarySearchFunc(cs.complete, addr, func(r [2]uint64, a uint64) int {
		if r[0] <= a {
			return -1
		}
		return 1
	})
	if i > 0 && addr < cs.complete[i-1][1] {
		return true, false
	}
	return false, false
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
	cs = &unitCallSites{}
	defer func() {
		if recover() != nil {
			cs.sort()
		}
	}()
	span := ix.units[u]
	r := ix.d.Reader()
	r.Seek(dwarf.Offset(span.first))
	// funcDepth is the depth of the outermost function being read, and
	// funcComplete whether its calls are all described; depth counts the
	// open DIEs with children.
	depth, funcDepth := 0, -1
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
			}
		case tagCallSite, tagGNUCallSite:
			attr := attrCallReturnPC
			if e.Tag == tagGNUCallSite {
				attr = dwarf.AttrLowpc
			}
			if pc, ok := e.Val(attr).(uint64); ok && len(cs.returns) < maxCallSitesPerUnit {
				cs.returns = append(cs.returns, pc)
			}
		}
		if e.Children {
			depth++
		}
	}
	cs.sort()
	return cs
}

func (cs *unitCallSites) sort() {
	slices.Sort(cs.returns)
	cs.returns = slices.Compact(cs.returns)
	slices.SortFunc(cs.complete, func(a, b [2]uint64) int { return cmpAddr(a[0], b[0]) })
}

// flagSet reports whether e has the flag attribute a set.
func flagSet(e *dwarf.Entry, a dwarf.Attr) bool {
	v, ok := e.Val(a).(bool)
	return ok && v
}
