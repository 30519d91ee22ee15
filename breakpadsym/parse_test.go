package breakpadsym

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// sampleLines is a symbol file with every record kind: two functions, one
// with two levels of inlined code, PUBLIC records, and STACK CFI for the
// first function as an x86_64 prologue (push %rbp; mov %rsp,%rbp) gives it.
var sampleLines = []string{
	"MODULE mac x86_64 0123456789ABCDEF0123456789ABCDEF0 test module",
	"INFO CODE_ID 0123456789ABCDEF0123456789ABCDEF test.dylib",
	"INFO GENERATOR mozilla/dump_syms 2.3.0",
	"FILE 0 main.c",
	"FILE 1 inline.h",
	"FILE 2 other file.c",
	"INLINE_ORIGIN 0 inlined_outer",
	"INLINE_ORIGIN 1 inlined_inner",
	"FUNC 1000 40 0 main",
	"INLINE 0 10 0 0 1008 20",
	"INLINE 1 5 1 1 1010 8 1020 4",
	"1000 8 9 0",
	"1008 8 11 0",
	"1010 8 3 1",
	"1018 8 4 1",
	"1020 8 7 1",
	"1028 18 12 0",
	"FUNC m 1040 20 8 folded(int, int)",
	"1040 10 20 2",
	"1050 10 21 2",
	"PUBLIC 2000 0 public_sym",
	"PUBLIC m 1000 4 _main",
	"STACK CFI INIT 1000 40 .cfa: $rsp 8 + .ra: .cfa -8 + ^",
	"STACK CFI 1001 .cfa: $rsp 16 + $rbp: .cfa -16 + ^",
	"STACK CFI 1004 .cfa: $rbp 16 +",
	"STACK WIN 4 2170 14 1 0 0 0 0 0 1 $eip 4 + ^ = $esp $ebp 8 + = $ebp $ebp ^ =",
}

func sampleText() string { return strings.Join(sampleLines, "\n") + "\n" }

func mustParse(t *testing.T, text string) *File {
	t.Helper()
	f, err := Parse([]byte(text))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	for _, w := range f.Warnings {
		t.Errorf("unexpected warning: %v", w)
	}
	return f
}

func TestParseRecords(t *testing.T) {
	f := mustParse(t, sampleText())

	wantModule := Module{OS: "mac", Arch: "x86_64", DebugID: "0123456789ABCDEF0123456789ABCDEF0", Name: "test module",
		CodeID: "0123456789ABCDEF0123456789ABCDEF", CodeFile: "test.dylib"}
	if diff := cmp.Diff(wantModule, f.Module); diff != "" {
		t.Errorf("Module (-want +got):\n%s", diff)
	}
	wantStats := Stats{Files: 3, InlineOrigins: 2, Funcs: 2, Lines: 8, Inlines: 3, Publics: 2, CFIInits: 1, CFIDeltas: 2, StackWin: 1}
	if diff := cmp.Diff(wantStats, f.Stats()); diff != "" {
		t.Errorf("Stats (-want +got):\n%s", diff)
	}
	wantFuncs := []Func{
		{Address: 0x1000, Size: 0x40, Name: "main",
			Lines: []Line{{0x1000, 8, 9, 0}, {0x1008, 8, 11, 0}, {0x1010, 8, 3, 1}, {0x1018, 8, 4, 1}, {0x1020, 8, 7, 1}, {0x1028, 0x18, 12, 0}},
			Inlines: []Inline{
				{Depth: 0, CallLine: 10, CallFile: 0, Origin: 0, Address: 0x1008, Size: 0x20},
				{Depth: 1, CallLine: 5, CallFile: 1, Origin: 1, Address: 0x1010, Size: 8},
				{Depth: 1, CallLine: 5, CallFile: 1, Origin: 1, Address: 0x1020, Size: 4},
			}},
		{Address: 0x1040, Size: 0x20, ParamSize: 8, Multiple: true, Name: "folded(int, int)",
			Lines: []Line{{0x1040, 0x10, 20, 2}, {0x1050, 0x10, 21, 2}}},
	}
	if diff := cmp.Diff(wantFuncs, f.Funcs()); diff != "" {
		t.Errorf("Funcs (-want +got):\n%s", diff)
	}
	wantPublics := []Public{{Address: 0x1000, ParamSize: 4, Multiple: true, Name: "_main"}, {Address: 0x2000, Name: "public_sym"}}
	if diff := cmp.Diff(wantPublics, f.Publics()); diff != "" {
		t.Errorf("Publics (-want +got):\n%s", diff)
	}
	for id, want := range []string{"main.c", "inline.h", "other file.c"} {
		if got, ok := f.FileName(uint32(id)); !ok || got != want {
			t.Errorf("FileName(%d) = %q, %v, want %q", id, got, ok, want)
		}
	}
	if got, ok := f.FileName(3); ok {
		t.Errorf("FileName(3) = %q, want none", got)
	}
	if got, ok := f.InlineOrigin(1); !ok || got != "inlined_inner" {
		t.Errorf("InlineOrigin(1) = %q, %v, want inlined_inner", got, ok)
	}
}

