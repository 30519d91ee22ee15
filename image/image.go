// Package image reads Mach-O images, on disk or in captured memory: thin and
// fat files, executables, dylibs, bundles, objects and dSYMs. It is the only
// package of the project that reads Mach-O structures through go-macho, and
// the only one that decodes mach headers and load commands: callers that
// need less than an Image (a format sniff, a UUID from a zip member, the
// commands of a core) use Sniff, ReadHeader, Peek, ReadFatArchs and
// ReadLoadCommands, bounded as Open is. The others see the types declared
// here.
package image

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/internal/addrspan"
	"github.com/stackimage/stackimage/unwind"
	"github.com/stackimage/stackimage/uuid"
)

// FileType is the Mach-O header's filetype.
type FileType uint32

const (
	TypeObject   FileType = 1  // MH_OBJECT
	TypeExecute  FileType = 2  // MH_EXECUTE
	TypeCore     FileType = 4  // MH_CORE
	TypeDylib    FileType = 6  // MH_DYLIB
	TypeDylinker FileType = 7  // MH_DYLINKER
	TypeBundle   FileType = 8  // MH_BUNDLE
	TypeDSYM     FileType = 10 // MH_DSYM
	TypeFileSet  FileType = 12 // MH_FILESET
)

// String names the file type as <mach-o/loader.h> does ("MH_EXECUTE"),
// or gives its number for one without a constant here.
func (t FileType) String() string {
	switch t {
	case TypeObject:
		return "MH_OBJECT"
	case TypeExecute:
		return "MH_EXECUTE"
	case TypeCore:
		return "MH_CORE"
	case TypeDylib:
		return "MH_DYLIB"
	case TypeDylinker:
		return "MH_DYLINKER"
	case TypeBundle:
		return "MH_BUNDLE"
	case TypeDSYM:
		return "MH_DSYM"
	case TypeFileSet:
		return "MH_FILESET"
	}
	return fmt.Sprintf("FileType(%d)", uint32(t))
}

// Segment is one LC_SEGMENT or LC_SEGMENT_64. Addresses are unslid.
type Segment struct {
	Name             string
	Addr, Size       uint64 // vmaddr, vmsize
	Offset, FileSize uint64 // fileoff, filesize
	MaxProt, Prot    uint32
}

// Executable reports whether the segment's initial protection allows
// execution (VM_PROT_EXECUTE): only such segments hold code.
func (s *Segment) Executable() bool { return s.Prot&vmProtExecute != 0 }

// Section is one section of a segment. Addresses are unslid. Index is the
// 1-based section number that nlist entries' n_sect refers to.
type Section struct {
	Index   int
	Segment string
	Name    string
	Addr    uint64
	Size    uint64
	Offset  uint32
	Flags   uint32
	// RelOff and NReloc locate the section's relocation entries (object
	// files): NReloc 8-byte entries at file offset RelOff.
	RelOff, NReloc uint32
}

// RawSymtab is the LC_SYMTAB data as the file holds it: the nlist array and
// the string table, bounded by the command's counts and the file's size.
type RawSymtab struct {
	Is64      bool
	ByteOrder binary.ByteOrder
	NSyms     int
	Syms      []byte // NSyms nlist or nlist_64 entries
	Strings   []byte // the string table
}

// Export is one entry of the export trie. Addr is unslid.
type Export struct {
	Name string
	Addr uint64
}

// Image is one Mach-O image: a thin file, one slice of a fat file, or an
// image read from captured memory.
type Image struct {
	// Name is the path the image was opened from or was given; for an
	// in-memory image, the name the caller gave, or its LC_ID_DYLIB name
	// when the caller gave none.
	Name       string
	UUID       uuid.UUID      // LC_UUID; zero when the image has none
	Arch       *archregs.Arch // nil for an architecture archregs does not know
	CPUType    uint32
	CPUSubtype uint32
	Type       FileType
	Segments   []Segment
	Sections   []Section

	src      source
	hdr      *header
	sections []addrspan.Span // Sections by address, disjoint, for SectionFor
}

// File is an opened Mach-O file: one image when thin, one per slice when fat.
// Its images read their tables from the file lazily: keep the File open while
// they are used.
type File struct {
	Path   string
	Images []*Image
	Fat    bool
	// SliceErrors says which slices of a fat file could not be read, and
	// why; Images holds the others. A file none of whose slices can be
	// read is an error of Open and NewFile instead.
	SliceErrors []error

	closer io.Closer
}

// Open opens a Mach-O file, thin or fat. A path that is not a regular file
// (a FIFO, a device, a directory) is refused before it is opened: opening a
// FIFO blocks until someone writes to it, and a device can be endless.
//
// A bundle (Foo.app, Foo.dSYM, Foo.framework) opens the Mach-O file inside
// it, as BundleFile finds it.
func Open(path string) (*File, error) {
	path, err := BundleFile(path)
	if err != nil {
		return nil, fmt.Errorf("image: %w", err)
	}
	if err := CheckRegular(path); err != nil {
		return nil, fmt.Errorf("image: %w", err)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("image: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("image: %w", err)
	}
	mf, err := newFile(source{r: f, size: st.Size()}, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	mf.closer = f
	return mf, nil
}

// CheckRegular returns an error unless path (after symbolic links) is a
// regular file. It stats without opening, so that a FIFO, a socket or a
// device is refused before it can block or stream without end.
func CheckRegular(path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !info.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file (%s)", path, FileKind(info.Mode()))
	}
	return nil
}

// FileKind names the kind of file a mode describes, for messages.
func FileKind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "regular file"
	case m.IsDir():
		return "directory"
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "block device"
	}
	return "irregular file"
}

