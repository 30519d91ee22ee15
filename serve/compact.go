package serve

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stackimage/stackimage/aggregate"
	"github.com/stackimage/stackimage/symstore/objstore"
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

// compactSuffix ends the key of a chunk merged from others once its hour
// has ended (a final chunk); partialSuffix the key of a chunk merged from
// some of an open hour's uploads (a partial chunk).
const (
	compactSuffix = ".compact.chunk"
	partialSuffix = ".partial.chunk"
)

// compactionGrace is how long after its hour ends a bucket is left
// alone: uploads accepted within the hour may still be being written
// (for up to a request's deadline), and instances' clocks differ.
func (s *Server) compactionGrace() time.Duration {
	return s.cfg.Limits.RequestTimeout + 5*time.Minute
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
// of each hour, the final chunks and the uploads they do not replace;
// or, in an hour without a final chunk, the partial chunk that holds the
// most uploads and the uploads it does not hold.
//
// Partial chunks are only ever an abbreviation: the uploads a partial
// chunk holds are not deleted while its hour is open, so whichever one a
// reader picks, it counts every upload once. That is what lets any
// instance write them at any time, racing others and late uploads.
func (s *Server) resolveChunks(ctx context.Context, keys []string) (*chunkSet, error) {
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
	err := s.eachChunk(ctx, finalKeys, func(key string, c *aggregate.Chunk) error {
		set.merged[key] = c
		for _, r := range c.Replaces {
			replaced[r] = true
		}
		_, prefix, _ := chunkBucket(key)
		finalHours[prefix] = true
		return nil
	})
	if err != nil {
		return nil, err
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
	ahead := s.readAhead(ctx, uploadsAfter(chosen, plain))
	err = s.eachChunk(ctx, chosen, func(key string, c *aggregate.Chunk) error {
		set.merged[key] = c
		for _, r := range c.Replaces {
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

// mergeInto merges the set's chunks into agg, keeping the samples keep
// passes. The chunks not merged already are cut into runs of
// consecutive keys, one per core (one fewer when there are merged chunks,
// which the calling goroutine merges meanwhile), each read and merged
// into an aggregator of its own, and those are added to agg in order:
// the answer does not depend on which core ends first.
func (s *Server) mergeInto(ctx context.Context, set *chunkSet, agg *aggregate.Aggregator, keep aggregate.Filter) error {
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
				c, err := set.readAhead[key], error(nil)
				if c == nil {
					c, err = s.readChunk(ctx, key)
				}
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

// The uploads a query reads besides an hour's partial chunk are, but for
// late ones, those accepted after the partial chunk was written. While
// one core decodes the partial chunk, which names them, the others read
// those uploads ahead, newest first, up to maxReadAhead of them.
const maxReadAhead = 4 * 50

// uploadsAfter returns the uploads among plain accepted after the
// partial chunks among partials of their hour were written, newest
// first.
func uploadsAfter(partials, plain []string) []string {
	written := map[string]time.Time{}
	for _, key := range partials {
		_, prefix, _ := chunkBucket(key)
		written[prefix], _, _ = partialFields(key)
	}
	type upload struct {
		key      string
		accepted int64
	}
	var after []upload
	for _, key := range plain {
		_, prefix, _ := chunkBucket(key)
		w, ok := written[prefix]
		if !ok {
			continue
		}
		if accepted, ok := chunkAccepted(key); ok && accepted > w.UnixNano() {
			after = append(after, upload{key, accepted})
		}
	}
	slices.SortFunc(after, func(a, b upload) int { return cmp.Compare(b.accepted, a.accepted) })
	keys := make([]string, 0, min(len(after), maxReadAhead))
	for _, u := range after[:min(len(after), maxReadAhead)] {
		keys = append(keys, u.key)
	}
	return keys
}

// chunkAccepted reads when an upload's chunk was accepted (NANOS) from
// its key.
func chunkAccepted(key string) (int64, bool) {
	parts := strings.Split(key[strings.LastIndexByte(key, '/')+1:], "-")
	if len(parts) != 4 {
		return 0, false
	}
	n, err := strconv.ParseInt(parts[2], 10, 64)
	return n, err == nil
}

// readingAhead reads chunks in the background until stopped.
type readingAhead struct {
	stopped atomic.Bool
	done    sync.WaitGroup
	chunks  map[string]*aggregate.Chunk
}

// readAhead starts reading the chunks at keys, in order, on all cores but
// one; a chunk that fails is left to be read again.
func (s *Server) readAhead(ctx context.Context, keys []string) *readingAhead {
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
				if c, err := s.readChunk(ctx, keys[i]); err == nil {
					mu.Lock()
					r.chunks[keys[i]] = c
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
	keys, err := s.store.store.List(ctx, chunkPrefix)
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
		if err := s.store.store.Remove(ctx, old); err != nil {
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
	set, err := s.resolveBucket(ctx, prefix)
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
	buf, err := encodeMergedChunk(out)
	if err != nil {
		return "", nil, err
	}
	key := compactKey(prefix, out, set.keys)
	err = s.store.store.Put(ctx, key, bytes.NewReader(buf), int64(len(buf)), true)
	if err != nil && !errors.Is(err, objstore.ErrExists) { // exists: another instance merged the same chunks
		return "", nil, err
	}
	for _, list := range [][]string{set.keys, set.covered, set.stale} {
		set.replaced = append(set.replaced, list...)
	}
	set.keys, set.merged = []string{key}, map[string]*aggregate.Chunk{key: out}
	set.covered, set.stale = nil, nil
	return key, set, nil
}

// resolveBucket lists the chunks under prefix and resolves them.
func (s *Server) resolveBucket(ctx context.Context, prefix string) (*chunkSet, error) {
	all, err := s.store.store.List(ctx, prefix)
	if err != nil {
		return nil, err
	}
	var keys []string
	for _, key := range all {
		if strings.HasSuffix(key, ".chunk") {
			keys = append(keys, key)
		}
	}
	return s.resolveChunks(ctx, keys)
}

// encodeMergedChunk encodes a chunk merged from others. It must read
// back (an hour of many unique stacks could pass aggregate.MaxChunkBytes)
// before it may stand for the chunks that do: EncodeChunk fails one that
// would not.
func encodeMergedChunk(c *aggregate.Chunk) ([]byte, error) {
	var buf bytes.Buffer
	if err := aggregate.EncodeChunk(&buf, c); err != nil {
		return nil, fmt.Errorf("the merged chunk would not read back, the hour is left as it is: %w", err)
	}
	return buf.Bytes(), nil
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

// An open hour (one not yet past its compaction grace) is compacted in
// part as its uploads land: a partial chunk merges the hour's best
// partial chunk with the uploads it does not hold, and names every
// upload it holds in Chunk.Replaces. A query then decodes and merges the
// partial chunk and the few uploads since, instead of every upload of
// the hour. Unlike a final chunk, a partial one deletes nothing it
// merges: a reader picks one partial chunk per hour (the one holding
// the most uploads) and reads the uploads it does not hold, so partial
// chunks written at once by several instances, or missing an upload
// that landed late, neither lose nor double a stack. The final chunk
// written after the hour ends replaces them all.

// Partial chunks are rewritten once the uploads they do not hold number
// at least minPartialStep and at least 1/partialGrowth of those they do:
// a query merges few uploads besides the partial chunk, and an hour of n
// uploads is rewritten O(log n) times once it is large. A variable, for
// tests.
var minPartialStep = 50

const partialGrowth = 16

// partialKey names a partial chunk FIRST-LAST-NANOS-UPLOADS-RANDOM
// .partial.chunk under prefix: FIRST and LAST as in chunkKey, NANOS when
// it was written and UPLOADS the number of uploads it holds, so that a
// reader picks the best partial chunk from the listing alone.
func partialKey(prefix string, c *aggregate.Chunk, now time.Time) string {
	var random [6]byte
	rand.Read(random[:])
	var first, last int64
	if !c.First.IsZero() {
		first, last = c.First.Unix(), c.Last.Unix()+1
	}
	return fmt.Sprintf("%s%d-%d-%d-%d-%s%s", prefix, first, last, now.UnixNano(), len(c.Replaces), hex.EncodeToString(random[:]), partialSuffix)
}

// partialFields reads when a partial chunk was written and how many
// uploads it holds from its key; ok is false for a key not of
// partialKey's making.
func partialFields(key string) (written time.Time, uploads int, ok bool) {
	base := strings.TrimSuffix(key[strings.LastIndexByte(key, '/')+1:], partialSuffix)
	parts := strings.Split(base, "-")
	if len(parts) != 5 {
		return time.Time{}, 0, false
	}
	nanos, err1 := strconv.ParseInt(parts[2], 10, 64)
	n, err2 := strconv.Atoi(parts[3])
	if err1 != nil || err2 != nil {
		return time.Time{}, 0, false
	}
	return time.Unix(0, nanos), n, true
}

// partialOrder orders partial chunks by the uploads they hold, then by
// when they were written, then by key: the greatest is the one to read.
func partialOrder(a, b string) int {
	wa, na, _ := partialFields(a)
	wb, nb, _ := partialFields(b)
	if c := cmp.Compare(na, nb); c != 0 {
		return c
	}
	if c := wa.Compare(wb); c != 0 {
		return c
	}
	return strings.Compare(a, b)
}

// openBuckets returns the prefixes of the hours, among keys, not yet
// past their compaction grace at now.
func (s *Server) openBuckets(keys []string, now time.Time) []string {
	var out []string
	for _, key := range keys {
		hour, prefix, ok := chunkBucket(key)
		if !ok || now.Sub(hour.Add(time.Hour)) >= s.compactionGrace() {
			continue
		}
		if len(out) == 0 || out[len(out)-1] != prefix {
			out = append(out, prefix)
		}
	}
	return out
}

// partialDue tells from the listing of an open hour's keys alone
// whether a partial chunk is to be written: the hour has no final chunk
// and enough uploads are not in its best partial chunk. An open hour's
// uploads are never deleted, so those its best partial chunk holds are
// all among the keys.
func partialDue(keys []string) bool {
	uploads, best := 0, ""
	for _, key := range keys {
		switch {
		case strings.HasSuffix(key, compactSuffix):
			return false // late uploads wait for the next final chunk
		case strings.HasSuffix(key, partialSuffix):
			if best == "" || partialOrder(key, best) > 0 {
				best = key
			}
		case strings.HasSuffix(key, ".chunk"):
			uploads++
		}
	}
	_, held, _ := partialFields(best)
	return uploads-held >= max(minPartialStep, held/partialGrowth)
}

// writePartial writes a partial chunk of the open hour under prefix when
// partialDue says so, and deletes the partial chunks no reader still
// uses; now is when it begins, the time its key records. It returns the
// new chunk's key, "" when it wrote none.
func (s *Server) writePartial(ctx context.Context, prefix string, now time.Time) (string, error) {
	all, err := s.store.store.List(ctx, prefix)
	if err != nil || !partialDue(all) {
		return "", err
	}
	set, err := s.resolveBucket(ctx, prefix)
	if err != nil {
		return "", err
	}
	var base *aggregate.Chunk
	var baseKey string
	uncovered := 0
	for _, key := range set.keys {
		switch {
		case strings.HasSuffix(key, compactSuffix):
			return "", nil // the hour has a final chunk: late uploads wait for the next one
		case strings.HasSuffix(key, partialSuffix):
			base, baseKey = set.merged[key], key
		default:
			uncovered++
		}
	}
	s.removeStalePartials(ctx, set.stale, baseKey, now)
	if uncovered == 0 {
		return "", nil
	}
	agg := aggregate.New()
	if err := s.mergeInto(ctx, set, agg, nil); err != nil {
		return "", err
	}
	out := agg.Chunk()
	for _, key := range set.keys {
		if key == baseKey {
			out.Replaces = append(out.Replaces, base.Replaces...)
		} else {
			out.Replaces = append(out.Replaces, key)
		}
	}
	slices.Sort(out.Replaces)
	buf, err := encodeMergedChunk(out)
	if err != nil {
		return "", err
	}
	key := partialKey(prefix, out, now)
	if err := s.store.store.Put(ctx, key, bytes.NewReader(buf), int64(len(buf)), true); err != nil {
		return "", err
	}
	return key, nil
}

// removeStalePartials deletes partial chunks that best outranks, once
// best has been in the store longer than a query may last (its key tells
// when its writing began; the minute more is for the writing itself and
// clocks that differ): a query that listed before best was written may
// still be reading one of them (deleting it under a query is no error,
// only a second listing).
func (s *Server) removeStalePartials(ctx context.Context, stale []string, best string, now time.Time) {
	written, _, ok := partialFields(best)
	if !ok || now.Sub(written) < s.cfg.Limits.RequestTimeout+time.Minute {
		return
	}
	for _, key := range stale {
		s.store.store.Remove(ctx, key) // a failure leaves it to the next time or the final chunk
	}
}

// writePartialsSoon starts, in the background, writing the partial chunks
// of the open hours among keys that need one; one at a time per
// instance.
func (s *Server) writePartialsSoon(keys []string) {
	clock := timeNow // read here: tests replace it while the work runs
	prefixes := s.openBuckets(keys, clock())
	if len(prefixes) == 0 || !s.writingPartials.CompareAndSwap(false, true) {
		return
	}
	s.background.Add(1)
	go func() {
		defer s.background.Done()
		defer s.writingPartials.Store(false)
		ctx, cancel := context.WithTimeout(context.Background(), 10*s.cfg.Limits.RequestTimeout)
		defer cancel()
		for _, prefix := range prefixes {
			key, err := s.writePartial(ctx, prefix, clock())
			switch {
			case err != nil:
				s.metrics.partials.WithLabelValues("failed").Inc() // the next upload or query tries again
			case key != "":
				s.metrics.partials.WithLabelValues("ok").Inc()
			}
		}
	}()
}
