package serve

import (
	"bytes"
	"context"
	"crypto/rand"
	_ "embed"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/stackimage/stackimage/aggregate"
	"github.com/stackimage/stackimage/dump"
	notfound "github.com/stackimage/stackimage/lookup"
	"github.com/stackimage/stackimage/symbolize"
	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/uuid"
)

// chunkPrefix is where the aggregates lie in the store: one chunk per
// accepted upload, under the hour it was accepted, named
// FIRST-LAST-NANOS-RANDOM.chunk where FIRST and LAST are the Unix seconds
// its stacks span (0 when they had no timestamp), so that a query for a
// time range reads only the chunks that may hold it.
const chunkPrefix = "_aggregate/chunks/"

// maxReportedRecordErrors bounds the bad records an upload's answer
// names one by one.
const maxReportedRecordErrors = 10

// stacksAnswer is the answer to POST /v1/stacks.
type stacksAnswer struct {
	Records      int64    `json:"records"`
	UniqueStacks int      `json:"unique_stacks"`
	Chunk        string   `json:"chunk"`
	BadRecords   int      `json:"bad_records"`
	Errors       []string `json:"errors,omitempty"`
}

// handleStacks ingests the stream format, or any report the door reads,
// into a chunk of the shared store. The answer is 200 only once the chunk
// is written: what was acknowledged survives the instance.
func (s *Server) handleStacks(w http.ResponseWriter, r *http.Request) {
	if s.store == nil || s.store.store == nil {
		writeError(w, http.StatusServiceUnavailable, "aggregates need a writable store: set store in the configuration")
		return
	}
	// ?threads=all counts every thread of a crash, not its crashed
	// thread alone (aggregate.Threads).
	threads, err := aggregate.ParseThreads(r.URL.Query().Get("threads"))
	if err != nil {
		writeError(w, http.StatusBadRequest, "stacks: %v", err)
		return
	}
	ctx, cancel := s.deadline(r.Context())
	defer cancel()
	max := int64(s.cfg.Limits.MaxDumpBody)
	body := http.MaxBytesReader(w, r.Body, max)
	ans := stacksAnswer{}
	agg := aggregate.New()
	loader := &aggregate.Loader{Aggregator: agg, Threads: threads, OnError: func(name string, err error) {
		ans.BadRecords++
		if len(ans.Errors) < maxReportedRecordErrors {
			ans.Errors = append(ans.Errors, err.Error())
		}
	}}
	// A memory dump (snapshot, minidump, core) is walked at ingest, with
	// the unwind tables of its images' symbol files; the frames are named
	// at query time, as a stream record's are.
	loader.SymbolizerFor = func(ctx context.Context, dumps []*dump.Dump) (*symbolize.Symbolizer, func()) {
		found := s.findSymbols(ctx, dumps, nil)
		z := s.symbolizer(found, false)
		return z, func() { z.Symbols.Close(); found.close() }
	}
	if err := loader.Read(ctx, "body", body); err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			bodyError(w, err, "stacks")
			return
		}
		if agg.Records() == 0 {
			writeError(w, http.StatusBadRequest, "stacks: %v", err)
			return
		}
		ans.Errors = append(ans.Errors, err.Error())
	}
	if agg.Records() == 0 {
		writeError(w, http.StatusBadRequest, "stacks: no stack could be read (%d bad records: %s)", ans.BadRecords, strings.Join(ans.Errors, "; "))
		return
	}
	chunk := agg.Chunk()
	var buf bytes.Buffer
	if err := aggregate.EncodeChunk(&buf, chunk); err != nil {
		writeError(w, http.StatusInternalServerError, "stacks: %v", err)
		return
	}
	key := chunkKey(chunk, timeNow())
	if err := s.store.store.Put(ctx, key, bytes.NewReader(buf.Bytes()), int64(buf.Len()), true); err != nil {
		writeError(w, storeStatus(w, err), "stacks: the store did not keep them: %v", err)
		return
	}
	s.writePartialsSoon([]string{key})
	ans.Records, ans.UniqueStacks, ans.Chunk = agg.Records(), agg.UniqueStacks(), key
	writeJSON(w, ans)
}

