package machocore

import (
	"bytes"
	"fmt"
	"io"

	"github.com/stackimage/stackimage/image"
)

// The LC_NOTE data owners this package reads, as lldb and xnu name them.
const (
	ownerAllImageInfos = "all image infos"
	ownerLoadBinary    = "load binary"
	ownerMainBinSpec   = "main bin spec"
	ownerAddrableBits  = "addrable bits"
)

// Layouts of the note payloads (lldb's ObjectFileMachO.cpp and xnu's
// kern/kern_cdata.h-era core_notes.h), in bytes.
const (
	allImageInfosHeaderSize = 24   // version, imgcount u32; entries_fileoff u64; entry_size, unused u32
	imageEntrySize          = 48   // filepath_offset u64; uuid[16]; load_address, seg_addrs_offset u64; segment_count, executing u32
	segmentVMAddrSize       = 32   // segname[16]; vmaddr, unused u64
	loadBinaryMinSize       = 36   // version u32; uuid[16]; load_address, slide u64; name (C string)
	mainBinSpecV1Size       = 40   // version, type u32; address u64; uuid[16]; log2_pagesize, unused u32
	mainBinSpecV2Size       = 48   // version, type u32; address, slide u64; uuid[16]; log2_pagesize, platform u32
	addrableBitsMinSize     = 8    // version, bits u32 (v3) or version, low bits u32, high bits u32 (v4)
	maxNotePayload          = 4096 // read of a small note's payload
	maxPath                 = 4096 // longest file path read from a note
	maxImages               = 1 << 16
	maxImageSegments        = 256
)

// note records an LC_NOTE; its payload is read by notes, once the memory
// is known.
func (p *parser) note(lc image.LoadCommand) {
	if len(lc.Data) < noteCmdSize {
		p.warn(lc.Index, lc.Offset, fmt.Sprintf("LC_NOTE cmdsize %d is smaller than %d", len(lc.Data), noteCmdSize), nil)
		return
	}
	n := Note{
		Command: lc.Index, Owner: cstring(lc.Data[8:24]),
		Offset: p.bo.Uint64(lc.Data[24:]), Size: p.bo.Uint64(lc.Data[32:]),
	}
	p.c.Notes = append(p.c.Notes, n)
}

