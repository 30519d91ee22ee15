package chunkstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stackimage/stackimage/aggregate"
)

// Compaction merges the chunks of an hour into one, so that a query
// decodes and merges each unique stack of the hour once instead of once
// per upload. It runs in two steps, each safe to be cut short:
//
//  1. The merged chunk is written (first write wins) under a key made
//     from the names of the chunks it merges, and it names them in
//     Chunk.Replaces. From then on readers skip them.
//  2. The merged chunks are deleted.
//
// A crash after step 1 leaves chunks that a reader skips and that the
// next compaction deletes; a crash before it leaves the hour as it was.
// Two instances compacting the same hour list the same chunks, make the
// same key and write the same chunk once.

// compactionGrace is how long after its hour ends a bucket is left
// alone: uploads accepted within the hour may still be being written
// (for up to a request's deadline), and instances' clocks differ.
func (c *Chunks) compactionGrace() time.Duration {
	return c.cfg.QueryTimeout + 5*time.Minute
}

// chunkSet is what a reader counts of a list of chunk keys.
type chunkSet struct {
	// keys are the chunks to count: the final ones, the partial ones,
	// then the others, each in key order.
	keys []string
	// merged are the final and partial chunks among keys, already read.
	merged map[string]*aggregate.Chunk
	// replaced are listed keys that a listed final chunk replaces.
	replaced []string
	// covered are listed uploads that a partial chunk among keys holds:
	// not counted, and kept until their hour's final chunk is written.
	covered []string
	// stale are listed partial chunks not counted: an hour holds one
	// with more uploads, or a final chunk.
	stale []string
	// readAhead are uploads already read, while the partial chunks were:
	// those among keys need not be read again.
	readAhead map[string]*aggregate.Chunk
}

