package machocore

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/image"
)

// WriteInput is what Write puts in a core.
type WriteInput struct {
	Arch    *archregs.Arch
	Threads []WriteThread
	// Regions become one segment command each, in address order; they
	// must not overlap.
	Regions []WriteRegion
	// Images are named in an "all image infos" note (Name, UUID,
	// LoadAddress and Segments are written; Size and Source are not).
	Images []Image
	// LoadBinaryNotes writes one "load binary" note per image instead of
	// the "all image infos" note.
	LoadBinaryNotes bool
	// AddressingBits is written in an "addrable bits" note (version 3) on
	// arm64 and arm64e; 0 writes 47, the user address space of macOS.
	AddressingBits int
}

// WriteThread is one thread: its general registers, written as the
// architecture's native thread state flavor (archregs.NativeFlavor), and
// optionally its exception state.
type WriteThread struct {
	Registers *archregs.Registers
	Exception *ExceptionState // the Flavor field is ignored
}

// WriteRegion is one memory region: Data at Addr, then zero bytes up to
// Size (0 means len(Data)).
type WriteRegion struct {
	Name string
	Addr uint64
	Size uint64
	Data []byte
	// MaxProt and Prot are VM_PROT_* bits; Prot 0 is written as
	// VM_PROT_READ|VM_PROT_WRITE, and MaxProt 0 as Prot.
	MaxProt, Prot uint32
}

const (
	vmProtRead  = 1
	vmProtWrite = 2
	// defaultAddressingBits is macOS's arm64 user address space; lldb uses
	// the same value for Darwin arm64 when a core has no note.
	defaultAddressingBits = 47
)

