package debuginfo

import "unsafe"

// cacheBudget bounds the estimated bytes of parsed units an Index keeps.
// Past it the least recently used units are dropped (and parsed again when
// needed). A darwin cmd/go's whole DWARF, every unit parsed, takes about
// 40 MB this way, so a batch over all of it does not thrash.
const cacheBudget = 128 << 20

// unitCache holds parsed units, least recently used first out, and the
// line tables they share (keyed by debug_line offset, so that units naming
// one line program decode it once). It is guarded by Index.mu.
type unitCache struct {
	entries    map[int]*cacheEntry
	head, tail *cacheEntry // most and least recently used
	lines      map[int64]*lineTable
	bytes      int64 // units' sizes plus each cached line table's once
	budget     int64
}

type cacheEntry struct {
	unit       int
	lineOff    int64 // key of ui.lines in lines, -1 when none
	ui         *unitIndex
	prev, next *cacheEntry
}

func (c *unitCache) get(unit int) *unitIndex {
	if c.head != nil && c.head.unit == unit {
		// Lookups in address order (an index's writer) stay in one unit
		// for long runs: no map lookup, nothing to move.
		return c.head.ui
	}
	e := c.entries[unit]
	if e == nil {
		return nil
	}
	if c.head != e {
		c.unlink(e)
		c.pushFront(e)
	}
	return e.ui
}

// line returns the cached line table at off, or nil.
func (c *unitCache) line(off int64) *lineTable { return c.lines[off] }

// put adds a parsed unit whose line table (when lineOff >= 0) is ui.lines,
// then drops least recently used units until the cache fits its budget;
// the unit just added stays whatever its size.
func (c *unitCache) put(unit int, lineOff int64, ui *unitIndex) {
	if c.entries == nil {
		c.entries = make(map[int]*cacheEntry)
		c.lines = make(map[int64]*lineTable)
	}
	e := &cacheEntry{unit: unit, lineOff: lineOff, ui: ui}
	c.entries[unit] = e
	c.pushFront(e)
	c.bytes += ui.size
	if lineOff >= 0 && ui.lines != nil {
		if c.lines[lineOff] == nil {
			c.lines[lineOff] = ui.lines
			c.bytes += ui.lines.size
		}
		ui.lines.refs++
	}
	for c.bytes > c.budget && c.tail != e {
		c.evict(c.tail)
	}
}

func (c *unitCache) evict(e *cacheEntry) {
	c.unlink(e)
	delete(c.entries, e.unit)
	c.bytes -= e.ui.size
	if lt := e.ui.lines; e.lineOff >= 0 && lt != nil {
		if lt.refs--; lt.refs == 0 {
			delete(c.lines, e.lineOff)
			c.bytes -= lt.size
		}
	}
}

func (c *unitCache) pushFront(e *cacheEntry) {
	e.prev, e.next = nil, c.head
	if c.head != nil {
		c.head.prev = e
	}
	c.head = e
	if c.tail == nil {
		c.tail = e
	}
}

func (c *unitCache) unlink(e *cacheEntry) {
	if e.prev != nil {
		e.prev.next = e.next
	} else {
		c.head = e.next
	}
	if e.next != nil {
		e.next.prev = e.prev
	} else {
		c.tail = e.prev
	}
	e.prev, e.next = nil, nil
}

// Estimated sizes for the cache budget: the arrays plus string data.
var (
	rowSize  = int64(unsafe.Sizeof(row{}))
	nodeSize = int64(unsafe.Sizeof(node{}))
	segSize  = int64(unsafe.Sizeof(seg{}))
)
