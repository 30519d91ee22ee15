package crashreport

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// names is a LookupFunc from a table; it records what it was asked.
type names struct {
	table map[FrameRef]FrameName
	asked []FrameRef
}

func (n *names) lookup(ref FrameRef) (FrameName, bool) {
	n.asked = append(n.asked, ref)
	name, ok := n.table[ref]
	return name, ok
}

func writeSym(t *testing.T, data string, format Format, n *names) string {
	t.Helper()
	var b bytes.Buffer
	if err := WriteSymbolicated(&b, []byte(data), format, n.lookup); err != nil {
		t.Fatalf("WriteSymbolicated: %v", err)
	}
	return b.String()
}

const textReport = "Process:         App [7]\r\n" +
	"Code Type:       ARM-64\r\n" +
	"\r\n" +
	"Last Exception Backtrace:\r\n" +
	"0   CoreFoundation                	0x1a0000010 0x1a0000000 + 16\r\n" +
	"\r\n" +
	"Thread 0 Crashed:\r\n" +
	"0   App                           	0x104000010 0x104000000 + 16\r\n" +
	"1   libsystem_kernel.dylib        	0x7fff61bc6c2a 0x7fff61bc6000 + 3114\r\n" +
	"2   App                           	0x104000020\r\n" +
	"3   dyld                          	0x11beb451e start + 462\r\n" +
	"\r\n" +
	"Thread 1:\r\n" +
	"0   App    0x104000030 0x104000000 + 48  \r\n" +
	"\r\n" +
	"Binary Images:\r\n" +
	"0x104000000 - 0x104003fff App arm64 <01d2a9d51f8a35c892287c7cca13c5fc> /App\r\n"

// TestWriteSymbolicatedCrash: every line but the named frames' is kept
// byte for byte, line endings included; a named frame's text after its
// address is replaced, and its inlined functions get lines of their own.
func TestWriteSymbolicatedCrash(t *testing.T) {
	n := &names{table: map[FrameRef]FrameName{
		{LastExceptionBacktrace, 0}: {Symbol: "__exceptionPreprocess", SymbolOffset: 16, HasOffset: true},
		{0, 0}: {Symbol: "-[ViewController viewDidLoad]", SymbolOffset: 20, HasOffset: true, File: "/src/App/ViewController.m", Line: 42,
			Inlined: []FrameName{{Symbol: "inlined_helper", File: "Helper.h", Line: 7}}},
		{0, 2}: {Symbol: "main", SymbolOffset: 32, HasOffset: true},
		{1, 0}: {Symbol: "worker", File: "w.c"}, // no line: no position written
	}}
	got := writeSym(t, textReport, FormatCrash, n)
	want := strings.NewReplacer(
		"0x1a0000010 0x1a0000000 + 16\r\n", "0x1a0000010 __exceptionPreprocess + 16\r\n",
		"	0x104000010 0x104000000 + 16\r\n",
		"	0x104000010 inlined_helper (Helper.h:7) [inlined]\r\n"+
			"0   App                           	0x104000010 -[ViewController viewDidLoad] + 20 (ViewController.m:42)\r\n",
		"0x104000020\r\n", "0x104000020 main + 32\r\n",
		"0x104000030 0x104000000 + 48  \r\n", "0x104000030 worker  \r\n",
	).Replace(textReport)
	if diff := cmp.Diff(strings.Split(want, "\n"), strings.Split(got, "\n")); diff != "" {
		t.Errorf("WriteSymbolicated (-want +got):\n%s", diff)
	}
	wantAsked := []FrameRef{{LastExceptionBacktrace, 0}, {0, 0}, {0, 1}, {0, 2}, {0, 3}, {1, 0}}
	if diff := cmp.Diff(wantAsked, n.asked); diff != "" {
		t.Errorf("frames asked about (-want +got):\n%s", diff)
	}

	// Nothing named: the output is the input.
	if got := writeSym(t, textReport, "", &names{}); got != textReport {
		t.Errorf("WriteSymbolicated with no names changed the report:\n%s", got)
	}
}