// TestParseLineEndings: files written on Windows end lines with \r\n (and
// some with \r\r\n); the last line may have no newline.
func TestParseLineEndings(t *testing.T) {
	want := mustParse(t, sampleText())
	for name, text := range map[string]string{
		"crlf":       strings.Join(sampleLines, "\r\n") + "\r\n",
		"crcrlf":     strings.Join(sampleLines, "\r\r\n"),
		"no newline": strings.Join(sampleLines, "\n"),
	} {
		t.Run(name, func(t *testing.T) {
			got := mustParse(t, text)
			if diff := cmp.Diff(want.Funcs(), got.Funcs()); diff != "" {
				t.Errorf("Funcs (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(want.Module, got.Module); diff != "" {
				t.Errorf("Module (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(want.Stats(), got.Stats()); diff != "" {
				t.Errorf("Stats (-want +got):\n%s", diff)
			}
		})
	}
}

// TestParseMalformed inserts one bad record into the sample and checks
// that it alone is skipped, with a warning naming its line and kind.
func TestParseMalformed(t *testing.T) {
	afterFile := slices.Index(sampleLines, "INLINE_ORIGIN 0 inlined_outer")
	afterMain := slices.Index(sampleLines, "FUNC 1000 40 0 main") + 1
	afterFolded := slices.Index(sampleLines, "PUBLIC 2000 0 public_sym")
	afterDelta := slices.Index(sampleLines, "STACK CFI 1004 .cfa: $rbp 16 +")
	afterLastDelta := afterDelta + 1
	tests := []struct {
		name       string
		at         int // index in sampleLines to insert before
		line       string
		wantRecord string
	}{
		{"FUNC bad address", afterFile, "FUNC zz 10 0 f", "FUNC"},
		{"FUNC address overflows", afterFile, "FUNC ffffffffffffffff 10 0 wrap", "FUNC"},
		{"FUNC too few fields", afterFile, "FUNC 1 2", "FUNC"},
		{"FUNC address too long", afterFile, "FUNC 11112222333344445 10 0 f", "FUNC"},
		{"FILE bad id", afterFile, "FILE x a.c", "FILE"},
		{"FILE id overflows", afterFile, "FILE 99999999999 a.c", "FILE"},
		{"INLINE_ORIGIN negative id", afterFile, "INLINE_ORIGIN -1 f", "INLINE_ORIGIN"},
		{"PUBLIC bad address", afterFile, "PUBLIC g 0 x", "PUBLIC"},
		{"line before any FUNC", afterFile, "1000 8 1 0", "line"},
		{"line bad number", afterFolded, "1100 8 notaline 0", "line"},
		{"line absurd size", afterFolded, "1100 100000000 1 0", "line"},
		{"line number overflows", afterFolded, "1100 8 99999999999 0", "line"},
		{"line extra field", afterFolded, "1100 8 1 0 7", "line"},
		{"line address overflows", afterFolded, "fffffffffffffff0 20 1 0", "line"},
		{"INLINE odd range", afterMain, "INLINE 0 1 0 0 1008", "INLINE"},
		{"INLINE absurd depth", afterMain, "INLINE 5000 1 0 0 1008 4", "INLINE"},
		{"INLINE no ranges", afterMain, "INLINE 0 1 0 0", "INLINE"},
		{"INLINE bad field", afterMain, "INLINE x", "INLINE"},
		{"INLINE before any FUNC", afterFile, "INLINE 0 1 0 0 1008 4", "INLINE"},
		{"STACK CFI outside INIT", afterLastDelta, "STACK CFI 2000 .cfa: $rsp 8 +", "STACK CFI"},
		{"STACK CFI not increasing", afterDelta, "STACK CFI 1001 .cfa: $rsp 8 +", "STACK CFI"},
		{"STACK CFI no expression", afterDelta, "STACK CFI 1002 .cfa:", "STACK CFI"},
		{"STACK CFI no INIT", afterFile, "STACK CFI 1002 .cfa: $rsp 8 +", "STACK CFI"},
		{"STACK CFI INIT no register", afterLastDelta, "STACK CFI INIT 3000 10 $rsp 8 +", "STACK CFI INIT"},
		{"STACK CFI INIT no rules", afterLastDelta, "STACK CFI INIT 3000 10", "STACK CFI INIT"},
		{"STACK CFI INIT overflows", afterLastDelta, "STACK CFI INIT ffffffffffffffff 10 .cfa: $rsp", "STACK CFI INIT"},
		{"STACK unknown kind", afterFile, "STACK FOO 1", "STACK"},
		{"unknown record", afterFile, "BOGUS record", "BOGUS"},
		{"second MODULE", afterFile, "MODULE mac x86 0123456789ABCDEF0123456789ABCDEF0 other", "MODULE"},
		{"INFO CODE_ID without id", afterFile, "INFO CODE_ID", "INFO CODE_ID"},
	}
	want := mustParse(t, sampleText())
	wantStats := want.Stats()
	wantStats.Skipped = 1
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lines := slices.Insert(slices.Clone(sampleLines), tt.at, tt.line)
			text := strings.Join(lines, "\n") + "\n"
			f, err := Parse([]byte(text))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if len(f.Warnings) != 1 {
				t.Fatalf("warnings = %v, want one", f.Warnings)
			}
			w := f.Warnings[0]
			wantOffset := int64(strings.Index(text, tt.line+"\n"))
			if w.Line != tt.at+1 || w.Record != tt.wantRecord || w.Offset != wantOffset {
				t.Errorf("warning = line %d offset %d record %q (%v), want line %d offset %d record %q", w.Line, w.Offset, w.Record, w, tt.at+1, wantOffset, tt.wantRecord)
			}
			if diff := cmp.Diff(wantStats, f.Stats()); diff != "" {
				t.Errorf("Stats (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(want.Funcs(), f.Funcs()); diff != "" {
				t.Errorf("Funcs (-want +got):\n%s", diff)
			}
		})
	}
}

