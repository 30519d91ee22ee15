package symbolize

import (
	"fmt"

	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/unwind"
	"github.com/stackimage/stackimage/walker"
)

// UnwindRow gives the walker the unwind rule at a slid address
// (walker.Unwinder), from the tables of the image there, which its entry
// reads once and keeps (symstore.Entry.UnwindRow). It answers nothing for
// an address in no image with symbol files, or with NoUnwindInfo; an
// error names the image whose tables are damaged.
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
	row, src, err := e.UnwindRow(symstore.UnwindQuery{UnwindQuery: q, Arch: p.Arch, Unslid: loc.Unslid,
		LoadAddress: loc.Loaded.LoadAddress, Code: p})
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", loc.Loaded.Name, err)
	}
	return row, src, nil
}

var _ walker.Unwinder = (*Process)(nil)

// KeepsFrameRecord tells the walker whether the function at a slid
// address keeps a frame record (walker.FrameRecordKeeper), from the rule
// its unwind table gives inside it: a CFA taken from FP is a function
// with a record, one taken from SP a frameless one. Where no table
// describes the function (a dSYM alone, a Breakpad file without its STACK
// CFI, NoUnwindInfo) it does not know.
func (p *Process) KeepsFrameRecord(addr uint64) (keeps, known bool) {
	if p.Arch == nil {
		return false, false
	}
	row, _, err := p.UnwindRow(walker.UnwindQuery{Address: addr})
	if err != nil || row == nil || row.CFA.Expr != nil {
		return false, false
	}
	switch row.CFA.Reg {
	case p.Arch.DWARFFP:
		return true, true
	case p.Arch.DWARFSP:
		return false, true
	}
	return false, false
}

var _ walker.FrameRecordKeeper = (*Process)(nil)
