package indexcache

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
	"golang.org/x/sync/singleflight"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/image"
	notfound "github.com/stackimage/stackimage/lookup"
	"github.com/stackimage/stackimage/symindex"
	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/symstore/objstore"
	"github.com/stackimage/stackimage/symstore/remote"
	"github.com/stackimage/stackimage/uuid"
)

// Module statuses, as symbolicator names them (ObjectFileStatus): a
// Lookup's Status.
const (
	StatusFound          = "found"
	StatusUnused         = "unused"
	StatusMissing        = "missing"
	StatusMalformed      = "malformed"
	StatusFetchingFailed = "fetching_failed"
	StatusTimeout        = "timeout"
	StatusTooLarge       = "too_large"
)

// Index is one UUID's derived index, open and ready to answer. Its
// exported fields do not change once a Lookup gives it.
type Index struct {
	UUID uuid.UUID
	// Path is the index file (or, for a UUID known from a Breakpad file
	// alone, the .sym file).
	Path string
	// Symbols holds the index file open; entries are reference-counted,
	// so closing it on eviction never breaks a lookup in flight.
	Symbols *symstore.Symbols
	// Arch and ArchRegs are the image's architecture, TextAddr its
	// __TEXT segment's address, Name its file's base name; HasDebug says
	// the index has debug information (lines, inlined functions).
	Arch     string
	ArchRegs *archregs.Arch
	TextAddr uint64
	HasDebug bool
	Name     string

	size int64
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
	// again: a fetch failed (FailedTTL) or no source had the files
	// (MissTTL). ownedSize is the owned files' bytes, counted in size.
	machOUntil time.Time
	ownedSize  int64
	// degraded says why the index was built from part of its symbol
	// files (a fetch failed, a file could not be read): such an index
	// is never shared, and it expires at expires (FailedTTL) to be
	// built again.
	degraded string
	expires  time.Time
	// record is what the index was built from (provenance.go).
	record *indexRecord
}

// DegradedError is what a module's answer says of an index built from
// part of its files; "" for a complete one.
func (ix *Index) DegradedError() string {
	if ix.degraded == "" {
		return ""
	}
	return "symbols from part of the module's files (built again in failed_ttl): " + ix.degraded
}

// Lookup is the outcome of finding a UUID's index.
type Lookup struct {
	// Index is the index found, nil when none was; Status says which
	// (symbolicator's module status), Err why not.
	Index  *Index
	Status string
	Err    error
	// Source and Location say where the symbol file was found, or
	// where it was looked for.
	Source   string
	Location string
}

// negative is a remembered miss or failure.
type negative struct {
	until time.Time
	look  Lookup
}

// Origin is one place the cache finds symbol files, by name: a store
// read through a layout (Remote), or any other symstore.Source (Local: a
// directory indexed at start, a Go program's own source). A Local
// source's files on disk are used in place; its index is never shared
// through the store.
type Origin struct {
	Name   string
	Remote *remote.Source
	Local  symstore.Source
	// Location is where Local's files are, for answers (a directory).
	Location string
}

// Config configures a Cache.
type Config struct {
	// Dir holds the index files (Dir/index) and downloads (Dir/tmp,
	// emptied at start).
	Dir string
	// MaxBytes bounds the index files kept, with the downloads kept
	// beside them for walks.
	MaxBytes int64
	// MissTTL is how long a UUID no source has is remembered as
	// missing; FailedTTL how long a failed fetch or build is, and how
	// long an index built from part of its files is kept.
	MissTTL, FailedTTL time.Duration
	// MaxFetches bounds the loads running at once (at least 1).
	MaxFetches int
	// Sources are asked in order for a UUID not cached.
	Sources []*Origin
	// Shared, when set, is the store indexes are shared through, under
	// _index/: read before building, written after.
	Shared *remote.Source
	// Metrics, when set, counts what the cache does.
	Metrics *Metrics
	// Log receives failed fetches and replaced shared indexes (nil: none);
	// RequestID, when set, names the request of a context in its lines.
	Log       *slog.Logger
	RequestID func(context.Context) string
}

