package chunkstore

import (
	"container/list"
	"sync"

	"github.com/stackimage/stackimage/aggregate"
)

// chunkCache keeps decoded chunks by key, dropping the least recently
// used past its bound, so that a query does not decode again what the
// one before decoded (an hour's partial or final chunk above all).
//
// A key names one content for good, so a chunk kept by key is what the
// store holds under it, whichever instance wrote it: an upload's key is
// new and random, a merged chunk's is made from what it merges and
// written once (first write wins). A chunk deleted from the store is no
// longer listed, so no longer asked for; one asked for by a query that
// listed it before it was deleted answers as the store did then.
// Chunks are shared: whoever reads one must not change it.
type chunkCache struct {
	mu      sync.Mutex
	max     int64
	used    int64
	entries map[string]*list.Element
	recent  list.List // of *cachedChunk, the most recently used first
}

type cachedChunk struct {
	key   string
	chunk *aggregate.Chunk
	size  int64
}

func newChunkCache(max int64) *chunkCache {
	return &chunkCache{max: max, entries: map[string]*list.Element{}}
}

// get returns the chunk kept under key, or nil.
func (c *chunkCache) get(key string) *aggregate.Chunk {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok {
		return nil
	}
	c.recent.MoveToFront(e)
	return e.Value.(*cachedChunk).chunk
}

// add keeps chunk under key, unless it alone passes the bound.
func (c *chunkCache) add(key string, chunk *aggregate.Chunk) {
	size := decodedSize(chunk)
	if size > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[key]; ok {
		return
	}
	c.entries[key] = c.recent.PushFront(&cachedChunk{key: key, chunk: chunk, size: size})
	c.used += size
	for c.used > c.max {
		old := c.recent.Remove(c.recent.Back()).(*cachedChunk)
		delete(c.entries, old.key)
		c.used -= old.size
	}
}

// decodedSize is about the memory a decoded chunk holds.
func decodedSize(c *aggregate.Chunk) int64 {
	size := int64(4*len(c.StackLens) + 12*len(c.FrameImages) + 40*len(c.SampleStacks))
	for _, a := range c.Attrs {
		size += int64(64 + len(a.Thread) + len(a.Device) + len(a.OSVersion) + len(a.AppVersion))
		for _, l := range a.Labels {
			size += int64(32 + len(l.Key) + len(l.Value))
		}
	}
	for _, im := range c.Images {
		size += int64(64 + len(im.Name) + len(im.Path))
	}
	for _, r := range c.Replaces {
		size += int64(16 + len(r))
	}
	return size
}