// chunkKey names a new chunk.
func chunkKey(c *aggregate.Chunk, now time.Time) string {
	var random [6]byte
	rand.Read(random[:])
	var first, last int64
	if !c.First.IsZero() {
		first, last = c.First.Unix(), c.Last.Unix()+1
	}
	return fmt.Sprintf("%s%s/%d-%d-%d-%s.chunk", chunkPrefix, now.UTC().Format("2006-01-02T15"), first, last, now.UnixNano(), hex.EncodeToString(random[:]))
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

// aggregateQuery is a request's filter and grouping.
type aggregateQuery struct {
	from, to   time.Time
	appVersion string
	osVersion  string
	device     string
	labels     []aggregate.Label
	group      aggregate.GroupOptions
}

func parseAggregateQuery(r *http.Request) (aggregateQuery, error) {
	q := r.URL.Query()
	var aq aggregateQuery
	for _, f := range []struct {
		name string
		dst  *time.Time
	}{{"from", &aq.from}, {"to", &aq.to}} {
		if v := q.Get(f.name); v != "" {
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				return aq, fmt.Errorf("%s=%q: want an RFC 3339 time", f.name, v)
			}
			*f.dst = t
		}
	}
	aq.appVersion, aq.osVersion, aq.device = q.Get("app_version"), q.Get("os_version"), q.Get("device")
	for _, kv := range q["label"] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return aq, fmt.Errorf("label=%q: want KEY=VALUE", kv)
		}
		aq.labels = append(aq.labels, aggregate.Label{Key: k, Value: v})
	}
	if v := q.Get("frames"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			return aq, fmt.Errorf("frames=%q: want 1 to 1000", v)
		}
		aq.group.Frames = n
	}
	switch g := q.Get("group_by"); {
	case g == "" || g == "frames":
	case g == "stack":
		aq.group.Frames = -1
	case strings.HasPrefix(g, "label:") && len(g) > len("label:"):
		aq.group.Label = strings.TrimPrefix(g, "label:")
	default:
		return aq, fmt.Errorf("group_by=%q: want frames, stack or label:KEY", g)
	}
	for _, p := range q["in_app"] {
		if strings.Contains(p, "/") {
			aq.group.InApp.Paths = append(aq.group.InApp.Paths, p)
		} else {
			aq.group.InApp.Names = append(aq.group.InApp.Names, p)
		}
	}
	return aq, nil
}

