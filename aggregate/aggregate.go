package aggregate

import (
	"encoding/binary"
	"hash/maphash"
	"slices"
	"sort"
	"strings"
	"time"

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
	images      []imageInfo
	imageByKey  map[imageKey]int32
	placedCache map[*Image][]placed // by a record's image list, for image sets

	seed        maphash.Seed
	stackByHash map[uint64]int32
	stackByKey  map[string]int32 // stacks whose hash collides with another's
	stacks      [][]frameRef

	attrsByKey map[string]int32
	attrs      []Attributes
	attrsBuf   []byte
	labelBuf   []Label

	sampleByKey map[sampleKey]int32
	samples     []sample

	// reporterNames are the names reports gave their frames' addresses.
	reporterNames map[frameRef]string

	records int64
	keyBuf  []byte
	refBuf  []frameRef
}

// imageInfo is one image of the aggregate, told apart by UUID.
type imageInfo struct {
	UUID uuid.UUID
	Name string
	Path string
	Main bool // some record named it its main executable
}

// imageKey tells images apart: by UUID, and by name for images without
// one.
type imageKey struct {
	id   uuid.UUID
	name string
}

// placed is an image of one record where it was loaded, [start, end).
type placed struct {
	start, end uint64
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

type sampleKey struct{ stack, attrs int32 }

// sample is one unique stack with one set of attributes.
type sample struct {
	stack, attrs  int32
	count, weight int64
	first, last   time.Time
	hasFirst      bool
}

// New returns an empty aggregator.
func New() *Aggregator {
	return &Aggregator{
		imageByKey:  map[imageKey]int32{},
		placedCache: map[*Image][]placed{},
		seed:        maphash.MakeSeed(),
		stackByHash: map[uint64]int32{},
		stackByKey:  map[string]int32{},
		attrsByKey:  map[string]int32{},
		sampleByKey: map[sampleKey]int32{},
	}
}

// Records returns how many records were added.
func (a *Aggregator) Records() int64 { return a.records }

// UniqueStacks returns how many distinct stacks were added.
func (a *Aggregator) UniqueStacks() int { return len(a.stacks) }

// Add counts one record. The record is not kept: Add copies what it needs.
func (a *Aggregator) Add(rec *Record) {
	a.addPlaced(a.place(rec.Images, rec.ImageSet != ""), rec)
}

// AddBatch counts records in order; records sharing one Images slice
// (DumpRecords' of one dump) have their images placed once.
func (a *Aggregator) AddBatch(recs []*Record) {
	var lastImages *Image
	var imgs []placed
	for _, rec := range recs {
		switch {
		case rec.ImageSet != "":
			a.Add(rec)
			continue
		case len(rec.Images) == 0:
			imgs = nil
			lastImages = nil
		case &rec.Images[0] != lastImages:
			imgs = a.place(rec.Images, false)
			lastImages = &rec.Images[0]
		}
		a.addPlaced(imgs, rec)
	}
}

// addPlaced counts a record whose images are placed already.
func (a *Aggregator) addPlaced(imgs []placed, rec *Record) {
	a.records++
	refs := a.refBuf[:0]
	key := a.keyBuf[:0]
	last := -1 // the image of the previous frame: callers are mostly in the callee's image
	for _, addr := range rec.Frames {
		ref := frameRef{image: -1, offset: addr}
		k := last
		if k < 0 || addr < imgs[k].start || addr >= imgs[k].end {
			k = sort.Search(len(imgs), func(k int) bool { return imgs[k].start > addr }) - 1
		}
		if k >= 0 && addr < imgs[k].end {
			ref = frameRef{image: imgs[k].image, offset: addr - imgs[k].start}
			last = k
		}
		refs = append(refs, ref)
		key = appendRefKey(key, ref)
	}
	a.refBuf, a.keyBuf = refs, key
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
	stack := a.stackID(key, refs)
	w := rec.Weight
	if w <= 0 {
		w = 1
	}
	a.addSample(stack, a.attrsID(rec), 1, w, rec.Timestamp, rec.Timestamp)
}

// maxReporterNames bounds the reporters' names kept.
const maxReporterNames = 1 << 20

// appendRefKey appends a frame to a stack's key.
func appendRefKey(key []byte, ref frameRef) []byte {
	key = binary.LittleEndian.AppendUint32(key, uint32(ref.image))
	return binary.LittleEndian.AppendUint64(key, ref.offset)
}

// addSample counts records of one stack and attribute set, seen between
// first and last (zero when unknown).
func (a *Aggregator) addSample(stack, attrs int32, count, weight int64, first, last time.Time) {
	sk := sampleKey{stack, attrs}
	id, ok := a.sampleByKey[sk]
	if !ok {
		id = int32(len(a.samples))
		a.samples = append(a.samples, sample{stack: stack, attrs: attrs})
		a.sampleByKey[sk] = id
	}
	s := &a.samples[id]
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

// stackID interns a stack. Stacks are found by a 64-bit hash of their
// key and confirmed against the stored frames: a map of long string keys
// cost twice as much, hashing and comparing the keys at every record.
// Stacks whose hash another stack has are kept by their whole key.
func (a *Aggregator) stackID(key []byte, refs []frameRef) int32 {
	h := maphash.Bytes(a.seed, key)
	id, ok := a.stackByHash[h]
	if ok && slices.Equal(a.stacks[id], refs) {
		return id
	}
	if ok {
		if id, ok := a.stackByKey[string(key)]; ok {
			return id
		}
	}
	id = int32(len(a.stacks))
	a.stacks = append(a.stacks, slices.Clone(refs))
	if ok {
		a.stackByKey[string(key)] = id // a hash collision: rare
	} else {
		a.stackByHash[h] = id
	}
	return id
}

// imageID returns the number of im among a's images, adding it if it is
// new. An image is the main executable if any record said so, and keeps
// the first path it was given.
func (a *Aggregator) imageID(im imageInfo) int32 {
	key := imageKey{id: im.UUID}
	if im.UUID.IsZero() {
		key.name = im.Name
	}
	id, ok := a.imageByKey[key]
	if !ok {
		id = int32(len(a.images))
		a.images = append(a.images, imageInfo{UUID: im.UUID, Name: im.Name, Path: im.Path})
		a.imageByKey[key] = id
	}
	a.images[id].Main = a.images[id].Main || im.Main
	if a.images[id].Path == "" {
		a.images[id].Path = im.Path
	}
	return id
}

// place returns a record's images sorted by load address, each reaching
// to its size or up to the next image. Image lists shared by records (an
// image set) are placed once: shared says the list is one.
func (a *Aggregator) place(images []Image, shared bool) []placed {
	if len(images) == 0 {
		return nil
	}
	if p, ok := a.placedCache[&images[0]]; shared && ok && len(p) == len(images) {
		return p
	}
	mainIndex := 0
	for i := range images {
		if images[i].Main {
			mainIndex = i
			break
		}
	}
	p := make([]placed, len(images))
	for i, im := range images {
		id := a.imageID(imageInfo{UUID: im.UUID, Name: im.Name, Path: im.Path, Main: i == mainIndex})
		end := uint64(im.LoadAddress) + uint64(im.Size)
		if im.Size == 0 || end < uint64(im.LoadAddress) {
			end = ^uint64(0) // cut at the next image below
		}
		p[i] = placed{start: uint64(im.LoadAddress), end: end, image: id}
	}
	sort.SliceStable(p, func(i, j int) bool { return p[i].start < p[j].start })
	for i := range len(p) - 1 {
		p[i].end = min(p[i].end, p[i+1].start)
	}
	if shared && len(a.placedCache) < MaxImageSets {
		a.placedCache[&images[0]] = p
	}
	return p
}

// attrsID interns a record's attributes. The key is built in a reused
// buffer, so a record whose attributes were seen before allocates nothing.
func (a *Aggregator) attrsID(rec *Record) int32 {
	labels := a.labelBuf[:0]
	for k, v := range rec.Labels {
		labels = append(labels, Label{k, v})
	}
	if len(labels) > 1 {
		slices.SortFunc(labels, func(x, y Label) int { return strings.Compare(x.Key, y.Key) })
	}
	key := attrsKey(a.attrsBuf[:0], rec.Thread, rec.Device, rec.OSVersion, rec.AppVersion, labels)
	a.labelBuf = labels
	a.attrsBuf = key
	if id, ok := a.attrsByKey[string(key)]; ok {
		return id
	}
	id := int32(len(a.attrs))
	a.attrs = append(a.attrs, Attributes{Thread: rec.Thread, Device: rec.Device, OSVersion: rec.OSVersion,
		AppVersion: rec.AppVersion, Labels: slices.Clone(labels)})
	a.attrsByKey[string(key)] = id
	return id
}

// attrsKey appends the key of a set of attributes, labels sorted by key.
func attrsKey(key []byte, thread, device, osVersion, appVersion string, labels []Label) []byte {
	for _, s := range [...]string{thread, device, osVersion, appVersion} {
		key = append(key, s...)
		key = append(key, 0)
	}
	for _, l := range labels {
		key = append(key, l.Key...)
		key = append(key, 0)
		key = append(key, l.Value...)
		key = append(key, 0)
	}
	return key
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
		key := a.keyBuf[:0]
		for _, f := range st {
			f = remap(f)
			refs = append(refs, f)
			key = appendRefKey(key, f)
		}
		a.refBuf, a.keyBuf = refs, key
		stackIDs[i] = a.stackID(key, refs)
	}
	attrIDs := make([]int32, len(b.attrs))
	for i, at := range b.attrs {
		key := attrsKey(a.attrsBuf[:0], at.Thread, at.Device, at.OSVersion, at.AppVersion, at.Labels)
		a.attrsBuf = key
		id, ok := a.attrsByKey[string(key)]
		if !ok {
			id = int32(len(a.attrs))
			a.attrs = append(a.attrs, at) // b's labels are not changed after
			a.attrsByKey[string(key)] = id
		}
		attrIDs[i] = id
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
