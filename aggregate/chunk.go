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
// Stacks and samples are kept as flat arrays of numbers, which gob reads
// some ten times as fast as slices of structs.
type Chunk struct {
	Images []ChunkImage
	// StackLens[i] is the number of frames of stack i; its frames are the
	// next StackLens[i] entries of FrameImages and FrameOffsets, stacks in
	// order. A frame is an offset in Images[FrameImages[k]], or an
	// absolute address when that is -1.
	StackLens    []uint32
	FrameImages  []int32
	FrameOffsets []uint64
	Attrs        []Attributes
	// Sample k is stack SampleStacks[k] with attributes SampleAttrs[k],
	// seen SampleCounts[k] times, weighing SampleWeights[k], between the
	// Unix nanoseconds SampleFirst[k] and SampleLast[k] (0 for none).
	SampleStacks, SampleAttrs   []int32
	SampleCounts, SampleWeights []int64
	SampleFirst, SampleLast     []int64
	Records                     int64
	// First and Last bound the samples' timestamps; zero when none had
	// one.
	First, Last time.Time
	// Replaces names the stored chunks this one was merged from, and
	// those they replaced in turn (package chunkstore compacting them):
	// a reader that sees this chunk skips them, so that no stack is
	// counted twice while they are being deleted. Empty for a chunk of
	// one upload.
	Replaces []string
}

// ChunkImage is an image of a chunk.
type ChunkImage struct {
	UUID       uuid.UUID
	Name, Path string
	Main       bool
}

