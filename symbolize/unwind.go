package symbolize

import (
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/unwind"
	"github.com/stackimage/stackimage/unwind/compactunwind"
	"github.com/stackimage/stackimage/unwind/dwarfcfi"
	"github.com/stackimage/stackimage/walker"
)

// The walker asks a Process for the unwind rule at each frame's address
// (walker.Unwinder). The rules come from the image files: compact unwind
// (__TEXT,__unwind_info, or __LD,__compact_unwind in an object) and DWARF
// CFI (__TEXT,__eh_frame, and a dSYM's __DWARF,__debug_frame). Each image's
// tables are read once, on first use, and only their headers are parsed
// then: pages and FDEs are decoded per lookup.

// unwindTables are one entry's unwind tables.
type unwindTables struct {
	once sync.Once
	// arch is the architecture the tables were read for.
	compact    *compactunwind.Table
	ehFrame    *dwarfcfi.Table
	debugFrame *dwarfcfi.Table
	// textAddr is the unslid address compact unwind's image-relative
	// offsets count from: the __TEXT vmaddr (0 in an object file).
	textAddr uint64
	// errs says why a table could not be read; the others still answer.
	errs []error
}

// tables returns the entry's unwind tables, reading them on first use.
func (e *Entry) unwindTables() *unwindTables {
	t := &e.unwind
	t.once.Do(func() { t.read(e) })
	return t
}

func (t *unwindTables) read(e *Entry) {
	for _, im := range e.Images {
		if im.Arch == nil {
			continue
		}
		if text, ok := im.TextSegment(); ok && t.compact == nil {
			t.textAddr = text.Addr
		}
		if t.compact == nil {
			if s, ok := im.Section("__TEXT", "__unwind_info"); ok {
				t.compact = t.parse(im, s, func(b []byte) (*compactunwind.Table, error) { return compactunwind.Parse(b) })
			} else if s, ok := im.Section("__LD", "__compact_unwind"); ok {
				t.compact = t.parse(im, s, func(b []byte) (*compactunwind.Table, error) {
					return compactunwind.ParseObject(b, im.Arch.PtrSize)
				})
			}
		}
		if s, ok := im.Section("__TEXT", "__eh_frame"); ok && t.ehFrame == nil {
			t.ehFrame = parseCFI(t, im, s, func(b []byte) (*dwarfcfi.Table, error) { return dwarfcfi.NewEHFrame(b, s.Addr, im.Arch) })
		}
		if s, ok := im.Section("__DWARF", "__debug_frame"); ok && t.debugFrame == nil {
			t.debugFrame = parseCFI(t, im, s, func(b []byte) (*dwarfcfi.Table, error) { return dwarfcfi.NewDebugFrame(b, im.Arch) })
		}
	}
}

func (t *unwindTables) parse(im *image.Image, s image.Section, parse func([]byte) (*compactunwind.Table, error)) *compactunwind.Table {
	data, err := im.ReadSection(s)
	if err == nil {
		var tab *compactunwind.Table
		if tab, err = parse(data); err == nil {
			return tab
		}
	}
	t.errs = append(t.errs, fmt.Errorf("%s: %s,%s: %w", im.Name, s.Segment, s.Name, err))
	return nil
}

func parseCFI(t *unwindTables, im *image.Image, s image.Section, parse func([]byte) (*dwarfcfi.Table, error)) *dwarfcfi.Table {
	data, err := im.ReadSection(s)
	if err == nil {
		var tab *dwarfcfi.Table
		if tab, err = parse(data); err == nil {
			return tab
		}
	}
	t.errs = append(t.errs, fmt.Errorf("%s: %s,%s: %w", im.Name, s.Segment, s.Name, err))
	return nil
}

