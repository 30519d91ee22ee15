// Package dwarfcfi reads DWARF call frame information, the __TEXT,__eh_frame
// section of Mach-O images and the __DWARF,__debug_frame section of dSYMs,
// and interprets it into unwind.Rows: the rule in force at one address for
// recovering the caller's registers.
//
// A Table is built from a section's raw bytes. It indexes the FDEs on first
// lookup, in one pass over the section; RowAt then finds the FDE covering an
// address in O(log n) and runs its CIE's initial instructions and its own
// instructions up to that address. Expressions (DW_CFA_def_cfa_expression,
// DW_CFA_expression, DW_CFA_val_expression) become unwind.Expr values that
// the walker evaluates against the frame's registers and memory.
//
// Bad data is reported as *unwind.Error with the section (eh_frame or
// debug_frame) and the byte offset in it. A damaged record does not hide
// the others: the index keeps every FDE that can be read and Errors lists
// what could not.
package dwarfcfi

import (
	"errors"
	"fmt"
	"sort"
	"sync"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/unwind"
)

// ErrNoFDE is returned by RowAt for an address no FDE covers. It is not bad
// data: the table simply does not describe that address.
var ErrNoFDE = errors.New("dwarfcfi: no FDE covers the address")

// PointerReader reads the pointer-sized value stored at addr. It resolves
// DW_EH_PE_indirect pointer encodings, whose value is the address of a
// pointer (usually a GOT slot) rather than the pointer itself.
type PointerReader func(addr uint64) (uint64, error)

// An Option configures a Table.
type Option func(*Table)

// WithPointerReader resolves DW_EH_PE_indirect encodings with read. Without
// it an indirect personality or LSDA is reported as the address of the
// pointer (FDEInfo.PersonalityIndirect, FDEInfo.LSDAIndirect), and an
// indirect pc_begin makes the FDE unreadable.
func WithPointerReader(read PointerReader) Option {
	return func(t *Table) { t.readPointer = read }
}

// WithBases gives the bases of DW_EH_PE_textrel and DW_EH_PE_datarel
// pointer encodings, which Apple's tools do not emit. Without it those
// encodings are an error.
func WithBases(text, data uint64) Option {
	return func(t *Table) {
		t.textBase, t.dataBase = text, data
		t.haveBases = true
	}
}

// A Table is one __eh_frame or __debug_frame section. It keeps a reference
// to the section bytes, which the caller must not modify while the Table
// (or any unwind.Expr it returned) is in use. A Table is safe for
// concurrent use by multiple goroutines.
type Table struct {
	data    []byte
	addr    uint64 // the section's address, for DW_EH_PE_pcrel
	arch    *archregs.Arch
	source  unwind.Source
	ptrSize int

	readPointer        PointerReader
	textBase, dataBase uint64
	haveBases          bool
	// renumber converts __debug_frame's register numbers to arch.DWARF's
	// (arch.DebugFrameReg, i386's); nil when they need no conversion.
	renumber      func(unwind.Reg) unwind.Reg
	negateRAState bool // DW_CFA 0x2d is AArch64's negate_ra_state (arch.NegateRAState)

	once  sync.Once
	index []fdeEntry // sorted by pcBegin, then offset; no overlaps
	errs  []error    // what indexing could not read, and overlaps
	nFDEs int        // FDEs read, including those dropped as overlapping
	nCIEs int
	cies  sync.Map // CIE offset (uint64) → cieResult: each CIE is parsed once
}

// fdeEntry is one FDE of the lookup index.
type fdeEntry struct {
	pcBegin, pcEnd uint64
	off            uint64
}

// NewEHFrame returns the table of an __eh_frame section: its bytes, the
// address the section is loaded at (unslid; pc-relative pointers are
// computed from it, so addresses the table returns are in the same space),
// and the image's architecture, which gives the pointer size and the
// register numbering.
func NewEHFrame(data []byte, sectionAddr uint64, arch *archregs.Arch, opts ...Option) (*Table, error) {
	return newTable(data, sectionAddr, arch, unwind.SourceEHFrame, opts)
}

