package chunkstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stackimage/stackimage/aggregate"
	"github.com/stackimage/stackimage/lookup"
)

// Store is what the chunks need of an object store: objects by key,
// listed by prefix.
type Store interface {
	// Get opens the object at key with its size; an error matching
	// lookup.ErrNotFound when it is absent.
	Get(ctx context.Context, key string) (io.ReadCloser, int64, error)
	// Put writes the object at key; with onlyIfAbsent it writes nothing,
	// and returns an error, when the key already exists.
	Put(ctx context.Context, key string, r io.Reader, size int64, onlyIfAbsent bool) error
	// Stat returns the size of the object at key and a tag that changes
	// when it does; an error matching lookup.ErrNotFound when absent.
	Stat(ctx context.Context, key string) (int64, string, error)
	// List returns the keys under prefix, sorted.
	List(ctx context.Context, prefix string) ([]string, error)
	// Remove deletes the object at key; a key already absent is no error.
	Remove(ctx context.Context, key string) error
}

// Config tunes Chunks; its zero value is the documented defaults.
type Config struct {
	// QueryTimeout is the longest an upload or a query may take (a
	// service's request deadline; zero means 30 s). An hour is compacted
	// once it has ended by that and 5 minutes more, for uploads still
	// being written and clocks that differ; an outranked partial chunk is
	// deleted once no query may still be reading it; background work is
	// given ten times as long.
	QueryTimeout time.Duration
	// CacheBytes bounds the decoded chunks kept for the next query; zero
	// means 256 MB.
	CacheBytes int64
	// PartialStep is how many uploads of an open hour a partial chunk may
	// miss before a new one is written (at least 1/16 of those it holds
	// besides), at the next check, which an instance makes every eighth
	// of the step of its uploads and after each query; zero means 50, a
	// negative value writes none.
	PartialStep int
	// Now tells the time that names uploads and closes hours; nil means
	// time.Now.
	Now func() time.Time
	// Compacted, when set, is told how each background compaction ended.
	Compacted func(err error)
	// PartialWritten, when set, is told of each partial chunk written
	// in the background, or that failed.
	PartialWritten func(err error)
}

const (
	defaultQueryTimeout = 30 * time.Second
	defaultPartialStep  = 50
	// defaultCacheBytes bounds the decoded chunks an instance keeps: the
	// partial chunk of an hour of a million stacks takes some 40 MB.
	defaultCacheBytes = 256 << 20
)

// Chunks are the aggregates kept in a store. Its methods may be called
// at once from several goroutines, and several Chunks (in one process
// or many) may share one store.
type Chunks struct {
	store Store
	cfg   Config
	// compacting is set while a compaction runs, writingPartials while
	// partial chunks are being written: one of each at a time.
	compacting      atomic.Bool
	writingPartials atomic.Bool
	// unchecked counts the uploads since one last started the check for
	// partial chunks (partialCheckEvery).
	unchecked atomic.Int64
	// background counts the work started after an upload or a query;
	// closed stops starting more.
	background sync.WaitGroup
	closeMu    sync.Mutex
	closed     bool
	// cache holds the chunks decoded lately.
	cache *chunkCache
}

