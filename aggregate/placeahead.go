package aggregate

import (
	"slices"
	"sync"
	"sync/atomic"
)

// placedFrames are a record's frames placed by the goroutine that decoded
// it (recordPlacer), ahead of the aggregator, which counts records on one
// goroutine: each frame an offset in an image, and the stack's hash. The
// image is the aggregator's number for it when numbered is set, else its
// place in images. The aggregator takes them when it hashes as by and
// the record's images, once its image set is resolved in stream order,
// are images; otherwise it places the frames itself.
type placedFrames struct {
	ok, numbered bool
	by           stackHasher
	images       []Image
	refs         []frameRef
	hash         uint64
}

// imageSetGuesses are the image sets defined by the records decoded so
// far, on any goroutine: the decoders place the frames of a record that
// names a set with the set they find here. Which definition of a set a
// record sees is decided only when records are delivered in order, so
// this is a guess, checked then (placedFrames).
type imageSetGuesses struct {
	mu      sync.Mutex
	sets    map[string][]Image
	version atomic.Uint64 // changes with every definition
}

func newImageSetGuesses() *imageSetGuesses {
	return &imageSetGuesses{sets: map[string][]Image{}}
}

func (g *imageSetGuesses) define(name string, images []Image) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.sets[name]; !ok && len(g.sets) >= MaxImageSets {
		return // the reader refuses the set: no guess
	}
	g.sets[name] = images
	g.version.Add(1)
}

func (g *imageSetGuesses) lookup(name string) ([]Image, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	images, ok := g.sets[name]
	return images, ok
}

// recordPlacer places the frames of the records one decoding goroutine
// decodes, with its own copies of what it looked up: the image sets it
// guessed (while no set is defined anew) and the image lists it placed.
// An image set the aggregator has numbered the images of (in stream
// order, when it counted the first record of the set) is placed with
// those numbers: the aggregator then takes the frames as they are.
type recordPlacer struct {
	hasher   stackHasher
	guesses  *imageSetGuesses
	numbered *sync.Map // the aggregator's numbers of image sets' images
	version  uint64
	sets     map[string]*guessedSet
	lists    map[*Image]placedList // by list, for image sets guessed again
}

// guessedSet is an image set as a decoding goroutine guessed it.
type guessedSet struct {
	images []Image
	placed placedList // placed when first used
}

// placedList is an image list placed, its images numbered by the
// aggregator or by their place in the list.
type placedList struct {
	p        *placement
	numbered bool
}

func newRecordPlacer(a *Aggregator, guesses *imageSetGuesses) *recordPlacer {
	return &recordPlacer{hasher: a.hasher(), guesses: guesses, numbered: &a.numbered,
		sets: map[string]*guessedSet{}, lists: map[*Image]placedList{}}
}

// place returns an image set's list placed, numbered as soon as the
// aggregator has numbered it.
func (rp *recordPlacer) place(set *guessedSet) placedList {
	if set.placed.numbered {
		return set.placed
	}
	images := set.images
	if set.placed.p == nil {
		pl, ok := rp.lists[&images[0]]
		if !ok || pl.p.images != len(images) {
			pl = placedList{p: placeImages(images, rp.hasher)}
		}
		set.placed = pl
	}
	if set.placed.numbered {
		return set.placed
	}
	if v, ok := rp.numbered.Load(&images[0]); ok {
		if ids := v.([]int32); len(ids) == len(images) {
			numbered := *set.placed.p
			numbered.imgs = slices.Clone(numbered.imgs)
			for k := range numbered.imgs {
				numbered.imgs[k].image = ids[numbered.imgs[k].image]
			}
			set.placed = placedList{p: &numbered, numbered: true}
		}
	}
	if len(rp.lists) >= MaxImageSets {
		clear(rp.lists)
	}
	rp.lists[&images[0]] = set.placed
	return set.placed
}

// placeBatch places the frames of a batch's decoded records (nil for
// none), in order, into refs, which is returned to be kept with them.
func (rp *recordPlacer) placeBatch(recs []*Record, refs []frameRef) []frameRef {
	if v := rp.guesses.version.Load(); v != rp.version {
		clear(rp.sets) // a set may have been defined anew
		rp.version = v
	}
	refs = refs[:0]
	for _, rec := range recs {
		if rec == nil {
			continue
		}
		images := rec.Images
		var pl placedList
		switch {
		case rec.ImageSet != "":
			set := rp.sets[rec.ImageSet]
			switch {
			case images != nil: // a definition
				rp.guesses.define(rec.ImageSet, images)
				set = &guessedSet{images: images}
				rp.sets[rec.ImageSet] = set
			case set == nil:
				guess, ok := rp.guesses.lookup(rec.ImageSet)
				if !ok {
					continue // defined in a batch not decoded yet, or never
				}
				set = &guessedSet{images: guess}
				rp.sets[rec.ImageSet] = set
			}
			if images = set.images; len(images) > 0 {
				pl = rp.place(set)
			}
		case len(images) > 0:
			pl.p = placeImages(images, rp.hasher)
		}
		from := len(refs)
		var h uint64
		refs, h = placeFrames(refs, pl.p, rp.hasher, rec.Frames)
		rec.placed = placedFrames{ok: true, numbered: pl.numbered, by: rp.hasher, images: images, refs: refs[from:len(refs):len(refs)], hash: h}
	}
	return refs
}