// ChunkSample is one sample of a chunk, as a filter sees it.
type ChunkSample struct {
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
	c.StackLens = make([]uint32, len(a.stacks))
	for i, st := range a.stacks {
		c.StackLens[i] = uint32(len(st))
		for _, f := range st {
			c.FrameImages = append(c.FrameImages, f.image)
			c.FrameOffsets = append(c.FrameOffsets, f.offset)
		}
	}
	n := len(a.samples)
	c.SampleStacks, c.SampleAttrs = make([]int32, n), make([]int32, n)
	c.SampleCounts, c.SampleWeights = make([]int64, n), make([]int64, n)
	c.SampleFirst, c.SampleLast = make([]int64, n), make([]int64, n)
	for i, s := range a.samples {
		c.SampleStacks[i], c.SampleAttrs[i], c.SampleCounts[i], c.SampleWeights[i] = s.stack, s.attrs, s.count, s.weight
		if s.hasFirst {
			c.SampleFirst[i], c.SampleLast[i] = s.first.UnixNano(), s.last.UnixNano()
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

func unixNanoOrZero(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// Merge adds a chunk's samples that keep passes to the aggregator. A
// chunk that does not hold together (an index out of range) is an error,
// and nothing of it is added.
func (a *Aggregator) Merge(c *Chunk, keep Filter) error {
	starts, err := c.check()
	if err != nil {
		return err
	}
	imageIDs := make([]int32, len(c.Images))
	for i, im := range c.Images {
		imageIDs[i] = a.imageID(ImageInfo{UUID: im.UUID, Name: im.Name, Path: im.Path, Main: im.Main})
	}
	stackIDs := make([]int32, len(c.StackLens))
	for i := range stackIDs {
		stackIDs[i] = -1
	}
	attrIDs := make([]int32, len(c.Attrs))
	for i := range attrIDs {
		attrIDs[i] = -1
	}
	for k := range c.SampleStacks {
		st, at := c.SampleStacks[k], c.SampleAttrs[k]
		cs := ChunkSample{Count: c.SampleCounts[k], Weight: c.SampleWeights[k],
			First: unixNanoOrZero(c.SampleFirst[k]), Last: unixNanoOrZero(c.SampleLast[k])}
		if keep != nil && !keep(&c.Attrs[at], &cs) {
			continue
		}
		if stackIDs[st] < 0 {
			refs := a.refBuf[:0]
			from := starts[st]
			for j := from; j < from+int(c.StackLens[st]); j++ {
				ref := frameRef{image: -1, offset: c.FrameOffsets[j]}
				if im := c.FrameImages[j]; im >= 0 {
					ref.image = imageIDs[im]
				}
				refs = append(refs, ref)
			}
			a.refBuf = refs
			stackIDs[st] = a.stackID(refs)
		}
		if attrIDs[at] < 0 {
			attrs := c.Attrs[at]
			rec := Record{Thread: attrs.Thread, Device: attrs.Device, OSVersion: attrs.OSVersion, AppVersion: attrs.AppVersion}
			if len(attrs.Labels) > 0 {
				rec.Labels = make(map[string]string, len(attrs.Labels))
				for _, l := range attrs.Labels {
					rec.Labels[l.Key] = l.Value
				}
			}
			attrIDs[at] = a.attrsID(&rec)
		}
		a.addSample(stackIDs[st], attrIDs[at], cs.Count, cs.Weight, cs.First, cs.Last)
		a.records += cs.Count
	}
	return nil
}

// check verifies every index and length of the chunk is in range, and
// returns where each stack's frames start.
func (c *Chunk) check() ([]int, error) {
	if len(c.FrameImages) != len(c.FrameOffsets) {
		return nil, fmt.Errorf("aggregate: chunk: %d frame images, %d offsets", len(c.FrameImages), len(c.FrameOffsets))
	}
	n := len(c.SampleStacks)
	if len(c.SampleAttrs) != n || len(c.SampleCounts) != n || len(c.SampleWeights) != n || len(c.SampleFirst) != n || len(c.SampleLast) != n {
		return nil, fmt.Errorf("aggregate: chunk: sample arrays of different lengths")
	}
	starts := make([]int, len(c.StackLens))
	at := 0
	for i, l := range c.StackLens {
		starts[i] = at
		if uint64(l) > uint64(len(c.FrameImages)-at) {
			return nil, fmt.Errorf("aggregate: chunk stack %d: %d frames past the %d there are", i, l, len(c.FrameImages))
		}
		at += int(l)
	}
	for k, im := range c.FrameImages {
		if im < -1 || int(im) >= len(c.Images) {
			return nil, fmt.Errorf("aggregate: chunk frame %d: image %d of %d", k, im, len(c.Images))
		}
	}
	for k := range n {
		if st, at := c.SampleStacks[k], c.SampleAttrs[k]; st < 0 || int(st) >= len(c.StackLens) || at < 0 || int(at) >= len(c.Attrs) {
			return nil, fmt.Errorf("aggregate: chunk sample %d: stack %d of %d, attributes %d of %d", k, st, len(c.StackLens), at, len(c.Attrs))
		}
	}
	return starts, nil
}

// MaxChunkBytes bounds what DecodeChunk reads, decompressed.
const MaxChunkBytes = 1 << 30

// EncodeChunk writes a chunk, gob-encoded and gzip-compressed. A chunk
// that DecodeChunk could not read back, more than MaxChunkBytes
// decompressed, is an error.
func EncodeChunk(w io.Writer, c *Chunk) error {
	return encodeChunk(w, c, MaxChunkBytes)
}

func encodeChunk(w io.Writer, c *Chunk, limit int64) error {
	zw, err := gzip.NewWriterLevel(w, gzip.BestSpeed)
	if err != nil {
		return err
	}
	lw := &limitedWriter{w: zw, left: limit}
	if err := gob.NewEncoder(lw).Encode(c); err != nil {
		return err
	}
	return zw.Close()
}

// limitedWriter fails a write that takes it past its limit.
type limitedWriter struct {
	w    io.Writer
	left int64
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > l.left {
		return 0, fmt.Errorf("aggregate: chunk: more than the %d bytes a chunk may hold", MaxChunkBytes)
	}
	l.left -= int64(len(p))
	return l.w.Write(p)
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
	if _, err := c.check(); err != nil {
		return nil, err
	}
	return c, nil
}
