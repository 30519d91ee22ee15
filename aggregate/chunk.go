package aggregate

import (
	"compress/gzip"
	"encoding/gob"
	"fmt"
	"io"
	"time"

	"github.com/stackimage/stackimage/uuid"
)

// Chunk is an aggregator's counts as data, to keep apart from the process
// (a service keeps one per upload in its object store) and merge later:
// images, unique stacks, attribute sets and samples, nothing symbolicated.
type Chunk struct {
	Images  []ChunkImage
	Stacks  [][]ChunkFrame
	Attrs   []Attributes
	Samples []ChunkSample
	Records int64
	// First and Last bound the samples' timestamps; zero when none had
	// one.
	First, Last time.Time
}

// ChunkImage is an image of a chunk.
type ChunkImage struct {
	UUID       uuid.UUID
	Name, Path string
	Main       bool
}

// ChunkFrame is a frame of a chunk's stack: an offset in Images[Image],
// or an absolute address when Image is -1.
type ChunkFrame struct {
	Image  int32
	Offset uint64
}

// ChunkSample is one unique stack with one set of attributes.
type ChunkSample struct {
	Stack, Attrs  int32
	Count, Weight int64
	First, Last   time.Time // zero when the records had no timestamp
}

// Chunk returns the aggregator's counts. The chunk shares nothing with
// the aggregator.
func (a *Aggregator) Chunk() *Chunk {
	c := &Chunk{Records: a.records, Attrs: make([]Attributes, len(a.attrs))}
	copy(c.Attrs, a.attrs)
	for _, im := range a.images {
		c.Images = append(c.Images, ChunkImage{UUID: im.UUID, Name: im.Name, Path: im.Path, Main: im.Main})
	}
	c.Stacks = make([][]ChunkFrame, len(a.stacks))
	for i, st := range a.stacks {
		frames := make([]ChunkFrame, len(st))
		for k, f := range st {
			frames[k] = ChunkFrame{Image: f.image, Offset: f.offset}
		}
		c.Stacks[i] = frames
	}
	c.Samples = make([]ChunkSample, len(a.samples))
	for i, s := range a.samples {
		c.Samples[i] = ChunkSample{Stack: s.stack, Attrs: s.attrs, Count: s.count, Weight: s.weight}
		if s.hasFirst {
			c.Samples[i].First, c.Samples[i].Last = s.first, s.last
			if c.First.IsZero() || s.first.Before(c.First) {
				c.First = s.first
			}
			if s.last.After(c.Last) {
				c.Last = s.last
			}
		}
	}
	return c
}

// Filter keeps a chunk's sample when it returns true; nil keeps all.
type Filter func(attrs *Attributes, s *ChunkSample) bool

// Merge adds a chunk's samples that keep passes to the aggregator. A
// chunk that does not hold together (an index out of range) is an error,
// and nothing of it is added.
func (a *Aggregator) Merge(c *Chunk, keep Filter) error {
	if err := c.check(); err != nil {
		return err
	}
	imageIDs := make([]int32, len(c.Images))
	for i, im := range c.Images {
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
		imageIDs[i] = id
	}
	stackIDs := make([]int32, len(c.Stacks))
	for i := range stackIDs {
		stackIDs[i] = -1
	}
	attrIDs := make([]int32, len(c.Attrs))
	for i := range attrIDs {
		attrIDs[i] = -1
	}
	for i := range c.Samples {
		s := &c.Samples[i]
		if keep != nil && !keep(&c.Attrs[s.Attrs], s) {
			continue
		}
		if stackIDs[s.Stack] < 0 {
			refs := a.refBuf[:0]
			key := a.keyBuf[:0]
			for _, f := range c.Stacks[s.Stack] {
				ref := frameRef{image: -1, offset: f.Offset}
				if f.Image >= 0 {
					ref.image = imageIDs[f.Image]
				}
				refs = append(refs, ref)
				key = appendRefKey(key, ref)
			}
			a.refBuf, a.keyBuf = refs, key
			stackIDs[s.Stack] = a.stackID(key, refs)
		}
		if attrIDs[s.Attrs] < 0 {
			at := c.Attrs[s.Attrs]
			rec := Record{Thread: at.Thread, Device: at.Device, OSVersion: at.OSVersion, AppVersion: at.AppVersion}
			if len(at.Labels) > 0 {
				rec.Labels = make(map[string]string, len(at.Labels))
				for _, l := range at.Labels {
					rec.Labels[l.Key] = l.Value
				}
			}
			attrIDs[s.Attrs] = a.attrsID(&rec)
		}
		a.addSample(stackIDs[s.Stack], attrIDs[s.Attrs], s.Count, s.Weight, s.First, s.Last)
		a.records += s.Count
	}
	return nil
}

// check verifies every index of the chunk is in range.
func (c *Chunk) check() error {
	for i, st := range c.Stacks {
		for _, f := range st {
			if f.Image < -1 || int(f.Image) >= len(c.Images) {
				return fmt.Errorf("aggregate: chunk stack %d: image %d of %d", i, f.Image, len(c.Images))
			}
		}
	}
	for i, s := range c.Samples {
		if s.Stack < 0 || int(s.Stack) >= len(c.Stacks) || s.Attrs < 0 || int(s.Attrs) >= len(c.Attrs) {
			return fmt.Errorf("aggregate: chunk sample %d: stack %d of %d, attributes %d of %d", i, s.Stack, len(c.Stacks), s.Attrs, len(c.Attrs))
		}
	}
	return nil
}

// MaxChunkBytes bounds what DecodeChunk reads, decompressed.
const MaxChunkBytes = 1 << 30

// EncodeChunk writes a chunk, gob-encoded and gzip-compressed.
func EncodeChunk(w io.Writer, c *Chunk) error {
	zw, err := gzip.NewWriterLevel(w, gzip.BestSpeed)
	if err != nil {
		return err
	}
	if err := gob.NewEncoder(zw).Encode(c); err != nil {
		return err
	}
	return zw.Close()
}

// DecodeChunk reads a chunk EncodeChunk wrote, at most MaxChunkBytes
// decompressed.
func DecodeChunk(r io.Reader) (*Chunk, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("aggregate: chunk: %w", err)
	}
	defer zr.Close()
	c := &Chunk{}
	if err := gob.NewDecoder(io.LimitReader(zr, MaxChunkBytes)).Decode(c); err != nil {
		return nil, fmt.Errorf("aggregate: chunk: %w", err)
	}
	return c, c.check()
}
