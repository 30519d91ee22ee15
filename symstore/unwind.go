package symstore

import (
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/unwind"
	"github.com/stackimage/stackimage/unwind/compactunwind"
	"github.com/stackimage/stackimage/unwind/dwarfcfi"
	"github.com/stackimage/stackimage/walker"
)

// The walker asks for the unwind rule at each frame's address
// (walker.Unwinder; symbolize.Process asks Entry.UnwindRow). The rules
// come from the image files: compact unwind
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
	// err says why a table of the image could not be read. A walk that
	// reaches the image stops there (bad_unwind_info) rather than go on
	// with part of its tables, which could give wrong callers. A table
	// whose section the file does not hold is no error: a dSYM's
	// __unwind_info has no file data (image.ErrNoFileData), and is absent
	// as in an image with no table; one that lies past the end of a
	// truncated file (image.ErrTruncated) is absent too, with a warning.
	err error
	// warnings says which tables were left out as past the end of the
	// file; read once done is set.
	warnings []string
	done     atomic.Bool
	// ehFrameLeftOut says an image has an __eh_frame section whose bytes
	// no file held: compact unwind entries that defer to it have no rule,
	// rather than a broken one.
	ehFrameLeftOut bool

	// callerRows caches the rows found for callers, by unslid address: a
	// walk of many threads meets the same call sites again and again. The
	// rows are never modified once made. It is emptied when full.
	mu         sync.Mutex
	callerRows map[uint64]cachedRow
}

// cachedRow is one answer of rowAt for a caller: a row or none.
type cachedRow struct {
	row *unwind.Row
	src unwind.Source
}

// maxCachedRows bounds an image's cache of caller rows.
const maxCachedRows = 1 << 16

// unwindTables returns the entry's unwind tables, reading them on first use.
func (e *Entry) unwindTables() *unwindTables {
	t := &e.unwind
	t.once.Do(func() { t.read(e) })
	return t
}

func (t *unwindTables) read(e *Entry) {
	defer t.done.Store(true)
	for _, im := range e.Images {
		if im.Arch == nil {
			continue
		}
		if text, ok := im.TextSegment(); ok && t.compact == nil {
			t.textAddr = text.Addr
		}
		if t.compact == nil {
			if s, ok := im.Section("__TEXT", "__unwind_info"); ok {
				t.compact = readTable(t, im, s, compactunwind.Parse)
			} else if s, ok := im.Section("__LD", "__compact_unwind"); ok {
				t.compact = readTable(t, im, s, func(b []byte) (*compactunwind.Table, error) {
					return compactunwind.ParseObject(b, im.Arch.PtrSize)
				})
			}
		}
		if s, ok := im.Section("__TEXT", "__eh_frame"); ok && t.ehFrame == nil {
			t.ehFrame = readTable(t, im, s, func(b []byte) (*dwarfcfi.Table, error) { return dwarfcfi.NewEHFrame(b, s.Addr, im.Arch) })
			t.ehFrameLeftOut = t.ehFrame == nil
		}
		if s, ok := im.Section("__DWARF", "__debug_frame"); ok && t.debugFrame == nil {
			t.debugFrame = readTable(t, im, s, func(b []byte) (*dwarfcfi.Table, error) { return dwarfcfi.NewDebugFrame(b, im.Arch) })
		}
	}
}

// fail records the first table that could not be read.
func (t *unwindTables) fail(s image.Section, err error) {
	if t.err == nil {
		t.err = fmt.Errorf("%s,%s: %w", s.Segment, s.Name, err)
	}
}

// unwindWarnings returns the tables left out of the entry's unwind tables
// because their files end before them; nil before the tables were read.
func (e *Entry) unwindWarnings() []string {
	if !e.unwind.done.Load() {
		return nil
	}
	return e.unwind.warnings
}

// readTable reads a section and parses it; a section that cannot be read
// or parsed is recorded in t.err (see fail) and gives nil. An empty
// section, or one the file does not hold, gives nil without an error:
// with a warning when the file ends before it.
func readTable[T any](t *unwindTables, im *image.Image, s image.Section, parse func([]byte) (*T, error)) *T {
	if s.Size == 0 {
		return nil // an empty section is no table
	}
	data, err := im.ReadSection(s)
	switch {
	case errors.Is(err, image.ErrNoFileData):
		return nil
	case errors.Is(err, image.ErrTruncated):
		t.warnings = append(t.warnings, fmt.Sprintf("%s: unwind table %s,%s left out, the walk goes on by its other strategies in this image: %v",
			im.Name, s.Segment, s.Name, err))
		return nil
	}
	if err == nil {
		var tab *T
		if tab, err = parse(data); err == nil {
			return tab
		}
	}
	t.fail(s, err)
	return nil
}

