package image

import (
	"bytes"
	"testing"
)

// TestReadSection reads __TEXT,__text of a fixture and compares it with the
// same bytes read through its segment.
func TestReadSection(t *testing.T) {
	f, err := Open("../fixtures/bin/chain-arm64-O1")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	im := f.Images[0]
	s, ok := im.Section("__TEXT", "__text")
	if !ok {
		t.Fatal("no __TEXT,__text")
	}
	got, err := im.ReadSection(s)
	if err != nil {
		t.Fatal(err)
	}
	text, _ := im.TextSegment()
	seg, err := im.ReadSegment(text)
	if err != nil {
		t.Fatal(err)
	}
	if want := seg[s.Offset : uint64(s.Offset)+s.Size]; !bytes.Equal(got, want) {
		t.Errorf("ReadSection(__text) differs from the segment's bytes at the section's offset")
	}
	if _, ok := im.Section("__TEXT", "__nonexistent"); ok {
		t.Error("Section found a section that does not exist")
	}
	if _, err := im.ReadSection(Section{Segment: "__DATA", Name: "__bss", Flags: 0x1, Size: 16}); err == nil {
		t.Error("ReadSection of a zero-fill section succeeded")
	}
	if _, err := im.ReadSection(Section{Segment: "__X", Name: "__y", Offset: 0x10, Size: 1 << 40}); err == nil {
		t.Error("ReadSection past the end of the file succeeded")
	}
}
