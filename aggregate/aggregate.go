package aggregate

import (
	"encoding/binary"
	"hash/maphash"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/stackimage/stackimage/internal/addrspan"
	"github.com/stackimage/stackimage/uuid"
)

// Aggregator counts stacks. Identical stacks (the same images, by UUID,
// and the same offsets in them) are kept once, with a count, a weight and
// when they were first and last seen for each distinct set of attributes
// (thread, device, versions, labels). Nothing is symbolicated until
// Symbolicate, which looks every unique address up once.
//
// An Aggregator is not safe for concurrent use: feed it from one
// goroutine (decoding may run on others).
type Aggregator struct {
	images      []ImageInfo
	imageKeys   []uint64 // by image: the hash of its key, for stacks' hashes
	imageByKey  map[imageKey]int32
	placedCache map[*Image]*listPlacement // by a record's image list, for image sets
	// numbered holds, by image list (*Image of its first), the numbers
	// of the images of each image set placed, for the decoding
	// goroutines to place frames with (recordPlacer).
	numbered sync.Map

	// Stacks, attribute sets and samples are found by a hash of what
	// they hold, in idTables, and confirmed against it. The hashes start
	// from random seeds.
	seed        maphash.Seed // of the strings of attribute sets
	stackSeed   uint64
	stackTable  idTable
	stacks      [][]frameRef
	stackHashes []uint64 // by stack

	attrsTable idTable
	attrs      []Attributes
	labelBuf   []Label

	sampleTable idTable
	samples     []sample

	// reporterNames are the names reports gave their frames' addresses.
	reporterNames map[frameRef]string

	records       int64
	refBuf        []frameRef
	pending       []placedRecord
	readAheadSink uint64
}

// imageKey tells images apart: by UUID, and by name for images without
// one.
type imageKey struct {
	id   uuid.UUID
	name string
}

// placed is where an image of one record holds addresses, [start, end),
// of an image loaded at load: the image at index image of the record's
// list, whose key hashes to key. An image another overlaps may hold
// several ranges.
type placed struct {
	start, end uint64
	load       uint64
	key        uint64
	image      int32
}

// frameRef is a frame as an offset in an image of the aggregate; image is
// -1 and offset the absolute address for a frame in no known image.
type frameRef struct {
	image  int32
	offset uint64
}

// Attributes are what a record says about where its stack was captured.
type Attributes struct {
	Thread     string
	Device     string
	OSVersion  string
	AppVersion string
	Labels     []Label // sorted by key
}

// Label is one of a record's labels.
type Label struct{ Key, Value string }

// sample is one unique stack with one set of attributes.
type sample struct {
	stack, attrs  int32
	count, weight int64
	first, last   time.Time
	hasFirst      bool
}

// New returns an empty aggregator.
func New() *Aggregator {
	seed := maphash.MakeSeed()
	return &Aggregator{
		imageByKey:  map[imageKey]int32{},
		placedCache: map[*Image]*listPlacement{},
		seed:        seed,
		stackSeed:   maphash.Comparable(seed, 1),
	}
}

// Records returns how many records were added.
func (a *Aggregator) Records() int64 { return a.records }

// UniqueStacks returns how many distinct stacks were added.
func (a *Aggregator) UniqueStacks() int { return len(a.stacks) }

// Add counts one record. The record is not kept: Add copies what it needs.
func (a *Aggregator) Add(rec *Record) {
	one := [1]*Record{rec}
	a.AddBatch(one[:])
}

// AddBatch counts records in order; records sharing one Images slice
// (DumpRecords' of one dump) have their images placed once.
func (a *Aggregator) AddBatch(recs []*Record) {
	for len(recs) > 0 {
		n := min(len(recs), chunkRecords)
		a.addChunk(recs[:n])
		recs = recs[n:]
	}
}

// chunkRecords is how many records are placed together before they are
// counted (their frames kept meanwhile: 30 frames make 480 bytes).
const chunkRecords = 256

