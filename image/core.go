package image

import (
	"encoding/binary"
	"fmt"
	"io"
)

// Header is a mach header as the file holds it, for readers of load
// commands this package does not interpret itself (core files, loaders).
type Header struct {
	ByteOrder           binary.ByteOrder
	Is64                bool
	CPUType, CPUSubtype uint32
	Type                FileType
	NCmds, SizeOfCmds   uint32
	Flags               uint32
	// Size is the mach header's size: 28 bytes, or 32 with MH_MAGIC_64.
	Size int64
}

// LoadCommand is one load command as the file holds it.
type LoadCommand struct {
	Index  int     // position among the load commands, from 0
	Offset int64   // byte offset of the command from the mach header
	Cmd    LoadCmd // LoadCmdSegment64, LoadCmdThread, ...
	Data   []byte  // the whole command, cmdsize bytes, header included
}

// ReadLoadCommands reads the mach header at offset 0 of r and splits the
// load commands that follow it, without interpreting them. size is r's size,
// or -1 when unknown.
//
// It keeps what it can: when sizeofcmds runs past the end of the data, the
// commands wholly present are returned; when a command's cmdsize is bad, the
// commands before it are. Either way the error is a *FormatError naming the
// command and its offset. Nothing is allocated beyond the bytes present:
// sizeofcmds is bounded by the data and by 16 MiB, and every command takes
// at least 8 bytes of it, which bounds the loop whatever ncmds says.
func ReadLoadCommands(r io.ReaderAt, size int64) (*Header, []LoadCommand, error) {
	src := source{r: r, size: size}
	h, err := ReadHeader(r)
	if err != nil {
		return nil, nil, err
	}
	// What the header declares, clipped to what is there; the walk reports
	// the first command the clipping cut.
	avail := uint64(h.SizeOfCmds)
	var clipErr error
	if avail > maxSizeofcmds {
		avail = maxSizeofcmds
		clipErr = &FormatError{20, fmt.Sprintf("sizeofcmds too large: reading only the first %d bytes", avail), h.SizeOfCmds}
	}
	if size >= 0 && uint64(h.Size)+avail > uint64(size) {
		avail = uint64(max(size-h.Size, 0))
		clipErr = &FormatError{20, fmt.Sprintf("sizeofcmds runs past the end of the data (%#x bytes)", size), h.SizeOfCmds}
	}
	var cmds []byte
	if avail > 0 {
		var err error
		if cmds, err = src.read(uint64(h.Size), avail, "load commands", 20); err != nil {
			return h, nil, err
		}
	}
	var list []LoadCommand
	off := 0
	for i := uint32(0); i < h.NCmds; i++ {
		at := h.Size + int64(off)
		if len(cmds)-off < 8 {
			if clipErr != nil {
				return h, list, fmt.Errorf("load command %d at offset %#x is not in the data: %w", i, at, clipErr)
			}
			return h, list, &FormatError{at, fmt.Sprintf("load command %d runs past sizeofcmds", i), nil}
		}
		cmd, cmdsize := LoadCmd(h.ByteOrder.Uint32(cmds[off:])), h.ByteOrder.Uint32(cmds[off+4:])
		if cmdsize < 8 || uint64(cmdsize) > uint64(len(cmds)-off) {
			if clipErr != nil && uint64(cmdsize) >= 8 {
				return h, list, fmt.Errorf("load command %d (%#x) at offset %#x is cut short: %w", i, uint32(cmd), at, clipErr)
			}
			return h, list, &FormatError{at + 4, fmt.Sprintf("load command %d (%#x) has bad cmdsize", i, uint32(cmd)), cmdsize}
		}
		list = append(list, LoadCommand{Index: int(i), Offset: at, Cmd: cmd, Data: cmds[off : off+int(cmdsize)]})
		off += int(cmdsize)
	}
	return h, list, nil
}

// Segment decodes an LC_SEGMENT or LC_SEGMENT_64 command (sections are not
// read). The error names the command and its offset.
func (c LoadCommand) Segment(bo binary.ByteOrder) (Segment, error) {
	d := c.Data
	switch c.Cmd {
	case lcSegment:
		if len(d) < segmentCmdSize {
			return Segment{}, &FormatError{c.Offset + 4, fmt.Sprintf("LC_SEGMENT (load command %d) cmdsize %d is smaller than %d", c.Index, len(d), segmentCmdSize), nil}
		}
		return Segment{
			Name: cstring(d[8:24]),
			Addr: uint64(bo.Uint32(d[24:])), Size: uint64(bo.Uint32(d[28:])),
			Offset: uint64(bo.Uint32(d[32:])), FileSize: uint64(bo.Uint32(d[36:])),
			MaxProt: bo.Uint32(d[40:]), Prot: bo.Uint32(d[44:]),
		}, nil
	case lcSegment64:
		if len(d) < segmentCmd64Size {
			return Segment{}, &FormatError{c.Offset + 4, fmt.Sprintf("LC_SEGMENT_64 (load command %d) cmdsize %d is smaller than %d", c.Index, len(d), segmentCmd64Size), nil}
		}
		return Segment{
			Name: cstring(d[8:24]),
			Addr: bo.Uint64(d[24:]), Size: bo.Uint64(d[32:]),
			Offset: bo.Uint64(d[40:]), FileSize: bo.Uint64(d[48:]),
			MaxProt: bo.Uint32(d[56:]), Prot: bo.Uint32(d[60:]),
		}, nil
	}
	return Segment{}, &FormatError{c.Offset, fmt.Sprintf("load command %d is not a segment command", c.Index), fmt.Sprintf("%#x", uint32(c.Cmd))}
}

// MemoryReaderAt presents memory as an io.ReaderAt whose offset 0 is base,
// for reading a mach header and its load commands from captured memory with
// ReadLoadCommands.
func MemoryReaderAt(mem Memory, base uint64) io.ReaderAt { return &memAt{mem, base} }
