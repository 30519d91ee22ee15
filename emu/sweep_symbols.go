//go:build unicorn

package emu

import (
	"path"
	"strings"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/symbolize"
	"github.com/stackimage/stackimage/walker"
)

// entryProcess stands in for symbolize.Process when an image has no UUID
// (the i386 fixtures are object files, which carry none), so that
// symbolize cannot match it with a symbol file. It attaches each loaded
// image's own symbols (symbolize.NewEntry, as the atos command does) and
// otherwise does what Process does: the same walker options (Code,
// Functions, ImageEnd) and the same naming (Entry.Resolve).
type entryProcess struct {
	list     *image.List
	entries  map[*image.Loaded]*symbolize.Entry
	imageEnd uint64
}

func newEntryProcess(m *Machine) (*entryProcess, error) {
	p := &entryProcess{entries: map[*image.Loaded]*symbolize.Entry{}}
	loaded := make([]*image.Loaded, len(m.Images))
	for i, l := range m.Images {
		e, err := symbolize.NewEntry(l.Image)
		if err != nil {
			return nil, err
		}
		loaded[i] = &image.Loaded{Name: l.Image.Name, UUID: l.Image.UUID, LoadAddress: l.LoadAddress, Size: l.Size, Image: l.Image}
		p.entries[loaded[i]] = e
		p.imageEnd = max(p.imageEnd, l.LoadAddress+l.Size)
	}
	p.list = image.NewList(loaded)
	return p, nil
}

// Walk is symbolize.Process.Walk.
func (p *entryProcess) Walk(regs *archregs.Registers, mem walker.Memory, opts walker.Options) ([]symbolize.Frame, walker.Result) {
	opts.Code, opts.Functions, opts.ImageEnd = p.list, p, p.imageEnd
	res := walker.Walk(regs, mem, opts)
	frames := make([]symbolize.Frame, 0, len(res.Frames))
	for _, wf := range res.Frames {
		frames = append(frames, p.Frames(wf.Index, wf.ReturnAddress, wf.LookupAddress, wf.FoundBy.String())...)
	}
	return frames, res
}

// Frames is symbolize.Process.Frames.
func (p *entryProcess) Frames(index int, addr, lookup uint64, foundBy string) []symbolize.Frame {
	f := symbolize.Frame{Index: index, Address: addr, LookupAddress: lookup, FoundBy: foundBy}
	loc, ok := p.list.Lookup(lookup)
	if !ok {
		return []symbolize.Frame{f}
	}
	l := loc.Loaded
	f.Image, f.ImagePath = path.Base(strings.ReplaceAll(l.Name, "\\", "/")), l.Name
	f.ImageLoadAddress, f.ImageOffset = l.LoadAddress, addr-l.LoadAddress
	return p.entries[l].Resolve(f, loc.Unslid, false)
}

// FunctionStart is symbolize.Process.FunctionStart.
func (p *entryProcess) FunctionStart(addr uint64) (uint64, bool) {
	loc, ok := p.list.Lookup(addr)
	if !ok {
		return 0, false
	}
	sym, ok := p.entries[loc.Loaded].Symbol(loc.Unslid)
	if !ok {
		return 0, false
	}
	return addr - sym.Offset, true
}
