// Package debuginfo answers "which function, file and line is this address,
// and what was inlined there" from an image's DWARF (a dSYM's or a Mach-O
// file's __DWARF sections), and demangles C++ and Rust names.
//
// An Index is built once per image: the line tables of all compile units are
// flattened into one address-sorted array, and the subprogram and
// inlined-subroutine ranges into a tree of address-sorted span lists, so a
// lookup is a few binary searches and never walks the compile units. The
// DWARF itself is decoded by the standard library's debug/dwarf from the
// section bytes the image package hands over.
package debuginfo

import (
	"debug/dwarf"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Frame is one source-level frame at an address: the function the code
// belongs to and the source position. Several frames share one address when
// code was inlined. A Frame is a plain value, safe to copy and share.
type Frame struct {
	// Function is the readable name: the demangled linkage name for C++,
	// Rust and Swift (Swift as Apple's crash reports print it), else the
	// DWARF name (C functions, ObjC methods such as
	// "-[MyClass crashingMethod]").
	Function string
	// LinkageName is the mangled name as the DWARF records it (no Mach-O
	// leading underscore); empty when the compiler recorded none.
	LinkageName string
	// Lang says how Function was derived from the names.
	Lang Lang
	// File is the source file's path as the DWARF records it (joined with
	// the include and compilation directories). Empty when unknown.
	File string
	// Line and Column are 1-based; 0 means unknown (line 0 is also what
	// compilers emit for code with no source line).
	Line, Column int
	// Inlined is true when this frame's function was inlined into the next
	// frame's function: the frame has no machine frame of its own.
	Inlined bool
}

// Index answers address lookups for one image's DWARF. Addresses are unslid
// (the image's vmaddr space). An Index is immutable once built and safe for
// concurrent use.
type Index struct {
	strs  []string // interned file paths and function names
	rows  []row    // all line-table sequences, concatenated in address order
	nodes []node   // subprograms and inlined subroutines
	spans []span   // grouped by parent; each group sorted by lo
	root  group    // the spans of the top-level subprograms

	warnings []string // what could not be read, see Warnings
}

// row is one line-table row. It covers [addr, next row's addr) unless it
// ends a sequence, in which case it covers nothing.
type row struct {
	addr   uint64
	file   int32 // index into strs, -1 when unknown
	line   uint32
	col    uint32
	endSeq bool
}

// node is one DW_TAG_subprogram or DW_TAG_inlined_subroutine with code.
type node struct {
	name, linkage int32 // indexes into strs, -1 when absent
	lang          Lang
	display       int32 // readable name, index into strs, -1 when absent
	// callFile/callLine/callCol are where an inlined subroutine was called
	// from (DW_AT_call_*): the source position of the caller's frame.
	callFile          int32
	callLine, callCol uint32
	inlined           bool
	children          group
}

// group is a [lo, hi) range of Index.spans.
type group struct{ lo, hi int32 }

// span is one address range [lo, hi) of a node. maxHi is the largest hi of
// this span and the spans before it in its group, which bounds how far back
// a search must look when ranges overlap.
type span struct {
	lo, hi, maxHi uint64
	node          int32
}

// maxDepth bounds the inline nesting a lookup follows: real code nests a
// few dozen levels at most, and a bound keeps hostile DWARF from building
// frame lists as long as the file.
const maxDepth = 256

// New builds an Index from DWARF section contents keyed by name without
// the leading underscores or dot: "debug_info", "debug_abbrev",
// "debug_line", "debug_str", "debug_ranges", "debug_aranges", and for
// DWARF 5 "debug_addr", "debug_line_str", "debug_rnglists",
// "debug_str_offsets" (Mach-O truncates it to "debug_str_offs") and
// "debug_loclists". Keys spelled "__debug_info" or ".debug_info" are also
// accepted.
//
// A compile unit whose line table or DIEs cannot be read is indexed as far
// as it can be and reported by Warnings; the other units are unaffected.
// New fails only when the sections are unusable as a whole (no debug_info,
// or debug/dwarf rejects them, for instance an unreadable abbreviation
// table or a bad first unit header) or when not one unit yielded a line
// or a function.
func New(sections map[string][]byte) (*Index, error) {
	secs := normalize(sections)
	if len(secs["debug_info"]) == 0 {
		return nil, errors.New("debuginfo: no debug_info section")
	}
	return build(secs)
}

// SectionSource is what NewFromImage needs of an image: *image.Image
// satisfies it. An interface rather than the concrete type keeps this
// package free of the Mach-O reader. NewFromImage calls DWARFSections once,
// in the caller's goroutine; an implementation need not be safe for
// concurrent use unless the caller shares it.
type SectionSource interface {
	// DWARFSections returns the DWARF sections keyed as New expects.
	DWARFSections() (map[string][]byte, error)
}

// normalize rekeys sections as "debug_xxx", whatever the prefix.
func normalize(sections map[string][]byte) map[string][]byte {
	secs := make(map[string][]byte, len(sections))
	for k, v := range sections {
		k = strings.TrimLeft(k, "._")
		if k == "debug_str_offs" {
			k = "debug_str_offsets" // Mach-O section names stop at 16 bytes
		}
		secs[k] = v
	}
	return secs
}

// NewFromImage builds an Index from an image's DWARF sections, for
// instance a dSYM's *image.Image.
func NewFromImage(im SectionSource) (*Index, error) {
	secs, err := im.DWARFSections()
	if err != nil {
		return nil, fmt.Errorf("debuginfo: reading DWARF sections: %w", err)
	}
	return New(secs)
}

// Lookup returns the frames at the unslid address addr, innermost first and
// the outermost (the function that owns the machine frame) last, as
// llvm-symbolizer --inlines orders them. For a caller's frame pass the
// return address minus one, so that the call instruction is looked up. ok is
// false when the DWARF covers the address with neither a function nor a
// line.
func (ix *Index) Lookup(addr uint64) (frames []Frame, ok bool) {
	var path []int32 // outermost first
	g := ix.root
	for len(path) < maxDepth {
		n := ix.find(g, addr)
		if n < 0 {
			break
		}
		path = append(path, n)
		g = ix.nodes[n].children
	}
	r, haveRow := ix.row(addr)
	if len(path) == 0 {
		if !haveRow {
			return nil, false
		}
		return []Frame{{File: ix.str(r.file), Line: int(r.line), Column: int(r.col)}}, true
	}

	frames = make([]Frame, 0, len(path))
	for k := len(path) - 1; k >= 0; k-- {
		n := &ix.nodes[path[k]]
		f := Frame{
			Function:    ix.str(n.display),
			LinkageName: ix.str(n.linkage),
			Lang:        n.lang,
			Inlined:     n.inlined,
		}
		if k == len(path)-1 {
			// The innermost frame's position is the line table's.
			if haveRow {
				f.File, f.Line, f.Column = ix.str(r.file), int(r.line), int(r.col)
			}
		} else {
			// An outer frame is where the frame inside it was called from.
			in := &ix.nodes[path[k+1]]
			f.File, f.Line, f.Column = ix.str(in.callFile), int(in.callLine), int(in.callCol)
		}
		frames = append(frames, f)
	}
	return frames, true
}

// find returns the node of the span in g that holds addr, or -1. When spans
// overlap it prefers the one that starts last, the innermost in practice.
func (ix *Index) find(g group, addr uint64) int32 {
	spans := ix.spans[g.lo:g.hi]
	i := sort.Search(len(spans), func(i int) bool { return spans[i].lo > addr }) - 1
	for ; i >= 0 && spans[i].maxHi > addr; i-- {
		if spans[i].hi > addr {
			return spans[i].node
		}
	}
	return -1
}

// row returns the line-table row covering addr: the last row at or before
// it, unless that row ends its sequence.
func (ix *Index) row(addr uint64) (row, bool) {
	i := sort.Search(len(ix.rows), func(i int) bool { return ix.rows[i].addr > addr }) - 1
	if i < 0 || ix.rows[i].endSeq {
		return row{}, false
	}
	return ix.rows[i], true
}

func (ix *Index) str(i int32) string {
	if i < 0 {
		return ""
	}
	return ix.strs[i]
}

// Warnings describes what New skipped because it could not be read: one
// line per failure, naming the compile unit (its DIE offset in debug_info
// and its name when known) and the error, such as a line table with a bad
// header or a DIE with an unknown abbreviation. Lookups in the other
// compile units are unaffected; in a unit whose line table failed,
// functions resolve without file and line; in one whose DIEs failed part
// way, the DIEs read before the failure are kept. At most 100 warnings are
// kept; a last line then counts the rest. Nil when everything was read.
// The slice is the caller's to modify.
func (ix *Index) Warnings() []string {
	return slices.Clone(ix.warnings)
}

// Bounds returns the lowest and highest address the line tables cover, for
// callers that sample addresses (benchmarks); ok is false when there are
// no line rows.
func (ix *Index) Bounds() (lo, hi uint64, ok bool) {
	if len(ix.rows) == 0 {
		return 0, 0, false
	}
	return ix.rows[0].addr, ix.rows[len(ix.rows)-1].addr, true
}

// Stats describes the size of an Index, for logs and benchmarks. It is a
// plain value, safe to copy and share.
type Stats struct {
	Rows      int // line-table rows
	Functions int // subprograms and inlined subroutines with code
	Spans     int // their address ranges
}

// Stats returns the Index's size.
func (ix *Index) Stats() Stats {
	return Stats{Rows: len(ix.rows), Functions: len(ix.nodes), Spans: len(ix.spans)}
}

// newData builds the debug/dwarf reader over the sections.
func newData(secs map[string][]byte) (*dwarf.Data, error) {
	d, err := dwarf.New(secs["debug_abbrev"], secs["debug_aranges"], secs["debug_frame"],
		secs["debug_info"], secs["debug_line"], secs["debug_pubnames"],
		secs["debug_ranges"], secs["debug_str"])
	if err != nil {
		return nil, err
	}
	for _, name := range []string{"debug_addr", "debug_line_str", "debug_rnglists", "debug_str_offsets", "debug_loclists"} {
		if b, ok := secs[name]; ok {
			if err := d.AddSection("."+name, b); err != nil {
				return nil, fmt.Errorf("%s: %w", name, err)
			}
		}
	}
	return d, nil
}
