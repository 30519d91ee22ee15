package image

import (
	"fmt"
	"io"

	macho "github.com/blacktop/go-macho"
	"github.com/blacktop/go-macho/types"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/internal/addrspan"
	"github.com/stackimage/stackimage/uuid"
)

// goMachoCommands are the only load commands go-macho is asked to parse.
// Everything else it would read eagerly is left out: LC_SYMTAB would become
// one Go string per symbol (we hand out the raw tables instead),
// LC_DYSYMTAB, LC_CODE_SIGNATURE, LC_SEGMENT_SPLIT_INFO, LC_DATA_IN_CODE and
// LC_NOTE copy their data from the file, and a command go-macho does not
// know would be logged to our users' stderr. The __LINKEDIT tables we need
// are found by our own walk over the load commands (loadcmd.go).
var goMachoCommands = []types.LoadCmd{
	types.LC_SEGMENT, types.LC_SEGMENT_64, types.LC_UUID, types.LC_ID_DYLIB,
}

// newImage parses the thin Mach-O image src holds. name becomes Image.Name.
// Errors do not name the image: callers add where it came from.
func newImage(src source, name string) (*Image, error) {
	h, err := readHeader(src)
	if err != nil {
		return nil, err
	}
	return newImageWith(src, src.r, h, name)
}

// newImageWith builds the image from h and go-macho's parse of r, whose
// offset 0 is the mach header. r differs from src.r only for an image of the
// shared cache in memory, whose __TEXT does not start at file offset 0.
func newImageWith(src source, r io.ReaderAt, h *header, name string) (*Image, error) {
	mf, err := goMachoNewFile(r)
	if err != nil {
		return nil, err
	}
	im := &Image{
		Name:       name,
		CPUType:    uint32(mf.CPU),
		CPUSubtype: uint32(mf.SubCPU),
		Type:       FileType(mf.Type),
		src:        src,
		hdr:        h,
	}
	im.Arch = archFor(im.CPUType, im.CPUSubtype)
	if u := mf.UUID(); u != nil {
		im.UUID = uuid.UUID(u.UUID)
	}
	if id := mf.DylibID(); id != nil && name == "" {
		im.Name = id.Name
	}
	for _, s := range mf.Segments() {
		im.Segments = append(im.Segments, Segment{
			Name: s.Name, Addr: s.Addr, Size: s.Memsz,
			Offset: s.Offset, FileSize: s.Filesz,
			MaxProt: uint32(s.Maxprot), Prot: uint32(s.Prot),
		})
	}
	var spans []addrspan.Span
	for i, s := range mf.Sections {
		im.Sections = append(im.Sections, Section{
			Index: i + 1, Segment: s.Seg, Name: s.Name,
			Addr: s.Addr, Size: s.Size, Offset: s.Offset, Flags: uint32(s.Flags),
			RelOff: s.Reloff, NReloc: s.Nreloc,
		})
		spans = append(spans, addrspan.Span{Start: s.Addr, End: addrspan.ClipEnd(s.Addr, s.Size), Prio: s.Addr, Order: i, Ref: i})
	}
	im.sections = addrspan.Flatten(spans)
	return im, nil
}

// goMachoNewFile runs go-macho's parser. Its errors and any panic on hostile
// input become our errors: no input may crash the caller.
func goMachoNewFile(r io.ReaderAt) (mf *macho.File, err error) {
	defer func() {
		if p := recover(); p != nil {
			mf, err = nil, fmt.Errorf("go-macho: malformed file: %v", p)
		}
	}()
	mf, err = macho.NewFile(r, macho.FileConfig{LoadIncluding: goMachoCommands})
	if err != nil {
		return nil, fmt.Errorf("go-macho: %w", err)
	}
	return mf, nil
}

// archFor returns the archregs architecture for a header's CPU type and
// subtype, nil when archregs has none.
func archFor(cpuType, cpuSubtype uint32) *archregs.Arch {
	a, err := archregs.ByCPU(cpuType, cpuSubtype)
	if err != nil {
		return nil
	}
	return a
}

// archName names an architecture as Apple's tools do (lipo, -arch),
// including subtypes archregs folds together or does not support
// (archregs.CPUName).
func archName(cpuType, cpuSubtype uint32) string { return archregs.CPUName(cpuType, cpuSubtype) }
