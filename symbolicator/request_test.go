package symbolicator

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/uuid"
)

// TestNewInput: a request's modules become images and its stack traces
// threads; frames are placed by address or by "rel:N", only modules some
// frame lies in are fetched, a malformed debug ID is kept apart, and
// adjust_instruction_addr says how a frame is looked up.
func TestNewInput(t *testing.T) {
	size := Hex(0x1000)
	yes, no := true, false
	req := &Request{
		Threads: []Stacktrace{{Frames: Frames{
			{InstructionAddr: 0x10000400},                              // in module 0
			{InstructionAddr: 0x20, AddrMode: "rel:1"},                 // module 1 + 0x20
			{InstructionAddr: 0x10002000, AdjustInstructionAddr: &no},  // past module 0's size: in none
			{InstructionAddr: 0x30000010, AdjustInstructionAddr: &yes}, // module 3 (malformed id)
			{InstructionAddr: 0x40, AddrMode: "rel:9"},                 // no module 9
		}}},
		Modules: []Module{
			{Type: "macho", DebugID: "4c4c444c-5555-3144-a117-3e15af6b6cff", CodeFile: `C:\x\App.exe`, ImageAddr: 0x10000000, ImageSize: &size},
			{Type: "macho", CodeID: "00112233445566778899aabbccddeeff", DebugFile: "Lib.dSYM", ImageAddr: 0x20000000, ImageSize: &size},
			{Type: "macho", DebugID: "00112233-4455-6677-8899-aabbccddeef0-0", ImageAddr: 0x28000000},
			{Type: "macho", DebugID: "not-a-uuid", ImageAddr: 0x30000000},
		},
	}
	in := NewInput(req)
	if len(req.Stacktraces) != 1 || len(in.Dump.Threads) != 1 || len(in.Dump.Images) != 4 {
		t.Fatalf("%d stack traces, %d threads, %d images; want the older \"threads\" taken, 1 and 4",
			len(req.Stacktraces), len(in.Dump.Threads), len(in.Dump.Images))
	}
	if !in.Dump.Format.IsReport() || in.Dump.Memory != nil || in.Dump.Threads[0].Registers != nil {
		t.Errorf("the dump is walkable: format %s, memory %v, registers %v", in.Dump.Format, in.Dump.Memory, in.Dump.Threads[0].Registers)
	}
	if got := in.Dump.Images[0].Name; got != "App.exe" {
		t.Errorf("image 0 named %q, want the code file's base name", got)
	}
	if got := in.Dump.Images[1].Name; got != "Lib.dSYM" {
		t.Errorf("image 1 named %q, want the debug file's", got)
	}
	frames := in.Dump.Threads[0].Frames
	wantAddr := []uint64{0x10000400, 0x20000020, 0x10002000, 0x30000010, 0x40}
	wantImage := []int{0, 1, -1, 3, -1}
	wantLookup := []dump.Lookup{dump.LookupByPlace, dump.LookupByPlace, dump.LookupAsGiven, dump.LookupCaller, dump.LookupByPlace}
	for i, f := range frames {
		if f.Address != wantAddr[i] || f.ImageIndex != wantImage[i] || f.Lookup != wantLookup[i] {
			t.Errorf("frame %d: address %#x, image %d, lookup %d; want %#x, %d, %d",
				i, f.Address, f.ImageIndex, f.Lookup, wantAddr[i], wantImage[i], wantLookup[i])
		}
	}
	if want := []bool{true, true, false, true}; !slices.Equal(in.Used, want) {
		t.Errorf("used %v, want %v", in.Used, want)
	}
	if in.IDErrors[3] == nil || in.IDErrors[2] != nil || in.IDs[1].String() != "00112233-4455-6677-8899-AABBCCDDEEFF" {
		t.Errorf("ids %v, errors %v: want module 3's malformed, module 1's from its code_id, module 2's with its age", in.IDs, in.IDErrors)
	}
	if len(in.Fetch.Images) != 2 || in.Fetch.Images[0].LoadAddress != 0x10000000 || in.Fetch.Images[1].LoadAddress != 0x20000000 {
		t.Errorf("fetched %+v, want modules 0 and 1 alone", in.Fetch.Images)
	}
	mods := in.Modules(func(m Module, _ uuid.UUID) CompleteModule {
		return CompleteModule{Module: m, DebugStatus: StatusFound}
	})
	if mods[0].DebugStatus != StatusFound || mods[2].DebugStatus != StatusUnused || mods[3].DebugStatus != StatusMalformed || mods[3].Error == "" {
		t.Errorf("module statuses %s %s %s %s (%q)", mods[0].DebugStatus, mods[1].DebugStatus, mods[2].DebugStatus, mods[3].DebugStatus, mods[3].Error)
	}
}

// TestParseDebugID accepts symbolicator's spellings of a Mach-O UUID and
// nothing that could become a path.
func TestParseDebugID(t *testing.T) {
	for _, ok := range []string{"4c4c444c-5555-3144-a117-3e15af6b6cff", "4C4C444C-5555-3144-A117-3E15AF6B6CFF-0",
		"4c4c444c55553144a1173e15af6b6cff", "4C4C444C55553144A1173E15AF6B6CFF0"} {
		if _, err := ParseDebugID(ok); err != nil {
			t.Errorf("ParseDebugID(%q) = %v, want ok", ok, err)
		}
	}
	for _, bad := range []string{"", "../../../etc/passwd", "4c4c444c-5555-3144-a117-3e15af6b6cff-1",
		"4c4c444c%2f5555-3144-a117-3e15af6b6cff", "/4c4c444c55553144a1173e15af6b6cf", "4c4c444c55553144a1173e15af6b6cff/..",
		"4C4C444C55553144A1173E15AF6B6CFF1"} {
		if _, err := ParseDebugID(bad); err == nil {
			t.Errorf("ParseDebugID(%q) accepted", bad)
		}
	}
}

// TestSourceIDs: a request names sources by id alone; any setting of a
// source's own is refused, with the index of the one that has it.
func TestSourceIDs(t *testing.T) {
	raw := func(s ...string) []json.RawMessage {
		var out []json.RawMessage
		for _, x := range s {
			out = append(out, json.RawMessage(x))
		}
		return out
	}
	if ids, err := SourceIDs(nil); ids != nil || err != nil {
		t.Errorf("SourceIDs(nil) = %v, %v; want nil, nil (every source)", ids, err)
	}
	ids, err := SourceIDs(raw(`{"id":"a"}`, `{"id":"b","type":"s3"}`))
	if err != nil || len(ids) != 2 || ids[0] != "a" || ids[1] != "b" {
		t.Errorf("SourceIDs = %q, %v; want [a b]", ids, err)
	}
	for _, bad := range [][]json.RawMessage{raw(`{"id":"a"}`, `{"id":"b","url":"http://x/"}`), raw(`[1]`)} {
		if _, err := SourceIDs(bad); err == nil || !strings.Contains(err.Error(), "sources[") {
			t.Errorf("SourceIDs(%s) = %v; want an error naming the source", bad, err)
		}
	}
}