// Metrics are the cache's Prometheus metrics, registered by the program
// that owns them.
type Metrics struct {
	// Lookups counts index lookups by "result": memory, disk, shared,
	// stale (a shared index replaced), negative or miss.
	Lookups *prometheus.CounterVec
	// Builds counts indexes built by "result": ok, failed or degraded.
	Builds *prometheus.CounterVec
	// SharedWrites counts indexes offered to the shared cache by
	// "result": written or exists.
	SharedWrites *prometheus.CounterVec
	// SourceErrors counts failed fetches from the shared store by
	// "source".
	SourceErrors *prometheus.CounterVec
	Evictions    prometheus.Counter
	// Bytes is the bytes of index files cached.
	Bytes prometheus.Gauge
	// FetchesInFlight and FetchesWaiting are the loads fetching now and
	// those waiting for one of MaxFetches.
	FetchesInFlight, FetchesWaiting prometheus.Gauge
}

// NewMetrics makes the cache's metrics under their stackimage_ names,
// for the caller to register (Collectors).
func NewMetrics() *Metrics {
	counters := func(name, help, label string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, []string{label})
	}
	gauge := func(name, help string) prometheus.Gauge {
		return prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
	}
	return &Metrics{
		Lookups: counters("stackimage_index_cache_total", "Index lookups by where they were answered: memory, disk, shared (the store), negative (a remembered miss) or miss.", "result"),
		Builds:  counters("stackimage_index_builds_total", "Indexes built from symbol files, by result (ok or failed).", "result"),
		SharedWrites: counters("stackimage_shared_index_writes_total",
			"Indexes offered to the shared cache: written, or exists (another instance wrote it first).", "result"),
		SourceErrors: counters("stackimage_source_errors_total", "Failed fetches from a source (not counting files it lacks).", "source"),
		Evictions: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "stackimage_index_cache_evictions_total", Help: "Index files evicted from the local cache.",
		}),
		Bytes:           gauge("stackimage_index_cache_bytes", "Bytes of index files in the local cache."),
		FetchesInFlight: gauge("stackimage_fetches_in_flight", "Symbol lookups fetching from the sources now (at most limits.max_fetches)."),
		FetchesWaiting:  gauge("stackimage_fetches_waiting", "Symbol lookups waiting for one of limits.max_fetches."),
	}
}

// Collectors are the metrics, to register.
func (m *Metrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.Lookups, m.Builds, m.SharedWrites, m.SourceErrors, m.Evictions, m.Bytes,
		m.FetchesInFlight, m.FetchesWaiting}
}

// Cache finds, builds and keeps derived indexes: in memory and on
// local disk (an LRU bounded in bytes), and in the store's shared cache.
// It is safe for concurrent use.
type Cache struct {
	dir, tmp string
	// closing ends with Close: the loads that outlive their request
	// (detached) stop then, and work counts them for Close to wait.
	closing   context.Context
	closeWork context.CancelFunc
	work      sync.WaitGroup
	maxBytes  int64
	sources   []*Origin
	shared    *remote.Source // the store, when indexes are shared through it
	missTTL   time.Duration
	failedTTL time.Duration
	metrics   *Metrics
	// fetches bounds the loads running at once (MaxFetches).
	fetches *fetchLimiter
	// memoryHits is metrics.Lookups's "memory" counter, looked up once.
	memoryHits prometheus.Counter
	log        *slog.Logger
	requestID  func(context.Context) string
	group      singleflight.Group

	mu   sync.Mutex
	hot  map[uuid.UUID]*Index
	lru  *list.List // of *Index, most recent first
	size int64
	neg  map[uuid.UUID]negative
	// maxNegative bounds neg.
	maxNegative int
}

// maxNegative is how many misses and failures are remembered at most.
const maxNegative = 1 << 16

// now is time.Now, replaced by tests of expiry.
var now = time.Now

