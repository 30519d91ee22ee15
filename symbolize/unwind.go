package symbolize

import (
	"fmt"
	"io"

	"github.com/stackimage/stackimage/unwind"
	"github.com/stackimage/stackimage/walker"
)

// The walker asks a Process for the unwind rule at each frame's address
// (walker.Unwinder). The rules come from the image files: compact unwind
// (__TEXT,__unwind_info, or __LD,__compact_unwind in an object) and DWARF
// CFI (__TEXT,__eh_frame, and a dSYM's __DWARF,__debug_frame). Each image's
// tables are read once, on first use, and only their headers are parsed
// then: pages and FDEs are decoded per lookup.

// UnwindRow gives the walker the unwind rule at a slid address
// (walker.Unwinder). For a caller it tries compact unwind first, which
// holds at call sites, and DWARF CFI where compact unwind defers to it or
// is absent. For frame 0, which may be in a prologue or epilogue, it
// trusts only rules valid at every instruction: DWARF CFI (asynchronous,
// as Apple's toolchains emit it), or compact unwind once the function's
// prologue and epilogue are decoded. Without either it answers nothing,
// and the walker falls back to its own frame-0 rules. Where the Mach-O
// files have no rule, or the image has only a Breakpad .sym file, the
// .sym file's STACK CFI answers (breakpad.go).
func (p *Process) UnwindRow(q walker.UnwindQuery) (*unwind.Row, unwind.Source, error) {
	if p.NoUnwindInfo {
		return nil, 0, nil
	}
	loc, err := p.List.Lookup(q.Address)
	if err != nil {
		return nil, 0, nil
	}
	e := p.entries[loc.Loaded]
	if e == nil || p.Arch == nil {
		return nil, 0, nil
	}
	row, src, err := e.UnwindRow(p.Arch, loc.Unslid, loc.Offset, q, &imageCode{p: p, base: loc.Loaded.LoadAddress})
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", loc.Loaded.Name, err)
	}
	return row, src, nil
}

// imageCode reads an image's code at image-relative offsets, as compact
// unwind's decoders address it.
type imageCode struct {
	p    *Process
	base uint64 // the load address: image-relative offset 0
}

func (c *imageCode) ReadAt(b []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("code read at negative offset %d", off)
	}
	n, err := c.p.ReadMemory(b, c.base+uint64(off))
	if n > 0 && n < len(b) {
		// A read that runs past the end of the code gives what there is,
		// as io.ReaderAt does at the end of a file: a decoder scanning
		// forward to a return needs the last instructions too.
		err = io.EOF
	}
	return n, err
}

var _ walker.Unwinder = (*Process)(nil)
