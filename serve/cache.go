package serve

import (
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/image"
	notfound "github.com/stackimage/stackimage/lookup"
	"github.com/stackimage/stackimage/symindex"
	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/uuid"
	"golang.org/x/sync/singleflight"
)

// Module statuses, as symbolicator names them (ObjectFileStatus).
const (
	statusFound          = "found"
	statusUnused         = "unused"
	statusMissing        = "missing"
	statusMalformed      = "malformed"
	statusFetchingFailed = "fetching_failed"
	statusTimeout        = "timeout"
	statusTooLarge       = "too_large"
)

// index is one UUID's derived index, open and ready to answer.
type index struct {
	id   uuid.UUID
	path string
	size int64
	// syms holds the index file open; entries are reference-counted, so
	// closing it on eviction never breaks a lookup in flight.
	syms     *symstore.Symbols
	arch     string
	archRegs *archregs.Arch
	textAddr uint64
	hasDebug bool
	name     string
	// breakpadOnly marks a UUID known from a .sym file alone, kept as it
	// is: it is not offered to the shared cache.
	breakpadOnly bool
	// from says where the index came from: the local cache, the shared
	// cache or a build from a source's file.
	from     string
	location string
	elem     *list.Element
	refs     int
	// machO are the paths of the UUID's executable and debug file, whose
	// unwind tables and code an index does not hold, once machODone says
	// they were looked for; none when no source has them. owned are those
	// of them that are the cache's (downloads, counted in size and removed
	// with the index) rather than a source's own files.
	machO     []string
	machODone bool
	owned     []string
	// machOUntil, when set, is when machO expires and is looked for
	// again: a fetch failed (failed_ttl) or no source had the files
	// (miss_ttl). ownedSize is the owned files' bytes, counted in size.
	machOUntil time.Time
	ownedSize  int64
	// degraded says why the index was built from part of its symbol
	// files (a fetch failed, a file could not be read): such an index
	// is never shared, and it expires at expires (failed_ttl) to be
	// built again.
	degraded string
	expires  time.Time
	// record is what the index was built from (provenance.go).
	record *indexRecord
}

// degradedError is what a module's answer says of a degraded index.
func (ix *index) degradedError() string {
	if ix.degraded == "" {
		return ""
	}
	return "symbols from part of the module's files (built again in failed_ttl): " + ix.degraded
}

// lookup is the outcome of finding a UUID's index.
type lookup struct {
	index  *index
	status string
	err    error
	// location and source say where the symbol file was found, or
	// where it was looked for.
	source   string
	location string
}

// negative is a remembered miss or failure.
type negative struct {
	until time.Time
	look  lookup
}

// indexCache finds, builds and keeps derived indexes: in memory and on
// local disk (an LRU bounded in bytes), and in the store's shared cache.
type indexCache struct {
	dir, tmp  string
	maxBytes  int64
	sources   []*source
	shared    *source // the store, when indexes are shared through it
	missTTL   time.Duration
	failedTTL time.Duration
	metrics   *metrics
	// fetches bounds the loads running at once (limits.max_fetches).
	fetches *fetchLimiter
	// memoryHits is metrics.cache's "memory" counter, looked up once.
	memoryHits prometheus.Counter
	log        *slog.Logger
	group      singleflight.Group

	mu   sync.Mutex
	hot  map[uuid.UUID]*index
	lru  *list.List // of *index, most recent first
	size int64
	neg  map[uuid.UUID]negative
	// maxNegative bounds neg.
	maxNegative int
}

// maxNegative is how many misses and failures are remembered at most.
const maxNegative = 1 << 16

