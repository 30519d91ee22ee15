package image

import (
	"sort"

	"github.com/stackimage/stackimage/internal/addrspan"
	"github.com/stackimage/stackimage/lookup"
	"github.com/stackimage/stackimage/uuid"
)

// Loaded is one image of a process: where it was loaded and, when a matching
// file was found, the image itself.
type Loaded struct {
	Name        string
	UUID        uuid.UUID
	LoadAddress uint64
	// Size is the extent of the image in memory when known without the image
	// (crash reports give it); zero when unknown.
	Size uint64
	// Image is the parsed image when one was found; nil otherwise.
	Image *Image
}

// Location is where an address falls.
type Location struct {
	Loaded *Loaded
	// Segment and Section are set when the image is known and the address
	// falls in one. They point into Loaded.Image's slices.
	Segment *Segment
	Section *Section
	// Unslid is the address in the image's own vmaddr space. When the image
	// is not known its vmaddr is not either, and Unslid equals Offset.
	Unslid uint64
	// Offset is the address minus the load address.
	Offset uint64
}

// MaxOpenRange bounds the range of an image whose extent is unknown (no
// parsed image, no Size): it reaches up to the next image's load address
// but no further than this, so that the last image does not swallow the
// heap and stacks above it. Real images are far smaller. Every reader of
// a process's images shares the rule (internal/addrspan).
const MaxOpenRange = addrspan.MaxOpenRange

// List is the set of images loaded in a process, searchable by address.
type List struct {
	images []*Loaded
	spans  []addrspan.Span // disjoint, sorted; Span.Ref indexes refs
	refs   []rangeRef      // what each range of NewList stands for
	// slides are the images' slides (Image.Slide), once: naming a frame
	// asks for one.
	slides []uint64
}

// rangeRef is an image of List.images and its segment, -1 for a range that
// comes from the load address and Size or the next image.
type rangeRef struct {
	img, seg int
}

// NewList builds a list. Ranges come from the image's segments when the
// image is known (__PAGEZERO and empty segments excluded), else from
// [LoadAddress, LoadAddress+Size), else up to the next image's load address
// (at most MaxOpenRange). Overlaps resolve deterministically to the image
// with the highest load address at or below the address; among images
// loaded at the same address, to the first given. Slides are applied with
// wraparound, as an image may be loaded below its preferred address; a range
// running past the top of the address space is cut there.
func NewList(images []*Loaded) *List {
	l := &List{}
	for _, im := range images {
		if im != nil {
			l.images = append(l.images, im)
		}
	}
	sort.SliceStable(l.images, func(i, j int) bool { return l.images[i].LoadAddress < l.images[j].LoadAddress })
	loads := make([]uint64, len(l.images))
	for i, im := range l.images {
		loads[i] = im.LoadAddress
	}
	var spans []addrspan.Span
	add := func(i, seg int, start, end uint64) {
		spans = append(spans, addrspan.Span{Start: start, End: end, Prio: l.images[i].LoadAddress, Order: i, Ref: len(l.refs)})
		l.refs = append(l.refs, rangeRef{i, seg})
	}
	l.slides = make([]uint64, len(l.images))
	for i, im := range l.images {
		before := len(spans)
		if im.Image != nil {
			slide := im.Image.Slide(im.LoadAddress)
			l.slides[i] = slide
			for j, s := range im.Image.Segments {
				if s.Name == "__PAGEZERO" || s.Size == 0 {
					continue
				}
				start := s.Addr + slide
				add(i, j, start, addrspan.ClipEnd(start, s.Size))
			}
		}
		if len(spans) > before {
			continue
		}
		if im.Size > 0 {
			add(i, -1, im.LoadAddress, addrspan.ClipEnd(im.LoadAddress, im.Size))
			continue
		}
		add(i, -1, im.LoadAddress, addrspan.OpenEnd(im.LoadAddress, loads))
	}
	l.spans = addrspan.Flatten(spans)
	return l
}

// Lookup returns the image, segment and section holding addr, in O(log n).
// The error is ErrNotFound when addr lies in no image.
func (l *List) Lookup(addr uint64) (Location, error) {
	if loc, ok := l.lookup(addr); ok {
		return loc, nil
	}
	return Location{}, ErrNotFound
}

// ErrNotFound is List.Lookup's error for an address in no image:
// lookup.ErrNotFound, the one "not found" of every Lookup and Resolve.
var ErrNotFound = lookup.ErrNotFound

// Locate returns the image holding addr and addr unslid: Lookup without
// the segment and section, for naming a frame.
func (l *List) Locate(addr uint64) (im *Loaded, unslid uint64, ok bool) {
	p, ok := l.Place(addr)
	if !ok {
		return nil, 0, false
	}
	return p.Image, addr - p.Slide, true
}

// Placement is where Place put an address: its image, the slide that
// unslides it (addr - Slide), and the range [Start, End) of addresses
// placed alike.
type Placement struct {
	Image      *Loaded
	Slide      uint64
	Start, End uint64
}

// Contains reports whether addr is placed as p says: a caller naming
// many addresses (a backtrace's, mostly in one image) checks the last
// placement before asking the list again.
func (p *Placement) Contains(addr uint64) bool {
	return p.Image != nil && addr >= p.Start && addr < p.End
}

// Place is Locate with the range of addresses placed alike.
func (l *List) Place(addr uint64) (Placement, bool) {
	sp, ok := addrspan.Find(l.spans, addr)
	if !ok {
		return Placement{}, false
	}
	ref := l.refs[sp.Ref]
	p := Placement{Image: l.images[ref.img], Slide: l.slides[ref.img], Start: sp.Start, End: sp.End}
	if ref.seg < 0 {
		p.Slide = p.Image.LoadAddress
	}
	return p, true
}

func (l *List) lookup(addr uint64) (Location, bool) {
	sp, ok := addrspan.Find(l.spans, addr)
	if !ok {
		return Location{}, false
	}
	ref := l.refs[sp.Ref]
	im := l.images[ref.img]
	loc := Location{Loaded: im, Offset: addr - im.LoadAddress}
	loc.Unslid = loc.Offset
	if ref.seg < 0 {
		return loc, true
	}
	loc.Unslid = addr - im.Image.Slide(im.LoadAddress)
	loc.Segment = &im.Image.Segments[ref.seg]
	if sec, ok := im.Image.SectionFor(loc.Unslid); ok {
		loc.Section = &im.Image.Sections[sec.Index-1]
	}
	return loc, true
}

// IsCode reports whether addr lies in an executable segment (VM_PROT_EXECUTE)
// of a known image, or anywhere in an image known only by its range. A List
// is the walker's CodeChecker.
func (l *List) IsCode(addr uint64) bool {
	sp, ok := addrspan.Find(l.spans, addr)
	if !ok {
		return false
	}
	ref := l.refs[sp.Ref]
	if ref.seg < 0 {
		return true
	}
	return l.images[ref.img].Image.Segments[ref.seg].Executable()
}

// Images returns the images in load-address order.
func (l *List) Images() []*Loaded { return l.images }
