package image

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// FormatError reports malformed Mach-O data: what is wrong, the offending
// value when there is one, and where. Off is a byte offset from the start of
// the image (the slice, for a fat file; the mach header, for an image in
// memory).
type FormatError struct {
	Off int64
	Msg string
	Val any
}

// Error says what is wrong, with the value, and at which offset.
func (e *FormatError) Error() string {
	msg := e.Msg
	if e.Val != nil {
		msg += fmt.Sprintf(" '%v'", e.Val)
	}
	return msg + fmt.Sprintf(" at offset %#x", e.Off)
}

// Mach-O constants, as <mach-o/loader.h> and <mach-o/fat.h> define them.
const (
	mhMagic   = 0xfeedface // MH_MAGIC
	mhMagic64 = 0xfeedfacf // MH_MAGIC_64
	fatMagic  = 0xcafebabe // FAT_MAGIC
	fatMagic6 = 0xcafebabf // FAT_MAGIC_64

	lcSegment          = 0x1        // LC_SEGMENT
	lcSymtab           = 0x2        // LC_SYMTAB
	lcIDDylib          = 0xd        // LC_ID_DYLIB
	lcSegment64        = 0x19       // LC_SEGMENT_64
	lcUUID             = 0x1b       // LC_UUID
	lcDyldInfo         = 0x22       // LC_DYLD_INFO
	lcDyldInfoOnly     = 0x80000022 // LC_DYLD_INFO_ONLY
	lcFunctionStarts   = 0x26       // LC_FUNCTION_STARTS
	lcDyldExportsTrie  = 0x80000033 // LC_DYLD_EXPORTS_TRIE
	vmProtExecute      = 0x4        // VM_PROT_EXECUTE
	machHeaderSize     = 28         // sizeof(struct mach_header)
	machHeader64Size   = 32         // sizeof(struct mach_header_64)
	segmentCmdSize     = 56         // sizeof(struct segment_command)
	segmentCmd64Size   = 72         // sizeof(struct segment_command_64)
	symtabCmdSize      = 24         // sizeof(struct symtab_command)
	linkeditCmdSize    = 16         // sizeof(struct linkedit_data_command)
	dyldInfoCmdSize    = 48         // sizeof(struct dyld_info_command)
	nlistSize          = 12         // sizeof(struct nlist)
	nlist64Size        = 16         // sizeof(struct nlist_64)
	maxSizeofcmds      = 16 << 20   // far above any real image; bounds what a header can make us read
	directReadLimit    = 1 << 20    // reads up to this size allocate at once; larger ones grow as data arrives, unless the data's size is known
	maxTotalReadLength = 1 << 40    // no single table of a real image comes near this
)

// header is what the mach header and our own walk over the load commands
// give: the commands go-macho is not asked to parse (LC_SYMTAB and the
// __LINKEDIT tables), and the segments FromMemory needs to map file offsets to
// addresses before go-macho can read anything.
type header struct {
	order                         binary.ByteOrder
	is64                          bool
	cpuType, cpuSubtype, fileType uint32
	ncmds, sizeofcmds, flags      uint32
	segs                          []rawSegment
	symtab                        *symtabCmd
	funcStarts                    *linkeditRef
	exportTrie                    *linkeditRef // LC_DYLD_EXPORTS_TRIE
	dyldInfoExports               *linkeditRef // LC_DYLD_INFO(_ONLY)'s export_off/export_size
	// cmds are the load commands as read (sizeofcmds bytes, walked
	// without error), cmdsOff their offset from the mach header: what
	// Image.LoadCommands splits.
	cmds    []byte
	cmdsOff int64
}

// exports returns where the export trie is: LC_DYLD_EXPORTS_TRIE when
// present (it supersedes LC_DYLD_INFO's export part), else LC_DYLD_INFO's.
func (h *header) exports() *linkeditRef {
	if h.exportTrie != nil {
		return h.exportTrie
	}
	return h.dyldInfoExports
}

