package image

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"io"
	"strings"
	"sync"
)

// Limits on what reading an image's DWARF may cost. Hostile files name the
// same bytes from thousands of section headers, or a compressed stream that
// expands 1032 times from several sections; these bound the total, however
// the headers are arranged.
const (
	// maxDecompressRatio bounds the bytes all compressed DWARF sections of
	// an image may expand to, as a multiple of the file's size. Go's linker
	// compresses DWARF about 3 to 5 times, and DWARF is only part of a file.
	maxDecompressRatio = 16
	// maxDecompressTotal caps the decompressed bytes of one image whatever
	// its size.
	maxDecompressTotal = 1 << 30
	// readSlack lets the sections of a file whose DWARF is nearly all of it
	// be read even where headers are padded or overlap slightly.
	readSlack = 1 << 16
)

// DWARFSections returns the contents of the __DWARF segment's sections (or
// __debug_* sections in objects), keyed by name without the leading
// underscores ("debug_info", "debug_line", ...). Section names are cut at 16
// bytes in Mach-O: "__debug_str_offs" is returned as "debug_str_offsets" and
// "__apple_namespac" as "apple_namespace".
// Sections Go's linker compresses ("__zdebug_*": "ZLIB", big-endian size,
// zlib data) are returned decompressed under the plain name. Empty when the
// image has no DWARF.
//
// Only the first section of each name is read. The bytes read in all may
// not exceed the file's size, nor the decompressed bytes 16 times the
// file's size (at most 1 GiB): past either, DWARFSections fails with a
// *FormatError naming the section. DWARFSectionsNamed reads fewer.
func (im *Image) DWARFSections() (map[string][]byte, error) {
	if im == nil || im.hdr == nil {
		return nil, ErrNoHeader
	}
	return im.dwarfSections(nil)
}

// DWARFSectionsNamed is DWARFSections restricted to the named sections
// (keys as DWARFSections returns them, such as "debug_info"): the others
// are neither read nor decompressed. Names the image lacks are left out of
// the map.
func (im *Image) DWARFSectionsNamed(names ...string) (map[string][]byte, error) {
	if im == nil || im.hdr == nil {
		return nil, ErrNoHeader
	}
	want := make(map[string]bool, len(names))
	for _, n := range names {
		want[n] = true
	}
	return im.dwarfSections(want)
}

// dwarfSections reads the first DWARF section of each name in want (every
// name when want is nil) within the image's read and decompression budgets.
// The sections are read concurrently: from the page cache a read is a
// memory copy, and the largest sections are megabytes.
func (im *Image) dwarfSections(want map[string]bool) (map[string][]byte, error) {
	readBudget := uint64(maxTotalReadLength)
	zBudget := uint64(maxDecompressTotal)
	if im.src.size >= 0 {
		readBudget = uint64(im.src.size) + readSlack
		zBudget = min(zBudget, maxDecompressRatio*uint64(im.src.size))
	}
	type extent struct {
		off, size uint64
		z         bool
	}
	type read struct {
		s          Section
		what       string
		compressed bool
		keys       []string // the names that share these bytes
		data       []byte
		err        error
	}
	var reads []*read
	byExtent := map[extent]*read{} // sections to read, by where their bytes lie
	seen := map[string]bool{}
	for _, s := range im.Sections {
		key, compressed, ok := dwarfSectionKey(s)
		if !ok || (want != nil && !want[key]) || seen[key] {
			continue // only the first of each name counts
		}
		seen[key] = true
		ext := extent{uint64(s.Offset), s.Size, compressed}
		if r, ok := byExtent[ext]; ok {
			r.keys = append(r.keys, key) // another name for the same bytes: read once
			continue
		}
		what := fmt.Sprintf("section %s,%s", s.Segment, s.Name)
		if s.Size > readBudget {
			return nil, im.wrap(&FormatError{int64(s.Offset), fmt.Sprintf("%s: the DWARF sections read total more than the file's %d bytes", what, im.src.size), s.Size})
		}
		readBudget -= s.Size
		r := &read{s: s, what: what, compressed: compressed, keys: []string{key}}
		byExtent[ext] = r
		reads = append(reads, r)
	}

	var wg sync.WaitGroup
	slots := make(chan struct{}, 4) // a few readers; files hold many small sections
	for _, r := range reads {
		wg.Add(1)
		slots <- struct{}{}
		go func() {
			defer func() { <-slots; wg.Done() }()
			r.data, r.err = im.readSection(r.s, r.what)
		}()
	}
	wg.Wait()

	out := map[string][]byte{}
	for _, r := range reads {
		if r.err != nil {
			return nil, im.wrap(r.err)
		}
		if r.compressed {
			var err error
			if r.data, err = unzdebug(r.data, &zBudget); err != nil {
				return nil, im.wrap(&FormatError{int64(r.s.Offset), fmt.Sprintf("%s: %v", r.what, err), nil})
			}
		}
		for _, k := range r.keys {
			out[k] = r.data
		}
	}
	return out, nil
}

