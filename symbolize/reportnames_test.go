package symbolize

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/symstore"
)

// TestReportNames: names a report supplies itself are demangled as a
// symbol file's are (KSCrash writes C++ names mangled), unless NoDemangle;
// and a name the report gave without an offset gets none ("+ 0" is not
// invented).
func TestReportNames(t *testing.T) {
	arch, err := archregs.ByName("arm64")
	if err != nil {
		t.Fatal(err)
	}
	d := &dump.Dump{Format: dump.FormatKSCrash, Arch: arch, Threads: []dump.Thread{{Crashed: true, Frames: []dump.Frame{
		{Address: 0x1000, ImageIndex: -1, Symbol: "_ZN10MyCPPClass16throwAnExceptionEv", SymbolOffset: 16, HasSymbolOffset: true},
		{Address: 0x2000, ImageIndex: -1, Symbol: "main"},
		{Address: 0x3000, ImageIndex: -1, Symbol: "_ZL12RunWebThreadPv"},
	}}}}
	type name struct {
		Symbol, Mangled, Lang string
		Offset                uint64
		HasOffset             bool
	}
	tests := []struct {
		name       string
		noDemangle bool
		want       []name
	}{
		{"demangled", false, []name{
			{"MyCPPClass::throwAnException()", "_ZN10MyCPPClass16throwAnExceptionEv", "C++", 16, true},
			{"main", "", "", 0, false},
			{"RunWebThread(void*)", "_ZL12RunWebThreadPv", "C++", 0, false},
		}},
		{"no demangle", true, []name{
			{"_ZN10MyCPPClass16throwAnExceptionEv", "", "C++", 16, true},
			{"main", "", "", 0, false},
			{"_ZL12RunWebThreadPv", "", "C++", 0, false},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			z := &Symbolizer{Symbols: symstore.NewSymbols(), NoDemangle: tt.noDemangle}
			rep, err := z.Symbolicate(d)
			if err != nil {
				t.Fatal(err)
			}
			var got []name
			for _, f := range rep.Threads[0].Frames {
				got = append(got, name{f.Symbol, f.MangledSymbol, f.Lang, f.SymbolOffset, f.HasOffset})
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("frames (-want +got):\n%s", diff)
			}
		})
	}
}
