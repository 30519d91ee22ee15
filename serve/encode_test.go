package serve

import (
	"encoding/json"
	"testing"

	"github.com/stackimage/stackimage/symbolize"
	"github.com/stackimage/stackimage/walker"
)

// TestAppendFrameMatchesEncodingJSON: the hand-written encoding of stack
// traces is byte for byte what encoding/json writes for the same values,
// including strings that need escaping and omitted empty fields.
func TestAppendFrameMatchesEncodingJSON(t *testing.T) {
	addr := hexValue(0x1040003c0)
	id, yes := uint64(775), true
	traces := []symbolicatedStacktrace{
		{Frames: []symbolicatedFrame{{Status: "unknown_image", InstructionAddr: 0x10}}},
		{ThreadID: &id, ThreadName: "main \"thread\"", IsRequesting: &yes, StopReason: symbolize.StopReason(walker.StopFramePointerZero),
			Registers: map[string]hexValue{"pc": 0x1234, "lr": 0},
			Frames: []symbolicatedFrame{
				{Status: "symbolicated", OriginalIndex: 3, InstructionAddr: 0xffffffffffffffff, AddrMode: "rel:1",
					Package: `C:\Apps\<x>&y`, Lang: "cpp", Symbol: "_ZN3fooEv", SymAddr: &addr, Function: "foo()",
					Filename: "naïve.cc", AbsPath: "/src/naïve.cc", Lineno: 42, Trust: "cfi", Column: 7, Inlined: true,
					SymbolSource: "dwarf", FoundBy: "compact unwind"},
				{Status: "missing_symbol", InstructionAddr: 0, Function: "tab\there\x01\u2028"},
			}},
	}
	for i := range traces {
		want, err := json.Marshal(traces[i])
		if err != nil {
			t.Fatal(err)
		}
		if got := appendStacktrace(nil, &traces[i]); string(got) != string(want) {
			t.Errorf("stack trace %d:\n got %s\nwant %s", i, got, want)
		}
	}
}