// placedRecord is a record of a chunk, placed and waiting to be counted.
type placedRecord struct {
	refs       []frameRef
	stackHash  uint64 // of its frames
	sampleHash uint64 // of its frames and attribute set
	attrs      int32
	candidate  int32 // while reading ahead: the stack of the sample in its slot, +1
}

// addChunk counts records in three passes. Most records repeat a sample
// whose table slot, sample and stack lie far apart in a table of
// megabytes: the reads of one record wait on each other, but those of
// different records do not. So the frames of every record are placed
// and hashed first, then each level (the slot, the sample, the stack) is
// read for the whole chunk, which lets the processor wait for many
// misses at once, and only then is each record counted, in order, from
// memory that is now in the cache. A record that a decoding goroutine
// placed already (recordPlacer) has its frames only renumbered here.
func (a *Aggregator) addChunk(recs []*Record) {
	refBuf := a.refBuf[:0]
	pending := a.pending[:0]
	hasher := a.hasher()
	var lastImages *Image
	var imgs *listPlacement
	for _, rec := range recs {
		decoderPlaced := rec.placed.ok && rec.placed.by == hasher && sameList(rec.placed.images, rec.Images)
		switch {
		case decoderPlaced && rec.placed.numbered:
			// Numbered with the aggregator's numbers of an image set
			// placed already: nothing to number.
			imgs, lastImages = nil, nil
		case rec.ImageSet != "":
			imgs, lastImages = a.place(rec.Images, true), nil
		case len(rec.Images) == 0:
			imgs, lastImages = nil, nil
		case &rec.Images[0] != lastImages:
			imgs, lastImages = a.place(rec.Images, false), &rec.Images[0]
		}
		var refs []frameRef
		var h uint64
		from := len(refBuf)
		switch {
		case decoderPlaced && rec.placed.numbered:
			// The decoder guessed the record's images right, and knew
			// their numbers.
			refs, h = rec.placed.refs, rec.placed.hash
		case decoderPlaced:
			for _, ref := range rec.placed.refs {
				if ref.image >= 0 {
					ref.image = imgs.ids[ref.image]
				}
				refBuf = append(refBuf, ref)
			}
			h = rec.placed.hash
		default:
			var p *placement
			if imgs != nil {
				p = imgs.index(hasher)
			}
			refBuf, h = placeFrames(refBuf, p, hasher, rec.Frames)
			for k := from; k < len(refBuf); k++ {
				if refBuf[k].image >= 0 {
					refBuf[k].image = imgs.ids[refBuf[k].image]
				}
			}
		}
		if refs == nil {
			refs = refBuf[from:len(refBuf):len(refBuf)]
		}
		attrs := a.attrsID(rec)
		pending = append(pending, placedRecord{refs: refs, stackHash: h, sampleHash: sampleHash(h, attrs), attrs: attrs})
	}
	a.refBuf, a.pending = refBuf, pending
	a.readAhead(pending)
	for k, rec := range recs {
		p := &pending[k]
		a.count(rec, p.refs, p.stackHash, p.sampleHash, p.attrs)
	}
}

// sameList reports whether x and y are one image list (or both empty).
func sameList(x, y []Image) bool {
	return len(x) == len(y) && (len(x) == 0 || &x[0] == &y[0])
}

// readAhead reads, for each placed record, the first slot its sample
// hash points to, the sample there and that sample's stack, each level
// for all records before the next: the reads are hints, the counting
// after reads them again.
func (a *Aggregator) readAhead(pending []placedRecord) {
	slots := a.sampleTable.slots
	if len(slots) == 0 {
		return
	}
	mask := uint64(len(slots) - 1)
	for i := range pending {
		pending[i].candidate = slots[pending[i].sampleHash&mask].id1
	}
	for i := range pending {
		if c := pending[i].candidate; c > 0 {
			pending[i].candidate = a.samples[c-1].stack + 1
		}
	}
	var sink uint64
	for i := range pending {
		if c := pending[i].candidate; c > 0 && len(a.stacks[c-1]) > 0 {
			sink += a.stacks[c-1][0].offset
		}
	}
	a.readAheadSink += sink // kept, so that the reads are not left out
}