// TestParseBadFuncOrphansLines: the line records after a FUNC that cannot
// be read must not be given to the FUNC before it.
func TestParseBadFuncOrphansLines(t *testing.T) {
	text := "MODULE mac arm64 0123456789ABCDEF0123456789ABCDEF0 m\n" +
		"FUNC 100 10 0 good\n" +
		"100 10 1 0\n" +
		"FUNC zzz 10 0 bad\n" +
		"200 10 2 0\n" +
		"INLINE 0 1 0 0 200 4\n"
	f, _ := Parse([]byte(text))
	var got []int
	for _, w := range f.Warnings {
		got = append(got, w.Line)
	}
	if diff := cmp.Diff([]int{4, 5, 6}, got); diff != "" {
		t.Errorf("warning lines (-want +got):\n%s", diff)
	}
	if fn := f.Funcs(); len(fn) != 1 || len(fn[0].Lines) != 1 || len(fn[0].Inlines) != 0 {
		t.Errorf("Funcs = %+v, want only good with its one line", fn)
	}
}

func TestParseNoModule(t *testing.T) {
	f, err := Parse([]byte("FUNC 100 10 0 f\n100 10 1 0\n"))
	if err == nil {
		t.Fatal("Parse without a MODULE line: no error")
	}
	if fe, ok := err.(*FormatError); !ok || fe.Line != 1 || fe.Record != "MODULE" {
		t.Errorf("error = %#v, want a *FormatError for the MODULE record at line 1", err)
	}
	if sym, err := f.Lookup(0x105); err != nil || sym.Name != "f" {
		t.Errorf("Lookup(0x105) = %+v, %v, want f: the records after a bad first line are kept", sym, err)
	}
}

// TestParseOverlaps: of overlapping FUNC records the lower (then the
// earlier) one is kept, as Breakpad's range map keeps the first.
func TestParseOverlaps(t *testing.T) {
	text := "MODULE mac arm64 0123456789ABCDEF0123456789ABCDEF0 m\n" +
		"FUNC 200 10 0 second\n" +
		"FUNC 100 20 0 first\n" +
		"FUNC 110 20 0 overlaps_first\n" +
		"FUNC 100 8 0 duplicate_start\n" +
		"FUNC 120 0 0 empty\n" +
		"FUNC 120 8 0 after_empty\n"
	f, _ := Parse([]byte(text))
	var names []string
	for _, fn := range f.Funcs() {
		names = append(names, fn.Name)
	}
	if diff := cmp.Diff([]string{"first", "empty", "after_empty", "second"}, names); diff != "" {
		t.Errorf("kept FUNCs (-want +got):\n%s", diff)
	}
	if f.Stats().Skipped != 2 || len(f.Warnings) != 1 || f.Warnings[0].Line != 0 {
		t.Errorf("Skipped = %d, Warnings = %v, want 2 skipped in one summary warning", f.Stats().Skipped, f.Warnings)
	}
}

func TestParseWarningsBounded(t *testing.T) {
	text := "MODULE mac arm64 0123456789ABCDEF0123456789ABCDEF0 m\n" + strings.Repeat("BAD\n", 3*maxWarnings)
	f, _ := Parse([]byte(text))
	if len(f.Warnings) != maxWarnings || f.Stats().Skipped != 3*maxWarnings {
		t.Errorf("len(Warnings) = %d, Skipped = %d, want %d and %d", len(f.Warnings), f.Stats().Skipped, maxWarnings, 3*maxWarnings)
	}
}