// Write writes an MH_CORE file for in.Arch (arm64, arm64e, armv7, x86_64 or
// i386; the 32-bit architectures get a 32-bit mach header and LC_SEGMENT):
// the mach header; an LC_THREAD per thread, an LC_SEGMENT(_64) per region
// and the notes; then the regions' data and the notes' payloads. It is an
// error if a value does not fit the architecture's fields.
func Write(w io.Writer, in *WriteInput) error {
	if in == nil || in.Arch == nil {
		return errors.New("machocore: Write: no architecture")
	}
	if w == nil {
		return errors.New("machocore: Write: nil writer")
	}
	arch := in.Arch
	is64 := arch.PtrSize == 8
	bo := binary.LittleEndian

	regions := make([]WriteRegion, len(in.Regions))
	copy(regions, in.Regions)
	sort.SliceStable(regions, func(i, j int) bool { return regions[i].Addr < regions[j].Addr })
	for i, r := range regions {
		if r.Size == 0 {
			regions[i].Size = uint64(len(r.Data))
		}
		r = regions[i]
		if r.Size < uint64(len(r.Data)) {
			return fmt.Errorf("machocore: Write: region at %#x: size %#x is smaller than its %d bytes of data", r.Addr, r.Size, len(r.Data))
		}
		if r.Addr+r.Size < r.Addr || (!is64 && r.Addr+r.Size > 1<<32) {
			return fmt.Errorf("machocore: Write: region [%#x, +%#x) does not fit %s's address space", r.Addr, r.Size, arch.Name)
		}
		if i > 0 && r.Addr < regions[i-1].Addr+regions[i-1].Size {
			return fmt.Errorf("machocore: Write: region at %#x overlaps the one at %#x", r.Addr, regions[i-1].Addr)
		}
	}

	// The load commands, with file offsets filled in once their sizes are
	// known.
	var threads [][]byte
	for i, th := range in.Threads {
		cmd, err := threadCommand(arch, th)
		if err != nil {
			return fmt.Errorf("machocore: Write: thread %d: %w", i, err)
		}
		threads = append(threads, cmd)
	}
	hdrSize, segSize := 28, 56
	if is64 {
		hdrSize, segSize = 32, 72
	}
	type noteOut struct {
		owner   string
		payload func(base uint64) []byte
		size    uint64
	}
	var notes []noteOut
	if len(in.Images) > 0 {
		if in.LoadBinaryNotes {
			for _, im := range in.Images {
				p := loadBinaryPayload(im)
				notes = append(notes, noteOut{ownerLoadBinary, func(uint64) []byte { return p }, uint64(len(p))})
			}
		} else {
			size := uint64(len(allImageInfosPayload(in.Images, 0)))
			notes = append(notes, noteOut{ownerAllImageInfos, func(base uint64) []byte { return allImageInfosPayload(in.Images, base) }, size})
		}
	}
	if arch.AddressingBits {
		bits := in.AddressingBits
		if bits == 0 {
			bits = defaultAddressingBits
		}
		if bits < 1 || bits > 64 {
			return fmt.Errorf("machocore: Write: %d addressing bits", bits)
		}
		p := make([]byte, 16)
		bo.PutUint32(p, 3)
		bo.PutUint32(p[4:], uint32(bits))
		notes = append(notes, noteOut{ownerAddrableBits, func(uint64) []byte { return p }, 16})
	}

	sizeofcmds := len(regions)*segSize + len(notes)*noteCmdSize
	for _, t := range threads {
		sizeofcmds += len(t)
	}
	ncmds := len(threads) + len(regions) + len(notes)
	off := align(uint64(hdrSize+sizeofcmds), dataAlign)
	segOffs := make([]uint64, len(regions))
	for i, r := range regions {
		segOffs[i] = off
		off = align(off+uint64(len(r.Data)), 16)
	}
	noteOffs := make([]uint64, len(notes))
	for i, n := range notes {
		noteOffs[i] = off
		off = align(off+n.size, 16)
	}
	if !is64 && off > math.MaxUint32 {
		return fmt.Errorf("machocore: Write: %d bytes do not fit a 32-bit core's file offsets", off)
	}

	buf := make([]byte, 0, hdrSize+sizeofcmds)
	hdr := image.Header{ByteOrder: bo, Is64: is64, CPUType: arch.CPUType, CPUSubtype: arch.CPUSubtype,
		Type: image.TypeCore, NCmds: uint32(ncmds), SizeOfCmds: uint32(sizeofcmds)}
	buf = hdr.Append(buf)
	for _, t := range threads {
		buf = append(buf, t...)
	}
	for i, r := range regions {
		var name [16]byte
		copy(name[:], r.Name)
		prot := r.Prot
		if prot == 0 {
			prot = vmProtRead | vmProtWrite
		}
		maxProt := r.MaxProt
		if maxProt == 0 {
			maxProt = prot
		}
		if is64 {
			buf = bo.AppendUint32(buf, uint32(image.LoadCmdSegment64))
			buf = bo.AppendUint32(buf, uint32(segSize))
			buf = append(buf, name[:]...)
			for _, v := range []uint64{r.Addr, r.Size, segOffs[i], uint64(len(r.Data))} {
				buf = bo.AppendUint64(buf, v)
			}
		} else {
			buf = bo.AppendUint32(buf, uint32(image.LoadCmdSegment))
			buf = bo.AppendUint32(buf, uint32(segSize))
			buf = append(buf, name[:]...)
			for _, v := range []uint64{r.Addr, r.Size, segOffs[i], uint64(len(r.Data))} {
				buf = bo.AppendUint32(buf, uint32(v))
			}
		}
		for _, v := range []uint32{maxProt, prot, 0, 0} { // maxprot, initprot, nsects, flags
			buf = bo.AppendUint32(buf, v)
		}
	}
	for i, n := range notes {
		var owner [16]byte
		copy(owner[:], n.owner)
		buf = bo.AppendUint32(buf, uint32(image.LoadCmdNote))
		buf = bo.AppendUint32(buf, noteCmdSize)
		buf = append(buf, owner[:]...)
		buf = bo.AppendUint64(buf, noteOffs[i])
		buf = bo.AppendUint64(buf, n.size)
	}

	cw := &countingWriter{w: w}
	cw.write(buf)
	for i, r := range regions {
		cw.pad(segOffs[i])
		cw.write(r.Data)
	}
	for i, n := range notes {
		cw.pad(noteOffs[i])
		cw.write(n.payload(noteOffs[i]))
	}
	cw.pad(off)
	if cw.err != nil {
		return fmt.Errorf("machocore: Write: %w", cw.err)
	}
	return nil
}