// stackHasher hashes stacks as one aggregator does, on any goroutine. A
// frame is hashed with its image's key (its UUID, or its name when it
// has none), not with the aggregator's number for the image: goroutines
// that decode records place and hash their frames before the aggregator
// has numbered the images.
type stackHasher struct {
	seed      maphash.Seed // of strings
	stackSeed uint64       // a stack's hash starts from it
}

func (a *Aggregator) hasher() stackHasher {
	return stackHasher{seed: a.seed, stackSeed: a.stackSeed}
}

// noImageKey is the key of frames in no image.
const noImageKey = 0x6a09e667f3bcc909

// keyHash hashes the key an image is told apart by (imageKey).
func (hs stackHasher) keyHash(id uuid.UUID, name string) uint64 {
	if id.IsZero() {
		return mix(hs.stackSeed, maphash.String(hs.seed, name))
	}
	return mix(mix(hs.stackSeed, binary.LittleEndian.Uint64(id[:8])), binary.LittleEndian.Uint64(id[8:]))
}

// hashFrame folds a frame, at offset in the image whose key hashes to
// imageKey, into a stack's hash.
func hashFrame(h, imageKey, offset uint64) uint64 {
	return mix(h, offset^imageKey)
}

// placeFrames appends a record's frames to refs as offsets in their
// images, numbered by their place in the record's list (p.imgs[k].image),
// and returns the stack's hash, made as they are placed.
func placeFrames(refs []frameRef, p *placement, hs stackHasher, frames []uint64) ([]frameRef, uint64) {
	var imgs []placed
	if p != nil {
		imgs = p.imgs
	}
	h := hs.stackSeed
	last := -1 // the image of the previous frame: callers are mostly in the callee's image
	for _, addr := range frames {
		k := last
		if k < 0 || addr < imgs[k].start || addr >= imgs[k].end {
			k = p.find(addr)
		}
		if k >= 0 && addr < imgs[k].end {
			refs = append(refs, frameRef{image: imgs[k].image, offset: addr - imgs[k].load})
			h = hashFrame(h, imgs[k].key, addr-imgs[k].load)
			last = k
		} else {
			refs = append(refs, frameRef{image: -1, offset: addr})
			h = hashFrame(h, noImageKey, addr)
		}
	}
	return refs, h
}

// count counts a placed record.
func (a *Aggregator) count(rec *Record, refs []frameRef, stackHash, sh uint64, attrs int32) {
	a.records++
	for k, name := range rec.names {
		if name != "" && name != "???" && k < len(refs) && len(a.reporterNames) < maxReporterNames {
			if a.reporterNames == nil {
				a.reporterNames = map[frameRef]string{}
			}
			if _, ok := a.reporterNames[refs[k]]; !ok {
				a.reporterNames[refs[k]] = name
			}
		}
	}
	w := rec.Weight
	if w <= 0 {
		w = 1
	}
	// The sample is looked for first, by the stack's hash and the
	// attribute set: most records repeat a sample, and then the stack
	// is confirmed against the sample's without a lookup of its own.
	id, ok := a.sampleTable.lookup(sh, func(id int32) bool {
		s := &a.samples[id]
		return s.attrs == attrs && slices.Equal(a.stacks[s.stack], refs)
	})
	if !ok {
		id = a.newSample(sh, a.stackIDHashed(stackHash, refs), attrs)
	}
	a.samples[id].add(1, w, rec.Timestamp, rec.Timestamp)
}

// sampleHash is the hash of a sample: its stack's and its attribute set.
func sampleHash(stackHash uint64, attrs int32) uint64 {
	return mix(stackHash, uint64(uint32(attrs)))
}

func (a *Aggregator) newSample(h uint64, stack, attrs int32) int32 {
	id := int32(len(a.samples))
	a.samples = append(a.samples, sample{stack: stack, attrs: attrs})
	a.sampleTable.insert(h, id)
	return id
}

// maxReporterNames bounds the reporters' names kept.
const maxReporterNames = 1 << 20