// TestWriteSymbolicatedCrashRecrash: KSCrash's "Handler crashed while
// reporting:" thread is the report's RecrashThread, as Parse numbers it.
func TestWriteSymbolicatedCrashRecrash(t *testing.T) {
	in := "Process: A [1]\n\nThread 0 Crashed:\n0 A 0x1010 0x1000 + 16\n\n" +
		"Handler crashed while reporting:\n\nThread 0 Crashed:\n0 A 0x1020 0x1000 + 32\n\n" +
		"Binary Images:\n0x1000 - 0x1fff A arm64 <01d2a9d51f8a35c892287c7cca13c5fc> /A\n"
	r, err := Parse([]byte(in))
	if err != nil || r.RecrashThread == nil || len(r.Threads) != 1 {
		t.Fatalf("Parse: %v, %d threads, recrash %v", err, len(r.Threads), r.RecrashThread)
	}
	n := &names{table: map[FrameRef]FrameName{
		{0, 0}:             {Symbol: "app_crash"},
		{RecrashThread, 0}: {Symbol: "handler_crash"},
	}}
	got := writeSym(t, in, "", n)
	if !strings.Contains(got, "0x1010 app_crash\n") || !strings.Contains(got, "0x1020 handler_crash\n") {
		t.Errorf("WriteSymbolicated:\n%s", got)
	}
}

const ipsReport = `{"app_name":"App","bug_type":"309","name":"App"}
{
  "procName" : "App",
  "threads" : [{"id":1,"frames":[{"imageOffset":16,"imageIndex":0},{"imageOffset":32,"symbol":"old","symbolLocation":1,"imageIndex":0},{},7]},
               {"id":2,"frames":[{"imageOffset":48,"imageIndex":0}]}],
  "lastExceptionBacktrace" : [{"imageOffset":64,"imageIndex":0}],
  "usedImages" : [{"base":4294967296,"size":16384,"uuid":"01d2a9d5-1f8a-35c8-9228-7c7cca13c5fc","name":"App"}]
}
`

// TestWriteSymbolicatedIPS: named frames get symbol, symbolLocation,
// sourceFile and sourceLine (replaced in place when present, added after
// the other keys when not); inlined functions become frames of their own;
// every other byte is kept.
func TestWriteSymbolicatedIPS(t *testing.T) {
	n := &names{table: map[FrameRef]FrameName{
		{0, 0}: {Symbol: "f<int>", SymbolOffset: 4, HasOffset: true, File: "/src/a.cpp", Line: 21,
			Inlined: []FrameName{{Symbol: "g", File: "b.h", Line: 3}}},
		{0, 1}:                      {Symbol: "new", SymbolOffset: 8, HasOffset: true},
		{0, 2}:                      {Symbol: "empty"},
		{0, 3}:                      {Symbol: "not an object"},
		{LastExceptionBacktrace, 0}: {Symbol: "thrower", SymbolOffset: 2, HasOffset: true},
	}}
	got := writeSym(t, ipsReport, FormatIPS, n)
	want := strings.NewReplacer(
		`{"imageOffset":16,"imageIndex":0}`,
		`{"imageOffset":16,"imageIndex":0,"symbol":"g","sourceFile":"b.h","sourceLine":3,"inline":true},`+
			`{"imageOffset":16,"imageIndex":0,"symbol":"f<int>","symbolLocation":4,"sourceFile":"a.cpp","sourceLine":21}`,
		`"symbol":"old","symbolLocation":1,`, `"symbol":"new","symbolLocation":8,`,
		`{},7]`, `{"symbol":"empty"},7]`,
		`[{"imageOffset":64,"imageIndex":0}]`, `[{"imageOffset":64,"imageIndex":0,"symbol":"thrower","symbolLocation":2}]`,
	).Replace(ipsReport)
	if diff := cmp.Diff(strings.Split(want, "\n"), strings.Split(got, "\n")); diff != "" {
		t.Errorf("WriteSymbolicated (-want +got):\n%s", diff)
	}
	// The output is still an .ips report, and reads back with the names;
	// its one error is the input's own (the frame that is a number, now
	// frames[4] after the inlined frame).
	r, err := ParseIPS([]byte(got))
	if r == nil || err == nil || err.Error() != "ips: threads[0].frames[4]: is a JSON number, want an object" {
		t.Fatalf("ParseIPS(output) error = %v, want only the one about frames[4]", err)
	}
	f := r.Threads[0].Frames
	if len(f) != 5 || !f[0].Inlined || f[0].Symbol != "g" || f[1].Symbol != "f<int>" || f[1].SymbolOffset != 4 || f[1].Line != 21 {
		t.Errorf("read back: %+v", f)
	}
}