// NewDebugFrame returns the table of a __debug_frame section (a dSYM's, or
// an object's built with -g and without unwind tables). Its addresses are
// absolute, so it needs no section address. On i386 its register numbers
// (the DWARF standard's: ESP 4, EBP 5) are converted to the numbering
// archregs.I386.DWARF uses.
func NewDebugFrame(data []byte, arch *archregs.Arch, opts ...Option) (*Table, error) {
	return newTable(data, 0, arch, unwind.SourceDebugFrame, opts)
}

func newTable(data []byte, addr uint64, arch *archregs.Arch, src unwind.Source, opts []Option) (*Table, error) {
	if arch == nil {
		return nil, errors.New("dwarfcfi: nil architecture")
	}
	if arch.PtrSize != 4 && arch.PtrSize != 8 {
		return nil, fmt.Errorf("dwarfcfi: architecture %s has pointer size %d", arch.Name, arch.PtrSize)
	}
	t := &Table{
		data:          data,
		addr:          addr,
		arch:          arch,
		source:        src,
		ptrSize:       arch.PtrSize,
		negateRAState: arch.NegateRAState,
	}
	if src == unwind.SourceDebugFrame {
		t.renumber = arch.DebugFrameReg
	}
	for _, o := range opts {
		o(t)
	}
	return t, nil
}

// Source returns the section the table was read from.
func (t *Table) Source() unwind.Source { return t.source }

func (t *Table) errorf(off int, format string, args ...any) *unwind.Error {
	return &unwind.Error{Source: t.source, Off: uint64(off), Msg: fmt.Sprintf(format, args...)}
}

// reg converts a register number of the table to the numbering of the
// arch's DWARF field.
func (t *Table) reg(r uint64, off int) (unwind.Reg, error) {
	if r > 0xffff {
		return 0, t.errorf(off, "register number %d out of range", r)
	}
	if t.renumber != nil {
		return t.renumber(unwind.Reg(r)), nil
	}
	return unwind.Reg(r), nil
}

// buildIndex reads every CIE and FDE once and sorts the FDEs by address.
// The pass is bounded by the section size: every record is at least four
// bytes and the offset only moves forward.
func (t *Table) buildIndex() {
	var entries []fdeEntry
	off := 0
	for off < len(t.data) {
		h, err := t.header(off)
		if err != nil {
			t.errs = append(t.errs, err)
			break // the next record's position is unknown
		}
		if h.terminator {
			break
		}
		if h.isCIE {
			t.nCIEs++
			if _, err := t.cieAt(h); err != nil {
				t.errs = append(t.errs, err)
			}
		} else {
			fde, err := t.fdeFromHeader(h)
			if err != nil {
				t.errs = append(t.errs, err)
			} else {
				t.nFDEs++
				if fde.PCEnd > fde.PCBegin {
					entries = append(entries, fdeEntry{fde.PCBegin, fde.PCEnd, fde.Offset})
				}
			}
		}
		off = h.next
	}
	sort.Slice(entries, func(i, j int) bool {
		if entries[i].pcBegin != entries[j].pcBegin {
			return entries[i].pcBegin < entries[j].pcBegin
		}
		return entries[i].off < entries[j].off
	})
	// Overlapping FDEs are contradictory: keep the one that starts first
	// (the one earlier in the section on a tie) and report the other.
	kept := entries[:0]
	for _, e := range entries {
		if n := len(kept); n > 0 && e.pcBegin < kept[n-1].pcEnd {
			prev := kept[n-1]
			t.errs = append(t.errs, t.errorf(int(e.off), "FDE for [%#x, %#x) overlaps the FDE at offset %#x for [%#x, %#x); the latter is used",
				e.pcBegin, e.pcEnd, prev.off, prev.pcBegin, prev.pcEnd))
			continue
		}
		kept = append(kept, e)
	}
	t.index = kept
}

func (t *Table) ensureIndex() { t.once.Do(t.buildIndex) }