// cstring returns b up to its first NUL.
func cstring(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// notes reads the payloads of the notes this package knows. Images from
// "all image infos" come first; "load binary" and "main bin spec" add
// images at addresses it does not list.
func (p *parser) notes() {
	var all, others []Image
	for _, n := range p.c.Notes {
		if n.Offset > uint64(p.size) || n.Size > uint64(p.size)-n.Offset {
			p.warnCmd(n.Command, fmt.Sprintf("%q note payload [%#x, +%#x) is not inside the file (%#x bytes)", n.Owner, n.Offset, n.Size, p.size), nil)
			continue
		}
		switch n.Owner {
		case ownerAllImageInfos:
			all = append(all, p.allImageInfos(n)...)
		case ownerLoadBinary:
			if im, ok := p.loadBinary(n); ok {
				others = append(others, im)
			}
		case ownerMainBinSpec:
			if im, ok := p.mainBinSpec(n); ok {
				others = append(others, im)
			}
		case ownerAddrableBits:
			p.addrableBits(n)
		}
	}
	seen := map[uint64]bool{}
	for _, im := range append(all, others...) {
		if seen[im.LoadAddress] {
			continue
		}
		seen[im.LoadAddress] = true
		p.c.Images = append(p.c.Images, im)
	}
}

// warnNote records a warning about note n's payload.
func (p *parser) warnNote(n Note, msg string, err error) {
	p.warnCmd(n.Command, fmt.Sprintf("%q note at %#x: %s", n.Owner, n.Offset, msg), err)
}

// payload reads up to limit bytes of a note's payload, which notes checked
// lies inside the file.
func (p *parser) payload(n Note, limit uint64) ([]byte, bool) {
	b := make([]byte, min(n.Size, limit))
	if err := p.readAt(b, n.Offset); err != nil {
		p.warnNote(n, "cannot read the payload", err)
		return nil, false
	}
	return b, true
}

// readAt reads len(b) bytes at off, which must lie inside the file.
func (p *parser) readAt(b []byte, off uint64) error {
	if off > uint64(p.size) || uint64(len(b)) > uint64(p.size)-off {
		return fmt.Errorf("[%#x, +%#x) is not inside the file (%#x bytes)", off, len(b), p.size)
	}
	got, err := p.r.ReadAt(b, int64(off))
	if got == len(b) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}

// cstringAt reads a NUL-terminated string of at most maxPath bytes at off.
func (p *parser) cstringAt(off uint64) (string, error) {
	if off >= uint64(p.size) {
		return "", fmt.Errorf("string offset %#x is not inside the file (%#x bytes)", off, p.size)
	}
	b := make([]byte, min(maxPath, uint64(p.size)-off))
	if err := p.readAt(b, off); err != nil {
		return "", err
	}
	if bytes.IndexByte(b, 0) < 0 && uint64(len(b)) == maxPath {
		return "", fmt.Errorf("string at %#x is longer than %d bytes", off, maxPath)
	}
	return cstring(b), nil
}

// allImageInfos reads lldb's "all image infos" note: a header, then
// entry_size-byte entries at entries_fileoff naming each image's path,
// UUID, load address and segment addresses by file offsets. The count is
// bounded by the bytes the file holds at entries_fileoff, so that no count
// allocates beyond the file.
func (p *parser) allImageInfos(n Note) []Image {
	var hb [allImageInfosHeaderSize]byte
	if n.Size < allImageInfosHeaderSize || p.readAt(hb[:], n.Offset) != nil {
		p.warnNote(n, fmt.Sprintf("payload of %d bytes is shorter than its %d-byte header", n.Size, allImageInfosHeaderSize), nil)
		return nil
	}
	bo := p.bo
	version, count := bo.Uint32(hb[0:]), uint64(bo.Uint32(hb[4:]))
	entries, entrySize := bo.Uint64(hb[8:]), uint64(bo.Uint32(hb[16:]))
	if version != 1 {
		p.warnNote(n, fmt.Sprintf("version %d, reading it as version 1", version), nil)
	}
	if entrySize < imageEntrySize {
		p.warnNote(n, fmt.Sprintf("entry_size %d is smaller than %d", entrySize, imageEntrySize), nil)
		return nil
	}
	fit := uint64(0)
	if entries <= uint64(p.size) {
		fit = (uint64(p.size) - entries) / entrySize
	}
	if count > fit || count > maxImages {
		p.warnNote(n, fmt.Sprintf("%d entries of %d bytes at %#x do not fit in the file (%#x bytes) or the limit of %d; reading %d", count, entrySize, entries, p.size, maxImages, min(fit, maxImages)), nil)
		count = min(fit, maxImages)
	}
	var ims []Image
	var eb [imageEntrySize]byte
	for i := uint64(0); i < count; i++ {
		at := entries + i*entrySize
		if err := p.readAt(eb[:], at); err != nil {
			p.warnNote(n, fmt.Sprintf("entry %d at %#x", i, at), err)
			break
		}
		im := Image{Source: ownerAllImageInfos, LoadAddress: bo.Uint64(eb[24:])}
		copy(im.UUID[:], eb[8:24])
		if pathOff := bo.Uint64(eb[0:]); pathOff != uint64Unknown {
			name, err := p.cstringAt(pathOff)
			if err != nil {
				p.warnNote(n, fmt.Sprintf("entry %d: path", i), err)
			}
			im.Name = name
		}
		segOff, segCount := bo.Uint64(eb[32:]), uint64(bo.Uint32(eb[40:]))
		if segOff != uint64Unknown && segCount > 0 {
			im.Segments = p.imageSegments(n, i, segOff, segCount)
		}
		if im.LoadAddress == uint64Unknown {
			im.LoadAddress = 0
			for _, s := range im.Segments {
				if s.Name == "__TEXT" {
					im.LoadAddress = s.Addr
				}
			}
			if im.LoadAddress == 0 {
				p.warnNote(n, fmt.Sprintf("entry %d (%s %s) has no load address and no __TEXT segment; left out", i, im.Name, im.UUID), nil)
				continue
			}
		}
		ims = append(ims, im)
	}
	return ims
}

// imageSegments reads an "all image infos" entry's segment_vmaddr array.
func (p *parser) imageSegments(n Note, entry, off, count uint64) []ImageSegment {
	fit := uint64(0)
	if off <= uint64(p.size) {
		fit = (uint64(p.size) - off) / segmentVMAddrSize
	}
	if count > fit || count > maxImageSegments {
		p.warnNote(n, fmt.Sprintf("entry %d: %d segments at %#x do not fit in the file or the limit of %d; reading %d", entry, count, off, maxImageSegments, min(fit, maxImageSegments)), nil)
		count = min(fit, maxImageSegments)
	}
	var segs []ImageSegment
	var sb [segmentVMAddrSize]byte
	for i := uint64(0); i < count; i++ {
		if err := p.readAt(sb[:], off+i*segmentVMAddrSize); err != nil {
			p.warnNote(n, fmt.Sprintf("entry %d: segment %d at %#x", entry, i, off+i*segmentVMAddrSize), err)
			break
		}
		segs = append(segs, ImageSegment{Name: cstring(sb[:16]), Addr: p.bo.Uint64(sb[16:])})
	}
	return segs
}

// loadBinary reads a "load binary" note: version 1 is the UUID, the load
// address, the slide and the name.
func (p *parser) loadBinary(n Note) (Image, bool) {
	b, ok := p.payload(n, loadBinaryMinSize+maxPath)
	if !ok {
		return Image{}, false
	}
	if len(b) < loadBinaryMinSize {
		p.warnNote(n, fmt.Sprintf("payload of %d bytes is shorter than %d", len(b), loadBinaryMinSize), nil)
		return Image{}, false
	}
	if v := p.bo.Uint32(b); v != 1 {
		p.warnNote(n, fmt.Sprintf("version %d, reading it as version 1", v), nil)
	}
	im := Image{Source: ownerLoadBinary, LoadAddress: p.bo.Uint64(b[20:]), Name: cstring(b[36:])}
	copy(im.UUID[:], b[4:20])
	if im.LoadAddress == uint64Unknown {
		p.warnNote(n, fmt.Sprintf("%s %s has no load address (slide %#x only); left out", im.Name, im.UUID, p.bo.Uint64(b[28:])), nil)
		return Image{}, false
	}
	return im, true
}

// mainBinSpec reads a "main bin spec" note. Version 1 (xnu) is type,
// address, UUID; version 2 (lldb) puts the slide between address and UUID.
func (p *parser) mainBinSpec(n Note) (Image, bool) {
	b, ok := p.payload(n, mainBinSpecV2Size)
	if !ok {
		return Image{}, false
	}
	if len(b) < 8 {
		p.warnNote(n, fmt.Sprintf("payload of %d bytes is too short", len(b)), nil)
		return Image{}, false
	}
	version := p.bo.Uint32(b)
	uuidAt, need := 16, mainBinSpecV1Size-8 // the v1 layout without its trailing page size and padding
	if version >= 2 {
		uuidAt, need = 24, mainBinSpecV2Size-8
	}
	if len(b) < need {
		p.warnNote(n, fmt.Sprintf("version %d payload of %d bytes is shorter than %d", version, len(b), need), nil)
		return Image{}, false
	}
	im := Image{Source: ownerMainBinSpec, LoadAddress: p.bo.Uint64(b[8:])}
	copy(im.UUID[:], b[uuidAt:uuidAt+16])
	if im.LoadAddress == uint64Unknown {
		p.warnNote(n, fmt.Sprintf("%s has no load address; left out", im.UUID), nil)
		return Image{}, false
	}
	return im, true
}

// addrableBits reads an "addrable bits" note: version 3 gives one number
// of addressing bits, version 4 one for low and one for high memory.
func (p *parser) addrableBits(n Note) {
	b, ok := p.payload(n, 16)
	if !ok {
		return
	}
	if len(b) < addrableBitsMinSize {
		p.warnNote(n, fmt.Sprintf("payload of %d bytes is shorter than %d", len(b), addrableBitsMinSize), nil)
		return
	}
	version, low := p.bo.Uint32(b), p.bo.Uint32(b[4:])
	high := uint32(0)
	switch {
	case version == 4 && len(b) >= 12:
		high = p.bo.Uint32(b[8:])
	case version == 3:
	default:
		p.warnNote(n, fmt.Sprintf("version %d with %d bytes is not known", version, len(b)), nil)
		return
	}
	if low == 0 || low > 64 || high > 64 {
		p.warnNote(n, fmt.Sprintf("%d (high %d) addressing bits is not a number of bits", low, high), nil)
		return
	}
	p.c.AddressingBits, p.c.HighAddressingBits = int(low), int(high)
	if low < 64 {
		p.c.PACMask = ^uint64(0) << low
	}
}