// TestWriteSymbolicatedIPSTruncated: a cut report is written whole, with
// the frames before the cut filled in.
func TestWriteSymbolicatedIPSTruncated(t *testing.T) {
	cut := strings.Index(ipsReport, `{"id":2`) + 12
	in := ipsReport[:cut]
	n := &names{table: map[FrameRef]FrameName{{0, 0}: {Symbol: "first"}, {1, 0}: {Symbol: "cut"}}}
	got := writeSym(t, in, "", n)
	want := strings.Replace(in, `{"imageOffset":16,"imageIndex":0}`, `{"imageOffset":16,"imageIndex":0,"symbol":"first"}`, 1)
	if got != want {
		t.Errorf("WriteSymbolicated(cut report) =\n%s\nwant\n%s", got, want)
	}
}

// TestWriteSymbolicatedIPSText: an .ips whose payload is a text report
// keeps its metadata line and has its text filled in.
func TestWriteSymbolicatedIPSText(t *testing.T) {
	in := `{"bug_type":"109","name":"App"}` + "\n" + "Process: App [1]\n\nThread 0 Crashed:\n0 App 0x1010 0x1000 + 16\n\nBinary Images:\n0x1000 - 0x1fff App arm64 <01d2a9d51f8a35c892287c7cca13c5fc> /App\n"
	got := writeSym(t, in, "", &names{table: map[FrameRef]FrameName{{0, 0}: {Symbol: "main", SymbolOffset: 16, HasOffset: true}}})
	if want := strings.Replace(in, "0x1000 + 16", "main + 16", 1); got != want {
		t.Errorf("WriteSymbolicated =\n%s\nwant\n%s", got, want)
	}
}

// TestWriteSymbolicatedRefusesKSCrash: KSCrash JSON is not written back.
func TestWriteSymbolicatedRefusesKSCrash(t *testing.T) {
	var b bytes.Buffer
	err := WriteSymbolicated(&b, []byte(ksOOM), "", func(FrameRef) (FrameName, bool) { return FrameName{}, false })
	if err == nil || b.Len() != 0 {
		t.Errorf("WriteSymbolicated(KSCrash) = %v with %d bytes written, want an error and nothing", err, b.Len())
	}
}

// TestPatchIPSFrameEscapes: names are JSON-escaped but not HTML-escaped,
// and a name with a newline cannot break a text line.
func TestPatchIPSFrameEscapes(t *testing.T) {
	got := patchIPSFrame([]byte(`{"imageIndex":0}`), FrameName{Symbol: "a<\"b\">\n"}, false)
	var m map[string]any
	if err := json.Unmarshal(got, &m); err != nil || m["symbol"] != "a<\"b\">\n" || bytes.Contains(got, []byte(`\u003c`)) {
		t.Errorf("patchIPSFrame = %s (%v)", got, err)
	}
	if got := crashFrameText(FrameName{Symbol: "a\nb"}); got != "a b" {
		t.Errorf("crashFrameText = %q, want %q", got, "a b")
	}
}

// TestPatchIPSFrameStaleFields: the old name's offset and source position
// go when the new name has none of its own; everything else stays.
func TestPatchIPSFrameStaleFields(t *testing.T) {
	tests := []struct {
		name, raw string
		n         FrameName
		inline    bool
		want      string
	}{
		{"replaced in place", `{ "imageOffset" : 1, "symbol" : "old", "symbolLocation" : 9 }`, FrameName{Symbol: "new", SymbolOffset: 3, HasOffset: true},
			false, `{ "imageOffset" : 1, "symbol" : "new", "symbolLocation" : 3 }`},
		{"stale offset and position removed", `{"imageOffset":1,"symbol":"old","symbolLocation":9,"sourceFile":"a.m","sourceLine":4,"imageIndex":0}`,
			FrameName{Symbol: "new"}, false, `{"imageOffset":1,"symbol":"new","imageIndex":0}`},
		{"stale first member", `{"symbolLocation":9, "imageIndex":0 }`, FrameName{Symbol: "new"}, false, `{"imageIndex":0 ,"symbol":"new"}`},
		{"only stale members", `{"sourceLine":9}`, FrameName{Symbol: "g"}, true, `{"symbol":"g","inline":true}`},
		{"nested values and escaped keys kept", `{"x":{"symbol":[1,"}"]},"sym\u0062ol":"old"}`, FrameName{Symbol: "new"}, false,
			`{"x":{"symbol":[1,"}"]},"sym\u0062ol":"new"}`},
		{"not an object", `[1]`, FrameName{Symbol: "new"}, false, `[1]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(patchIPSFrame([]byte(tt.raw), tt.n, tt.inline)); got != tt.want {
				t.Errorf("patchIPSFrame(%s) = %s, want %s", tt.raw, got, tt.want)
			}
		})
	}
}