// New returns the chunks kept in store.
func New(store Store, cfg Config) *Chunks {
	if cfg.QueryTimeout <= 0 {
		cfg.QueryTimeout = defaultQueryTimeout
	}
	if cfg.CacheBytes <= 0 {
		cfg.CacheBytes = defaultCacheBytes
	}
	if cfg.PartialStep == 0 {
		cfg.PartialStep = defaultPartialStep
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Chunks{store: store, cfg: cfg, cache: newChunkCache(cfg.CacheBytes)}
}

// Wait waits for the background work started so far.
func (c *Chunks) Wait() { c.background.Wait() }

// Close waits for the background work and starts no more.
func (c *Chunks) Close() error {
	c.closeMu.Lock()
	c.closed = true
	c.closeMu.Unlock()
	c.background.Wait()
	return nil
}

// goBackground runs fn in the background unless Close was called.
func (c *Chunks) goBackground(fn func()) bool {
	c.closeMu.Lock()
	defer c.closeMu.Unlock()
	if c.closed {
		return false
	}
	c.background.Add(1)
	go func() {
		defer c.background.Done()
		fn()
	}()
	return true
}

// ErrEncode is Write's error for a chunk that could not be encoded (one
// past aggregate.MaxChunkBytes); any other is the store's.
var ErrEncode = errors.New("the chunk could not be encoded")

// Write stores a chunk of one upload and returns its key. Once it has
// returned without error the chunk is in the store: what was
// acknowledged survives the instance. Every partialCheckEvery uploads it
// starts, in the background, the partial chunk of the hour when one is
// due.
func (c *Chunks) Write(ctx context.Context, chunk *aggregate.Chunk) (string, error) {
	var buf bytes.Buffer
	if err := aggregate.EncodeChunk(&buf, chunk); err != nil {
		return "", fmt.Errorf("%w: %v", ErrEncode, err)
	}
	key := chunkKey(chunk, c.cfg.Now())
	if err := c.store.Put(ctx, key, bytes.NewReader(buf.Bytes()), int64(buf.Len()), true); err != nil {
		return "", err
	}
	if n := c.unchecked.Add(1); n >= int64(partialCheckEvery(c.cfg.PartialStep)) && c.writePartialsSoon([]string{key}, false) {
		c.unchecked.Add(-n)
	}
	return key, nil
}

// Merge merges the stored chunks the query may need into a new
// aggregator, keeping the samples it passes. A chunk deleted between
// listing and reading was merged into another by a compaction: the
// chunks are listed again. It starts, in the background, the compaction
// of the closed hours and the partial chunks of the open ones that are
// due.
func (c *Chunks) Merge(ctx context.Context, q *Query) (*aggregate.Aggregator, error) {
	for attempt := 0; ; attempt++ {
		agg, err := c.merge(ctx, q)
		if errors.Is(err, lookup.ErrNotFound) && attempt < 3 {
			continue
		}
		return agg, err
	}
}

// merge lists the chunks and merges those the query may need.
func (c *Chunks) merge(ctx context.Context, q *Query) (*aggregate.Aggregator, error) {
	keys, err := c.store.List(ctx, chunkPrefix)
	if err != nil {
		return nil, err
	}
	c.compactSoon(keys)
	// Once this query has merged what it reads: the partial chunks'
	// merging would take the cores from it.
	defer c.writePartialsSoon(keys, true)
	// A sample merged from several uploads spans all their timestamps:
	// a query for a time range leaves partial chunks aside and reads the
	// open hours' uploads themselves, to answer as they would.
	timeRange := !q.From.IsZero() || !q.To.IsZero()
	var wanted []string
	for _, key := range keys {
		if strings.HasSuffix(key, ".chunk") && q.mayHold(key) && !(timeRange && strings.HasSuffix(key, partialSuffix)) {
			wanted = append(wanted, key)
		}
	}
	set, err := c.resolveChunks(ctx, wanted)
	if err != nil {
		return nil, err
	}
	agg := aggregate.New()
	if err := c.mergeInto(ctx, set, agg, q.Keep); err != nil {
		return nil, err
	}
	return agg, nil
}

// compactSoon starts compacting, in the background, the closed hours
// among keys holding more than one chunk; one compaction at a time.
func (c *Chunks) compactSoon(keys []string) {
	clock := c.startClock()
	if len(c.closedBuckets(keys, clock())) == 0 || !c.compacting.CompareAndSwap(false, true) {
		return
	}
	started := c.goBackground(func() {
		defer c.compacting.Store(false)
		ctx, cancel := context.WithTimeout(context.Background(), 10*c.cfg.QueryTimeout)
		defer cancel()
		// A failure leaves the chunks as they were; the next query tries again.
		err := c.compactAt(ctx, clock())
		if c.cfg.Compacted != nil {
			c.cfg.Compacted(err)
		}
	})
	if !started {
		c.compacting.Store(false)
	}
}

// startClock reads Config.Now once, on the calling goroutine, and
// returns the clock of the background work it starts: that time, going
// on. The work does not call Now itself, so a clock a test replaces
// under it is read where the upload or query was.
func (c *Chunks) startClock() func() time.Time {
	start, began := c.cfg.Now(), time.Now()
	return func() time.Time { return start.Add(time.Since(began)) }
}

// readChunk reads one chunk from the store, or from the chunks decoded
// before. The chunk is shared: it must not be changed.
func (c *Chunks) readChunk(ctx context.Context, key string) (*aggregate.Chunk, error) {
	if chunk := c.cache.get(key); chunk != nil {
		return chunk, nil
	}
	rc, _, err := c.store.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	chunk, err := aggregate.DecodeChunk(rc)
	if err != nil {
		return nil, err
	}
	c.cache.add(key, chunk)
	return chunk, nil
}