// UnwindQuery asks Entry.UnwindRow for the unwind rule at one address of
// the entry's image, loaded at LoadAddress.
type UnwindQuery struct {
	// UnwindQuery is the walker's question: the slid Address, and whether
	// it is frame 0's PC (in Thumb state).
	walker.UnwindQuery
	Arch *archregs.Arch
	// Unslid is Address as the image's files number it.
	Unslid uint64
	// LoadAddress is where the image is loaded: a Breakpad .sym file's
	// addresses and compact unwind's code offsets count from it.
	LoadAddress uint64
	// Code reads the code at slid addresses, for compact unwind's prologue
	// and epilogue decoders (symbolize.Process.ReadMemory).
	Code walker.Memory
}

// UnwindRow returns the unwind rule at an address of the entry's image,
// for the walker (walker.Unwinder). For a caller it tries compact unwind
// first, which holds at call sites, and DWARF CFI where compact unwind
// defers to it or is absent. For frame 0, which may be in a prologue or
// epilogue, it trusts only rules valid at every instruction: DWARF CFI
// (asynchronous, as Apple's toolchains emit it), or compact unwind once
// the function's prologue and epilogue are decoded. Without either it
// answers nothing, and the walker falls back to its own frame-0 rules.
// Where the Mach-O files have no rule, or the image has only a Breakpad
// .sym file, the .sym file's STACK CFI answers (breakpad.go).
func (e *Entry) UnwindRow(q UnwindQuery) (*unwind.Row, unwind.Source, error) {
	t := e.unwindTables()
	if t.err != nil {
		return nil, 0, t.err
	}
	row, src, err := t.rowAt(e, q)
	if err != nil {
		return nil, 0, err
	}
	if row == nil {
		// The Mach-O files have no rule here (or there are none): a
		// Breakpad .sym file's STACK CFI may. Like DWARF CFI, dump_syms
		// describes every instruction it covers, so it answers frame 0
		// too. Its addresses count from the load address.
		if row = e.breakpadRow(q.Arch, q.Address-q.LoadAddress); row != nil {
			return row, unwind.SourceBreakpad, nil
		}
		return nil, 0, nil
	}
	return row, src, nil
}

func (t *unwindTables) rowAt(e *Entry, q UnwindQuery) (*unwind.Row, unwind.Source, error) {
	arch, pc := q.Arch, q.Unslid
	if !q.Frame0 {
		t.mu.Lock()
		c, ok := t.callerRows[pc]
		t.mu.Unlock()
		if ok {
			return c.row, c.src, nil
		}
	}
	entry, haveEntry, err := t.compactEntry(pc)
	if err != nil {
		return nil, 0, err
	}
	code := &imageCode{mem: q.Code, base: q.LoadAddress}
	if q.Frame0 {
		return t.frame0Row(e, arch, pc, q.Thumb, entry, haveEntry, code)
	}
	var row *unwind.Row
	var src unwind.Source
	if haveEntry {
		row, src, err = t.callerRow(arch, pc, entry, code)
	}
	if row == nil && err == nil {
		row, src, err = t.cfiRow(pc)
	}
	if err == nil {
		t.mu.Lock()
		if t.callerRows == nil || len(t.callerRows) >= maxCachedRows {
			t.callerRows = map[uint64]cachedRow{}
		}
		t.callerRows[pc] = cachedRow{row, src}
		t.mu.Unlock()
	}
	return row, src, err
}

// compactEntry returns the compact unwind entry of the function holding
// pc.
func (t *unwindTables) compactEntry(pc uint64) (compactunwind.Entry, bool, error) {
	if t.compact == nil || pc < t.textAddr || pc-t.textAddr > 0xffffffff {
		return compactunwind.Entry{}, false, nil
	}
	off := uint32(pc - t.textAddr)
	entry, err := t.compact.Lookup(off)
	switch {
	case errors.Is(err, compactunwind.ErrNotFound):
		return compactunwind.Entry{}, false, nil
	case err != nil:
		return compactunwind.Entry{}, false, err
	}
	return entry, true, nil
}

// functionBounds returns the unslid [start, end) of the function holding
// the unslid pc, from the image's symbols.
func (e *Entry) functionBounds(pc uint64) (start, end uint64, ok bool) {
	sym, ok := e.Symbol(pc)
	if !ok {
		return 0, 0, false
	}
	start, end = sym.Addr, ^uint64(0)
	for _, t := range e.Tables {
		if x, ok := t.End(pc); ok && x > pc {
			end = min(end, x)
		}
	}
	return start, end, end != ^uint64(0)
}

