package symbolicator

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stackimage/stackimage/symbolize"
	"github.com/stackimage/stackimage/walker"
)

// TestAppendFrameMatchesEncodingJSON: the hand-written encoding of stack
// traces is byte for byte what encoding/json writes for the same values,
// including strings that need escaping and omitted empty fields.
func TestAppendFrameMatchesEncodingJSON(t *testing.T) {
	addr := SomeHex(0x1040003c0)
	id, yes := uint64(775), true
	traces := []SymbolicatedStacktrace{
		{Frames: []SymbolicatedFrame{{Status: "unknown_image", InstructionAddr: 0x10}}},
		{ThreadID: &id, ThreadName: "main \"thread\"", IsRequesting: &yes, StopReason: symbolize.StopReason(walker.StopFramePointerZero),
			Registers: map[string]Hex{"pc": 0x1234, "lr": 0},
			Frames: []SymbolicatedFrame{
				{Status: "symbolicated", OriginalIndex: 3, InstructionAddr: 0xffffffffffffffff, AddrMode: "rel:1",
					Package: `C:\Apps\<x>&y`, Lang: "cpp", Symbol: "_ZN3fooEv", SymAddr: addr, Function: "foo()",
					Filename: "naïve.cc", AbsPath: "/src/naïve.cc", Lineno: 42, Trust: "cfi", Column: 7, Inlined: true,
					SymbolSource: "dwarf", FoundBy: "compact unwind"},
				{Status: "missing_symbol", InstructionAddr: 0, Function: "tab\there\x01\u2028"},
			}},
		// The encoder's shortcuts: a function named as its symbol, a
		// file name at the end of its path, with and without escapes.
		{Frames: []SymbolicatedFrame{
			{Status: "symbolicated", Symbol: "main.main", SymAddr: addr, Function: "main.main", Filename: "main.go", AbsPath: "/src/main.go", Lineno: 1},
			{Status: "symbolicated", Symbol: "less<int>", Function: "less<int>", Filename: "a&b.h", AbsPath: "/src/a&b.h"},
			{Status: "symbolicated", Symbol: "_Z1fv", Function: "f()", Filename: "other.c", AbsPath: "/src/main.c"},
			{Status: "symbolicated", Symbol: "f", Function: "f", Filename: "x.c", AbsPath: "/src/<gen>/x.c"},
			{Status: "symbolicated", Function: "f", Filename: "", AbsPath: "/src/"},
			{Status: "symbolicated", Symbol: "g", Filename: "main.c", AbsPath: ""},
			{Status: "symbolicated", Symbol: "", Function: ""},
		}},
	}
	for i := range traces {
		want, err := json.Marshal(traces[i])
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendStacktrace(nil, &traces[i]); string(got) != string(want) {
			t.Errorf("stack trace %d:\n got %s\nwant %s", i, got, want)
		}
	}
}

// TestIsPlainJSON: looking at eight bytes at a time gives the byte
// table's answer for every byte value at every place in a word, and on
// strings of every length up to a few words.
func TestIsPlainJSON(t *testing.T) {
	byTable := func(s string) bool {
		for i := 0; i < len(s); i++ {
			if !plainJSON[s[i]] {
				return false
			}
		}
		return true
	}
	for c := range 256 {
		for at := range 8 {
			w := []byte("abcdefgh")
			w[at] = byte(c)
			if got, want := isPlainJSON(string(w)), byTable(string(w)); got != want {
				t.Errorf("isPlainJSON(%q) = %v, want %v", w, got, want)
			}
		}
	}
	// Neighbours of the bytes that are not plain, two to a word, and
	// every length.
	edges := []byte{0x00, 0x1f, 0x20, 0x21, '"', '&', '<', '>', '\\', 0x7e, 0x7f, 0x80, 0xff, 'a', '/'}
	for _, a := range edges {
		for _, b := range edges {
			for n := 0; n <= 20; n++ {
				s := []byte(strings.Repeat("x", n))
				if n > 0 {
					s[n-1] = a
					s[n/2] = b
				}
				if got, want := isPlainJSON(string(s)), byTable(string(s)); got != want {
					t.Errorf("isPlainJSON(%q) = %v, want %v", s, got, want)
				}
			}
		}
	}
}

// TestAppendModuleMatchesEncodingJSON: modules are written as
// encoding/json writes them, with every field set or left out and
// strings that need escaping.
func TestAppendModuleMatchesEncodingJSON(t *testing.T) {
	size := Hex(0x4000)
	mods := []CompleteModule{
		{},
		{DebugStatus: "found", UnwindStatus: "unused", Arch: "arm64",
			Features:   Features{HasDebugInfo: true, HasSymbols: true, HasUnwindInfo: true, HasSources: true},
			Module:     Module{Type: "macho", DebugID: "b0d7a0a8-7c5e-3b1c-9b0f-8f4b7e4f5a01", CodeID: "x", DebugFile: "App.dSYM", CodeFile: "/private/var/App", ImageAddr: 0x104000000, ImageSize: &size},
			Candidates: []Candidate{{Source: "local", Location: "/srv/<App>", Download: map[string]string{"status": "ok"}}}},
		{DebugStatus: "malformed", Arch: "unknown", Module: Module{Type: "macho", DebugID: "naïve \"id\"", ImageAddr: 0xffffffffffffffff},
			Error: "debug_id \"naïve\": not a UUID <&>", Candidates: []Candidate{{Source: "s3", Download: map[string]string{"status": "notfound", "details": "x"}}}},
	}
	for i := range mods {
		want, err := json.Marshal(&mods[i])
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendModule(nil, &mods[i]); string(got) != string(want) {
			t.Errorf("module %d:\n got %s\nwant %s", i, got, want)
		}
	}
}
