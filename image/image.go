// Package image reads Mach-O images, on disk or in captured memory: thin and
// fat files, executables, dylibs, bundles, objects and dSYMs. It is the only
// package of the project that reads Mach-O structures through go-macho; the
// others see the types declared here.
package image

import (
	"encoding/binary"
	"fmt"
	"io"

	"github.com/stackimage/stackimage/archregs"
)

// UUID is an image's LC_UUID.
type UUID [16]byte

// String formats the UUID as Apple does: upper-case hex in 8-4-4-4-12 groups.
func (u UUID) String() string { return "" }

// IsZero reports whether the UUID is all zero (an image without LC_UUID).
func (u UUID) IsZero() bool { return u == UUID{} }

// ParseUUID reads a UUID with or without dashes, in either case.
func ParseUUID(s string) (UUID, error) { return UUID{}, fmt.Errorf("image: unimplemented") }

// FileType is the Mach-O header's filetype.
type FileType uint32

const (
	TypeObject  FileType = 1  // MH_OBJECT
	TypeExecute FileType = 2  // MH_EXECUTE
	TypeDylib   FileType = 6  // MH_DYLIB
	TypeBundle  FileType = 8  // MH_BUNDLE
	TypeDSYM    FileType = 10 // MH_DSYM
)

// Segment is one LC_SEGMENT or LC_SEGMENT_64. Addresses are unslid.
type Segment struct {
	Name             string
	Addr, Size       uint64 // vmaddr, vmsize
	Offset, FileSize uint64 // fileoff, filesize
	MaxProt, Prot    uint32
}

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
	// in-memory image, its LC_ID_DYLIB name or the name the caller gave.
	Name       string
	UUID       UUID
	Arch       *archregs.Arch // nil for an architecture archregs does not know
	CPUType    uint32
	CPUSubtype uint32
	Type       FileType
	Segments   []Segment
	Sections   []Section
}

// File is an opened Mach-O file: one image when thin, one per slice when fat.
type File struct {
	Path   string
	Images []*Image
	Fat    bool
}

// Open opens a Mach-O file, thin or fat.
func Open(path string) (*File, error) { return nil, fmt.Errorf("image: unimplemented") }

// NewFile reads a Mach-O file, thin or fat, from r.
func NewFile(r io.ReaderAt, name string) (*File, error) {
	return nil, fmt.Errorf("image: unimplemented")
}

// Close releases the file.
func (f *File) Close() error { return nil }

// ByArch returns the slice for the named architecture. The error lists the
// slices present.
func (f *File) ByArch(arch string) (*Image, error) { return nil, fmt.Errorf("image: unimplemented") }

// ByUUID returns the slice with the UUID. The error lists the slices present.
func (f *File) ByUUID(u UUID) (*Image, error) { return nil, fmt.Errorf("image: unimplemented") }

// Memory reads target memory; walker.Memory satisfies it.
type Memory interface {
	ReadMemory(p []byte, addr uint64) (int, error)
}

// FromMemory parses the image whose mach header lies at headerAddr in
// captured memory. The symbol and string tables are found through
// __LINKEDIT: base = slide + linkedit.vmaddr − linkedit.fileoff.
func FromMemory(mem Memory, headerAddr uint64, name string) (*Image, error) {
	return nil, fmt.Errorf("image: unimplemented")
}

// TextSegment returns the segment that maps the start of the file (__TEXT),
// whose vmaddr the load address corresponds to.
func (im *Image) TextSegment() (Segment, bool) { return Segment{}, false }

// Slide returns loadAddress − the __TEXT segment's vmaddr.
func (im *Image) Slide(loadAddress uint64) uint64 { return 0 }

// SectionFor returns the section holding the unslid address.
func (im *Image) SectionFor(addr uint64) (Section, bool) { return Section{}, false }

// Symtab returns the raw LC_SYMTAB data; ok is false when there is none.
func (im *Image) Symtab() (raw RawSymtab, ok bool, err error) {
	return RawSymtab{}, false, fmt.Errorf("image: unimplemented")
}

// FunctionStarts returns the unslid function start addresses from
// LC_FUNCTION_STARTS, sorted; nil when the image has none.
func (im *Image) FunctionStarts() ([]uint64, error) { return nil, fmt.Errorf("image: unimplemented") }

// Exports returns the export trie's entries (LC_DYLD_INFO(_ONLY) or
// LC_DYLD_EXPORTS_TRIE) with addresses; re-exports and absolute symbols are
// left out.
func (im *Image) Exports() ([]Export, error) { return nil, fmt.Errorf("image: unimplemented") }

// DWARFSections returns the contents of the __DWARF segment's sections (or
// __debug_* sections in objects), keyed by name without the leading
// underscores ("debug_info", "debug_line", ...). Empty when the image has no
// DWARF.
func (im *Image) DWARFSections() (map[string][]byte, error) {
	return nil, fmt.Errorf("image: unimplemented")
}

// ReadSegment returns a segment's file bytes (FileSize of them).
func (im *Image) ReadSegment(seg Segment) ([]byte, error) {
	return nil, fmt.Errorf("image: unimplemented")
}