// rawSegment is the part of a segment command FromMemory's mapping needs.
type rawSegment struct {
	name                      string
	addr, size, off, filesize uint64
}

// symtabCmd is LC_SYMTAB's payload and where the command sits.
type symtabCmd struct {
	symoff, nsyms, stroff, strsize uint32
	cmdOff                         int64
}

// linkeditRef points at a table in __LINKEDIT: what names it for errors, the
// file offset and size, and where the command that gave them sits.
type linkeditRef struct {
	what      string
	off, size uint32
	cmdOff    int64
}

// source reads an image's bytes by file offset. size bounds every read when
// the extent is known (a file or a fat slice); it is -1 for an image in
// memory, whose reader fails outside the mapped segments instead.
type source struct {
	r    io.ReaderAt
	size int64
	// mapped is set for an image in memory: every read must lie within one
	// segment, which bounds it before anything is allocated.
	mapped *mappedReader
}

// read returns n bytes at off. what and fieldOff name the field that gave the
// range, for the error. No allocation is larger than the data actually
// present: the range is checked against the known size, and when the size is
// unknown large reads grow as the data arrives.
func (s source) read(off, n uint64, what string, fieldOff int64) ([]byte, error) {
	end := off + n
	if end < off || end > maxTotalReadLength {
		return nil, &FormatError{fieldOff, fmt.Sprintf("%s range [%#x, +%#x) is out of bounds", what, off, n), nil}
	}
	if s.size >= 0 && end > uint64(s.size) {
		return nil, &FormatError{fieldOff, fmt.Sprintf("%s range [%#x, %#x) extends past the end of the data (%#x bytes)", what, off, end, s.size), nil}
	}
	if s.mapped != nil && n > 0 && !s.mapped.contains(off, n) {
		return nil, &FormatError{fieldOff, fmt.Sprintf("%s range [%#x, %#x) is not inside one segment mapped in memory", what, off, end), nil}
	}
	if n <= directReadLimit || s.size >= 0 {
		// The range was checked against the data's known size (or is
		// small): one allocation of exactly n, not a slice grown
		// chunk by chunk, which copied and doubled it.
		buf := make([]byte, n)
		if err := readFull(s.r, buf, off); err != nil {
			return nil, &FormatError{fieldOff, fmt.Sprintf("cannot read %s [%#x, %#x): %v", what, off, end, err), nil}
		}
		return buf, nil
	}
	var buf []byte
	for done := uint64(0); done < n; {
		chunk := min(n-done, directReadLimit)
		buf = append(buf, make([]byte, chunk)...)
		if err := readFull(s.r, buf[done:done+chunk], off+done); err != nil {
			return nil, &FormatError{fieldOff, fmt.Sprintf("cannot read %s [%#x, %#x): %v", what, off, end, err), nil}
		}
		done += chunk
	}
	return buf, nil
}