func newIndexCache(dir string, cfg Config, sources []*source, shared *source, m *metrics, log *slog.Logger) (*indexCache, error) {
	c := &indexCache{
		dir: filepath.Join(dir, "index"), tmp: filepath.Join(dir, "tmp"),
		maxBytes: int64(cfg.Cache.MaxBytes), sources: sources, shared: shared,
		missTTL: cfg.Cache.MissTTL, failedTTL: cfg.Cache.FailedTTL, metrics: m,
		hot: map[uuid.UUID]*index{}, lru: list.New(), neg: map[uuid.UUID]negative{}, maxNegative: maxNegative,
		memoryHits: m.cache.WithLabelValues("memory"),
		fetches:    newFetchLimiter(cfg.Limits.MaxFetches, m),
		log:        log,
	}
	// Downloads and half-written files of an instance that was killed
	// are of no use to this one.
	os.RemoveAll(c.tmp)
	for _, d := range []string{c.dir, c.tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	c.trimDir()
	return c, nil
}

// trimDir removes the oldest index files a previous run left until the
// directory fits the byte cap: files are counted against it only once
// loaded, so those never asked for again would otherwise stay for good.
func (c *indexCache) trimDir() {
	entries, err := os.ReadDir(c.dir)
	if err != nil {
		return
	}
	type file struct {
		path string
		size int64
		mod  time.Time
	}
	var files []file
	var total int64
	for _, e := range entries {
		info, err := e.Info()
		if err != nil || !info.Mode().IsRegular() {
			continue
		}
		files = append(files, file{filepath.Join(c.dir, e.Name()), info.Size(), info.ModTime()})
		total += info.Size()
	}
	sort.Slice(files, func(i, j int) bool { return files[i].mod.Before(files[j].mod) })
	for _, f := range files {
		if total <= c.maxBytes {
			break
		}
		if os.Remove(f.path) == nil {
			total -= f.size
		}
	}
}

// sharedKey is the key of a UUID's index in the shared cache.
func sharedKey(u uuid.UUID) string { return "_index/" + simple(u) + symindex.Extension }

func (c *indexCache) localPath(u uuid.UUID) string {
	return filepath.Join(c.dir, u.String()+symindex.Extension)
}

// localFilePath is where a downloaded symbol file of a kind is kept.
func (c *indexCache) localFilePath(u uuid.UUID, kind FileKind) string {
	return filepath.Join(c.dir, u.String()+"."+kind.String())
}

// machOKinds are the files a walk reads beside an index: the
// executable's compact unwind, __eh_frame and code, and the dSYM's
// __debug_frame when the executable has none.
var machOKinds = []FileKind{KindCode, KindDebug}

// machOFiles returns the paths of the UUID's executable and debug file
// for the walker, which reads their unwind tables and code: those kept
// from the index's build, else those in the local cache, else those of
// the first source that has any (downloads are kept in the cache with the
// index). They are looked for once per index, however many requests ask
// at the same time; none when no source has them, or when ctx ends first.
func (c *indexCache) machOFiles(ctx context.Context, ix *index, name string, only []*source) []string {
	if paths, ok := c.machOKnown(ix); ok || ix.breakpadOnly {
		return paths
	}
	sources := c.sources
	if only != nil {
		sources = only
	}
	ch := c.group.DoChan("files/"+ix.id.String(), func() (any, error) {
		if paths, ok := c.machOKnown(ix); ok {
			return paths, nil
		}
		if err := c.fetches.acquire(ctx); err != nil {
			return []string(nil), nil
		}
		defer c.fetches.release()
		kept, failed := c.findMachO(context.WithoutCancel(ctx), ix.id, name, sources)
		c.attach(ix, kept, c.machOTTL(kept, failed))
		return kept.paths, nil
	})
	select {
	case <-ctx.Done():
		return nil
	case r := <-ch:
		return r.Val.([]string)
	}
}

// machOKnown returns an index's Mach-O files when they were looked for
// and the outcome has not expired.
func (c *indexCache) machOKnown(ix *index) ([]string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fresh := ix.machOUntil.IsZero() || timeNow().Before(ix.machOUntil)
	return ix.machO, ix.machODone && fresh
}

// machOTTL is how long a look for an index's Mach-O files holds: for
// good when both were found; failed_ttl when a fetch failed (a store
// outage ends), miss_ttl when the sources lack one (it may be uploaded).
func (c *indexCache) machOTTL(kept keptFiles, failed bool) time.Duration {
	switch {
	case failed:
		return c.failedTTL
	case len(kept.paths) < len(machOKinds):
		return c.missTTL
	}
	return 0
}

// keptFiles are symbol files found for a walk.
type keptFiles struct {
	paths []string
	owned []string // those of paths that are the cache's
	size  int64    // the owned files' bytes
}

func (k *keptFiles) add(path string, size int64, owned bool) {
	if path == "" {
		return
	}
	k.paths = append(k.paths, path)
	if owned {
		k.owned = append(k.owned, path)
		k.size += size
	}
}

// attach records an index's Mach-O files for ttl (0: for good),
// counting those of the cache's against its byte cap.
func (c *indexCache) attach(ix *index, kept keptFiles, ttl time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ix.machO, ix.machODone, ix.owned = kept.paths, true, kept.owned
	ix.machOUntil = time.Time{}
	if ttl > 0 {
		ix.machOUntil = timeNow().Add(ttl)
	}
	delta := kept.size - ix.ownedSize
	ix.ownedSize = kept.size
	ix.size += delta
	if c.hot[ix.id] == ix {
		c.size += delta
		c.evictLocked()
	}
}

// findMachO finds the UUID's executable and debug file: each in the
// local cache, else from the first source that has either. failed says
// a fetch failed (not a file a source lacks): the look is worth another
// after failed_ttl.
func (c *indexCache) findMachO(ctx context.Context, u uuid.UUID, name string, sources []*source) (kept keptFiles, failed bool) {
	have := map[FileKind]bool{}
	for _, kind := range machOKinds {
		local := c.localFilePath(u, kind)
		if st, err := os.Stat(local); err == nil && st.Mode().IsRegular() {
			kept.add(local, st.Size(), true)
			have[kind] = true
		}
	}
	if len(have) == len(machOKinds) {
		return kept, false
	}
	for _, s := range sources {
		if s.scanned != nil {
			if len(kept.paths) == 0 {
				if kept.paths = scannedFiles(s.scanned, u); len(kept.paths) > 0 {
					return kept, false
				}
			}
			continue
		}
		for _, kind := range machOKinds {
			if have[kind] {
				continue
			}
			f, err := s.Open(ctx, u, kind, name)
			if errors.Is(err, notfound.ErrNotFound) {
				continue
			}
			if err != nil {
				// The walk goes on without; the look is tried again.
				c.logFetch(ctx, s.cfg.Name, u, err)
				failed = true
				continue
			}
			kept.add(c.keepFile(u, kind, f))
			have[kind] = true
		}
		if len(kept.paths) > 0 {
			return kept, failed
		}
	}
	return kept, failed
}

// keepFile keeps a symbol file a source gave: a download is moved into
// the cache, a source's own file on disk is used in place. It closes f.
func (c *indexCache) keepFile(u uuid.UUID, kind FileKind, f *SymbolFile) (path string, size int64, owned bool) {
	defer f.Close()
	if !f.temp {
		return f.File.Name(), f.Size, false
	}
	local := c.localFilePath(u, kind)
	if err := os.Rename(f.File.Name(), local); err != nil {
		return "", 0, false
	}
	f.temp = false
	return local, f.Size, true
}

// scannedFiles returns the paths of the Mach-O files on disk with the UUID
// that a scanned directory indexed, binaries first (a zip member is read
// into memory, and not kept).
func scannedFiles(syms *symstore.Symbols, u uuid.UUID) []string {
	files, err := syms.OpenSymbols(context.Background(), u, nil)
	if err != nil {
		return nil
	}
	var paths []string
	for _, sf := range files {
		if f, ok := sf.ReaderAt.(*os.File); ok && image.Sniff(readHead(f)) != image.KindUnknown {
			paths = append(paths, f.Name())
		}
		if sf.Closer != nil {
			sf.Closer.Close()
		}
	}
	return paths
}

// readHead returns a file's first four bytes, or fewer.
func readHead(f *os.File) []byte {
	var b [4]byte
	n, _ := f.ReadAt(b[:], 0)
	return b[:n]
}

// getHot is get for an index open in memory, the usual case: it needs no
// context, no wait and no goroutine. It reports false when the index is
// not open.
func (c *indexCache) getHot(u uuid.UUID) (lookup, bool) {
	c.mu.Lock()
	ix := c.hot[u]
	if ix != nil && !ix.expires.IsZero() && !timeNow().Before(ix.expires) {
		c.dropLocked(ix)
		ix = nil
	}
	if ix == nil {
		c.mu.Unlock()
		return lookup{}, false
	}
	ix.refs++
	c.lru.MoveToFront(ix.elem)
	c.mu.Unlock()
	c.memoryHits.Inc()
	return lookup{index: ix, status: statusFound, source: ix.from, location: ix.location}, true
}

// get returns the UUID's index, finding or building it once however many
// callers ask at the same time. A caller whose ctx ends first gets status
// "timeout"; the work goes on, and a later request finds its result.
// only, when not nil, restricts the sources searched on a miss. The index
// returned is held: release it when done.
func (c *indexCache) get(ctx context.Context, u uuid.UUID, name string, only []*source) lookup {
	if l, ok := c.getHot(u); ok {
		return l
	}
	c.mu.Lock()
	if n, ok := c.neg[u]; ok {
		if timeNow().Before(n.until) {
			c.mu.Unlock()
			c.metrics.cache.WithLabelValues("negative").Inc()
			return n.look
		}
		delete(c.neg, u)
	}
	c.mu.Unlock()

	sources := c.sources
	key := u.String()
	if only != nil {
		sources = only
		for _, s := range only {
			key += "/" + s.cfg.Name
		}
	}
	for {
		if ctx.Err() != nil {
			// No load starts for a caller past its deadline.
			return lookup{status: statusTimeout, err: ctx.Err()}
		}
		ch := c.group.DoChan(key, func() (any, error) {
			// The work is not the caller's once it has a slot: it
			// outlives a request that gives up, bounded by the sources'
			// own download limits, and a later request finds its result.
			if err := c.fetches.acquire(ctx); err != nil {
				return lookup{status: statusTimeout, err: err}, nil
			}
			defer c.fetches.release()
			return c.load(context.WithoutCancel(ctx), u, name, sources, false), nil
		})
		select {
		case <-ctx.Done():
			return lookup{status: statusTimeout, err: ctx.Err()}
		case r := <-ch:
			l := r.Val.(lookup)
			if errors.Is(l.err, errNoFetchSlot) {
				continue // the caller that started it gave up waiting; this one has time
			}
			if l.index != nil {
				c.mu.Lock()
				l.index.refs++
				c.mu.Unlock()
			}
			return l
		}
	}
}

// release lets go of an index from get.
func (c *indexCache) release(ix *index) {
	if ix == nil {
		return
	}
	c.mu.Lock()
	ix.refs--
	c.evictLocked()
	c.mu.Unlock()
}

// rebuild drops what this instance knows of a UUID and builds its index
// again from the sources, for an upload that changed them.
func (c *indexCache) rebuild(ctx context.Context, u uuid.UUID) error {
	c.mu.Lock()
	delete(c.neg, u)
	if ix := c.hot[u]; ix != nil {
		c.dropLocked(ix)
	}
	c.mu.Unlock()
	ch := c.group.DoChan(u.String(), func() (any, error) {
		if err := c.fetches.acquire(ctx); err != nil {
			return lookup{status: statusTimeout, err: err}, nil
		}
		defer c.fetches.release()
		return c.load(context.WithoutCancel(ctx), u, "", c.sources, true), nil
	})
	select {
	case <-ctx.Done():
		return ctx.Err()
	case r := <-ch:
		l := r.Val.(lookup)
		if l.index == nil {
			return l.err
		}
		return nil
	}
}

// load finds the UUID's index: in the local cache, the shared cache, or
// built from the first source that has a symbol file for it.
//
// With rebuild, the caches are skipped and the index built afresh
// replaces the shared one.
//
// ctx carries the request's values (its ID, for the log), not its
// deadline: the work outlives a caller that gives up.
func (c *indexCache) load(ctx context.Context, u uuid.UUID, name string, sources []*source, rebuild bool) lookup {
	path := c.localPath(u)
	if !rebuild {
		c.mu.Lock()
		if ix := c.hot[u]; ix != nil {
			c.mu.Unlock()
			return lookup{index: ix, status: statusFound, source: ix.from, location: ix.location}
		}
		c.mu.Unlock()
		for _, p := range []string{path, c.localSymPath(u)} {
			if ix, err := c.open(u, p, "local cache", p); err == nil {
				c.metrics.cache.WithLabelValues("disk").Inc()
				return c.keep(ix)
			}
		}
		if c.shared != nil {
			ix, err := c.fetchShared(ctx, u, name, path)
			if err == nil {
				c.metrics.cache.WithLabelValues("shared").Inc()
				return c.keep(ix)
			}
			if errors.Is(err, errStaleShared) {
				c.log.LogAttrs(ctx, slog.LevelInfo, "shared index replaced", slog.String("request_id", requestIDOf(ctx)),
					slog.String("uuid", u.String()), slog.String("reason", err.Error()))
				c.metrics.cache.WithLabelValues("stale").Inc()
				rebuild = true // what is built replaces the shared copy
			}
		}
		c.metrics.cache.WithLabelValues("miss").Inc()
	}
	var fetchErrs []error
	failed := lookup{status: statusFetchingFailed}
	for _, s := range sources {
		l, err := c.build(ctx, u, name, s, path)
		// A source without the UUID; a file it has that cannot be read
		// wraps lookup.ErrNotFound too ("no readable file") but is
		// malformed, and said so.
		if l.status == "" && errors.Is(err, notfound.ErrNotFound) {
			continue
		}
		if err != nil {
			if l.status == statusFetchingFailed || l.status == statusTooLarge {
				// The next source may have it; if none does, the first
				// failure names the status and source.
				if len(fetchErrs) == 0 {
					failed.status, failed.source, failed.location = l.status, l.source, l.location
				}
				fetchErrs = append(fetchErrs, err)
				continue
			}
			c.metrics.indexBuilds.WithLabelValues("failed").Inc()
			l.err = err
			return c.remember(u, l, c.failedTTL)
		}
		c.metrics.indexBuilds.WithLabelValues("ok").Inc()
		if c.shared != nil && !l.index.breakpadOnly && l.index.degraded == "" {
			c.putShared(u, path, !rebuild, l.index.record)
		}
		return c.keep(l.index)
	}
	if len(fetchErrs) > 0 {
		failed.err = errors.Join(fetchErrs...)
		return c.remember(u, failed, c.missTTL)
	}
	return c.remember(u, lookup{status: statusMissing, err: notfound.NotFound(fmt.Sprintf("no source has symbols for %s", u))}, c.missTTL)
}

// scrub removes the local cache's directory from an error's text.
func (c *indexCache) scrub(err error) error {
	root := filepath.Dir(c.dir)
	if msg := err.Error(); strings.Contains(msg, root) {
		return errors.New(strings.ReplaceAll(msg, root+string(filepath.Separator), "(cache)/"))
	}
	return err
}

// degradedPath is where an index built from part of its files is kept.
func (c *indexCache) degradedPath(u uuid.UUID) string {
	return filepath.Join(c.tmp, u.String()+".degraded"+symindex.Extension)
}

// logFetch logs a failed fetch from a source (not a file it lacks).
func (c *indexCache) logFetch(ctx context.Context, source string, u uuid.UUID, err error) {
	c.log.LogAttrs(ctx, slog.LevelWarn, "fetch failed", slog.String("request_id", requestIDOf(ctx)),
		slog.String("source", source), slog.String("uuid", u.String()), slog.String("error", err.Error()))
}

// remember keeps a miss or failure for ttl. Its error, which a module's
// answer carries, names no path of the local cache: a download is known
// to clients by its source's location, and the cache's layout is the
// operator's business.
func (c *indexCache) remember(u uuid.UUID, l lookup, ttl time.Duration) lookup {
	if l.err != nil {
		l.err = c.scrub(l.err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.neg) >= c.maxNegative {
		// Requests choose the UUIDs: a client naming endless random ones
		// must not grow this map without bound. Expired entries go
		// first, then any, down to nine tenths of the cap.
		now := timeNow()
		for k, n := range c.neg {
			if now.After(n.until) {
				delete(c.neg, k)
			}
		}
		for k := range c.neg {
			if len(c.neg) < c.maxNegative*9/10 {
				break
			}
			delete(c.neg, k)
		}
	}
	c.neg[u] = negative{until: timeNow().Add(ttl), look: l}
	return l
}

// build fetches the UUID's files from one source and writes its index at
// path. The error wraps lookup.ErrNotFound when the source has nothing.
func (c *indexCache) build(ctx context.Context, u uuid.UUID, name string, s *source, path string) (lookup, error) {
	l := lookup{source: s.cfg.Name}
	var addErrs, fetchErrs []error
	var breakpadFile *SymbolFile
	syms := symstore.NewSymbols()
	defer syms.Close()
	var found []*SymbolFile
	var foundKinds []FileKind
	defer func() {
		for _, f := range found {
			f.Close()
		}
	}()
	if s.scanned != nil {
		syms = s.scanned
		l.location = s.cfg.Path
	} else {
		for _, k := range kinds {
			f, err := s.Open(ctx, u, k, name)
			if errors.Is(err, notfound.ErrNotFound) {
				continue
			}
			if err != nil {
				// The other kinds may still give an index, degraded: it
				// is not shared, and it expires (failed_ttl).
				c.logFetch(ctx, s.cfg.Name, u, err)
				if len(fetchErrs) == 0 {
					l.status = statusFetchingFailed
					if strings.Contains(err.Error(), "download limit") {
						l.status = statusTooLarge
					}
				}
				fetchErrs = append(fetchErrs, err)
				continue
			}
			found = append(found, f)
			foundKinds = append(foundKinds, k)
			if k == KindBreakpad {
				breakpadFile = f
			}
			if l.location == "" {
				l.location = f.Location
			}
			// A file that cannot be read costs itself: the others of the
			// UUID may still answer, and Lookup says what was wrong.
			if err := syms.AddFile(context.Background(), f.Name()); err != nil {
				addErrs = append(addErrs, fmt.Errorf("%s: %w", f.Location, err))
			}
		}
		if len(found) == 0 && len(fetchErrs) > 0 {
			return l, errors.Join(fetchErrs...)
		}
		if len(found) == 0 {
			return l, notfound.ErrNotFound
		}
	}
	e, err := syms.Lookup(u)
	if e == nil {
		if s.scanned != nil && errors.Is(err, notfound.ErrNotFound) {
			return l, notfound.ErrNotFound
		}
		l.status = statusMalformed
		if err == nil {
			err = fmt.Errorf("%s: no readable symbol file with UUID %s", s.cfg.Name, u)
		}
		for _, w := range append(syms.Skipped, syms.Warnings()...) {
			addErrs = append(addErrs, errors.New(w))
		}
		return l, errors.Join(append([]error{err}, addErrs...)...)
	}
	defer e.Release()
	if e.Image() == nil {
		// Known from a Breakpad .sym file alone, which has no Mach-O
		// layout to write an index for: the .sym file is kept instead
		// (locally; it is the source's file already).
		return c.keepSymFile(u, s, l, breakpadFile)
	}
	// What could not be fetched or read costs the index its
	// completeness: a cut dSYM is read without error, its sections
	// past the end are the entry's debug errors.
	degraded := errors.Join(append(append(fetchErrs, addErrs...), e.DebugErrors()...)...)
	if degraded == nil && slices.Contains(foundKinds, KindDebug) && !e.HasDebugInfo() {
		degraded = fmt.Errorf("%s: the debug file of %s gave no debug information", s.cfg.Name, u)
	}
	if degraded != nil {
		// Kept apart, in the directory emptied at start, so that a
		// restart does not take it for a complete index.
		path = c.degradedPath(u)
	}
	if err := writeIndexFile(path, c.tmp, e); err != nil {
		l.status = statusMalformed
		return l, fmt.Errorf("%s: indexing %s: %w", s.cfg.Name, u, err)
	}
	ix, err := c.open(u, path, s.cfg.Name, l.location)
	if err != nil {
		l.status = statusMalformed
		return l, err
	}
	// The files the index was built from are kept for the walker.
	var kept keptFiles
	if s.scanned != nil {
		kept.paths = scannedFiles(s.scanned, u)
	}
	for i, f := range found {
		if foundKinds[i] != KindBreakpad {
			kept.add(c.keepFile(u, foundKinds[i], f))
		}
	}
	c.attach(ix, kept, c.machOTTL(kept, len(fetchErrs) > 0))
	ix.record = newRecord(s, found, foundKinds)
	if degraded != nil {
		ix.degraded = c.scrub(degraded).Error()
		ix.expires = timeNow().Add(c.failedTTL)
		c.metrics.indexBuilds.WithLabelValues("degraded").Inc()
	}
	l.index, l.status = ix, statusFound
	return l, nil
}

func (c *indexCache) localSymPath(u uuid.UUID) string {
	return filepath.Join(c.dir, u.String()+".sym")
}

// keepSymFile copies a UUID's Breakpad file into the local cache and
// opens it as the UUID's index.
func (c *indexCache) keepSymFile(u uuid.UUID, s *source, l lookup, f *SymbolFile) (lookup, error) {
	l.status = statusMalformed
	if f == nil {
		return l, fmt.Errorf("%s: symbols of %s without a Mach-O image or a .sym file", s.cfg.Name, u)
	}
	tmp, err := os.CreateTemp(c.tmp, "sym-*")
	if err != nil {
		return l, err
	}
	defer os.Remove(tmp.Name())
	_, err = io.Copy(tmp, io.NewSectionReader(f, 0, f.Size))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	path := c.localSymPath(u)
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		return l, err
	}
	ix, err := c.open(u, path, s.cfg.Name, l.location)
	if err != nil {
		return l, err
	}
	ix.breakpadOnly = true
	l.index, l.status = ix, statusFound
	return l, nil
}

// writeIndexFile writes an entry's index under a temporary name and
// renames it into place, so that no reader maps a file being written.
func writeIndexFile(path, tmpDir string, e *symstore.Entry) error {
	f, err := os.CreateTemp(tmpDir, "index-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := e.WriteIndex(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// open opens an index file as a UUID's index.
func (c *indexCache) open(u uuid.UUID, path, from, location string) (*index, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	syms := symstore.NewSymbols()
	if err := syms.AddFile(context.Background(), path); err != nil {
		syms.Close()
		return nil, err
	}
	e, err := syms.Lookup(u)
	if e == nil {
		syms.Close()
		if err == nil {
			err = fmt.Errorf("%s: not an index of %s (%s)", path, u, strings.Join(append(syms.Skipped, syms.Warnings()...), "; "))
		}
		return nil, err
	}
	ix := &index{id: u, path: path, size: st.Size(), syms: syms, hasDebug: e.HasDebugInfo(), from: from, location: location}
	if im := e.Image(); im != nil {
		ix.arch, ix.archRegs, ix.name = im.ArchName(), im.Arch, filepath.Base(im.Name)
		if text, ok := im.TextSegment(); ok {
			ix.textAddr = text.Addr
		}
	}
	e.Release()
	return ix, nil
}

// fetchShared downloads the UUID's index from the shared cache into
// path, once its record (provenance.go) says it is complete, its bytes
// are those recorded and its inputs unchanged; errStaleShared when not.
func (c *indexCache) fetchShared(ctx context.Context, u uuid.UUID, name, path string) (*index, error) {
	ctx, cancel := context.WithTimeout(ctx, c.shared.cfg.DownloadTimeout)
	defer cancel()
	r, _, err := c.shared.store.get(ctx, sharedKey(u))
	if err != nil {
		if !errors.Is(err, errNotFound) {
			c.metrics.sourceErrors.WithLabelValues(c.shared.cfg.Name).Inc()
			c.logFetch(ctx, c.shared.cfg.Name, u, err)
		}
		return nil, err
	}
	defer r.Close()
	rec, err := c.readRecord(ctx, u)
	if err == nil {
		err = c.checkInputs(ctx, u, name, rec)
	}
	if err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(c.tmp, "shared-*")
	if err != nil {
		return nil, err
	}
	defer os.Remove(f.Name())
	sum := sha256.New()
	_, err = limitedCopy(ctx, io.MultiWriter(f, sum), r, int64(c.shared.cfg.MaxDownload))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		c.metrics.sourceErrors.WithLabelValues(c.shared.cfg.Name).Inc()
		return nil, err
	}
	if got := hex.EncodeToString(sum.Sum(nil)); got != rec.SHA256 {
		return nil, staleShared("its bytes differ from its record (SHA-256 %s, recorded %s)", got, rec.SHA256)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return nil, err
	}
	ix, err := c.open(u, path, "shared cache", c.shared.store.describe(sharedKey(u)))
	if err != nil {
		os.Remove(path)
		return nil, staleShared("%v", err)
	}
	ix.record = rec
	return ix, nil
}

// putShared writes a fresh, complete index and its record to the shared
// cache. The first write wins: an instance that built the same index
// meanwhile keeps its own copy, and every later instance reads the one
// stored; without onlyIfAbsent (an upload, or a stale shared copy) the
// index replaces the shared one.
func (c *indexCache) putShared(u uuid.UUID, path string, onlyIfAbsent bool, rec *indexRecord) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.shared.cfg.DownloadTimeout)
	defer cancel()
	err = c.shared.store.put(ctx, sharedKey(u), f, st.Size(), onlyIfAbsent)
	if err == nil {
		err = c.putRecord(ctx, u, path, rec)
	}
	switch {
	case err == nil:
		c.metrics.sharedWrites.WithLabelValues("written").Inc()
	case errors.Is(err, errExists):
		c.metrics.sharedWrites.WithLabelValues("exists").Inc()
	default:
		c.metrics.sourceErrors.WithLabelValues(c.shared.cfg.Name).Inc()
	}
}