// threadCommand encodes one LC_THREAD: the native general state, then the
// exception state when there is one.
func threadCommand(arch *archregs.Arch, th WriteThread) ([]byte, error) {
	if th.Registers == nil || th.Registers.Arch != arch {
		return nil, fmt.Errorf("registers are not %s's", arch.Name)
	}
	flavor := archregs.NativeFlavor(arch)
	state, err := th.Registers.Encode(flavor)
	if err != nil {
		return nil, err
	}
	bo := binary.LittleEndian
	body := bo.AppendUint32(nil, flavor)
	body = bo.AppendUint32(body, uint32(len(state)/4))
	body = append(body, state...)
	if e := th.Exception; e != nil {
		f := arch.Exception
		if f == nil {
			return nil, fmt.Errorf("%s has no exception state flavor", arch.Name)
		}
		body = bo.AppendUint32(body, f.Flavor)
		body = bo.AppendUint32(body, f.Count)
		body = append(body, f.Encode(e.Exception, e.Syndrome, e.FaultAddress)...)
	}
	cmd := bo.AppendUint32(nil, uint32(image.LoadCmdThread))
	cmd = bo.AppendUint32(cmd, uint32(8+len(body)))
	return append(cmd, body...), nil
}

// allImageInfosPayload lays out the "all image infos" note for images, as
// if it were written at file offset base: the header, the entries, the
// paths, then each image's segment addresses.
func allImageInfosPayload(images []Image, base uint64) []byte {
	bo := binary.LittleEndian
	entries := base + allImageInfosHeaderSize
	next := entries + uint64(len(images))*imageEntrySize
	var tail []byte
	p := bo.AppendUint32(nil, 1) // version
	p = bo.AppendUint32(p, uint32(len(images)))
	p = bo.AppendUint64(p, entries)
	p = bo.AppendUint32(p, imageEntrySize)
	p = bo.AppendUint32(p, 0)
	for _, im := range images {
		pathOff := uint64Unknown
		if im.Name != "" {
			pathOff = next + uint64(len(tail))
			tail = append(append(tail, im.Name...), 0)
		}
		segOff := uint64Unknown
		if len(im.Segments) > 0 {
			segOff = next + uint64(len(tail))
			for _, s := range im.Segments {
				var name [16]byte
				copy(name[:], s.Name)
				tail = append(tail, name[:]...)
				tail = bo.AppendUint64(tail, s.Addr)
				tail = bo.AppendUint64(tail, 0)
			}
		}
		p = bo.AppendUint64(p, pathOff)
		p = append(p, im.UUID[:]...)
		p = bo.AppendUint64(p, im.LoadAddress)
		p = bo.AppendUint64(p, segOff)
		p = bo.AppendUint32(p, uint32(len(im.Segments)))
		p = bo.AppendUint32(p, 1) // executing: lldb loads the image eagerly
	}
	return append(p, tail...)
}

// loadBinaryPayload lays out a version 1 "load binary" note for im; the
// slide is written as unknown.
func loadBinaryPayload(im Image) []byte {
	bo := binary.LittleEndian
	p := bo.AppendUint32(nil, 1)
	p = append(p, im.UUID[:]...)
	p = bo.AppendUint64(p, im.LoadAddress)
	p = bo.AppendUint64(p, uint64Unknown)
	return append(append(p, im.Name...), 0)
}

// dataAlign is where the first segment's data starts: a page boundary, as
// other writers put it, so that a reader may map the data. Fuzz seeds use
// 16 to keep inputs small.
var dataAlign uint64 = scanPageSize

// align rounds n up to a multiple of a power of two.
func align(n, a uint64) uint64 { return (n + a - 1) &^ (a - 1) }

// countingWriter writes sequentially, padding with zeros to an offset, and
// keeps the first error.
type countingWriter struct {
	w   io.Writer
	n   uint64
	err error
}

func (c *countingWriter) write(b []byte) {
	if c.err != nil {
		return
	}
	n, err := c.w.Write(b)
	c.n += uint64(n)
	c.err = err
}

func (c *countingWriter) pad(to uint64) {
	for c.n < to && c.err == nil {
		c.write(make([]byte, min(to-c.n, 1<<16)))
	}
}
