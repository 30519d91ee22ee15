// Package machocore reads and writes Mach-O core files (MH_CORE): what lldb's
// `process save-core`, the kernel and other dumpers write. A core is a mach
// header and load commands: LC_SEGMENT(_64) for each captured memory region,
// LC_THREAD for each thread's register states, and LC_NOTE for metadata
// such as the loaded images ("all image infos", "load binary", "main bin
// spec") and the number of addressing bits ("addrable bits").
//
// Open reads only the load commands and the notes: memory is read lazily,
// through Memory, so a core of many gigabytes opens in the time it takes to
// read its header. What cannot be read is reported in Core.Warnings and the
// rest is kept.
package machocore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/uuid"
)

// The mach header and load commands are read (and written) by package
// image; this package interprets the commands a core holds.
const (
	noteCmdSize   = 40         // sizeof(struct note_command)
	uint64Unknown = ^uint64(0) // UINT64_MAX: the notes' "not known"
)

// Core is a parsed Mach-O core file. Its Memory reads the file lazily: keep
// the io.ReaderAt given to Open usable while the Core is used. A Core is not
// modified after Open returns, and is safe for concurrent use when the
// io.ReaderAt is.
type Core struct {
	// Arch is the architecture the header's cputype and cpusubtype name;
	// nil when archregs does not know it (threads are then not decoded).
	Arch                *archregs.Arch
	CPUType, CPUSubtype uint32
	Is64                bool

	Threads []Thread
	// Images are the loaded images: from the "all image infos" note, else
	// the "load binary" and "main bin spec" notes, else found by their mach
	// headers in memory. Sorted by load address.
	Images []Image
	// Regions are the segment commands, sorted by address.
	Regions []Region
	Notes   []Note

	// AddressingBits is the number of bits of a user-space address, from
	// the "addrable bits" note; 0 when the core has none.
	AddressingBits int
	// HighAddressingBits is the same for high (kernel) addresses, from a
	// version 4 note; 0 when not given.
	HighAddressingBits int
	// PACMask has the bits of a pointer above AddressingBits set: the bits
	// pointer authentication may use. 0 when AddressingBits is unknown.
	PACMask uint64

	// Warnings lists what could not be read, each an *Error naming the load
	// command. Everything else was kept.
	Warnings []error

	// Memory reads the captured memory; it satisfies walker.Memory.
	Memory *Memory
}

// Region is one LC_SEGMENT or LC_SEGMENT_64: memory at [Addr, Addr+Size),
// whose first FileSize bytes the file holds at FileOffset. The rest reads
// as zero.
type Region struct {
	Command    int    // index of the load command
	Name       string // segname, often empty in a core
	Addr, Size uint64 // vmaddr, vmsize
	FileOffset uint64 // fileoff
	FileSize   uint64 // filesize, as declared
	// Present is how many of FileSize bytes the file holds, also clipped
	// to Size: less than FileSize for a truncated core.
	Present       uint64
	MaxProt, Prot uint32
}

// End returns the address just past the region, clipped to the top of the
// address space.
func (r Region) End() uint64 {
	if r.Addr+r.Size < r.Addr {
		return ^uint64(0)
	}
	return r.Addr + r.Size
}

// Thread is one LC_THREAD (or LC_UNIXTHREAD).
type Thread struct {
	Index   int // position among the threads, from 0
	Command int // index of the load command
	// Registers are the general registers, from the architecture's thread
	// state flavor; nil when the command has none that decodes.
	Registers *archregs.Registers
	// Exception is the exception state, when the command has one.
	Exception *ExceptionState
	// StackLow and StackHigh bound the region that holds SP, [low, high);
	// zero when no region does.
	StackLow, StackHigh uint64
	// States lists every {flavor, count} the command holds, decoded or not.
	States []State
}

// State is one thread state of an LC_THREAD command.
type State struct {
	Flavor uint32
	Count  uint32 // in 32-bit words
	Offset int64  // file offset of the state data
	// Kind says what was done with it: "general", "exception" or
	// "skipped" (floating-point, debug and other states are not decoded).
	Kind string
}

// ExceptionState is the fault information of an exception state flavor:
// x86_EXCEPTION_STATE64 and x86_EXCEPTION_STATE32 (faultvaddr, trapno,
// err), ARM_EXCEPTION_STATE64 (far, esr, exception) and ARM_EXCEPTION_STATE
// (far, fsr, exception).
type ExceptionState struct {
	Flavor       uint32
	FaultAddress uint64 // faultvaddr or far
	// Syndrome is arm64's esr or armv7's fsr; x86's err.
	Syndrome uint32
	// Exception is ARM's exception field; x86's trapno.
	Exception uint32
}

// Image is one loaded image.
type Image struct {
	Name        string    // path, or "" when not known
	UUID        uuid.UUID // zero when not known
	LoadAddress uint64    // address of the mach header
	// Size is the extent of the image's segments from LoadAddress, known
	// when its mach header could be read from the core's memory; else 0.
	Size uint64
	// Source says where the image came from: "all image infos", "load
	// binary", "main bin spec" or "header scan".
	Source string
	// Segments are the segment addresses an "all image infos" entry gives.
	Segments []ImageSegment
}

// ImageSegment is one segment's name and (slid) address, as an "all image
// infos" entry lists them.
type ImageSegment struct {
	Name string
	Addr uint64
}

// Note is one LC_NOTE.
type Note struct {
	Command int    // index of the load command
	Owner   string // data_owner: "all image infos", "addrable bits", ...
	Offset  uint64 // file offset of the payload
	Size    uint64 // payload size
}

// Error is a problem with one part of a core: which load command (Command
// is -1 for the header and for what no command owns), where, and what.
type Error struct {
	Command int
	Offset  int64 // byte offset in the file
	Msg     string
	Err     error // the underlying error, if any
}

