package serve

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
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

// compactSuffix ends the key of a chunk merged from others.
const compactSuffix = ".compact.chunk"

// compactionGrace is how long after its hour ends a bucket is left
// alone: uploads accepted within the hour may still be being written
// (for up to a request's deadline), and instances' clocks differ.
func (s *Server) compactionGrace() time.Duration {
	return s.cfg.Limits.RequestTimeout + 5*time.Minute
}

// chunkSet is what a reader counts of a list of chunk keys.
type chunkSet struct {
	// keys are the chunks to count: the merged ones, then the others,
	// each in key order.
	keys []string
	// merged are the merged chunks among keys, already read.
	merged map[string]*aggregate.Chunk
	// replaced are listed keys that a listed merged chunk replaces.
	replaced []string
}

// resolveChunks reads the merged chunks among keys and drops every key
// one of them replaces.
func (s *Server) resolveChunks(ctx context.Context, keys []string) (*chunkSet, error) {
	var mergedKeys, plain []string
	for _, key := range keys {
		if strings.HasSuffix(key, compactSuffix) {
			mergedKeys = append(mergedKeys, key)
		} else {
			plain = append(plain, key)
		}
	}
	set := &chunkSet{merged: map[string]*aggregate.Chunk{}}
	replaced := map[string]bool{}
	err := s.eachChunk(ctx, mergedKeys, func(key string, c *aggregate.Chunk) error {
		set.merged[key] = c
		for _, r := range c.Replaces {
			replaced[r] = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, list := range [][]string{mergedKeys, plain} {
		for _, key := range list {
			if replaced[key] {
				set.replaced = append(set.replaced, key)
				delete(set.merged, key)
			} else {
				set.keys = append(set.keys, key)
			}
		}
	}
	return set, nil
}

// mergeInto merges the set's chunks into agg, keeping the samples keep
// passes. The chunks not merged already are cut into one run of
// consecutive keys per core, each read and merged into an aggregator of
// its own, and those are added to agg in order: the answer does not
// depend on which core ends first.
func (s *Server) mergeInto(ctx context.Context, set *chunkSet, agg *aggregate.Aggregator, keep aggregate.Filter) error {
	var plain []string
	for _, key := range set.keys {
		c, ok := set.merged[key]
		if !ok {
			plain = append(plain, key)
			continue
		}
		if err := agg.Merge(c, keep); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel() // stops the other runs when a chunk fails
	runs := min(runtime.GOMAXPROCS(0), len(plain))
	parts := make([]*aggregate.Aggregator, runs)
	errs := make([]error, runs)
	var wg sync.WaitGroup
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			parts[i] = aggregate.New()
			for _, key := range plain[i*len(plain)/runs : (i+1)*len(plain)/runs] {
				c, err := s.readChunk(ctx, key)
				if err == nil {
					err = parts[i].Merge(c, keep)
				}
				if err != nil {
					errs[i] = fmt.Errorf("%s: %w", key, err)
					cancel()
					return
				}
			}
		}()
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
func (s *Server) eachChunk(ctx context.Context, keys []string, fn func(key string, c *aggregate.Chunk) error) error {
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
				results[i].chunk, results[i].err = s.readChunk(ctx, keys[i])
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

// chunkBucket returns the hour a chunk key lies under, and the prefix of
// that hour's keys.
func chunkBucket(key string) (hour time.Time, prefix string, ok bool) {
	rest, found := strings.CutPrefix(key, chunkPrefix)
	if !found {
		return time.Time{}, "", false
	}
	h, _, found := strings.Cut(rest, "/")
	if !found {
		return time.Time{}, "", false
	}
	t, err := time.Parse("2006-01-02T15", h)
	if err != nil {
		return time.Time{}, "", false
	}
	return t, chunkPrefix + h + "/", true
}

// closedBuckets returns the prefixes of the hours, among keys, that
// ended more than the grace before now and hold more than one chunk.
func (s *Server) closedBuckets(keys []string, now time.Time) []string {
	counts := map[string]int{}
	var order []string
	for _, key := range keys {
		hour, prefix, ok := chunkBucket(key)
		if !ok || !strings.HasSuffix(key, ".chunk") || now.Sub(hour.Add(time.Hour)) < s.compactionGrace() {
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

// compactAggregates compacts every closed hour of the store that holds
// more than one chunk.
func (s *Server) compactAggregates(ctx context.Context, now time.Time) error {
	keys, err := s.store.store.list(ctx, chunkPrefix)
	if err != nil {
		return err
	}
	var errs []error
	for _, prefix := range s.closedBuckets(keys, now) {
		if _, err := s.compactBucket(ctx, prefix); err != nil {
			errs = append(errs, fmt.Errorf("compacting %s: %w", prefix, err))
		}
	}
	return errors.Join(errs...)
}

// compactBucket merges the chunks under prefix into one and deletes them
// once it is written. It returns the merged chunk's key ("" when there
// was nothing to merge).
func (s *Server) compactBucket(ctx context.Context, prefix string) (string, error) {
	key, set, err := s.writeCompacted(ctx, prefix)
	if err != nil {
		return "", err
	}
	for _, old := range set.replaced {
		if err := s.store.store.remove(ctx, old); err != nil {
			return key, err
		}
	}
	return key, nil
}

// writeCompacted is compaction's first step: it writes the merged chunk
// of the chunks under prefix, and returns its key with the chunks a
// reader now skips, to be deleted. When one chunk is left it writes
// nothing and returns the chunks left behind by an earlier compaction.
func (s *Server) writeCompacted(ctx context.Context, prefix string) (string, *chunkSet, error) {
	all, err := s.store.store.list(ctx, prefix)
	if err != nil {
		return "", nil, err
	}
	var keys []string
	for _, key := range all {
		if strings.HasSuffix(key, ".chunk") {
			keys = append(keys, key)
		}
	}
	set, err := s.resolveChunks(ctx, keys)
	if err != nil {
		return "", nil, err
	}
	if len(set.keys) < 2 {
		return "", set, nil
	}
	// The merged chunk replaces what it merges and, transitively, what
	// merged chunks among them replaced: deleting a merged chunk before
	// its own sources must not bring them back.
	replaces := map[string]bool{}
	for _, key := range set.keys {
		replaces[key] = true
		if c, ok := set.merged[key]; ok {
			for _, r := range c.Replaces {
				replaces[r] = true
			}
		}
	}
	agg := aggregate.New()
	if err := s.mergeInto(ctx, set, agg, nil); err != nil {
		return "", nil, err
	}
	out := agg.Chunk()
	for r := range replaces {
		out.Replaces = append(out.Replaces, r)
	}
	slices.Sort(out.Replaces)
	var buf bytes.Buffer
	if err := aggregate.EncodeChunk(&buf, out); err != nil {
		return "", nil, err
	}
	// The merged chunk must read back (an hour of many unique stacks
	// could pass aggregate.MaxChunkBytes) before it may replace the
	// chunks that do.
	if _, err := aggregate.DecodeChunk(bytes.NewReader(buf.Bytes())); err != nil {
		return "", nil, fmt.Errorf("the merged chunk does not read back, the hour is left as it is: %w", err)
	}
	key := compactKey(prefix, out, set.keys)
	err = s.store.store.put(ctx, key, bytes.NewReader(buf.Bytes()), int64(buf.Len()), true)
	if err != nil && !errors.Is(err, errExists) { // exists: another instance merged the same chunks
		return "", nil, err
	}
	set.replaced = append(set.replaced, set.keys...)
	set.keys, set.merged = []string{key}, map[string]*aggregate.Chunk{key: out}
	return key, set, nil
}

// compactKey names a merged chunk FIRST-LAST-0-HASH.compact.chunk under
// prefix, FIRST and LAST as in chunkKey and HASH made from the merged
// chunks' keys: instances merging the same chunks make the same key.
func compactKey(prefix string, c *aggregate.Chunk, merged []string) string {
	h := sha256.New()
	for _, k := range merged {
		h.Write([]byte(k))
		h.Write([]byte{'\n'})
	}
	var first, last int64
	if !c.First.IsZero() {
		first, last = c.First.Unix(), c.Last.Unix()+1
	}
	return fmt.Sprintf("%s%d-%d-0-%s%s", prefix, first, last, hex.EncodeToString(h.Sum(nil)[:12]), compactSuffix)
}