// UnwindRow gives the walker the unwind rule at a slid address
// (walker.Unwinder). For a caller it tries compact unwind first, which
// holds at call sites, and DWARF CFI where compact unwind defers to it or
// is absent. For frame 0, which may be in a prologue or epilogue, it
// trusts only rules valid at every instruction: DWARF CFI (asynchronous,
// as Apple's toolchains emit it), or compact unwind once the function's
// prologue and epilogue are decoded. Without either it answers nothing,
// and the walker falls back to its own frame-0 rules.
func (p *Process) UnwindRow(q walker.UnwindQuery) (*unwind.Row, unwind.Source, error) {
	if p.NoUnwindInfo {
		return nil, 0, nil
	}
	loc, ok := p.List.Lookup(q.Address)
	if !ok {
		return nil, 0, nil
	}
	e := p.entries[loc.Loaded]
	if e == nil || p.Arch == nil {
		return nil, 0, nil
	}
	t := e.unwindTables()
	pc := loc.Unslid
	row, src, err := t.rowAt(p, loc.Loaded, pc, q)
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", loc.Loaded.Name, err)
	}
	if row == nil {
		return nil, 0, nil
	}
	return row, src, nil
}

func (t *unwindTables) rowAt(p *Process, l *image.Loaded, pc uint64, q walker.UnwindQuery) (*unwind.Row, unwind.Source, error) {
	frame0 := q.Frame0
	code := &imageCode{p: p, base: l.LoadAddress}
	if frame0 {
		if row, src, err := t.cfiRow(pc); row != nil || err != nil {
			return row, src, err
		}
	}
	if t.compact != nil && pc >= t.textAddr && pc-t.textAddr <= 0xffffffff {
		off := uint32(pc - t.textAddr)
		entry, err := t.compact.Lookup(off)
		switch {
		case errors.Is(err, compactunwind.ErrNotFound):
		case err != nil:
			return nil, 0, err
		default:
			// A linker may give one entry to a run of functions with the
			// same encoding; the prologue to decode is the function's own.
			if start, ok := p.FunctionStart(l.LoadAddress + uint64(off)); ok && start >= l.LoadAddress {
				if rel := start - l.LoadAddress; rel > uint64(entry.FuncStart) && rel <= uint64(off) {
					entry.FuncStart = uint32(rel)
				}
			}
			if fdeOff, ok := entry.DWARFOffset(p.Arch); ok {
				if t.ehFrame == nil {
					return nil, 0, fmt.Errorf("compact unwind defers to __eh_frame offset %#x, and the image has no __eh_frame", fdeOff)
				}
				row, _, err := t.ehFrame.RowInFDE(uint64(fdeOff), pc)
				if err != nil {
					return nil, 0, err
				}
				return &row, unwind.SourceEHFrame, nil
			}
			if frame0 {
				// compact unwind's frame-0 decoder reads bit 0 of the PC as
				// the instruction set, as a branch target would carry it.
				thumb := uint32(0)
				if q.Thumb {
					thumb = 1
				}
				row, ok, err := compactunwind.Frame0Row(p.Arch, entry, off|thumb, code)
				if err != nil || !ok {
					return nil, 0, err
				}
				return &row, unwind.SourceCompactUnwind, nil
			}
			row, err := compactunwind.RowFor(p.Arch, entry, code)
			switch {
			case errors.Is(err, compactunwind.ErrNoInfo):
			case err != nil:
				return nil, 0, err
			default:
				return &row, unwind.SourceCompactUnwind, nil
			}
		}
	}
	if !frame0 {
		return t.cfiRow(pc)
	}
	return nil, 0, nil
}

// cfiRow returns the DWARF CFI row at pc from __eh_frame, else
// __debug_frame; nil when neither covers pc.
func (t *unwindTables) cfiRow(pc uint64) (*unwind.Row, unwind.Source, error) {
	for _, tab := range []*dwarfcfi.Table{t.ehFrame, t.debugFrame} {
		if tab == nil {
			continue
		}
		row, _, err := tab.RowAt(pc)
		switch {
		case errors.Is(err, dwarfcfi.ErrNoFDE):
			continue
		case err != nil:
			return nil, 0, err
		}
		return &row, tab.Source(), nil
	}
	return nil, 0, nil
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
