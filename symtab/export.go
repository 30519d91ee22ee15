package symtab

import "strconv"

// Entry is one entry of a Table as it is stored: what a persisted copy of
// the table needs to answer lookups as the table does.
type Entry struct {
	Addr uint64 // unslid start
	// Section is the 1-based section index (n_sect) the entry lies in; 0
	// when the table was built without sections.
	Section uint8
	Source  Source
	// RawName is the name as the table holds it; empty for a function
	// known only by its start.
	RawName string
}

// SectionRange is one section's half-open address range [Start, End), as
// the table bounds lookups by it.
type SectionRange struct {
	Start, End uint64
	Index      uint8 // 1-based section index
	// Data is true for a section whose headers mark no instructions
	// (__TEXT,__const, __TEXT,__cstring): a symbol there names data, not
	// a function, although __TEXT is executable.
	Data bool
}

// Entry returns entry i, 0 <= i < Len(), in address order.
func (t *Table) Entry(i int) Entry {
	te := &t.entries[i]
	e := Entry{Addr: te.addr, Section: te.sect, Source: te.kind.source()}
	if e.Source != SourceFunctionStarts {
		e.RawName = t.rawName(te)
	}
	return e
}

// Sections returns the section ranges that bound lookups, sorted by
// address; nil when the table was built without sections, in which case
// every address at or above the first entry is answered.
func (t *Table) Sections() []SectionRange {
	if len(t.sections) == 0 {
		return nil
	}
	out := make([]SectionRange, len(t.sections))
	for i, s := range t.sections {
		out[i] = SectionRange{Start: s.start, End: s.end, Index: s.index, Data: s.data}
	}
	return out
}

// InDataSection reports whether the table's sections place addr in one
// that holds no instructions (SectionRange.Data): false for an address in
// no section, and for a table built without sections.
func (t *Table) InDataSection(addr uint64) bool {
	s, ok := t.spanOf(addr)
	return ok && s.data
}

// SymbolAt returns the answer a lookup of addr gives when it lands on
// entry e: the name with C's leading underscore removed, or the synthetic
// name of a bare function start. It lets a persisted copy of the table
// answer exactly as the table does.
func SymbolAt(e Entry, addr uint64) Symbol {
	s := Symbol{Addr: e.Addr, Offset: addr - e.Addr, Source: e.Source, RawName: e.RawName}
	if e.Source == SourceFunctionStarts {
		s.Name = SyntheticPrefix + strconv.FormatUint(e.Addr, 16)
		s.RawName = ""
		return s
	}
	s.Name = s.RawName
	if len(s.Name) > 0 && s.Name[0] == '_' {
		s.Name = s.Name[1:]
	}
	return s
}