// placement is a record's images placed, with an index of where to
// look for an address: the span from the first image's start to the
// last's cut into at most placementBuckets buckets, each with the image
// its start is in. An address is then in that image or in one starting
// inside its bucket, mostly the first.
type placement struct {
	images  int      // of the record's list
	imgs    []placed // sorted by start, disjoint
	base    uint64   // imgs[0].start
	shift   uint     // a bucket is 1<<shift bytes
	buckets []int32
}

const placementBuckets = 1 << 10

func newPlacement(imgs []placed) *placement {
	p := &placement{imgs: imgs}
	if len(imgs) < 4 {
		return p // a binary search is as quick
	}
	p.base = imgs[0].start
	span := imgs[len(imgs)-1].start - p.base
	for span>>p.shift >= placementBuckets {
		p.shift++
	}
	p.buckets = make([]int32, span>>p.shift+1)
	for b := range p.buckets {
		p.buckets[b] = int32(findImage(imgs, p.base+uint64(b)<<p.shift))
	}
	return p
}

// find returns the index of the last image loaded at or below addr, -1
// for none.
func (p *placement) find(addr uint64) int {
	if p == nil {
		return -1 // a record without images
	}
	if p.buckets == nil {
		return findImage(p.imgs, addr)
	}
	if addr < p.base {
		return -1
	}
	b := (addr - p.base) >> p.shift
	if b >= uint64(len(p.buckets)) {
		return len(p.imgs) - 1 // past the last image's start
	}
	lo, hi := int(p.buckets[b]), len(p.imgs)-1
	if b+1 < uint64(len(p.buckets)) {
		hi = int(p.buckets[b+1])
	}
	if lo == hi {
		return lo
	}
	return lo + findImage(p.imgs[lo:hi+1], addr)
}

// findImage returns the index of the last image loaded at or below
// addr, -1 for none: a binary search whose steps compile to conditional
// moves, without a function call per step.
func findImage(imgs []placed, addr uint64) int {
	if len(imgs) == 0 || addr < imgs[0].start {
		return -1
	}
	lo, n := 0, len(imgs)
	for n > 1 {
		half := n / 2
		if imgs[lo+half].start <= addr {
			lo += half
		}
		n -= half
	}
	return lo
}

// addSample counts records of one stack and attribute set, seen between
// first and last (zero when unknown).
func (a *Aggregator) addSample(stack, attrs int32, count, weight int64, first, last time.Time) {
	h := sampleHash(a.stackHashes[stack], attrs)
	id, ok := a.sampleTable.lookup(h, func(id int32) bool {
		return a.samples[id].stack == stack && a.samples[id].attrs == attrs
	})
	if !ok {
		id = a.newSample(h, stack, attrs)
	}
	a.samples[id].add(count, weight, first, last)
}

// add counts records in a sample, seen between first and last (zero
// when unknown).
func (s *sample) add(count, weight int64, first, last time.Time) {
	s.count += count
	s.weight += weight
	if first.IsZero() {
		return
	}
	if !s.hasFirst || first.Before(s.first) {
		s.first = first
	}
	if !s.hasFirst || last.After(s.last) {
		s.last = last
	}
	s.hasFirst = true
}

// stackID interns a stack.
func (a *Aggregator) stackID(refs []frameRef) int32 {
	h := a.stackSeed
	for _, ref := range refs {
		key := uint64(noImageKey)
		if ref.image >= 0 {
			key = a.imageKeys[ref.image]
		}
		h = hashFrame(h, key, ref.offset)
	}
	return a.stackIDHashed(h, refs)
}

// stackIDHashed interns a stack whose hash is h. Stacks are found by the
// hash and confirmed against their stored frames.
func (a *Aggregator) stackIDHashed(h uint64, refs []frameRef) int32 {
	id, ok := a.stackTable.lookup(h, func(id int32) bool { return slices.Equal(a.stacks[id], refs) })
	if ok {
		return id
	}
	id = int32(len(a.stacks))
	a.stacks = append(a.stacks, slices.Clone(refs))
	a.stackHashes = append(a.stackHashes, h)
	a.stackTable.insert(h, id)
	return id
}

