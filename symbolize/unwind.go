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
