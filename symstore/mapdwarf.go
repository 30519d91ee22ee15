package symstore

import (
	"bytes"
	"runtime"
	"slices"
	"strings"

	"github.com/stackimage/stackimage/debuginfo"
	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/internal/mmapfile"
)

// minMappedDWARF is the size of DWARF below which reading the sections is
// as cheap as mapping them: a mapping costs system calls and page faults,
// and most dSYMs are a few megabytes. A variable for the tests.
var minMappedDWARF uint64 = 4 << 20

// debugIndex builds the DWARF index of im. The sections of a big thin
// Mach-O file are mapped rather than read: a first answer from a dSYM of
// hundreds of megabytes then touches only the pages of the unit headers,
// the address ranges and the one unit it parses, as llvm-symbolizer does,
// instead of copying every section first. The mapping lives as long as the
// index: debuginfo keeps the section slices and hands out only copies of
// their bytes (strings), so once the index is unreachable nothing can read
// the mapping, and a cleanup unmaps it.
func debugIndex(im *image.Image) (*debuginfo.Index, bool, error) {
	if secs, m := mapDWARF(im); m != nil {
		ix, err := debuginfo.New(secs)
		if err != nil {
			m.Close()
			return nil, true, err
		}
		runtime.AddCleanup(ix, func(m *mmapfile.File) { m.Close() }, m)
		return ix, true, nil
	}
	secs, err := im.DWARFSectionsNamed(debuginfo.SectionNames...)
	if err != nil || len(secs) == 0 {
		return nil, false, err
	}
	ix, err := debuginfo.New(secs)
	return ix, true, err
}

// mapDWARF maps the file im was opened from and returns the sections
// debuginfo uses as slices of the mapping, keyed as image names them. It
// returns a nil mapping, and the caller reads the sections instead, unless
// the file at im.Name is a thin Mach-O file with im's UUID, CPU type and
// subtype (so it is the file im was read from, at offset 0), every DWARF
// section lies within it uncompressed, and they total at least
// minMappedDWARF bytes. Like image's reads, only the first section of
// each name counts; a mapping allocates nothing however many sections
// name the same bytes.
func mapDWARF(im *image.Image) (map[string][]byte, *mmapfile.File) {
	if im.Name == "" || image.CheckRegular(im.Name) != nil {
		return nil, nil
	}
	type extent struct{ off, size uint64 }
	want := map[string]extent{}
	var total uint64
	for _, s := range im.Sections {
		if strings.HasPrefix(s.Name, "__zdebug_") {
			return nil, nil // compressed: image decompresses them
		}
		if s.Segment != "__DWARF" && !strings.HasPrefix(s.Name, "__debug_") || s.Flags&0xff == 0x1 {
			continue
		}
		key := strings.TrimLeft(s.Name, "_")
		if key == "debug_str_offs" {
			key = "debug_str_offsets"
		}
		if _, seen := want[key]; seen || !slices.Contains(debuginfo.SectionNames, key) {
			continue
		}
		want[key] = extent{uint64(s.Offset), s.Size}
		total += s.Size
	}
	if total < minMappedDWARF {
		return nil, nil
	}
	m, err := mmapfile.Map(im.Name)
	if err != nil || m == nil {
		return nil, nil
	}
	data := m.Bytes()
	if !sameThinImage(data, im) {
		m.Close()
		return nil, nil
	}
	secs := make(map[string][]byte, len(want))
	for key, e := range want {
		if e.off > uint64(len(data)) || e.size > uint64(len(data))-e.off {
			m.Close()
			return nil, nil // image reports the bad section
		}
		secs[key] = data[e.off : e.off+e.size : e.off+e.size]
	}
	return secs, m
}

// sameThinImage reports whether data is a thin Mach-O file with im's CPU
// type, subtype and UUID.
func sameThinImage(data []byte, im *image.Image) bool {
	h, u, err := image.Peek(bytes.NewReader(data), int64(len(data)))
	return err == nil && h.CPUType == im.CPUType && h.CPUSubtype == im.CPUSubtype && !u.IsZero() && u == im.UUID
}