// keep puts an index in memory and evicts the least recently used ones
// beyond the byte cap.
func (c *indexCache) keep(ix *index) lookup {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.hot[ix.id]; old != nil {
		ix.syms.Close()
		return lookup{index: old, status: statusFound, source: old.from, location: old.location}
	}
	c.hot[ix.id] = ix
	ix.elem = c.lru.PushFront(ix)
	c.size += ix.size
	c.evictLocked()
	return lookup{index: ix, status: statusFound, source: ix.from, location: ix.location}
}

// evictLocked drops least recently used indexes that no request holds
// until the cache fits its cap; the newest index always stays.
func (c *indexCache) evictLocked() {
	for e := c.lru.Back(); e != nil && c.size > c.maxBytes && c.lru.Len() > 1; {
		ix := e.Value.(*index)
		prev := e.Prev()
		if ix.refs == 0 && e != c.lru.Front() {
			c.lru.Remove(e)
			delete(c.hot, ix.id)
			c.size -= ix.size
			ix.syms.Close()
			os.Remove(ix.path)
			for _, p := range ix.owned {
				os.Remove(p)
			}
			c.metrics.evictions.Inc()
		}
		e = prev
	}
	c.metrics.cacheBytes.Set(float64(c.size))
}

// dropLocked forgets an open index, for a rebuild or because it
// expired. Lookups in flight keep their entries: Symbols counts
// references. A degraded index's file goes with it.
func (c *indexCache) dropLocked(ix *index) {
	c.lru.Remove(ix.elem)
	delete(c.hot, ix.id)
	c.size -= ix.size
	ix.syms.Close()
	if ix.degraded != "" {
		os.Remove(ix.path)
	}
}

// close closes every open index.
func (c *indexCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ix := range c.hot {
		ix.syms.Close()
	}
}

var _ io.Closer = (*SymbolFile)(nil)
