package main

import (
	"debug/macho"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stackimage/stackimage/symbolize"
	"github.com/stackimage/stackimage/walker"
)

// TestSymbolicateBadUnwindInfo damages the compact unwind table of the
// binary a capture was taken from (its first-level index sends the first
// page past the end of the section): the walk stops with bad_unwind_info,
// naming the image and the offset in the table, and keeps the frames found
// before.
func TestSymbolicateBadUnwindInfo(t *testing.T) {
	const name = "dwarf-x86_64-O1"
	data, err := os.ReadFile(filepath.Join(symbolsDir, name))
	if err != nil {
		t.Fatal(err)
	}
	f, err := macho.Open(filepath.Join(symbolsDir, name))
	if err != nil {
		t.Fatal(err)
	}
	sec := f.Section("__unwind_info")
	f.Close()
	if sec == nil {
		t.Fatalf("%s has no __unwind_info", name)
	}
	// unwind_info_section_header: the index array's offset is its sixth
	// word; each entry is {functionOffset, secondLevelPagesSectionOffset,
	// lsdaIndexArraySectionOffset}.
	base := int(sec.Offset)
	index := int(binary.LittleEndian.Uint32(data[base+20:]))
	binary.LittleEndian.PutUint32(data[base+index+4:], 0xfffff000)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		t.Fatal(err)
	}
	var rep jsonReport
	out := runOK(t, "symbolicate", filepath.Join(snapshotsDir, name+"-deepest.json"), "--symbols", dir, "--json")
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	th := rep.Threads[0]
	if th.StopReason != symbolize.StopReason(walker.StopBadUnwindInfo) || !strings.Contains(th.StopDetail, name) || !strings.Contains(th.StopDetail, "offset 0x") {
		t.Errorf("stop = %s (%s), want bad_unwind_info naming %s and the offset", th.StopReason, th.StopDetail, name)
	}
	if len(th.Frames) == 0 || th.Frames[0].Symbol != "deepest" {
		t.Errorf("frames = %+v, want frame 0 (deepest) kept", th.Frames)
	}
}
