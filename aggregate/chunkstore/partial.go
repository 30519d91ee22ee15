package chunkstore

import (
	"bytes"
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/stackimage/stackimage/aggregate"
)

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
// at least Config.PartialStep and at least 1/partialGrowth of those they
// do: a query merges few uploads besides the partial chunk, and an hour
// of n uploads is rewritten O(log n) times once it is large.
const partialGrowth = 16

// openBuckets returns the prefixes of the hours, among keys, not yet
// past their compaction grace at now.
func (c *Chunks) openBuckets(keys []string, now time.Time) []string {
	var out []string
	for _, key := range keys {
		hour, prefix, ok := chunkBucket(key)
		if !ok || now.Sub(hour.Add(time.Hour)) >= c.compactionGrace() {
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
func partialDue(keys []string, step int) bool {
	if step < 0 {
		return false // partial chunks are not written
	}
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
	return uploads-held >= max(step, held/partialGrowth)
}

// writePartial writes a partial chunk of the open hour under prefix when
// partialDue says so, and deletes the partial chunks no reader still
// uses; now is when it begins, the time its key records. It returns the
// new chunk's key, "" when it wrote none.
func (c *Chunks) writePartial(ctx context.Context, prefix string, now time.Time) (string, error) {
	all, err := c.store.List(ctx, prefix)
	if err != nil || !partialDue(all, c.cfg.PartialStep) {
		return "", err
	}
	set, err := c.resolveBucket(ctx, prefix)
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
	c.removeStalePartials(ctx, set.stale, baseKey, now)
	if uncovered == 0 {
		return "", nil
	}
	agg := aggregate.New()
	if err := c.mergeInto(ctx, set, agg, nil); err != nil {
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
	if err := c.store.Put(ctx, key, bytes.NewReader(buf), int64(len(buf)), true); err != nil {
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
func (c *Chunks) removeStalePartials(ctx context.Context, stale []string, best string, now time.Time) {
	written, _, ok := partialFields(best)
	if !ok || now.Sub(written) < c.cfg.QueryTimeout+time.Minute {
		return
	}
	for _, key := range stale {
		c.store.Remove(ctx, key) // a failure leaves it to the next time or the final chunk
	}
}

// partialCheckEvery is how many uploads an instance takes between the
// checks for partial chunks that uploads start: each lists the hour, and
// a listing of an hour of many uploads is many requests to an object
// store. An eighth of the step delays a partial chunk by at most that
// many of an instance's uploads past the step.
func partialCheckEvery(step int) int {
	return max(1, step/8)
}

// writePartialsSoon starts, in the background, writing the partial chunks
// of the open hours among keys that need one; one at a time per
// instance. With listed, keys are a listing of every hour they hold, and
// only the hours partialDue says need one are listed again. It reports
// whether it started.
func (c *Chunks) writePartialsSoon(keys []string, listed bool) bool {
	clock := c.startClock()
	if c.cfg.PartialStep < 0 {
		return false
	}
	prefixes := c.openBuckets(keys, clock())
	if listed {
		prefixes = slices.DeleteFunc(prefixes, func(prefix string) bool {
			return !partialDue(keysUnder(keys, prefix), c.cfg.PartialStep)
		})
	}
	if len(prefixes) == 0 || !c.writingPartials.CompareAndSwap(false, true) {
		return false
	}
	started := c.goBackground(func() {
		defer c.writingPartials.Store(false)
		ctx, cancel := context.WithTimeout(context.Background(), 10*c.cfg.QueryTimeout)
		defer cancel()
		for _, prefix := range prefixes {
			// A failure is left to the next upload or query.
			key, err := c.writePartial(ctx, prefix, clock())
			if (err != nil || key != "") && c.cfg.PartialWritten != nil {
				c.cfg.PartialWritten(err)
			}
		}
	})
	if !started {
		c.writingPartials.Store(false)
	}
	return started
}

// keysUnder returns the keys, sorted, that start with prefix.
func keysUnder(sorted []string, prefix string) []string {
	i, _ := slices.BinarySearch(sorted, prefix)
	j := i
	for j < len(sorted) && strings.HasPrefix(sorted[j], prefix) {
		j++
	}
	return sorted[i:j]
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