// Errors returns what indexing found wrong, in section order then overlap
// order: records that could not be read (each an *unwind.Error) and FDEs
// dropped from address lookup because they overlap another. It builds the
// index if no lookup has yet. The FDEs it does not name are all usable.
func (t *Table) Errors() []error {
	t.ensureIndex()
	return append([]error(nil), t.errs...)
}

// Stats reports what the index holds: FDEs read (usable by FDEAt), FDEs
// in the address index (overlaps and empty ranges excluded), and CIEs.
func (t *Table) Stats() (fdes, indexed, cies int) {
	t.ensureIndex()
	return t.nFDEs, len(t.index), t.nCIEs
}

// FDEs returns the indexed FDEs in address order: their offsets and
// address ranges. It is meant for tests and tools that list the table.
func (t *Table) FDEs() []FDERange {
	t.ensureIndex()
	out := make([]FDERange, len(t.index))
	for i, e := range t.index {
		out[i] = FDERange{Offset: e.off, PCBegin: e.pcBegin, PCEnd: e.pcEnd}
	}
	return out
}

// FDERange is one FDE of the index: its offset in the section and the
// half-open address range [PCBegin, PCEnd) it covers.
type FDERange struct {
	Offset, PCBegin, PCEnd uint64
}

// lookup returns the offset of the FDE covering pc.
func (t *Table) lookup(pc uint64) (uint64, bool) {
	t.ensureIndex()
	i := sort.Search(len(t.index), func(i int) bool { return t.index[i].pcBegin > pc })
	if i == 0 {
		return 0, false
	}
	e := t.index[i-1]
	if pc >= e.pcEnd {
		return 0, false
	}
	return e.off, true
}

// RowAt returns the unwind row in force at pc, and the FDE that holds it.
// It returns ErrNoFDE when no FDE covers pc, an *unwind.Error when the FDE
// or its CIE is bad.
func (t *Table) RowAt(pc uint64) (unwind.Row, FDEInfo, error) {
	off, ok := t.lookup(pc)
	if !ok {
		return unwind.Row{}, FDEInfo{}, ErrNoFDE
	}
	return t.RowInFDE(off, pc)
}

// FDEAt reads the FDE at byte offset off of the section, as compact
// unwind's DWARF mode (UNWIND_*_DWARF_SECTION_OFFSET) names it. It does not
// need the index.
func (t *Table) FDEAt(off uint64) (FDEInfo, error) {
	fde, err := t.fdeAt(off)
	if err != nil {
		return FDEInfo{}, err
	}
	return fde.FDEInfo, nil
}

// RowInFDE returns the row in force at pc according to the FDE at byte
// offset off: the lookup compact unwind's DWARF mode needs. A pc outside
// the FDE's range is an error.
func (t *Table) RowInFDE(off, pc uint64) (unwind.Row, FDEInfo, error) {
	fde, err := t.fdeAt(off)
	if err != nil {
		return unwind.Row{}, FDEInfo{}, err
	}
	if pc < fde.PCBegin || pc >= fde.PCEnd {
		return unwind.Row{}, fde.FDEInfo, t.errorf(int(off), "pc %#x is outside the FDE's range [%#x, %#x)", pc, fde.PCBegin, fde.PCEnd)
	}
	row, err := t.run(&fde, pc)
	return row, fde.FDEInfo, err
}

func (t *Table) fdeAt(off uint64) (fde, error) {
	if off >= uint64(len(t.data)) {
		return fde{}, t.errorf(int(min(off, uint64(len(t.data)))), "FDE offset %#x is past the end of the %d-byte section", off, len(t.data))
	}
	h, err := t.header(int(off))
	if err != nil {
		return fde{}, err
	}
	if h.terminator {
		return fde{}, t.errorf(int(off), "FDE offset points at the section terminator")
	}
	if h.isCIE {
		return fde{}, t.errorf(int(off), "FDE offset points at a CIE")
	}
	return t.fdeFromHeader(h)
}
