package image

import (
	"errors"
	"fmt"
	"io"
)

// Section returns the named section of the named segment
// ("__TEXT", "__unwind_info"), and false when the image has none. In an
// object file, whose sections all sit in one unnamed segment, the segment
// name is matched against the section's own segment name.
func (im *Image) Section(segment, name string) (Section, bool) {
	for _, s := range im.Sections {
		if s.Segment == segment && s.Name == name {
			return s, true
		}
	}
	return Section{}, false
}

// Section attributes that mark code (<mach-o/loader.h>): a section with
// neither holds data, as __TEXT,__const and __TEXT,__cstring do.
const (
	sAttrPureInstructions = 0x80000000 // S_ATTR_PURE_INSTRUCTIONS
	sAttrSomeInstructions = 0x400      // S_ATTR_SOME_INSTRUCTIONS
)

// HoldsInstructions reports whether the section's attributes say it holds
// machine instructions (__text, __stubs, __stub_helper), as a dSYM's copy
// of the binary's section headers says too.
func (s Section) HoldsInstructions() bool {
	return s.Flags&(sAttrPureInstructions|sAttrSomeInstructions) != 0
}

var (
	// ErrNoFileData is the error of ReadSection (tested with errors.Is)
	// for a section whose bytes the file does not hold by design: a
	// zero-fill section, or a dSYM's copy of a section of the binary (its
	// __TEXT and __DATA sections are headers only: offset 0, in a segment
	// of no file size). Such a section is absent from the file, not
	// damaged.
	ErrNoFileData = errors.New("section has no file data")
	// ErrTruncated is the error of ReadSection (tested with errors.Is)
	// for a section whose bytes lie past the end of the file, as in a
	// truncated download, or outside the segments captured in memory for
	// an image read from a dump.
	ErrTruncated = errors.New("the file ends before the section's data")
)

// Section types of the low byte of a section's flags whose sections have
// no file data (<mach-o/loader.h>).
const (
	sZerofill            = 0x1  // S_ZEROFILL
	sGBZerofill          = 0xc  // S_GB_ZEROFILL
	sThreadLocalZerofill = 0x12 // S_THREAD_LOCAL_ZEROFILL
)

// HasFileData reports whether the file holds the section's bytes: false
// for a zero-fill section, and for a section of a dSYM (or any linked
// image) with offset 0 or in a segment of no file size, as a dSYM keeps
// the binary's __TEXT and __DATA sections: their headers without their
// contents.
func (im *Image) HasFileData(s Section) bool {
	switch s.Flags & 0xff {
	case sZerofill, sGBZerofill, sThreadLocalZerofill:
		return false
	}
	if s.Size == 0 || im.Type == TypeObject {
		return true
	}
	if s.Offset == 0 {
		return false
	}
	for _, seg := range im.Segments {
		if seg.Name == s.Segment && s.Addr >= seg.Addr && s.Addr-seg.Addr < max(seg.Size, 1) {
			return seg.FileSize > 0
		}
	}
	return true
}

// ReadSection returns a section's file bytes. A section without file data
// (see HasFileData) is an error that wraps ErrNoFileData; one that runs
// past the end of the file (or of the memory captured for an in-memory
// image), one that wraps ErrTruncated.
func (im *Image) ReadSection(s Section) ([]byte, error) {
	if im == nil || im.hdr == nil {
		return nil, ErrNoHeader
	}
	if !im.HasFileData(s) {
		why := ""
		if t := s.Flags & 0xff; t == sZerofill || t == sGBZerofill || t == sThreadLocalZerofill {
			why = " (zero-fill)"
		} else if im.Type == TypeDSYM {
			why = " (a dSYM holds only the binary's section headers)"
		}
		return nil, im.wrap(fmt.Errorf("section %s,%s: %w%s", s.Segment, s.Name, ErrNoFileData, why))
	}
	off, n := uint64(s.Offset), s.Size
	if end := off + n; end >= off && end <= maxTotalReadLength {
		if im.src.size >= 0 && end > uint64(im.src.size) {
			return nil, im.wrap(fmt.Errorf("section %s,%s range [%#x, %#x) past the end of the data (%#x bytes): %w",
				s.Segment, s.Name, off, end, im.src.size, ErrTruncated))
		}
		if im.src.mapped != nil && n > 0 && !im.src.mapped.contains(off, n) {
			return nil, im.wrap(fmt.Errorf("section %s,%s range [%#x, %#x) is not inside one segment captured in memory: %w",
				s.Segment, s.Name, off, end, ErrTruncated))
		}
	}
	data, err := im.src.read(off, n, fmt.Sprintf("section %s,%s", s.Segment, s.Name), 0)
	if err != nil {
		if im.src.size < 0 && im.src.mapped == nil && n > 0 && off+n > off && off+n <= maxTotalReadLength && pastEnd(im.src.r, off+n-1) {
			// A reader of unknown size that ends before the section.
			return nil, im.wrap(fmt.Errorf("%w: %w", err, ErrTruncated))
		}
		return nil, im.wrap(err)
	}
	return data, nil
}

// pastEnd reports whether r ends at or before off: a read of the byte
// there gives io.EOF and nothing.
func pastEnd(r io.ReaderAt, off uint64) bool {
	var b [1]byte
	n, err := r.ReadAt(b[:], int64(off))
	return n == 0 && errors.Is(err, io.EOF)
}