// callerRow is the row at a call site from compact unwind, or from the FDE
// it defers to; nil when the encoding says there is no unwind info.
func (t *unwindTables) callerRow(arch *archregs.Arch, pc uint64, entry compactunwind.Entry, code io.ReaderAt) (*unwind.Row, unwind.Source, error) {
	if fdeOff, ok := entry.DWARFOffset(arch); ok {
		if t.ehFrame == nil {
			if t.ehFrameLeftOut {
				// Present in the image but in none of its files (a
				// dSYM's stub, a truncated binary): no rule here.
				return nil, 0, nil
			}
			return nil, 0, fmt.Errorf("compact unwind defers to __eh_frame offset %#x, and the image has no __eh_frame", fdeOff)
		}
		row, _, err := t.ehFrame.RowInFDE(uint64(fdeOff), pc)
		if err != nil {
			return nil, 0, err
		}
		return &row, unwind.SourceEHFrame, nil
	}
	row, err := compactunwind.RowFor(arch, entry, code)
	switch {
	case errors.Is(err, compactunwind.ErrNoInfo):
		return nil, 0, nil
	case err != nil:
		return nil, 0, err
	}
	return &row, unwind.SourceCompactUnwind, nil
}

// frame0Row is the row where the thread stopped. Neither table holds
// everywhere there: compact unwind describes only the body, and compilers
// do not make DWARF CFI asynchronous in epilogues. So the function's
// prologue and epilogue are decoded, and in the body DWARF CFI, else
// compact unwind, gives the row.
func (t *unwindTables) frame0Row(e *Entry, arch *archregs.Arch, pc uint64, thumb bool, entry compactunwind.Entry, haveEntry bool, code io.ReaderAt) (*unwind.Row, unwind.Source, error) {
	cfi, cfiSrc, fde, cfiErr := t.cfiRowFDE(pc)
	// A linker may give one entry to a run of functions that share an
	// encoding; the prologue to decode is the function's own.
	if start, end, ok := e.functionBounds(pc); ok && haveEntry && start >= t.textAddr && end-t.textAddr <= 0xffffffff {
		entry = entry.Narrow(uint32(start-t.textAddr), uint32(end-t.textAddr))
	}
	if !haveEntry {
		// No compact entry: the FDE bounds the function for the decoder.
		if cfi == nil || fde.PCBegin < t.textAddr || fde.PCEnd-t.textAddr > 0xffffffff {
			return cfi, cfiSrc, cfiErr
		}
		entry = compactunwind.Entry{FuncStart: uint32(fde.PCBegin - t.textAddr), FuncEnd: uint32(fde.PCEnd - t.textAddr)}
	}
	// compact unwind's decoder reads bit 0 of the PC as the instruction
	// set, as a branch target would carry it.
	off := uint32(arch.WithThumb(pc-t.textAddr, thumb))
	row, phase, ok, err := compactunwind.Frame0(arch, entry, off, code)
	if ok && phase != compactunwind.PhaseBody {
		return &row, unwind.SourceCode, nil
	}
	if cfi != nil || cfiErr != nil {
		return cfi, cfiSrc, cfiErr
	}
	if err != nil || !ok || !haveEntry {
		return nil, 0, err
	}
	if _, dwarf := entry.DWARFOffset(arch); dwarf {
		return t.callerRow(arch, pc, entry, code)
	}
	return &row, unwind.SourceCompactUnwind, nil
}

// cfiRow returns the DWARF CFI row at pc from __eh_frame, else
// __debug_frame; nil when neither covers pc.
func (t *unwindTables) cfiRow(pc uint64) (*unwind.Row, unwind.Source, error) {
	row, src, _, err := t.cfiRowFDE(pc)
	return row, src, err
}

// cfiRowFDE is cfiRow, with the FDE that gave the row.
func (t *unwindTables) cfiRowFDE(pc uint64) (*unwind.Row, unwind.Source, dwarfcfi.FDEInfo, error) {
	for _, tab := range []*dwarfcfi.Table{t.ehFrame, t.debugFrame} {
		if tab == nil {
			continue
		}
		row, fde, err := tab.RowAt(pc)
		switch {
		case errors.Is(err, dwarfcfi.ErrNoFDE):
			continue
		case err != nil:
			return nil, 0, fde, err
		}
		return &row, tab.Source(), fde, nil
	}
	return nil, 0, dwarfcfi.FDEInfo{}, nil
}

// imageCode reads an image's code at image-relative offsets, as compact
// unwind's decoders address it.
type imageCode struct {
	mem  walker.Memory // the code at slid addresses
	base uint64        // the load address: image-relative offset 0
}

func (c *imageCode) ReadAt(b []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("code read at negative offset %d", off)
	}
	n, err := c.mem.ReadMemory(b, c.base+uint64(off))
	if n > 0 && n < len(b) {
		// A read that runs past the end of the code gives what there is,
		// as io.ReaderAt does at the end of a file: a decoder scanning
		// forward to a return needs the last instructions too.
		err = io.EOF
	}
	return n, err
}