// imageID returns the number of im among a's images, adding it if it is
// new. An image is the main executable if any record said so, and keeps
// the first path it was given.
func (a *Aggregator) imageID(im ImageInfo) int32 {
	key := imageKey{id: im.UUID}
	if im.UUID.IsZero() {
		key.name = im.Name
	}
	id, ok := a.imageByKey[key]
	if !ok {
		id = int32(len(a.images))
		a.images = append(a.images, ImageInfo{UUID: im.UUID, Name: im.Name, Path: im.Path})
		a.imageKeys = append(a.imageKeys, a.hasher().keyHash(im.UUID, im.Name))
		a.imageByKey[key] = id
	}
	a.images[id].Main = a.images[id].Main || im.Main
	if a.images[id].Path == "" {
		a.images[id].Path = im.Path
	}
	return id
}

// listPlacement is a record's image list as the aggregator numbers its
// images, by their place in the list, and placed by load address when
// the aggregator places frames itself (most are placed on the decoding
// goroutines).
type listPlacement struct {
	images []Image
	ids    []int32
	placed *placement // made when first needed
}

// index returns the list placed by load address.
func (lp *listPlacement) index(hs stackHasher) *placement {
	if lp.placed == nil {
		lp.placed = placeImages(lp.images, hs)
	}
	return lp.placed
}

// place numbers a record's images, the main executable marked. Image
// lists shared by records (an image set) are numbered once: shared says
// the list is one.
func (a *Aggregator) place(images []Image, shared bool) *listPlacement {
	if len(images) == 0 {
		return nil
	}
	if lp, ok := a.placedCache[&images[0]]; shared && ok && len(lp.images) == len(images) {
		return lp
	}
	mainIndex := 0
	for i := range images {
		if images[i].Main {
			mainIndex = i
			break
		}
	}
	lp := &listPlacement{images: images, ids: make([]int32, len(images))}
	for i, im := range images {
		lp.ids[i] = a.imageID(ImageInfo{UUID: im.UUID, Name: im.Name, Path: im.Path, Main: i == mainIndex})
	}
	if shared && len(a.placedCache) < MaxImageSets {
		a.placedCache[&images[0]] = lp
		a.numbered.Store(&images[0], lp.ids)
	}
	return lp
}

// placeImages returns where a record's images hold addresses, by the
// rule every reader of a process's images shares (addrspan.Images: an
// image reaches to its size, or up to the next image; of overlapping
// images the highest loaded wins), numbered by their place in the list.
// It reads nothing of an aggregator: decoding goroutines call it.
func placeImages(images []Image, hs stackHasher) *placement {
	if len(images) == 0 {
		return nil
	}
	spans := addrspan.Images(len(images), func(i int) (uint64, uint64) {
		return uint64(images[i].LoadAddress), uint64(images[i].Size)
	})
	p := make([]placed, len(spans))
	for i, s := range spans {
		im := &images[s.Ref]
		p[i] = placed{start: s.Start, end: s.End, load: uint64(im.LoadAddress), key: hs.keyHash(im.UUID, im.Name), image: int32(s.Ref)}
	}
	pl := newPlacement(p)
	pl.images = len(images)
	return pl
}

// attrsID interns a record's attributes. A record whose attributes were
// seen before is found by their hash and compared field by field, with
// neither a key built nor anything allocated.
func (a *Aggregator) attrsID(rec *Record) int32 {
	var labels uint64
	for k, v := range rec.Labels {
		labels += a.labelHash(k, v) // a sum: the map's order does not matter
	}
	h := a.attrsHash(rec.Thread, rec.Device, rec.OSVersion, rec.AppVersion, labels)
	id, ok := a.attrsTable.lookup(h, func(id int32) bool { return a.attrs[id].sameAs(rec) })
	if ok {
		return id
	}
	sorted := a.labelBuf[:0]
	for k, v := range rec.Labels {
		sorted = append(sorted, Label{k, v})
	}
	if len(sorted) > 1 {
		slices.SortFunc(sorted, func(x, y Label) int { return strings.Compare(x.Key, y.Key) })
	}
	a.labelBuf = sorted
	id = int32(len(a.attrs))
	a.attrs = append(a.attrs, Attributes{Thread: rec.Thread, Device: rec.Device, OSVersion: rec.OSVersion,
		AppVersion: rec.AppVersion, Labels: slices.Clone(sorted)})
	a.attrsTable.insert(h, id)
	return id
}

