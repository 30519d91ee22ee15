package machocore

import (
	"fmt"

	"github.com/stackimage/stackimage/image"
)

// Bounds of the search for images by their mach headers, so that a hostile
// core cannot make Open slow: each page examined costs one 4-byte read, and
// each header found one image.FromMemory.
const (
	scanPageSize   = 4096     // the smallest page of any Apple platform
	maxScanPages   = 1 << 16  // page starts examined inside regions (256 MiB of 4 KiB pages)
	maxHeaderReads = 1024     // mach headers read with image.FromMemory
	maxHeaderBytes = 64 << 20 // bytes read from memory for them in all; real load commands take a few KiB
)

// Mach-O file types an image loaded in a process has.
var imageFileTypes = map[image.FileType]bool{
	image.TypeExecute: true, image.TypeDylib: true, image.TypeDylinker: true, image.TypeBundle: true,
}

// scanImages finds images by their mach headers, as lldb does for a core
// without notes: first at the start of every region (where a dumper that
// writes one segment per VM region puts each image's __TEXT), then at page
// starts inside regions, up to maxScanPages.
func (p *parser) scanImages() {
	var found []Image
	examined, headers := 0, 0
	try := func(r Region, addr uint64) {
		if headers >= maxHeaderReads {
			return
		}
		im, ok := p.headerAt(r, addr)
		if !ok {
			return
		}
		headers++
		found = append(found, im)
	}
	for _, r := range p.c.Regions {
		if r.Present >= 32 {
			try(r, r.Addr)
		}
	}
	for _, r := range p.c.Regions {
		if r.Present < 32 {
			continue
		}
		first := (r.Addr + scanPageSize) &^ (scanPageSize - 1)
		for a := first; a >= first && a-r.Addr+32 <= r.Present; a += scanPageSize {
			if examined >= maxScanPages || headers >= maxHeaderReads {
				p.warnCmd(r.Command, fmt.Sprintf("search for mach headers stopped at %#x after %d pages and %d headers", a, examined, headers), nil)
				goto done
			}
			examined++
			try(r, a)
		}
	}
done:
	p.c.Images = found
}

// headerAt reads a mach header at addr, inside region r, and the image it
// starts: a plausible header has the core's magic and CPU type and the
// file type of a loaded image.
func (p *parser) headerAt(r Region, addr uint64) (Image, bool) {
	hb := p.probe[:]
	if err := p.readAt(hb, r.FileOffset+(addr-r.Addr)); err != nil {
		return Image{}, false
	}
	if h, err := image.ParseHeader(hb); err != nil || !imageFileTypes[h.Type] {
		return Image{}, false
	}
	im := Image{LoadAddress: addr, Source: "header scan"}
	if !p.describe(&im) {
		return Image{}, false
	}
	return im, true
}

// describe reads the image at im.LoadAddress from the core's memory with
// image.FromMemory and fills what the image tells and im lacks: its size,
// UUID and name (LC_ID_DYLIB or LC_ID_DYLINKER). It reports whether the
// image could be read.
func (p *parser) describe(im *Image) bool {
	// A plausible header first: the core's magic and CPU type, and load
	// commands the file holds and the budget allows, before image reads
	// and allocates them.
	h, err := image.ReadHeader(image.MemoryReaderAt(p.mem, im.LoadAddress))
	if err != nil || h.Is64 != p.c.Is64 || h.ByteOrder != p.bo || h.CPUType != p.c.CPUType ||
		uint64(h.SizeOfCmds) > p.mem.left || uint64(h.SizeOfCmds) > uint64(p.size) {
		return false
	}
	mi, err := image.FromMemory(p.mem, im.LoadAddress, "")
	if err != nil {
		return false
	}
	if im.UUID.IsZero() {
		im.UUID = mi.UUID
	}
	if im.Name == "" {
		im.Name = mi.Name
		if im.Name == "" {
			im.Name = p.dylinkerName(im.LoadAddress)
		}
	}
	text, ok := mi.TextSegment()
	if !ok {
		return true
	}
	var end uint64
	for _, s := range mi.Segments {
		if s.Name == "__PAGEZERO" || s.Size == 0 || s.Addr < text.Addr || s.Addr+s.Size < s.Addr {
			continue
		}
		end = max(end, s.Addr+s.Size)
	}
	if end > text.Addr {
		im.Size = end - text.Addr
	}
	return true
}

// dylinkerName returns the LC_ID_DYLINKER name of the image at addr, or "".
func (p *parser) dylinkerName(addr uint64) string {
	h, cmds, _ := image.ReadLoadCommands(image.MemoryReaderAt(p.mem, addr), -1)
	if h == nil {
		return ""
	}
	for _, lc := range cmds {
		if lc.Cmd != image.LoadCmdIDDylinker || len(lc.Data) < 12 {
			continue
		}
		if off := h.ByteOrder.Uint32(lc.Data[8:]); uint64(off) < uint64(len(lc.Data)) {
			return cstring(lc.Data[off:])
		}
	}
	return ""
}

// fillImages completes the images the notes named from their mach headers
// in memory, when the core holds them.
func (p *parser) fillImages() {
	for i := range p.c.Images {
		if i >= maxHeaderReads {
			return
		}
		if im := &p.c.Images[i]; im.Size == 0 {
			p.describe(im)
		}
	}
}
