package chunkstore

import (
	"cmp"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/stackimage/stackimage/aggregate"
)

// chunkPrefix is where the aggregates lie in the store: one chunk per
// accepted upload, under the hour it was accepted, named
// FIRST-LAST-NANOS-RANDOM.chunk where FIRST and LAST are the Unix seconds
// its stacks span (0 when they had no timestamp), so that a query for a
// time range reads only the chunks that may hold it.
const chunkPrefix = "_aggregate/chunks/"

// compactSuffix ends the key of a chunk merged from others once its hour
// has ended (a final chunk); partialSuffix the key of a chunk merged from
// some of an open hour's uploads (a partial chunk).
const (
	compactSuffix = ".compact.chunk"
	partialSuffix = ".partial.chunk"
)

// chunkKey names a new chunk.
func chunkKey(c *aggregate.Chunk, now time.Time) string {
	var random [6]byte
	rand.Read(random[:])
	first, last := spanSeconds(c)
	return fmt.Sprintf("%s%s/%d-%d-%d-%s.chunk", chunkPrefix, now.UTC().Format("2006-01-02T15"), first, last, now.UnixNano(), hex.EncodeToString(random[:]))
}

// spanSeconds are the Unix seconds a chunk's stacks span, the last
// rounded up; 0 and 0 when they had no timestamp.
func spanSeconds(c *aggregate.Chunk) (first, last int64) {
	if c.First.IsZero() {
		return 0, 0
	}
	return c.First.Unix(), c.Last.Unix() + 1
}

// chunkSpan reads the span of a chunk's stacks from its key; ok is false
// for a chunk without timestamps (or a key not of chunkKey's making).
func chunkSpan(key string) (first, last time.Time, ok bool) {
	base := key[strings.LastIndexByte(key, '/')+1:]
	parts := strings.SplitN(base, "-", 3)
	if len(parts) < 3 {
		return time.Time{}, time.Time{}, false
	}
	f, err1 := strconv.ParseInt(parts[0], 10, 64)
	l, err2 := strconv.ParseInt(parts[1], 10, 64)
	if err1 != nil || err2 != nil || f == 0 && l == 0 {
		return time.Time{}, time.Time{}, false
	}
	return time.Unix(f, 0), time.Unix(l, 0), true
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

// compactKey names a merged chunk FIRST-LAST-0-HASH.compact.chunk under
// prefix, FIRST and LAST as in chunkKey and HASH made from the merged
// chunks' keys: instances merging the same chunks make the same key.
func compactKey(prefix string, c *aggregate.Chunk, merged []string) string {
	h := sha256.New()
	for _, k := range merged {
		h.Write([]byte(k))
		h.Write([]byte{'\n'})
	}
	first, last := spanSeconds(c)
	return fmt.Sprintf("%s%d-%d-0-%s%s", prefix, first, last, hex.EncodeToString(h.Sum(nil)[:12]), compactSuffix)
}

// partialKey names a partial chunk FIRST-LAST-NANOS-UPLOADS-RANDOM
// .partial.chunk under prefix: FIRST and LAST as in chunkKey, NANOS when
// it was written and UPLOADS the number of uploads it holds, so that a
// reader picks the best partial chunk from the listing alone.
func partialKey(prefix string, c *aggregate.Chunk, now time.Time) string {
	var random [6]byte
	rand.Read(random[:])
	first, last := spanSeconds(c)
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