func (e *Error) Error() string {
	where := fmt.Sprintf("at offset %#x", e.Offset)
	if e.Command >= 0 {
		where = fmt.Sprintf("load command %d at offset %#x", e.Command, e.Offset)
	}
	msg := "machocore: " + where + ": " + e.Msg
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// ErrNotCore is wrapped by Open's error for a Mach-O file that is not a core.
var ErrNotCore = errors.New("not a Mach-O core file (MH_CORE)")

// Open parses the core file r holds; size is its size in bytes. It reads the
// mach header, the load commands and the notes, nothing of the memory
// segments but, when no note lists the images, the first bytes of pages
// that may hold a mach header.
//
// The error is non-nil only when the file is not a Mach-O core or its header
// cannot be read; everything else that is wrong becomes a warning.
func Open(r io.ReaderAt, size int64) (*Core, error) {
	if size < 0 {
		return nil, fmt.Errorf("machocore: negative size %d", size)
	}
	h, cmds, err := image.ReadLoadCommands(r, size)
	if h == nil {
		return nil, &Error{-1, 0, "cannot read the mach header", err}
	}
	if h.Type != image.TypeCore {
		return nil, &Error{-1, 12, fmt.Sprintf("filetype %d", h.Type), ErrNotCore}
	}
	p := &parser{r: r, size: size, bo: h.ByteOrder, c: &Core{CPUType: h.CPUType, CPUSubtype: h.CPUSubtype, Is64: h.Is64}}
	c := p.c
	if err != nil {
		// The commands before the bad one are kept.
		p.warn(-1, 16, "load commands", err)
	}
	c.Arch, err = archregs.ByCPU(h.CPUType, h.CPUSubtype)
	switch {
	case err != nil:
		p.warn(-1, 4, "threads are not decoded", err)
	case h.ByteOrder != binary.LittleEndian:
		// Every architecture archregs knows is little-endian, and so are
		// the thread states it decodes: such a header is corrupt.
		p.warn(-1, 0, fmt.Sprintf("big-endian header for little-endian %s: threads are not decoded", c.Arch.Name), nil)
		c.Arch = nil
	}
	p.cmdOff = make(map[int]int64, len(cmds))
	for _, lc := range cmds {
		p.cmdOff[lc.Index] = lc.Offset
		switch lc.Cmd {
		case image.LoadCmdSegment, image.LoadCmdSegment64:
			p.segment(lc)
		case image.LoadCmdThread, image.LoadCmdUnixThread:
			p.thread(lc)
		case image.LoadCmdNote:
			p.note(lc)
		}
	}
	sort.SliceStable(c.Regions, func(i, j int) bool { return c.Regions[i].Addr < c.Regions[j].Addr })
	c.Memory = p.memory()
	p.mem = &fileMemory{m: c.Memory, left: maxHeaderBytes}
	p.stackBounds()
	p.notes()
	if len(c.Images) == 0 {
		p.scanImages()
	}
	p.fillImages()
	sort.SliceStable(c.Images, func(i, j int) bool { return c.Images[i].LoadAddress < c.Images[j].LoadAddress })
	return c, nil
}

// parser holds what Open needs while it reads.
type parser struct {
	r    io.ReaderAt
	size int64
	bo   binary.ByteOrder
	c    *Core
	// cmdOff holds each load command's offset, by index.
	cmdOff map[int]int64
	// mem reads mach headers in memory, within a budget.
	mem *fileMemory
	// probe holds the start of a page that may hold a mach header.
	probe [28]byte
}

// warnCmd records a warning about load command cmd.
func (p *parser) warnCmd(cmd int, msg string, err error) {
	p.warn(cmd, p.cmdOff[cmd], msg, err)
}

// warn records a warning about load command cmd (-1 for none) at off.
func (p *parser) warn(cmd int, off int64, msg string, err error) {
	p.c.Warnings = append(p.c.Warnings, &Error{cmd, off, msg, err})
}

// segment records an LC_SEGMENT(_64) as a region.
func (p *parser) segment(lc image.LoadCommand) {
	s, err := lc.Segment(p.bo)
	if err != nil {
		p.warn(lc.Index, lc.Offset, "segment not read", err)
		return
	}
	r := Region{
		Command: lc.Index, Name: s.Name, Addr: s.Addr, Size: s.Size,
		FileOffset: s.Offset, FileSize: s.FileSize, MaxProt: s.MaxProt, Prot: s.Prot,
	}
	if r.Addr+r.Size < r.Addr {
		p.warn(lc.Index, lc.Offset, fmt.Sprintf("segment [%#x, +%#x) runs past the top of the address space; clipped", r.Addr, r.Size), nil)
		r.Size = ^uint64(0) - r.Addr
	}
	r.Present = min(r.FileSize, r.Size)
	if r.Present > 0 {
		switch end := r.FileOffset + r.Present; {
		case end < r.FileOffset || r.FileOffset >= uint64(p.size):
			p.warn(lc.Index, lc.Offset, fmt.Sprintf("segment at %#x: file data [%#x, +%#x) is not in the file (%#x bytes); reads as absent", r.Addr, r.FileOffset, r.FileSize, p.size), nil)
			r.Present = 0
		case end > uint64(p.size):
			r.Present = uint64(p.size) - r.FileOffset
			p.warn(lc.Index, lc.Offset, fmt.Sprintf("segment at %#x: file data [%#x, %#x) runs past the end of the file (%#x bytes); keeping the first %#x bytes", r.Addr, r.FileOffset, end, p.size, r.Present), nil)
		}
	}
	p.c.Regions = append(p.c.Regions, r)
}