// keep is the query's filter of samples.
func (aq *aggregateQuery) keep(a *aggregate.Attributes, s *aggregate.ChunkSample) bool {
	if aq.appVersion != "" && a.AppVersion != aq.appVersion ||
		aq.osVersion != "" && a.OSVersion != aq.osVersion ||
		aq.device != "" && a.Device != aq.device {
		return false
	}
	if !aq.from.IsZero() || !aq.to.IsZero() {
		if s.First.IsZero() {
			return false // no timestamp: in no time range
		}
		if !aq.from.IsZero() && s.Last.Before(aq.from) || !aq.to.IsZero() && s.First.After(aq.to) {
			return false
		}
	}
	for _, want := range aq.labels {
		found := false
		for _, l := range a.Labels {
			if l == want {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// mayHold reports whether a chunk's span can hold stacks of the query's
// time range.
func (aq *aggregateQuery) mayHold(key string) bool {
	if aq.from.IsZero() && aq.to.IsZero() {
		return true
	}
	first, last, ok := chunkSpan(key)
	if !ok {
		return false
	}
	return !(!aq.from.IsZero() && last.Before(aq.from) || !aq.to.IsZero() && first.After(aq.to))
}

// loadAggregate merges the store's chunks the query may need and
// symbolicates the result once. A chunk deleted between listing and
// reading was merged into another by a compaction: the chunks are listed
// again.
func (s *Server) loadAggregate(ctx context.Context, aq *aggregateQuery) (*aggregate.Result, error) {
	if s.store == nil || s.store.store == nil {
		return nil, errors.New("aggregates need a store: set store in the configuration")
	}
	for attempt := 0; ; attempt++ {
		agg, err := s.mergeAggregate(ctx, aq)
		if errors.Is(err, notfound.ErrNotFound) && attempt < 3 {
			continue
		}
		if err != nil {
			return nil, err
		}
		return agg.Symbolicate(ctx, cacheLookup{s})
	}
}

// mergeAggregate lists the chunks and merges those the query may need.
func (s *Server) mergeAggregate(ctx context.Context, aq *aggregateQuery) (*aggregate.Aggregator, error) {
	keys, err := s.store.store.List(ctx, chunkPrefix)
	if err != nil {
		return nil, err
	}
	s.compactSoon(keys)
	// Once this query has merged what it reads: the partial chunks'
	// merging would take the cores from it.
	defer s.writePartialsSoon(keys)
	// A sample merged from several uploads spans all their timestamps:
	// a query for a time range leaves partial chunks aside and reads the
	// open hours' uploads themselves, to answer as they would.
	timeRange := !aq.from.IsZero() || !aq.to.IsZero()
	var wanted []string
	for _, key := range keys {
		if strings.HasSuffix(key, ".chunk") && aq.mayHold(key) && !(timeRange && strings.HasSuffix(key, partialSuffix)) {
			wanted = append(wanted, key)
		}
	}
	set, err := s.resolveChunks(ctx, wanted)
	if err != nil {
		return nil, err
	}
	agg := aggregate.New()
	if err := s.mergeInto(ctx, set, agg, aq.keep); err != nil {
		return nil, err
	}
	return agg, nil
}

// compactSoon starts compacting, in the background, the closed hours
// among keys holding more than one chunk; one compaction at a time.
func (s *Server) compactSoon(keys []string) {
	clock := timeNow // read here: tests replace it while the work runs
	if len(s.closedBuckets(keys, clock())) == 0 || !s.compacting.CompareAndSwap(false, true) {
		return
	}
	s.background.Add(1)
	go func() {
		defer s.background.Done()
		defer s.compacting.Store(false)
		ctx, cancel := context.WithTimeout(context.Background(), 10*s.cfg.Limits.RequestTimeout)
		defer cancel()
		result := "ok"
		if err := s.compactAggregates(ctx, clock()); err != nil {
			result = "failed" // the chunks stay as they were; the next query tries again
		}
		s.metrics.compactions.WithLabelValues(result).Inc()
	}()
}

// readChunk reads one chunk from the store, or from the chunks decoded
// before. The chunk is shared: it must not be changed.
func (s *Server) readChunk(ctx context.Context, key string) (*aggregate.Chunk, error) {
	if c := s.chunks.get(key); c != nil {
		return c, nil
	}
	rc, _, err := s.store.store.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	c, err := aggregate.DecodeChunk(rc)
	if err != nil {
		return nil, err
	}
	s.chunks.add(key, c)
	return c, nil
}

// cacheLookup finds symbols through the server's index cache and sources.
type cacheLookup struct{ s *Server }

func (c cacheLookup) LookupContext(ctx context.Context, id uuid.UUID) (*symstore.Entry, error) {
	l := c.s.cache.Get(ctx, id, "", nil)
	if l.Index == nil {
		if l.Err != nil {
			return nil, l.Err
		}
		return nil, notfound.NotFound(fmt.Sprintf("no symbols (%s)", l.Status))
	}
	// The entry holds its own reference to the index file: the cache
	// may evict the index once it is released.
	defer c.s.cache.Release(l.Index)
	return l.Index.Symbols.LookupContext(ctx, id)
}

func (s *Server) handleGroups(w http.ResponseWriter, r *http.Request) {
	aq, err := parseAggregateQuery(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	ctx, cancel := s.deadline(r.Context())
	defer cancel()
	res, err := s.loadAggregate(ctx, &aq)
	if err != nil {
		writeError(w, storeStatus(w, err), "groups: %v", err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	res.WriteGroupsJSON(w, res.Groups(aq.group))
}

func (s *Server) handleAggregate(w http.ResponseWriter, r *http.Request) {
	aq, err := parseAggregateQuery(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, "%v", err)
		return
	}
	format := r.URL.Query().Get("format")
	switch format {
	case "", "pprof", "folded", "speedscope", "json":
	default:
		writeError(w, http.StatusBadRequest, "format=%q: want pprof, folded, speedscope or json", format)
		return
	}
	ctx, cancel := s.deadline(r.Context())
	defer cancel()
	res, err := s.loadAggregate(ctx, &aq)
	if err != nil {
		writeError(w, storeStatus(w, err), "aggregate: %v", err)
		return
	}
	switch format {
	case "folded":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		res.WriteFolded(w)
	case "speedscope":
		w.Header().Set("Content-Type", "application/json")
		res.WriteSpeedscope(w, "stackimage")
	case "json":
		w.Header().Set("Content-Type", "application/json")
		res.WriteGroupsJSON(w, res.Groups(aq.group))
	default:
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Header().Set("Content-Disposition", `attachment; filename="stacks.pb.gz"`)
		res.WriteProfile(w)
	}
}

//go:embed ui.html
var uiPage []byte

func (s *Server) handleUI(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'unsafe-inline'")
	w.Write(uiPage)
}