// readSection reads a section's bytes. When the file's size is known and
// bounds the section, that is one allocation and one read, copying the
// bytes once; otherwise source.read grows the buffer as data arrives.
func (im *Image) readSection(s Section, what string) ([]byte, error) {
	off, n := uint64(s.Offset), s.Size
	if im.src.size < 0 || im.src.mapped != nil || n > uint64(im.src.size) || off > uint64(im.src.size)-n {
		return im.src.read(off, n, what, 0) // for its bounds and its error
	}
	buf := make([]byte, n)
	if err := readFull(im.src.r, buf, off); err != nil {
		return nil, &FormatError{int64(off), fmt.Sprintf("cannot read %s [%#x, %#x): %v", what, off, off+n, err), nil}
	}
	return buf, nil
}

// dwarfSectionKey returns the key a DWARF section is returned under and
// whether it is compressed; ok is false for sections that are not DWARF or
// hold no file data.
func dwarfSectionKey(s Section) (key string, compressed, ok bool) {
	compressed = strings.HasPrefix(s.Name, "__zdebug_")
	if s.Segment != "__DWARF" && !strings.HasPrefix(s.Name, "__debug_") && !compressed {
		return "", false, false
	}
	if s.Flags&0xff == 0x1 { // S_ZEROFILL: no file data
		return "", false, false
	}
	key = strings.TrimLeft(s.Name, "_")
	if compressed {
		key = "debug_" + strings.TrimPrefix(s.Name, "__zdebug_")
	}
	if full, ok := truncatedSectionNames[key]; ok {
		key = full
	}
	return key, compressed, true
}

// truncatedSectionNames restores the names Mach-O's 16-byte section names
// cut.
var truncatedSectionNames = map[string]string{
	"debug_str_offs": "debug_str_offsets",
	"apple_namespac": "apple_namespace",
}

// unzdebug decompresses a section in Go's __zdebug_ format, charging the
// claimed size to *budget before allocating it. zlib cannot expand data
// more than about 1032 times, which bounds the size one section may claim.
func unzdebug(data []byte, budget *uint64) ([]byte, error) {
	if len(data) < 12 || string(data[:4]) != "ZLIB" {
		return nil, fmt.Errorf("no ZLIB header")
	}
	size := binary.BigEndian.Uint64(data[4:])
	if size > 1032*uint64(len(data)) {
		return nil, fmt.Errorf("claimed size %d too large for %d compressed bytes", size, len(data))
	}
	if size > *budget {
		return nil, fmt.Errorf("claimed size %d exceeds the %d bytes left of the image's decompression budget", size, *budget)
	}
	*budget -= size
	zr, err := zlib.NewReader(bytes.NewReader(data[12:]))
	if err != nil {
		return nil, err
	}
	out := make([]byte, size)
	if _, err := io.ReadFull(zr, out); err != nil {
		return nil, fmt.Errorf("decompressing: %v", err)
	}
	return out, nil
}