// attrsIDOf interns a set of attributes another aggregator counted.
func (a *Aggregator) attrsIDOf(at Attributes) int32 {
	var labels uint64
	for _, l := range at.Labels {
		labels += a.labelHash(l.Key, l.Value)
	}
	h := a.attrsHash(at.Thread, at.Device, at.OSVersion, at.AppVersion, labels)
	id, ok := a.attrsTable.lookup(h, func(id int32) bool { return a.attrs[id].equal(&at) })
	if ok {
		return id
	}
	id = int32(len(a.attrs))
	a.attrs = append(a.attrs, at) // the other's labels are not changed after
	a.attrsTable.insert(h, id)
	return id
}

// attrsHash hashes a set of attributes; labels is the sum of their
// labels' hashes.
func (a *Aggregator) attrsHash(thread, device, osVersion, appVersion string, labels uint64) uint64 {
	h := mix(a.stackSeed, maphash.String(a.seed, thread))
	h = mix(h, maphash.String(a.seed, device))
	h = mix(h, maphash.String(a.seed, osVersion))
	h = mix(h, maphash.String(a.seed, appVersion))
	return mix(h, labels)
}

func (a *Aggregator) labelHash(key, value string) uint64 {
	return mix(maphash.String(a.seed, key), maphash.String(a.seed, value))
}

// sameAs reports whether a record has these attributes.
func (at *Attributes) sameAs(rec *Record) bool {
	if at.Thread != rec.Thread || at.Device != rec.Device || at.OSVersion != rec.OSVersion ||
		at.AppVersion != rec.AppVersion || len(at.Labels) != len(rec.Labels) {
		return false
	}
	for _, l := range at.Labels {
		if v, ok := rec.Labels[l.Key]; !ok || v != l.Value {
			return false
		}
	}
	return true
}

func (at *Attributes) equal(b *Attributes) bool {
	return at.Thread == b.Thread && at.Device == b.Device && at.OSVersion == b.OSVersion &&
		at.AppVersion == b.AppVersion && slices.Equal(at.Labels, b.Labels)
}

// Absorb adds everything b counted to a: its images, stacks, attribute
// sets, samples and reporters' names, so that work split over
// aggregators on several goroutines is merged at the end. b is left as
// it was; its counts must not be added again.
func (a *Aggregator) Absorb(b *Aggregator) {
	imageIDs := make([]int32, len(b.images))
	for i, im := range b.images {
		imageIDs[i] = a.imageID(im)
	}
	remap := func(f frameRef) frameRef {
		if f.image >= 0 {
			f.image = imageIDs[f.image]
		}
		return f
	}
	stackIDs := make([]int32, len(b.stacks))
	for i, st := range b.stacks {
		refs := a.refBuf[:0]
		for _, f := range st {
			refs = append(refs, remap(f))
		}
		a.refBuf = refs
		stackIDs[i] = a.stackID(refs)
	}
	attrIDs := make([]int32, len(b.attrs))
	for i, at := range b.attrs {
		attrIDs[i] = a.attrsIDOf(at)
	}
	for _, s := range b.samples {
		first, last := time.Time{}, time.Time{}
		if s.hasFirst {
			first, last = s.first, s.last
		}
		a.addSample(stackIDs[s.stack], attrIDs[s.attrs], s.count, s.weight, first, last)
	}
	for f, name := range b.reporterNames {
		f = remap(f)
		if len(a.reporterNames) >= maxReporterNames {
			break
		}
		if a.reporterNames == nil {
			a.reporterNames = map[frameRef]string{}
		}
		if _, ok := a.reporterNames[f]; !ok {
			a.reporterNames[f] = name
		}
	}
	a.records += b.records
}
