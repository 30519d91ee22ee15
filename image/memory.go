package image

import (
	"errors"
	"fmt"
	"io"
)

// FromMemory parses the image whose mach header lies at headerAddr in
// captured memory. The symbol and string tables are found through
// __LINKEDIT: base = slide + linkedit.vmaddr − linkedit.fileoff.
//
// Every file offset the image's commands give is read from memory through
// the segment whose file range holds it: address = slide + vmaddr + (offset
// − fileoff), with slide = headerAddr − __TEXT's vmaddr. For __LINKEDIT this
// is the formula above. Offsets that no segment maps are errors. Name is the
// name given, or the LC_ID_DYLIB name when name is empty.
func FromMemory(mem Memory, headerAddr uint64, name string) (*Image, error) {
	label := name
	if label == "" {
		label = fmt.Sprintf("image at %#x", headerAddr)
	}
	h, err := readHeader(source{r: &memAt{mem, headerAddr}, size: -1})
	if err != nil {
		return nil, fmt.Errorf("image: %s: %w", label, err)
	}
	text, ok := h.headerSegment()
	if !ok {
		return nil, fmt.Errorf("image: %s: no segment maps the mach header", label)
	}
	mr := &mappedReader{mem: mem, slide: headerAddr - text.addr}
	for _, s := range h.segs {
		if n := min(s.filesize, s.size); n > 0 {
			mr.segs = append(mr.segs, rawSegment{name: s.name, addr: s.addr, size: n, off: s.off, filesize: n})
		}
	}
	src := source{r: mr, size: -1, mapped: mr}
	// go-macho wants the mach header at offset 0; in the shared cache
	// __TEXT's file offset is the image's place in the cache instead.
	var r io.ReaderAt = mr
	if text.off != 0 {
		r = io.NewSectionReader(mr, int64(text.off), 1<<62)
	}
	im, err := newImageWith(src, r, h, name)
	if err != nil {
		return nil, fmt.Errorf("image: %s: %w", label, err)
	}
	return im, nil
}

// headerSegment returns the segment that maps the mach header: the one at
// file offset 0, else (in the shared cache) the one named __TEXT.
func (h *header) headerSegment() (rawSegment, bool) {
	for _, s := range h.segs {
		if s.off == 0 && s.filesize > 0 {
			return s, true
		}
	}
	for _, s := range h.segs {
		if s.name == "__TEXT" && s.filesize > 0 {
			return s, true
		}
	}
	return rawSegment{}, false
}

// memAt reads memory relative to a base address, for the mach header and
// load commands, which lie right after each other at the header address.
type memAt struct {
	mem  Memory
	base uint64
}

func (m *memAt) ReadAt(p []byte, off int64) (int, error) {
	if m.mem == nil {
		return 0, errors.New("no memory to read (nil Memory)")
	}
	return m.mem.ReadMemory(p, m.base+uint64(off))
}

// mappedReader presents an image in memory as its file: an offset inside a
// segment's [fileoff, fileoff+filesize) reads memory at slide + vmaddr +
// (offset − fileoff).
type mappedReader struct {
	mem   Memory
	slide uint64
	segs  []rawSegment // with file data; filesize clipped to vmsize
}

// segmentAt returns the segment whose file range holds off.
func (m *mappedReader) segmentAt(off uint64) (rawSegment, bool) {
	for _, s := range m.segs {
		if off >= s.off && off-s.off < s.filesize {
			return s, true
		}
	}
	return rawSegment{}, false
}

// contains reports whether [off, off+n) lies in the file range of one
// segment, so that no read sized by the image's data runs past it.
func (m *mappedReader) contains(off, n uint64) bool {
	s, ok := m.segmentAt(off)
	return ok && n <= s.filesize-(off-s.off)
}

func (m *mappedReader) ReadAt(p []byte, off int64) (int, error) {
	done := 0
	for done < len(p) {
		o := uint64(off) + uint64(done)
		s, ok := m.segmentAt(o)
		if !ok {
			return done, fmt.Errorf("file offset %#x is in no segment mapped in memory", o)
		}
		chunk := p[done:min(uint64(len(p)), uint64(done)+s.filesize-(o-s.off))]
		n, err := m.mem.ReadMemory(chunk, m.slide+s.addr+(o-s.off))
		done += n
		if err != nil {
			return done, err
		}
		if n < len(chunk) {
			return done, io.ErrUnexpectedEOF
		}
	}
	return done, nil
}