// readFull fills p from r at off; io.ReaderAt may return io.EOF with a full
// read at the end of the data, which is success.
func readFull(r io.ReaderAt, p []byte, off uint64) error {
	if r == nil {
		return errors.New("no data (nil reader)")
	}
	if off > 1<<62 {
		return errors.New("offset out of range")
	}
	n, err := r.ReadAt(p, int64(off))
	if n == len(p) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// readHeader reads the mach header and walks the load commands.
func readHeader(src source) (*header, error) {
	hd, err := ReadHeader(src.r)
	if err != nil {
		return nil, err
	}
	h := &header{
		order: hd.ByteOrder, is64: hd.Is64,
		cpuType: hd.CPUType, cpuSubtype: hd.CPUSubtype, fileType: uint32(hd.Type),
		ncmds: hd.NCmds, sizeofcmds: hd.SizeOfCmds, flags: hd.Flags,
	}
	hsize := hd.Size
	if h.sizeofcmds > maxSizeofcmds {
		return nil, &FormatError{20, "sizeofcmds too large", h.sizeofcmds}
	}
	// Every command is at least 8 bytes: a larger count cannot be honest.
	if uint64(h.ncmds)*8 > uint64(h.sizeofcmds) {
		return nil, &FormatError{16, fmt.Sprintf("ncmds %d does not fit in sizeofcmds %d", h.ncmds, h.sizeofcmds), h.ncmds}
	}
	cmds, err := src.read(uint64(hsize), uint64(h.sizeofcmds), "load commands", 20)
	if err != nil {
		return nil, err
	}
	if err := h.walk(cmds, hsize); err != nil {
		return nil, err
	}
	h.cmds, h.cmdsOff = cmds, hsize
	return h, nil
}

// walk decodes the load commands this package reads itself. base is the file
// offset of cmds, for errors.
func (h *header) walk(cmds []byte, base int64) error {
	bo := h.order
	off := 0
	for i := uint32(0); i < h.ncmds; i++ {
		at := base + int64(off)
		if len(cmds)-off < 8 {
			return &FormatError{at, fmt.Sprintf("load command %d runs past sizeofcmds", i), nil}
		}
		cmd, size := bo.Uint32(cmds[off:]), bo.Uint32(cmds[off+4:])
		if size < 8 || uint64(size) > uint64(len(cmds)-off) {
			return &FormatError{at + 4, fmt.Sprintf("load command %d (%#x) has bad cmdsize", i, cmd), size}
		}
		c := cmds[off : off+int(size)]
		off += int(size)
		need := func(n int, name string) error {
			if len(c) < n {
				return &FormatError{at + 4, fmt.Sprintf("%s cmdsize %d is smaller than %d", name, len(c), n), nil}
			}
			return nil
		}
		switch cmd {
		case lcSegment:
			if err := need(segmentCmdSize, "LC_SEGMENT"); err != nil {
				return err
			}
			h.segs = append(h.segs, rawSegment{
				name: cstring(c[8:24]),
				addr: uint64(bo.Uint32(c[24:])), size: uint64(bo.Uint32(c[28:])),
				off: uint64(bo.Uint32(c[32:])), filesize: uint64(bo.Uint32(c[36:])),
			})
		case lcSegment64:
			if err := need(segmentCmd64Size, "LC_SEGMENT_64"); err != nil {
				return err
			}
			h.segs = append(h.segs, rawSegment{
				name: cstring(c[8:24]),
				addr: bo.Uint64(c[24:]), size: bo.Uint64(c[32:]),
				off: bo.Uint64(c[40:]), filesize: bo.Uint64(c[48:]),
			})
		case lcSymtab:
			if err := need(symtabCmdSize, "LC_SYMTAB"); err != nil {
				return err
			}
			h.symtab = &symtabCmd{
				symoff: bo.Uint32(c[8:]), nsyms: bo.Uint32(c[12:]),
				stroff: bo.Uint32(c[16:]), strsize: bo.Uint32(c[20:]),
				cmdOff: at,
			}
		case lcFunctionStarts:
			if err := need(linkeditCmdSize, "LC_FUNCTION_STARTS"); err != nil {
				return err
			}
			h.funcStarts = &linkeditRef{"LC_FUNCTION_STARTS data", bo.Uint32(c[8:]), bo.Uint32(c[12:]), at}
		case lcDyldExportsTrie:
			if err := need(linkeditCmdSize, "LC_DYLD_EXPORTS_TRIE"); err != nil {
				return err
			}
			h.exportTrie = &linkeditRef{"LC_DYLD_EXPORTS_TRIE data", bo.Uint32(c[8:]), bo.Uint32(c[12:]), at}
		case lcDyldInfo, lcDyldInfoOnly:
			if err := need(dyldInfoCmdSize, "LC_DYLD_INFO"); err != nil {
				return err
			}
			h.dyldInfoExports = &linkeditRef{"LC_DYLD_INFO export trie", bo.Uint32(c[40:]), bo.Uint32(c[44:]), at}
		}
	}
	return nil
}

// cstring returns b up to its first NUL.
func cstring(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}