// resolveChunks reads the final and partial chunks among keys and keeps,
// of each hour, the final chunks no other final chunk subsumes
// (subsumedFinals) and the uploads they do not replace;
// or, in an hour without a final chunk, the partial chunk that holds the
// most uploads and the uploads it does not hold.
//
// Partial chunks are only ever an abbreviation: the uploads a partial
// chunk holds are not deleted while its hour is open, so whichever one a
// reader picks, it counts every upload once. That is what lets any
// instance write them at any time, racing others and late uploads.
func (c *Chunks) resolveChunks(ctx context.Context, keys []string) (*chunkSet, error) {
	var finalKeys, partialKeys, plain []string
	for _, key := range keys {
		switch {
		case strings.HasSuffix(key, compactSuffix):
			finalKeys = append(finalKeys, key)
		case strings.HasSuffix(key, partialSuffix):
			partialKeys = append(partialKeys, key)
		default:
			plain = append(plain, key)
		}
	}
	set := &chunkSet{merged: map[string]*aggregate.Chunk{}}
	replaced := map[string]bool{}
	finalHours := map[string]bool{}
	err := c.eachChunk(ctx, finalKeys, func(key string, chunk *aggregate.Chunk) error {
		set.merged[key] = chunk
		for _, r := range chunk.Replaces {
			replaced[r] = true
		}
		_, prefix, _ := chunkBucket(key)
		finalHours[prefix] = true
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, key := range subsumedFinals(finalKeys, set.merged) {
		replaced[key] = true
	}
	// The partial chunk of each hour without a final one: the one
	// holding the most uploads, the latest of those.
	best := map[string]string{}
	for _, key := range partialKeys {
		_, prefix, _ := chunkBucket(key)
		if replaced[key] || finalHours[prefix] {
			continue
		}
		if b, ok := best[prefix]; !ok || partialOrder(key, b) > 0 {
			best[prefix] = key
		}
	}
	var chosen []string
	for _, key := range partialKeys {
		if _, prefix, _ := chunkBucket(key); best[prefix] == key {
			chosen = append(chosen, key)
		}
	}
	covered := map[string]bool{}
	ahead := c.readAhead(ctx, uploadsAfter(chosen, plain))
	err = c.eachChunk(ctx, chosen, func(key string, chunk *aggregate.Chunk) error {
		set.merged[key] = chunk
		for _, r := range chunk.Replaces {
			covered[r] = true
		}
		return nil
	})
	set.readAhead = ahead.stop()
	if err != nil {
		return nil, err
	}
	for _, key := range finalKeys {
		if replaced[key] {
			set.replaced = append(set.replaced, key)
			delete(set.merged, key)
		} else {
			set.keys = append(set.keys, key)
		}
	}
	for _, key := range partialKeys {
		_, prefix, _ := chunkBucket(key)
		switch {
		case replaced[key]:
			set.replaced = append(set.replaced, key)
		case best[prefix] == key:
			set.keys = append(set.keys, key)
		default:
			set.stale = append(set.stale, key)
		}
	}
	for _, key := range plain {
		switch {
		case replaced[key]:
			set.replaced = append(set.replaced, key)
		case covered[key]:
			set.covered = append(set.covered, key)
		default:
			set.keys = append(set.keys, key)
		}
	}
	return set, nil
}

// subsumedFinals returns the final chunks among keys whose sources
// another final chunk of the same hour replaces too: that one counts
// them. Two instances compacting one hour at once, one having listed an
// upload that landed after the hour's grace and one not, write two final
// chunks, the later listing's replacing all that the other's does. Of
// two that replace the same, the one with the greater key is subsumed.
func subsumedFinals(keys []string, chunks map[string]*aggregate.Chunk) []string {
	byHour := map[string][]string{}
	for _, key := range keys {
		if _, prefix, ok := chunkBucket(key); ok && chunks[key] != nil {
			byHour[prefix] = append(byHour[prefix], key)
		}
	}
	var out []string
	for _, hour := range byHour {
		if len(hour) < 2 {
			continue
		}
		sets := make(map[string]map[string]bool, len(hour))
		for _, key := range hour {
			set := make(map[string]bool, len(chunks[key].Replaces))
			for _, r := range chunks[key].Replaces {
				set[r] = true
			}
			sets[key] = set
		}
		for _, a := range hour {
			for _, b := range hour {
				if a == b || len(sets[a]) > len(sets[b]) || len(sets[a]) == len(sets[b]) && a < b {
					continue
				}
				if holdsAll(sets[b], sets[a]) {
					out = append(out, a)
					break
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// holdsAll reports whether every key of sub is in set.
func holdsAll(set, sub map[string]bool) bool {
	for k := range sub {
		if !set[k] {
			return false
		}
	}
	return true
}

// mergeInto merges the set's chunks into agg, keeping the samples keep
// passes. The chunks not merged already are cut into runs of
// consecutive keys, one per core (one fewer when there are merged chunks,
// which the calling goroutine merges meanwhile), each read and merged
// into an aggregator of its own, and those are added to agg in order:
// the answer does not depend on which core ends first.
func (c *Chunks) mergeInto(ctx context.Context, set *chunkSet, agg *aggregate.Aggregator, keep aggregate.Filter) error {
	var plain, merged []string
	for _, key := range set.keys {
		if _, ok := set.merged[key]; ok {
			merged = append(merged, key)
		} else {
			plain = append(plain, key)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops the other runs when a chunk fails
	cores := runtime.GOMAXPROCS(0)
	if len(merged) > 0 && cores > 1 {
		cores--
	}
	runs := min(cores, len(plain))
	parts := make([]*aggregate.Aggregator, runs)
	errs := make([]error, runs+1)
	var wg sync.WaitGroup
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			parts[i] = aggregate.New()
			for _, key := range plain[i*len(plain)/runs : (i+1)*len(plain)/runs] {
				chunk, err := set.readAhead[key], error(nil)
				if chunk == nil {
					chunk, err = c.readChunk(ctx, key)
				}
				if err == nil {
					err = parts[i].Merge(chunk, keep)
				}
				if err != nil {
					errs[i] = fmt.Errorf("%s: %w", key, err)
					cancel()
					return
				}
			}
		}()
	}
	for _, key := range merged {
		if err := agg.Merge(set.merged[key], keep); err != nil {
			errs[runs] = fmt.Errorf("%s: %w", key, err)
			cancel()
			break
		}
	}
	wg.Wait()
	for _, err := range errs { // the error that stopped the others
		if err != nil && !errors.Is(err, context.Canceled) {
			return err
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for _, part := range parts {
		agg.Absorb(part)
	}
	return nil
}

// eachChunk reads and decodes the chunks at keys on every core and calls
// fn with each in key order (so that the answer does not depend on which
// decode ends first), on the calling goroutine.
func (c *Chunks) eachChunk(ctx context.Context, keys []string, fn func(key string, chunk *aggregate.Chunk) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops the decoders when a chunk fails
	type decoded struct {
		chunk *aggregate.Chunk
		err   error
		done  chan struct{}
	}
	results := make([]decoded, len(keys))
	for i := range results {
		results[i].done = make(chan struct{})
	}
	next := make(chan int)
	go func() {
		defer close(next)
		for i := range keys {
			select {
			case next <- i:
			case <-ctx.Done():
				return
			}
		}
	}()
	for range min(runtime.GOMAXPROCS(0), len(keys)) {
		go func() {
			for i := range next {
				results[i].chunk, results[i].err = c.readChunk(ctx, keys[i])
				close(results[i].done)
			}
		}()
	}
	for i, key := range keys {
		select {
		case <-results[i].done:
		case <-ctx.Done():
			return ctx.Err()
		}
		if results[i].err != nil {
			return fmt.Errorf("%s: %w", key, results[i].err)
		}
		if err := fn(key, results[i].chunk); err != nil {
			return err
		}
		results[i].chunk = nil
	}
	return nil
}

// readingAhead reads chunks in the background until stopped.
type readingAhead struct {
	stopped atomic.Bool
	done    sync.WaitGroup
	chunks  map[string]*aggregate.Chunk
}

// readAhead starts reading the chunks at keys, in order, on all cores but
// one; a chunk that fails is left to be read again.
func (c *Chunks) readAhead(ctx context.Context, keys []string) *readingAhead {
	r := &readingAhead{chunks: map[string]*aggregate.Chunk{}}
	if len(keys) == 0 {
		return r
	}
	var mu sync.Mutex
	var next atomic.Int64
	for range max(1, runtime.GOMAXPROCS(0)-1) {
		r.done.Add(1)
		go func() {
			defer r.done.Done()
			for !r.stopped.Load() {
				i := int(next.Add(1)) - 1
				if i >= len(keys) {
					return
				}
				if chunk, err := c.readChunk(ctx, keys[i]); err == nil {
					mu.Lock()
					r.chunks[keys[i]] = chunk
					mu.Unlock()
				}
			}
		}()
	}
	return r
}

// stop ends the reading (the chunk being read is finished) and returns
// the chunks read.
func (r *readingAhead) stop() map[string]*aggregate.Chunk {
	r.stopped.Store(true)
	r.done.Wait()
	return r.chunks
}

// closedBuckets returns the prefixes of the hours, among keys, that
// ended more than the grace before now and hold more than one chunk.
func (c *Chunks) closedBuckets(keys []string, now time.Time) []string {
	counts := map[string]int{}
	var order []string
	for _, key := range keys {
		hour, prefix, ok := chunkBucket(key)
		if !ok || !strings.HasSuffix(key, ".chunk") || now.Sub(hour.Add(time.Hour)) < c.compactionGrace() {
			continue
		}
		if counts[prefix] == 0 {
			order = append(order, prefix)
		}
		counts[prefix]++
	}
	var out []string
	for _, p := range order {
		if counts[p] > 1 {
			out = append(out, p)
		}
	}
	return out
}

// Compact compacts every hour of the store that has ended (by
// Config.QueryTimeout and 5 minutes more) and holds more than one chunk.
// A query starts it in the background when due; a program may call it
// as well, say on a timer.
func (c *Chunks) Compact(ctx context.Context) error {
	return c.compactAt(ctx, c.cfg.Now())
}

// compactAt compacts the hours closed at now.
func (c *Chunks) compactAt(ctx context.Context, now time.Time) error {
	keys, err := c.store.List(ctx, chunkPrefix)
	if err != nil {
		return err
	}
	var errs []error
	for _, prefix := range c.closedBuckets(keys, now) {
		if _, err := c.compactBucket(ctx, prefix); err != nil {
			errs = append(errs, fmt.Errorf("compacting %s: %w", prefix, err))
		}
	}
	return errors.Join(errs...)
}

// compactBucket merges the chunks under prefix into one and deletes them
// once it is written. It returns the merged chunk's key ("" when there
// was nothing to merge).
func (c *Chunks) compactBucket(ctx context.Context, prefix string) (string, error) {
	key, set, err := c.writeCompacted(ctx, prefix)
	if err != nil {
		return "", err
	}
	for _, old := range set.replaced {
		if err := c.store.Remove(ctx, old); err != nil {
			return key, err
		}
	}
	return key, nil
}

// writeCompacted is compaction's first step: it writes the merged chunk
// of the chunks under prefix, and returns its key with the chunks a
// reader now skips, to be deleted. When one chunk is left it writes
// nothing and returns the chunks left behind by an earlier compaction.
func (c *Chunks) writeCompacted(ctx context.Context, prefix string) (string, *chunkSet, error) {
	set, err := c.resolveBucket(ctx, prefix)
	if err != nil {
		return "", nil, err
	}
	if len(set.keys) < 2 && len(set.covered) == 0 {
		set.replaced = append(set.replaced, set.stale...)
		return "", set, nil
	}
	// The merged chunk replaces what it merges and, transitively, what
	// merged chunks among them replaced: deleting a merged chunk before
	// its own sources must not bring them back. It replaces the partial
	// chunks of the hour too, which it makes useless.
	replaces := map[string]bool{}
	for _, list := range [][]string{set.keys, set.covered, set.stale} {
		for _, key := range list {
			replaces[key] = true
		}
	}
	for _, key := range set.keys {
		if merged, ok := set.merged[key]; ok {
			for _, r := range merged.Replaces {
				replaces[r] = true
			}
		}
	}
	agg := aggregate.New()
	if err := c.mergeInto(ctx, set, agg, nil); err != nil {
		return "", nil, err
	}
	out := agg.Chunk()
	for r := range replaces {
		out.Replaces = append(out.Replaces, r)
	}
	slices.Sort(out.Replaces)
	buf, err := encodeMergedChunk(out)
	if err != nil {
		return "", nil, err
	}
	key := compactKey(prefix, out, set.keys)
	err = c.store.Put(ctx, key, bytes.NewReader(buf), int64(len(buf)), true)
	if err != nil && !c.exists(ctx, key) { // exists: another instance merged the same chunks
		return "", nil, err
	}
	for _, list := range [][]string{set.keys, set.covered, set.stale} {
		set.replaced = append(set.replaced, list...)
	}
	set.keys, set.merged = []string{key}, map[string]*aggregate.Chunk{key: out}
	set.covered, set.stale = nil, nil
	return key, set, nil
}

// exists tells whether the store holds key: a write that failed may
// have lost to another with the same content.
func (c *Chunks) exists(ctx context.Context, key string) bool {
	_, _, err := c.store.Stat(ctx, key)
	return err == nil
}

// resolveBucket lists the chunks under prefix and resolves them.
func (c *Chunks) resolveBucket(ctx context.Context, prefix string) (*chunkSet, error) {
	all, err := c.store.List(ctx, prefix)
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, key := range all {
		if strings.HasSuffix(key, ".chunk") {
			keys = append(keys, key)
		}
	}
	return c.resolveChunks(ctx, keys)
}

// encodeMergedChunk encodes a chunk merged from others. It must read
// back (an hour of many unique stacks could pass aggregate.MaxChunkBytes)
// before it may stand for the chunks that do: EncodeChunk fails one that
// would not.
func encodeMergedChunk(chunk *aggregate.Chunk) ([]byte, error) {
	var buf bytes.Buffer
	if err := aggregate.EncodeChunk(&buf, chunk); err != nil {
		return nil, fmt.Errorf("the merged chunk would not read back, the hour is left as it is: %w", err)
	}
	return buf.Bytes(), nil
}
