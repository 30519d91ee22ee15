package chunkstore

import (
	"context"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stackimage/stackimage/aggregate"
)

// countingStore counts the chunks read from it.
type countingStore struct {
	Store
	gets atomic.Int64
}

func (c *countingStore) Get(ctx context.Context, key string) (io.ReadCloser, int64, error) {
	if strings.HasPrefix(key, chunkPrefix) {
		c.gets.Add(1)
	}
	return c.Store.Get(ctx, key)
}

// A second query reads no chunk the first decoded, and answers the same.
func TestQueriesShareDecodedChunks(t *testing.T) {
	store := newMemStore()
	writer := newChunks(t, store, 2)
	writer.writingPartials.Store(true)
	for range 3 {
		writeAt(t, writer, time.Now())
	}
	_, prefix, _ := chunkBucket(chunkKeys(t, store)[0])
	if key, err := writer.writePartial(context.Background(), prefix, time.Now()); err != nil || key == "" {
		t.Fatalf("writePartial = %q, %v", key, err)
	}
	writeAt(t, writer, time.Now())
	counting := &countingStore{Store: store}
	c := newChunks(t, counting, 2)
	c.writingPartials.Store(true)
	first := answer(t, c, Query{}, aggregate.GroupOptions{})
	if n := counting.gets.Load(); n != 2 {
		t.Errorf("first query: %d chunks read, want 2 (the partial chunk and the upload after it)", n)
	}
	if again := answer(t, c, Query{}, aggregate.GroupOptions{}); again != first {
		t.Errorf("second query answered\n%s\nwant\n%s", again, first)
	}
	if n := counting.gets.Load(); n != 2 {
		t.Errorf("after the second query: %d chunks read, want still 2", n)
	}
}

// The cache keeps the chunks used last within its bound.
func TestChunkCacheBound(t *testing.T) {
	chunk := func(frames int) *aggregate.Chunk {
		return &aggregate.Chunk{FrameImages: make([]int32, frames), FrameOffsets: make([]uint64, frames)}
	}
	c := newChunkCache(3 * 12 * 100)
	for _, key := range []string{"a", "b", "c"} {
		c.add(key, chunk(100))
	}
	c.get("a") // b is now the least recently used
	c.add("d", chunk(100))
	var kept []string
	for _, key := range []string{"a", "b", "c", "d"} {
		if c.get(key) != nil {
			kept = append(kept, key)
		}
	}
	if strings.Join(kept, "") != "acd" || c.used != 3*12*100 {
		t.Errorf("kept %q in %d bytes, want a, c, d in %d", kept, c.used, 3*12*100)
	}
	c.add("huge", chunk(1000))
	if c.get("huge") != nil || c.get("a") == nil {
		t.Error("a chunk larger than the bound was kept, or made room for")
	}
}
