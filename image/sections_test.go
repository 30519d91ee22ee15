package image

import (
	"bytes"
	"errors"
	"io"
	"os"
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

// TestReadSectionAbsent tells a section the file does not hold from a
// damaged one: a dSYM's __TEXT sections (headers without bytes) and
// zero-fill sections wrap ErrNoFileData; a section past the end of a
// truncated file wraps ErrTruncated.
func TestReadSectionAbsent(t *testing.T) {
	f, err := Open("../fixtures/bin/chain-arm64-O1.dSYM/Contents/Resources/DWARF/chain-arm64-O1")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	dsym := f.Images[0]
	for _, name := range []string{"__unwind_info", "__text"} {
		s, ok := dsym.Section("__TEXT", name)
		if !ok {
			t.Fatalf("the dSYM has no __TEXT,%s header", name)
		}
		if dsym.HasFileData(s) {
			t.Errorf("HasFileData(dSYM __TEXT,%s) = true", name)
		}
		if _, err := dsym.ReadSection(s); !errors.Is(err, ErrNoFileData) || errors.Is(err, ErrTruncated) {
			t.Errorf("ReadSection(dSYM __TEXT,%s) = %v, want ErrNoFileData", name, err)
		}
	}
	if s, ok := dsym.Section("__DWARF", "__debug_info"); !ok || !dsym.HasFileData(s) {
		t.Error("the dSYM's __DWARF,__debug_info has no file data")
	} else if _, err := dsym.ReadSection(s); err != nil {
		t.Errorf("ReadSection(__debug_info): %v", err)
	}
	for _, typ := range []uint32{0x1, 0xc, 0x12} {
		if _, err := dsym.ReadSection(Section{Segment: "__DATA", Name: "__bss", Flags: typ, Offset: 0x100, Size: 16}); !errors.Is(err, ErrNoFileData) {
			t.Errorf("ReadSection(zero-fill type %#x) = %v, want ErrNoFileData", typ, err)
		}
	}

	data, err := os.ReadFile("../fixtures/bin/chain-arm64-O1")
	if err != nil {
		t.Fatal(err)
	}
	whole, err := NewFile(bytes.NewReader(data), "whole")
	if err != nil {
		t.Fatal(err)
	}
	s, ok := whole.Images[0].Section("__TEXT", "__unwind_info")
	if !ok {
		t.Fatal("no __TEXT,__unwind_info")
	}
	cut := data[:s.Offset+16]
	// With the reader's size known, and with a reader that only says
	// io.EOF at the end.
	for _, r := range []io.ReaderAt{bytes.NewReader(cut), struct{ io.ReaderAt }{bytes.NewReader(cut)}} {
		short, err := NewFile(r, "short")
		if err != nil {
			t.Fatalf("a binary cut inside __unwind_info does not open: %v", err)
		}
		if _, err := short.Images[0].ReadSection(s); !errors.Is(err, ErrTruncated) || errors.Is(err, ErrNoFileData) {
			t.Errorf("%T: ReadSection(__unwind_info past the end) = %v, want ErrTruncated", r, err)
		}
		text, _ := short.Images[0].Section("__TEXT", "__text")
		if _, err := short.Images[0].ReadSection(text); err != nil {
			t.Errorf("%T: ReadSection(__text, before the cut) = %v", r, err)
		}
	}
	// Damage is not truncation: a size past any real file.
	if _, err := short0(t, cut).ReadSection(Section{Segment: "__X", Name: "__y", Offset: 0x10, Size: 1 << 41}); err == nil || errors.Is(err, ErrTruncated) || errors.Is(err, ErrNoFileData) {
		t.Errorf("ReadSection(size 1<<41) = %v, want a plain error", err)
	}
}

func short0(t *testing.T, data []byte) *Image {
	t.Helper()
	f, err := NewFile(bytes.NewReader(data), "short")
	if err != nil {
		t.Fatal(err)
	}
	return f.Images[0]
}