// New makes a Cache, removing the downloads a previous instance left in
// Dir and the oldest index files beyond MaxBytes.
func New(cfg Config) (*Cache, error) {
	for i, o := range cfg.Sources {
		if o == nil || (o.Remote == nil) == (o.Local == nil) {
			return nil, fmt.Errorf("index cache: source %d: want one of Remote and Local", i)
		}
	}
	if cfg.Metrics == nil {
		cfg.Metrics = NewMetrics()
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	if cfg.RequestID == nil {
		cfg.RequestID = func(context.Context) string { return "" }
	}
	c := &Cache{
		dir: filepath.Join(cfg.Dir, "index"), tmp: filepath.Join(cfg.Dir, "tmp"),
		maxBytes: cfg.MaxBytes, sources: cfg.Sources, shared: cfg.Shared,
		missTTL: cfg.MissTTL, failedTTL: cfg.FailedTTL, metrics: cfg.Metrics,
		hot: map[uuid.UUID]*Index{}, lru: list.New(), neg: map[uuid.UUID]negative{}, maxNegative: maxNegative,
		memoryHits: cfg.Metrics.Lookups.WithLabelValues("memory"),
		fetches:    newFetchLimiter(max(cfg.MaxFetches, 1), cfg.Metrics),
		log:        cfg.Log, requestID: cfg.RequestID,
	}
	// Downloads and half-written files of an instance that was killed
	// are of no use to this one.
	os.RemoveAll(c.tmp)
	for _, d := range []string{c.dir, c.tmp} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	c.closing, c.closeWork = context.WithCancel(context.Background())
	c.trimDir()
	return c, nil
}

// detached is the context of work that outlives the request that started
// it (a load a later request will find): ctx's values without its
// deadline, ended only by Close. done must be called when the work ends.
func (c *Cache) detached(ctx context.Context) (work context.Context, done func()) {
	c.work.Add(1)
	work, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(c.closing, cancel)
	return work, func() {
		stop()
		cancel()
		c.work.Done()
	}
}

// trimDir removes the oldest index files a previous run left until the
// directory fits the byte cap: files are counted against it only once
// loaded, so those never asked for again would otherwise stay for good.
func (c *Cache) trimDir() {
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

// SharedKey is the key of a UUID's index in the shared store.
func SharedKey(u uuid.UUID) string { return "_index/" + u.Hex() + symindex.Extension }

func (c *Cache) localPath(u uuid.UUID) string {
	return filepath.Join(c.dir, u.String()+symindex.Extension)
}

// localFilePath is where a downloaded symbol file of a kind is kept.
func (c *Cache) localFilePath(u uuid.UUID, kind remote.Kind) string {
	return filepath.Join(c.dir, u.String()+"."+kind.String())
}

// machOKinds are the files a walk reads beside an Index: the
// executable's compact unwind, __eh_frame and code, and the dSYM's
// __debug_frame when the executable has none.
var machOKinds = []remote.Kind{remote.KindCode, remote.KindDebug}

// MachOFiles returns the paths of the UUID's executable and debug file
// for the walker, which reads their unwind tables and code: those kept
// from the index's build, else those in the local cache, else those of
// the first source that has any (downloads are kept in the cache with the
// index). They are looked for once per index, however many requests ask
// at the same time; none when no source has them, or when ctx ends first.
func (c *Cache) MachOFiles(ctx context.Context, ix *Index, name string, only []*Origin) []string {
	if paths, ok := c.machOKnown(ix); ok || ix.breakpadOnly {
		return paths
	}
	sources := c.sources
	if only != nil {
		sources = only
	}
	ch := c.group.DoChan("files/"+ix.UUID.String(), func() (any, error) {
		if paths, ok := c.machOKnown(ix); ok {
			return paths, nil
		}
		if err := c.fetches.acquire(ctx); err != nil {
			return []string(nil), nil
		}
		defer c.fetches.release()
		work, done := c.detached(ctx)
		defer done()
		kept, failed := c.findMachO(work, ix.UUID, name, sources)
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
func (c *Cache) machOKnown(ix *Index) ([]string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	fresh := ix.machOUntil.IsZero() || now().Before(ix.machOUntil)
	return ix.machO, ix.machODone && fresh
}

// machOTTL is how long a look for an index's Mach-O files holds: for
// good when both were found; FailedTTL when a fetch failed (a store
// outage ends), MissTTL when the sources lack one (it may be uploaded).
func (c *Cache) machOTTL(kept keptFiles, failed bool) time.Duration {
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
func (c *Cache) attach(ix *Index, kept keptFiles, ttl time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ix.machO, ix.machODone, ix.owned = kept.paths, true, kept.owned
	ix.machOUntil = time.Time{}
	if ttl > 0 {
		ix.machOUntil = now().Add(ttl)
	}
	delta := kept.size - ix.ownedSize
	ix.ownedSize = kept.size
	ix.size += delta
	if c.hot[ix.UUID] == ix {
		c.size += delta
		c.evictLocked()
	}
}

// findMachO finds the UUID's executable and debug file: each in the
// local cache, else from the first source that has either. failed says
// a fetch failed (not a file a source lacks): the look is worth another
// after FailedTTL.
func (c *Cache) findMachO(ctx context.Context, u uuid.UUID, name string, sources []*Origin) (kept keptFiles, failed bool) {
	have := map[remote.Kind]bool{}
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
		if s.Local != nil {
			if len(kept.paths) == 0 {
				if kept = c.localFiles(ctx, s.Local, u); len(kept.paths) > 0 {
					return kept, false
				}
			}
			continue
		}
		for _, kind := range machOKinds {
			if have[kind] {
				continue
			}
			f, err := s.Remote.Open(ctx, u, kind, name)
			if errors.Is(err, notfound.ErrNotFound) {
				continue
			}
			if err != nil {
				// The walk goes on without; the look is tried again.
				c.logFetch(ctx, s.Name, u, err)
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
func (c *Cache) keepFile(u uuid.UUID, kind remote.Kind, f *remote.File) (path string, size int64, owned bool) {
	defer f.Close()
	if !f.Downloaded() {
		return f.File.Name(), f.Size, false
	}
	local := c.localFilePath(u, kind)
	if err := f.Keep(local); err != nil {
		return "", 0, false
	}
	return local, f.Size, true
}

// localFiles returns the Mach-O files with the UUID that a Local source
// gives, binaries first: a file on disk in place (a scanned directory's),
// any other (a Go program's bytes in memory) copied into the cache, which
// owns the copy. A scanned directory's zip members are read into memory
// and not kept, as before the walker needed them.
func (c *Cache) localFiles(ctx context.Context, src symstore.Source, u uuid.UUID) keptFiles {
	var kept keptFiles
	files, err := src.OpenSymbols(ctx, symstore.Want{UUID: u})
	if err != nil {
		return kept
	}
	defer func() {
		for _, sf := range files {
			if sf.Closer != nil {
				sf.Closer.Close()
			}
		}
	}()
	_, scanned := src.(*symstore.Symbols)
	for _, sf := range files {
		if sf.ReaderAt == nil || image.Sniff(readHead(sf.ReaderAt)) == image.KindUnknown {
			continue
		}
		if f, ok := sf.ReaderAt.(*os.File); ok {
			kept.add(f.Name(), sf.Size, false)
			continue
		}
		if !scanned {
			kept.add(c.copyFile(u, sf))
		}
	}
	return kept
}

// copyFile copies a Mach-O file a source gave into the cache, named for
// its kind (a dSYM's DWARF file or an executable), and returns where.
func (c *Cache) copyFile(u uuid.UUID, sf symstore.SymbolFile) (path string, size int64, owned bool) {
	mf, err := image.NewFile(io.NewSectionReader(sf.ReaderAt, 0, sf.Size), sf.Name)
	if err != nil {
		return "", 0, false
	}
	im, err := mf.ByUUID(u)
	mf.Close()
	if err != nil {
		return "", 0, false
	}
	kind := remote.KindCode
	if im.Type == image.TypeDSYM {
		kind = remote.KindDebug
	}
	tmp, err := os.CreateTemp(c.tmp, "copy-*")
	if err != nil {
		return "", 0, false
	}
	defer os.Remove(tmp.Name())
	_, err = io.Copy(tmp, io.NewSectionReader(sf.ReaderAt, 0, sf.Size))
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	local := c.localFilePath(u, kind)
	if err != nil || os.Rename(tmp.Name(), local) != nil {
		return "", 0, false
	}
	return local, sf.Size, true
}

// readHead returns a file's first four bytes, or fewer.
func readHead(r io.ReaderAt) []byte {
	var b [4]byte
	n, _ := r.ReadAt(b[:], 0)
	return b[:n]
}

// GetHot is get for an index open in memory, the usual case: it needs no
// context, no wait and no goroutine. It reports false when the index is
// not open.
func (c *Cache) GetHot(u uuid.UUID) (Lookup, bool) {
	c.mu.Lock()
	ix := c.hot[u]
	if ix != nil && !ix.expires.IsZero() && !now().Before(ix.expires) {
		c.dropLocked(ix)
		ix = nil
	}
	if ix == nil {
		c.mu.Unlock()
		return Lookup{}, false
	}
	ix.refs++
	c.lru.MoveToFront(ix.elem)
	c.mu.Unlock()
	c.memoryHits.Inc()
	return Lookup{Index: ix, Status: StatusFound, Source: ix.from, Location: ix.location}, true
}

// LookupContext returns the UUID's symbols from its index, found or built
// as Get finds it, from every source: the cache as a lookup of symbols by
// UUID (the aggregates name their frames through it). A UUID without an
// index is an error wrapping lookup.ErrNotFound, or the failure's own.
func (c *Cache) LookupContext(ctx context.Context, u uuid.UUID) (*symstore.Entry, error) {
	l := c.Get(ctx, u, "", nil)
	if l.Index == nil {
		if l.Err != nil {
			return nil, l.Err
		}
		return nil, notfound.NotFound(fmt.Sprintf("no symbols (%s)", l.Status))
	}
	// The entry holds its own reference to the index file: the cache may
	// evict the index once it is released.
	defer c.Release(l.Index)
	return l.Index.Symbols.LookupContext(ctx, u)
}

// Get returns the UUID's index, finding or building it once however many
// callers ask at the same time. A caller whose ctx ends first gets status
// "timeout"; the work goes on, and a later request finds its result.
// only, when not nil, restricts the sources searched on a miss. The index
// returned is held: release it when done.
func (c *Cache) Get(ctx context.Context, u uuid.UUID, name string, only []*Origin) Lookup {
	if l, ok := c.GetHot(u); ok {
		return l
	}
	c.mu.Lock()
	if n, ok := c.neg[u]; ok {
		if now().Before(n.until) {
			c.mu.Unlock()
			c.metrics.Lookups.WithLabelValues("negative").Inc()
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
			key += "/" + s.Name
		}
	}
	for {
		if ctx.Err() != nil {
			// No load starts for a caller past its deadline.
			return Lookup{Status: StatusTimeout, Err: ctx.Err()}
		}
		ch := c.group.DoChan(key, func() (any, error) {
			// The work is not the caller's once it has a slot: it
			// outlives a request that gives up, bounded by the sources'
			// own download limits, and a later request finds its result.
			if err := c.fetches.acquire(ctx); err != nil {
				return Lookup{Status: StatusTimeout, Err: err}, nil
			}
			defer c.fetches.release()
			work, done := c.detached(ctx)
			defer done()
			return c.load(work, u, name, sources, false), nil
		})
		select {
		case <-ctx.Done():
			return Lookup{Status: StatusTimeout, Err: ctx.Err()}
		case r := <-ch:
			l := r.Val.(Lookup)
			if errors.Is(l.Err, errNoFetchSlot) {
				continue // the caller that started it gave up waiting; this one has time
			}
			if l.Index != nil {
				c.mu.Lock()
				l.Index.refs++
				c.mu.Unlock()
			}
			return l
		}
	}
}

// Release lets go of an index from get.
func (c *Cache) Release(ix *Index) {
	if ix == nil {
		return
	}
	c.mu.Lock()
	ix.refs--
	c.evictLocked()
	c.mu.Unlock()
}

// Rebuild drops what this instance knows of a UUID and builds its index
// again from the sources, for an upload that changed them.
func (c *Cache) Rebuild(ctx context.Context, u uuid.UUID) error {
	c.mu.Lock()
	delete(c.neg, u)
	if ix := c.hot[u]; ix != nil {
		c.dropLocked(ix)
	}
	c.mu.Unlock()
	ch := c.group.DoChan(u.String(), func() (any, error) {
		if err := c.fetches.acquire(ctx); err != nil {
			return Lookup{Status: StatusTimeout, Err: err}, nil
		}
		defer c.fetches.release()
		work, done := c.detached(ctx)
		defer done()
		return c.load(work, u, "", c.sources, true), nil
	})
	select {
	case <-ctx.Done():
		return ctx.Err()
	case r := <-ch:
		l := r.Val.(Lookup)
		if l.Index == nil {
			return l.Err
		}
		return nil
	}
}

// load finds the UUID's Index: in the local cache, the shared cache, or
// built from the first source that has a symbol file for it.
//
// With rebuild, the caches are skipped and the index built afresh
// replaces the shared one.
//
// ctx carries the request's values (its ID, for the log), not its
// deadline: the work outlives a caller that gives up.
func (c *Cache) load(ctx context.Context, u uuid.UUID, name string, sources []*Origin, rebuild bool) Lookup {
	path := c.localPath(u)
	if !rebuild {
		c.mu.Lock()
		if ix := c.hot[u]; ix != nil {
			c.mu.Unlock()
			return Lookup{Index: ix, Status: StatusFound, Source: ix.from, Location: ix.location}
		}
		c.mu.Unlock()
		for _, p := range []string{path, c.localSymPath(u)} {
			if ix, err := c.open(u, p, "local cache", p); err == nil {
				c.metrics.Lookups.WithLabelValues("disk").Inc()
				return c.keep(ix)
			}
		}
		if c.shared != nil {
			ix, err := c.fetchShared(ctx, u, name, path)
			if err == nil {
				c.metrics.Lookups.WithLabelValues("shared").Inc()
				return c.keep(ix)
			}
			if errors.Is(err, errStaleShared) {
				c.log.LogAttrs(ctx, slog.LevelInfo, "shared index replaced", slog.String("request_id", c.requestID(ctx)),
					slog.String("uuid", u.String()), slog.String("reason", err.Error()))
				c.metrics.Lookups.WithLabelValues("stale").Inc()
				rebuild = true // what is built replaces the shared copy
			}
		}
		c.metrics.Lookups.WithLabelValues("miss").Inc()
	}
	var fetchErrs []error
	failed := Lookup{Status: StatusFetchingFailed}
	for _, s := range sources {
		l, err := c.build(ctx, u, name, s, path)
		// A source without the UUID; a file it has that cannot be read
		// wraps lookup.ErrNotFound too ("no readable file") but is
		// malformed, and said so.
		if l.Status == "" && errors.Is(err, notfound.ErrNotFound) {
			continue
		}
		if err != nil {
			if l.Status == StatusFetchingFailed || l.Status == StatusTooLarge {
				// The next source may have it; if none does, the first
				// failure names the status and source.
				if len(fetchErrs) == 0 {
					failed.Status, failed.Source, failed.Location = l.Status, l.Source, l.Location
				}
				fetchErrs = append(fetchErrs, err)
				continue
			}
			c.metrics.Builds.WithLabelValues("failed").Inc()
			l.Err = err
			return c.remember(u, l, c.failedTTL)
		}
		c.metrics.Builds.WithLabelValues("ok").Inc()
		if c.shared != nil && !l.Index.breakpadOnly && l.Index.degraded == "" {
			c.putShared(u, path, !rebuild, l.Index.record)
		}
		return c.keep(l.Index)
	}
	if len(fetchErrs) > 0 {
		failed.Err = errors.Join(fetchErrs...)
		return c.remember(u, failed, c.missTTL)
	}
	return c.remember(u, Lookup{Status: StatusMissing, Err: notfound.NotFound(fmt.Sprintf("no source has symbols for %s", u))}, c.missTTL)
}

// scrub removes the local cache's directory from an error's text.
func (c *Cache) scrub(err error) error {
	root := filepath.Dir(c.dir)
	if msg := err.Error(); strings.Contains(msg, root) {
		return errors.New(strings.ReplaceAll(msg, root+string(filepath.Separator), "(cache)/"))
	}
	return err
}

// degradedPath is where an index built from part of its files is kept.
func (c *Cache) degradedPath(u uuid.UUID) string {
	return filepath.Join(c.tmp, u.String()+".degraded"+symindex.Extension)
}

// logFetch logs a failed fetch from a source (not a file it lacks).
func (c *Cache) logFetch(ctx context.Context, source string, u uuid.UUID, err error) {
	c.log.LogAttrs(ctx, slog.LevelWarn, "fetch failed", slog.String("request_id", c.requestID(ctx)),
		slog.String("source", source), slog.String("uuid", u.String()), slog.String("error", err.Error()))
}

// remember keeps a miss or failure for ttl. Its error, which a module's
// answer carries, names no path of the local cache: a download is known
// to clients by its source's location, and the cache's layout is the
// operator's business.
func (c *Cache) remember(u uuid.UUID, l Lookup, ttl time.Duration) Lookup {
	if l.Err != nil {
		l.Err = c.scrub(l.Err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.neg) >= c.maxNegative {
		// Requests choose the UUIDs: a client naming endless random ones
		// must not grow this map without bound. Expired entries go
		// first, then any, down to nine tenths of the cap.
		now := now()
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
	c.neg[u] = negative{until: now().Add(ttl), look: l}
	return l
}

// build fetches the UUID's files from one source and writes its index at
// path. The error wraps lookup.ErrNotFound when the source has nothing.
func (c *Cache) build(ctx context.Context, u uuid.UUID, name string, s *Origin, path string) (Lookup, error) {
	l := Lookup{Source: s.Name}
	var addErrs, fetchErrs []error
	var breakpadFile *remote.File
	syms := symstore.NewSymbols()
	defer syms.Close()
	var found []*remote.File
	var foundKinds []remote.Kind
	defer func() {
		for _, f := range found {
			f.Close()
		}
	}()
	if s.Local != nil {
		// A directory indexed at start answers from its own index; any
		// other source through a Symbols of this build's own.
		if scanned, ok := s.Local.(*symstore.Symbols); ok {
			syms = scanned
		} else {
			syms.AddSource(s.Local)
		}
		l.Location = s.Location
	} else {
		for _, k := range remote.Kinds {
			f, err := s.Remote.Open(ctx, u, k, name)
			if errors.Is(err, notfound.ErrNotFound) {
				continue
			}
			if err != nil {
				// The other kinds may still give an index, degraded: it
				// is not shared, and it expires (FailedTTL).
				c.logFetch(ctx, s.Name, u, err)
				if len(fetchErrs) == 0 {
					l.Status = StatusFetchingFailed
					if strings.Contains(err.Error(), "download limit") {
						l.Status = StatusTooLarge
					}
				}
				fetchErrs = append(fetchErrs, err)
				continue
			}
			found = append(found, f)
			foundKinds = append(foundKinds, k)
			if k == remote.KindBreakpad {
				breakpadFile = f
			}
			if l.Location == "" {
				l.Location = f.Location
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
	e, err := syms.LookupContext(ctx, u)
	if e == nil {
		if s.Local != nil && errors.Is(err, notfound.ErrNotFound) {
			return l, notfound.ErrNotFound
		}
		l.Status = StatusMalformed
		if err == nil {
			err = fmt.Errorf("%s: no readable symbol file with UUID %s", s.Name, u)
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
	if degraded == nil && slices.Contains(foundKinds, remote.KindDebug) && !e.HasDebugInfo() {
		degraded = fmt.Errorf("%s: the debug file of %s gave no debug information", s.Name, u)
	}
	if degraded != nil {
		// Kept apart, in the directory emptied at start, so that a
		// restart does not take it for a complete index.
		path = c.degradedPath(u)
	}
	if err := writeIndexFile(path, c.tmp, e); err != nil {
		l.Status = StatusMalformed
		return l, fmt.Errorf("%s: indexing %s: %w", s.Name, u, err)
	}
	ix, err := c.open(u, path, s.Name, l.Location)
	if err != nil {
		l.Status = StatusMalformed
		return l, err
	}
	// The files the index was built from are kept for the walker.
	var kept keptFiles
	if s.Local != nil {
		kept = c.localFiles(ctx, s.Local, u)
	}
	for i, f := range found {
		if foundKinds[i] != remote.KindBreakpad {
			kept.add(c.keepFile(u, foundKinds[i], f))
		}
	}
	c.attach(ix, kept, c.machOTTL(kept, len(fetchErrs) > 0))
	ix.record = newRecord(s, found, foundKinds)
	if degraded != nil {
		ix.degraded = c.scrub(degraded).Error()
		ix.expires = now().Add(c.failedTTL)
		c.metrics.Builds.WithLabelValues("degraded").Inc()
	}
	l.Index, l.Status = ix, StatusFound
	return l, nil
}

func (c *Cache) localSymPath(u uuid.UUID) string {
	return filepath.Join(c.dir, u.String()+".sym")
}

// keepSymFile copies a UUID's Breakpad file into the local cache and
// opens it as the UUID's index.
func (c *Cache) keepSymFile(u uuid.UUID, s *Origin, l Lookup, f *remote.File) (Lookup, error) {
	l.Status = StatusMalformed
	if f == nil {
		return l, fmt.Errorf("%s: symbols of %s without a Mach-O image or a .sym file", s.Name, u)
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
	ix, err := c.open(u, path, s.Name, l.Location)
	if err != nil {
		return l, err
	}
	ix.breakpadOnly = true
	l.Index, l.Status = ix, StatusFound
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
func (c *Cache) open(u uuid.UUID, path, from, location string) (*Index, error) {
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
	ix := &Index{UUID: u, Path: path, size: st.Size(), Symbols: syms, HasDebug: e.HasDebugInfo(), from: from, location: location}
	if im := e.Image(); im != nil {
		ix.Arch, ix.ArchRegs, ix.Name = im.ArchName(), im.Arch, filepath.Base(im.Name)
		if text, ok := im.TextSegment(); ok {
			ix.TextAddr = text.Addr
		}
	}
	e.Release()
	return ix, nil
}

// fetchShared downloads the UUID's index from the shared cache into
// path, once its record (provenance.go) says it is complete, its bytes
// are those recorded and its inputs unchanged; errStaleShared when not.
func (c *Cache) fetchShared(ctx context.Context, u uuid.UUID, name, path string) (*Index, error) {
	ctx, cancel := context.WithTimeout(ctx, c.shared.DownloadTimeout())
	defer cancel()
	r, _, err := c.shared.Store().Get(ctx, SharedKey(u))
	if err != nil {
		if !errors.Is(err, notfound.ErrNotFound) {
			c.metrics.SourceErrors.WithLabelValues(c.shared.Name()).Inc()
			c.logFetch(ctx, c.shared.Name(), u, err)
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
	_, err = objstore.CopyAtMost(ctx, io.MultiWriter(f, sum), r, c.shared.MaxDownload())
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		c.metrics.SourceErrors.WithLabelValues(c.shared.Name()).Inc()
		return nil, err
	}
	if got := hex.EncodeToString(sum.Sum(nil)); got != rec.SHA256 {
		return nil, staleShared("its bytes differ from its record (SHA-256 %s, recorded %s)", got, rec.SHA256)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return nil, err
	}
	ix, err := c.open(u, path, "shared cache", c.shared.Store().Describe(SharedKey(u)))
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
func (c *Cache) putShared(u uuid.UUID, path string, onlyIfAbsent bool, rec *indexRecord) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.shared.DownloadTimeout())
	defer cancel()
	err = c.shared.Store().Put(ctx, SharedKey(u), f, st.Size(), onlyIfAbsent)
	if err == nil {
		err = c.putRecord(ctx, u, path, rec)
	}
	switch {
	case err == nil:
		c.metrics.SharedWrites.WithLabelValues("written").Inc()
	case errors.Is(err, objstore.ErrExists):
		c.metrics.SharedWrites.WithLabelValues("exists").Inc()
	default:
		c.metrics.SourceErrors.WithLabelValues(c.shared.Name()).Inc()
	}
}

// keep puts an index in memory and evicts the least recently used ones
// beyond the byte cap.
func (c *Cache) keep(ix *Index) Lookup {
	c.mu.Lock()
	defer c.mu.Unlock()
	if old := c.hot[ix.UUID]; old != nil {
		ix.Symbols.Close()
		return Lookup{Index: old, Status: StatusFound, Source: old.from, Location: old.location}
	}
	c.hot[ix.UUID] = ix
	ix.elem = c.lru.PushFront(ix)
	c.size += ix.size
	c.evictLocked()
	return Lookup{Index: ix, Status: StatusFound, Source: ix.from, Location: ix.location}
}

// evictLocked drops least recently used indexes that no request holds
// until the cache fits its cap; the newest index always stays.
func (c *Cache) evictLocked() {
	for e := c.lru.Back(); e != nil && c.size > c.maxBytes && c.lru.Len() > 1; {
		ix := e.Value.(*Index)
		prev := e.Prev()
		if ix.refs == 0 && e != c.lru.Front() {
			c.lru.Remove(e)
			delete(c.hot, ix.UUID)
			c.size -= ix.size
			ix.Symbols.Close()
			os.Remove(ix.Path)
			for _, p := range ix.owned {
				os.Remove(p)
			}
			c.metrics.Evictions.Inc()
		}
		e = prev
	}
	c.metrics.Bytes.Set(float64(c.size))
}

// dropLocked forgets an open index, for a rebuild or because it
// expired. Lookups in flight keep their entries: Symbols counts
// references. A degraded index's file goes with it.
func (c *Cache) dropLocked(ix *Index) {
	c.lru.Remove(ix.elem)
	delete(c.hot, ix.UUID)
	c.size -= ix.size
	ix.Symbols.Close()
	if ix.degraded != "" {
		os.Remove(ix.Path)
	}
}

// Close stops the loads still running for requests that gave up, waits
// for them, and closes every open index. Requests must have finished.
func (c *Cache) Close() {
	// Loads still running for requests that gave up stop, and are
	// waited for: none writes into the cache's directory once Close
	// returns.
	c.closeWork()
	c.work.Wait()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, ix := range c.hot {
		ix.Symbols.Close()
	}
}
