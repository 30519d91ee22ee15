package symstore

import (
	"encoding/json"
	"testing"

	"github.com/stackimage/stackimage/symtab"
	"github.com/stackimage/stackimage/walker"
)

// TestFoundByText checks that FoundBy prints what the walker's strategies
// and a reported frame printed when the field was a string, and that the
// text reads back.
func TestFoundByText(t *testing.T) {
	tests := []struct {
		f    FoundBy
		want string
	}{
		{FoundBy(walker.FoundByContext), "context"},
		{FoundBy(walker.FoundByLinkRegister), "link register"},
		{FoundBy(walker.FoundByFramePointer), "frame pointer"},
		{FoundBy(walker.FoundByStackPointer), "stack pointer"},
		{FoundBy(walker.FoundByCompactUnwind), "compact unwind"},
		{FoundBy(walker.FoundByCFI), "cfi"},
		{FoundBy(walker.FoundByScan), "scan"},
		{FoundBy(walker.FoundByAsync), "async"},
		{FoundByReport, "report"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := tt.f.String(); got != tt.want {
				t.Errorf("FoundBy(%d).String() = %q, want %q", int(tt.f), got, tt.want)
			}
			data, err := json.Marshal(tt.f)
			if err != nil || string(data) != `"`+tt.want+`"` {
				t.Errorf("json.Marshal(%v) = %s, %v; want %q as a JSON string", tt.f, data, err, tt.want)
			}
			var back FoundBy
			if err := json.Unmarshal(data, &back); err != nil || back != tt.f {
				t.Errorf("json.Unmarshal(%s) = %d, %v; want %d", data, int(back), err, int(tt.f))
			}
		})
	}
	if w, ok := FoundByReport.Walker(); ok {
		t.Errorf("FoundByReport.Walker() = %v, true; want false", w)
	}
	var f FoundBy
	if err := f.UnmarshalText([]byte("guess")); err == nil {
		t.Errorf("UnmarshalText(guess) = %v, nil; want an error", f)
	}
}

// TestSymbolSourceText checks SymbolSource's names, which agree with
// symtab.Source's for the symbol table's sources.
func TestSymbolSourceText(t *testing.T) {
	for _, s := range []symtab.Source{symtab.SourceSymtab, symtab.SourceExports, symtab.SourceFunctionStarts} {
		if got, want := SymbolSourceOf(s).String(), s.String(); got != want {
			t.Errorf("SymbolSourceOf(%v).String() = %q, want %q", s, got, want)
		}
	}
	tests := []struct {
		s    SymbolSource
		want string
	}{
		{SourceNone, ""}, {SourceDWARF, "dwarf"}, {SourceReport, "report"}, {SourceBreakpad, "breakpad"},
	}
	for _, tt := range tests {
		if got := tt.s.String(); got != tt.want {
			t.Errorf("SymbolSource(%d).String() = %q, want %q", int(tt.s), got, tt.want)
		}
		var back SymbolSource
		if err := back.UnmarshalText([]byte(tt.want)); err != nil || back != tt.s {
			t.Errorf("UnmarshalText(%q) = %d, %v; want %d", tt.want, int(back), err, int(tt.s))
		}
	}
}
