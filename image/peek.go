package image

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/stackimage/stackimage/uuid"
)

// This file is the cheap end of the package: telling a Mach-O file by its
// first bytes, reading a mach header, and identifying an image by its
// header and LC_UUID, without go-macho, sections or symbols. Directory
// scans, zip indexing, format sniffing and the emulator's loader use it,
// so that no other package decodes a mach header itself.

// Kind is what a file's first bytes say it is.
type Kind uint8

const (
	KindUnknown Kind = iota // not Mach-O
	KindThin                // a mach header: MH_MAGIC or MH_MAGIC_64, either byte order
	KindFat                 // a fat header: FAT_MAGIC or FAT_MAGIC_64
)

// String names the kind.
func (k Kind) String() string {
	switch k {
	case KindUnknown:
		return "not Mach-O"
	case KindThin:
		return "thin Mach-O"
	case KindFat:
		return "fat Mach-O"
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// Sniff tells a Mach-O file by its magic, the first four bytes of head;
// fewer than four bytes are KindUnknown. It reads nothing else, so it is
// cheap enough to run on every file of a symbols tree. A fat magic is also
// a Java class file's: Open tells them apart.
func Sniff(head []byte) Kind {
	if len(head) < 4 {
		return KindUnknown
	}
	switch binary.BigEndian.Uint32(head) {
	case mhMagic, mhMagic64:
		return KindThin
	case fatMagic, fatMagic6:
		return KindFat
	}
	switch binary.LittleEndian.Uint32(head) {
	case mhMagic, mhMagic64:
		return KindThin
	}
	return KindUnknown
}

// HeaderSize returns the size of the mach header head starts with, from its
// magic alone: 28 bytes (MH_MAGIC), 32 (MH_MAGIC_64), 0 when head does not
// start with a mach header. A reader that streams uses it to know how much
// to read before ParseHeader.
func HeaderSize(head []byte) int {
	if Sniff(head) != KindThin {
		return 0
	}
	if head[0] == 0xcf || head[3] == 0xcf {
		return machHeader64Size
	}
	return machHeaderSize
}

// ParseHeader decodes the mach header at the start of b. b must hold its
// fields, the first 28 bytes; the reserved word that ends a 64-bit header
// is not needed. The error is a *FormatError.
func ParseHeader(b []byte) (*Header, error) {
	if len(b) < machHeaderSize {
		return nil, &FormatError{0, fmt.Sprintf("cannot read mach header: %d bytes, want %d", len(b), machHeaderSize), nil}
	}
	h := &Header{Size: machHeaderSize}
	switch {
	case binary.LittleEndian.Uint32(b) == mhMagic:
		h.ByteOrder = binary.LittleEndian
	case binary.LittleEndian.Uint32(b) == mhMagic64:
		h.ByteOrder, h.Is64 = binary.LittleEndian, true
	case binary.BigEndian.Uint32(b) == mhMagic:
		h.ByteOrder = binary.BigEndian
	case binary.BigEndian.Uint32(b) == mhMagic64:
		h.ByteOrder, h.Is64 = binary.BigEndian, true
	default:
		return nil, &FormatError{0, "not a Mach-O file: bad magic", fmt.Sprintf("%#08x", binary.BigEndian.Uint32(b))}
	}
	if h.Is64 {
		h.Size = machHeader64Size
	}
	bo := h.ByteOrder
	h.CPUType, h.CPUSubtype = bo.Uint32(b[4:]), bo.Uint32(b[8:])
	h.Type = FileType(bo.Uint32(b[12:]))
	h.NCmds, h.SizeOfCmds, h.Flags = bo.Uint32(b[16:]), bo.Uint32(b[20:]), bo.Uint32(b[24:])
	return h, nil
}

// ReadHeader reads the mach header at offset 0 of r, all of it, and
// nothing of the load commands. The error is a *FormatError.
func ReadHeader(r io.ReaderAt) (*Header, error) {
	var hb [machHeader64Size]byte
	if err := readFull(r, hb[:machHeaderSize], 0); err != nil {
		return nil, &FormatError{0, fmt.Sprintf("cannot read mach header: %v", err), nil}
	}
	h, err := ParseHeader(hb[:machHeaderSize])
	if err != nil {
		return nil, err
	}
	if h.Is64 {
		if err := readFull(r, hb[machHeaderSize:], machHeaderSize); err != nil {
			return nil, &FormatError{machHeaderSize, fmt.Sprintf("cannot read mach header: %v", err), nil}
		}
	}
	return h, nil
}

// Peek identifies the thin image at offset 0 of r cheaply: its mach header
// and its LC_UUID (zero when it has none), read with ReadLoadCommands and
// bounded as it is; size is r's size, or -1 when unknown. A UUID found
// before damage in the load commands comes back with the error.
func Peek(r io.ReaderAt, size int64) (*Header, uuid.UUID, error) {
	h, cmds, err := ReadLoadCommands(r, size)
	for _, c := range cmds {
		if c.Cmd == LoadCmdUUID {
			u, uerr := c.UUID()
			if uerr != nil && err == nil {
				err = uerr
			}
			return h, u, err
		}
	}
	return h, uuid.UUID{}, err
}

// FatArch is one fat_arch (or fat_arch_64) entry of a fat file: a slice's
// architecture and where it lies in the file.
type FatArch struct {
	Index               int // position in the fat_arch table, from 0
	CPUType, CPUSubtype uint32
	Offset, Size        uint64
}

// ArchName names the slice's architecture as Image.ArchName does.
func (a FatArch) ArchName() string { return archName(a.CPUType, a.CPUSubtype) }

// ReadFatArchs reads the fat header at offset 0 of r and its fat_arch
// table; size is r's size, or -1 when unknown. It returns no slices and no
// error when r does not start with a fat magic. A slice that cannot lie in
// the file (past its end) is left out and reported in bad; err is for a
// table that cannot be read at all (more than 64 slices, or cut short).
func ReadFatArchs(r io.ReaderAt, size int64) (slices []FatArch, bad []error, err error) {
	return readFat(source{r: r, size: size})
}

// LoadCmd is a load command's cmd field, as <mach-o/loader.h> numbers them.
// The constants are those this project reads; others are just numbers.
type LoadCmd uint32

const (
	LoadCmdSegment           LoadCmd = lcSegment         // LC_SEGMENT
	LoadCmdSymtab            LoadCmd = lcSymtab          // LC_SYMTAB
	LoadCmdThread            LoadCmd = 0x4               // LC_THREAD
	LoadCmdUnixThread        LoadCmd = 0x5               // LC_UNIXTHREAD
	LoadCmdDysymtab          LoadCmd = 0xb               // LC_DYSYMTAB
	LoadCmdLoadDylib         LoadCmd = 0xc               // LC_LOAD_DYLIB
	LoadCmdIDDylib           LoadCmd = lcIDDylib         // LC_ID_DYLIB
	LoadCmdLoadDylinker      LoadCmd = 0xe               // LC_LOAD_DYLINKER
	LoadCmdIDDylinker        LoadCmd = 0xf               // LC_ID_DYLINKER
	LoadCmdSegment64         LoadCmd = lcSegment64       // LC_SEGMENT_64
	LoadCmdUUID              LoadCmd = lcUUID            // LC_UUID
	LoadCmdCodeSignature     LoadCmd = 0x1d              // LC_CODE_SIGNATURE
	LoadCmdDyldInfo          LoadCmd = lcDyldInfo        // LC_DYLD_INFO
	LoadCmdDyldInfoOnly      LoadCmd = lcDyldInfoOnly    // LC_DYLD_INFO_ONLY
	LoadCmdFunctionStarts    LoadCmd = lcFunctionStarts  // LC_FUNCTION_STARTS
	LoadCmdMain              LoadCmd = 0x80000028        // LC_MAIN
	LoadCmdNote              LoadCmd = 0x31              // LC_NOTE
	LoadCmdBuildVersion      LoadCmd = 0x32              // LC_BUILD_VERSION
	LoadCmdDyldExportsTrie   LoadCmd = lcDyldExportsTrie // LC_DYLD_EXPORTS_TRIE
	LoadCmdDyldChainedFixups LoadCmd = 0x80000034        // LC_DYLD_CHAINED_FIXUPS
)

var loadCmdNames = map[LoadCmd]string{
	LoadCmdSegment: "LC_SEGMENT", LoadCmdSymtab: "LC_SYMTAB", LoadCmdThread: "LC_THREAD",
	LoadCmdUnixThread: "LC_UNIXTHREAD", LoadCmdDysymtab: "LC_DYSYMTAB", LoadCmdLoadDylib: "LC_LOAD_DYLIB",
	LoadCmdIDDylib: "LC_ID_DYLIB", LoadCmdLoadDylinker: "LC_LOAD_DYLINKER", LoadCmdIDDylinker: "LC_ID_DYLINKER",
	LoadCmdSegment64: "LC_SEGMENT_64", LoadCmdUUID: "LC_UUID", LoadCmdCodeSignature: "LC_CODE_SIGNATURE",
	LoadCmdDyldInfo: "LC_DYLD_INFO", LoadCmdDyldInfoOnly: "LC_DYLD_INFO_ONLY",
	LoadCmdFunctionStarts: "LC_FUNCTION_STARTS", LoadCmdMain: "LC_MAIN", LoadCmdNote: "LC_NOTE",
	LoadCmdBuildVersion: "LC_BUILD_VERSION", LoadCmdDyldExportsTrie: "LC_DYLD_EXPORTS_TRIE",
	LoadCmdDyldChainedFixups: "LC_DYLD_CHAINED_FIXUPS",
}

// String returns the name <mach-o/loader.h> gives the command ("LC_UUID"),
// or its number in hex for one this package has no name for.
func (c LoadCmd) String() string {
	if n, ok := loadCmdNames[c]; ok {
		return n
	}
	return fmt.Sprintf("LoadCmd(%#x)", uint32(c))
}

// UUID decodes an LC_UUID command.
func (c LoadCommand) UUID() (uuid.UUID, error) {
	if c.Cmd != LoadCmdUUID {
		return uuid.UUID{}, c.notA(LoadCmdUUID)
	}
	if len(c.Data) < 24 {
		return uuid.UUID{}, c.tooSmall(24)
	}
	return uuid.UUID(c.Data[8:24]), nil
}

// DyldInfo is LC_DYLD_INFO(_ONLY): where dyld's rebase, bind and export
// tables lie in __LINKEDIT (file offsets and sizes).
type DyldInfo struct {
	RebaseOff, RebaseSize     uint32
	BindOff, BindSize         uint32
	WeakBindOff, WeakBindSize uint32
	LazyBindOff, LazyBindSize uint32
	ExportOff, ExportSize     uint32
}

// DyldInfo decodes an LC_DYLD_INFO or LC_DYLD_INFO_ONLY command.
func (c LoadCommand) DyldInfo(bo binary.ByteOrder) (DyldInfo, error) {
	if c.Cmd != LoadCmdDyldInfo && c.Cmd != LoadCmdDyldInfoOnly {
		return DyldInfo{}, c.notA(LoadCmdDyldInfo)
	}
	if len(c.Data) < dyldInfoCmdSize {
		return DyldInfo{}, c.tooSmall(dyldInfoCmdSize)
	}
	w := func(i int) uint32 { return bo.Uint32(c.Data[8+4*i:]) }
	return DyldInfo{w(0), w(1), w(2), w(3), w(4), w(5), w(6), w(7), w(8), w(9)}, nil
}

// EntryPoint decodes an LC_MAIN command: the entry point's file offset
// (entryoff) and the initial stack size (0 for the default).
func (c LoadCommand) EntryPoint(bo binary.ByteOrder) (entryOff, stackSize uint64, err error) {
	if c.Cmd != LoadCmdMain {
		return 0, 0, c.notA(LoadCmdMain)
	}
	if len(c.Data) < 24 {
		return 0, 0, c.tooSmall(24)
	}
	return bo.Uint64(c.Data[8:]), bo.Uint64(c.Data[16:]), nil
}

func (c LoadCommand) notA(want LoadCmd) error {
	return &FormatError{c.Offset, fmt.Sprintf("load command %d is %v, not %v", c.Index, c.Cmd, want), nil}
}

func (c LoadCommand) tooSmall(n int) error {
	return &FormatError{c.Offset + 4, fmt.Sprintf("%v (load command %d) cmdsize %d is smaller than %d", c.Cmd, c.Index, len(c.Data), n), nil}
}

// Header returns the image's mach header.
func (im *Image) Header() Header {
	h := im.hdr
	size := int64(machHeaderSize)
	if h.is64 {
		size = machHeader64Size
	}
	return Header{
		ByteOrder: h.order, Is64: h.is64,
		CPUType: h.cpuType, CPUSubtype: h.cpuSubtype, Type: FileType(h.fileType),
		NCmds: h.ncmds, SizeOfCmds: h.sizeofcmds, Flags: h.flags, Size: size,
	}
}

// LoadCommands returns the image's load commands as the file holds them,
// for the commands this package does not interpret (LC_MAIN, LC_DYLD_INFO,
// ...). They were read and checked when the image was opened; the slices
// are the caller's.
func (im *Image) LoadCommands() []LoadCommand {
	h := im.hdr
	cmds := bytes.Clone(h.cmds)
	var list []LoadCommand
	off := 0
	for i := uint32(0); i < h.ncmds && len(cmds)-off >= 8; i++ {
		size := int(h.order.Uint32(cmds[off+4:]))
		list = append(list, LoadCommand{Index: int(i), Offset: h.cmdsOff + int64(off), Cmd: LoadCmd(h.order.Uint32(cmds[off:])), Data: cmds[off : off+size : off+size]})
		off += size
	}
	return list
}

// Append appends the mach header h describes to b, as a writer of Mach-O
// files (core files) lays it out: the magic for Is64 in ByteOrder, then the
// fields, and for a 64-bit header the reserved word. Size is not read.
func (h *Header) Append(b []byte) []byte {
	magic := uint32(mhMagic)
	if h.Is64 {
		magic = mhMagic64
	}
	words := []uint32{magic, h.CPUType, h.CPUSubtype, uint32(h.Type), h.NCmds, h.SizeOfCmds, h.Flags}
	if h.Is64 {
		words = append(words, 0) // reserved
	}
	var w [4]byte
	for _, v := range words {
		h.ByteOrder.PutUint32(w[:], v)
		b = append(b, w[:]...)
	}
	return b
}