// NewFile reads a Mach-O file, thin or fat, from r. When r has a Size method
// (bytes.Reader, io.SectionReader), every table is checked against it before
// it is read.
func NewFile(r io.ReaderAt, name string) (*File, error) {
	size := int64(-1)
	if s, ok := r.(interface{ Size() int64 }); ok {
		size = s.Size()
	}
	return newFile(source{r: r, size: size}, name)
}

func newFile(src source, name string) (*File, error) {
	slices, bad, err := readFat(src)
	if err != nil {
		return nil, fmt.Errorf("image: %s: %w", name, err)
	}
	f := &File{Path: name}
	if slices == nil && bad == nil {
		im, err := newImage(src, name)
		if err != nil {
			return nil, fmt.Errorf("image: %s: %w", name, err)
		}
		f.Images = []*Image{im}
		return f, nil
	}
	f.Fat = true
	for _, err := range bad {
		f.SliceErrors = append(f.SliceErrors, fmt.Errorf("image: %s: %w", name, err))
	}
	for _, s := range slices {
		im, err := newImage(source{r: io.NewSectionReader(src.r, int64(s.Offset), int64(s.Size)), size: int64(s.Size)}, name)
		if err != nil {
			// One bad slice costs itself, not its neighbours.
			f.SliceErrors = append(f.SliceErrors, fmt.Errorf("image: %s: fat slice %d (%s): %w", name, s.Index, s.ArchName(), err))
			continue
		}
		f.Images = append(f.Images, im)
	}
	if len(f.Images) == 0 {
		return nil, errors.Join(f.SliceErrors...)
	}
	return f, nil
}

// Close releases the file. Images of a file from NewFile are not affected.
func (f *File) Close() error {
	if f.closer == nil {
		return nil
	}
	err := f.closer.Close()
	f.closer = nil
	return err
}

// ByArch returns the slice for the named architecture ("arm64", "x86_64",
// "armv7s", ...; any case). The error lists the slices present.
func (f *File) ByArch(arch string) (*Image, error) {
	for _, im := range f.Images {
		if strings.EqualFold(im.ArchName(), arch) {
			return im, nil
		}
	}
	return nil, fmt.Errorf("image: no %s slice in %s (has %s)", arch, f.Path, f.slicesPresent(false))
}

// ByUUID returns the slice with the UUID. The error lists the slices present.
func (f *File) ByUUID(u uuid.UUID) (*Image, error) {
	for _, im := range f.Images {
		if im.UUID == u {
			return im, nil
		}
	}
	return nil, fmt.Errorf("image: no slice with UUID %s in %s (has %s)", u, f.Path, f.slicesPresent(true))
}

func (f *File) slicesPresent(withUUID bool) string {
	var names []string
	for _, im := range f.Images {
		n := im.ArchName()
		if withUUID {
			n += " " + im.UUID.String()
		}
		names = append(names, n)
	}
	return strings.Join(names, ", ")
}

// ArchName returns the architecture's name as Apple's tools spell it
// ("arm64", "armv7s", "x86_64h", ...). It is finer than Arch, which may
// stand for several subtypes (armv7s and armv7k decode as armv7).
func (im *Image) ArchName() string { return archName(im.CPUType, im.CPUSubtype) }

// Memory reads target memory: unwind.Memory, the type walker.Memory and
// dump.Memory are too.
type Memory = unwind.Memory

// TextSegment returns the segment that maps the start of the file (__TEXT),
// whose vmaddr the load address corresponds to. In a dSYM, whose segments
// hold no file data, it is the segment named __TEXT; in an object file, the
// single unnamed segment.
func (im *Image) TextSegment() (Segment, bool) {
	for _, s := range im.Segments {
		if s.Offset == 0 && s.FileSize > 0 {
			return s, true
		}
	}
	for _, s := range im.Segments {
		if s.Name == "__TEXT" {
			return s, true
		}
	}
	if im.Type == TypeObject && len(im.Segments) > 0 {
		return im.Segments[0], true
	}
	return Segment{}, false
}

// Slide returns loadAddress − the __TEXT segment's vmaddr, wrapping around
// when the image was loaded below its preferred address.
func (im *Image) Slide(loadAddress uint64) uint64 {
	text, _ := im.TextSegment()
	return loadAddress - text.Addr
}

// SectionFor returns the section holding the unslid address, in O(log n).
// Should sections overlap, the one starting highest at or below the address
// wins.
func (im *Image) SectionFor(addr uint64) (Section, bool) {
	if sp, ok := addrspan.Find(im.sections, addr); ok {
		return im.Sections[sp.Ref], true
	}
	return Section{}, false
}
