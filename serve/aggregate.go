package serve

import (
	"context"
	_ "embed"
	"errors"
	"net/http"
	"strings"

	"github.com/stackimage/stackimage/aggregate"
	"github.com/stackimage/stackimage/aggregate/chunkstore"
	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/symbolize"
)

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
	if s.chunks == nil {
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
	key, err := s.chunks.Write(ctx, agg.Chunk())
	if errors.Is(err, chunkstore.ErrEncode) {
		writeError(w, http.StatusInternalServerError, "stacks: %v", err)
		return
	}
	if err != nil {
		writeError(w, storeStatus(w, err), "stacks: the store did not keep them: %v", err)
		return
	}
	ans.Records, ans.UniqueStacks, ans.Chunk = agg.Records(), agg.UniqueStacks(), key
	writeJSON(w, ans)
}

// aggregateQuery is a request's filter and grouping.
type aggregateQuery struct {
	filter chunkstore.Query
	group  aggregate.GroupOptions
}

func parseAggregateQuery(r *http.Request) (aggregateQuery, error) {
	filter, group, err := chunkstore.ParseQuery(r.URL.Query())
	return aggregateQuery{filter, group}, err
}

// loadAggregate merges the stored chunks the query may need and
// symbolicates the result once.
func (s *Server) loadAggregate(ctx context.Context, aq *aggregateQuery) (*aggregate.Result, error) {
	if s.chunks == nil {
		return nil, errors.New("aggregates need a store: set store in the configuration")
	}
	agg, err := s.chunks.Merge(ctx, &aq.filter)
	if err != nil {
		return nil, err
	}
	return agg.Symbolicate(ctx, s.cache)
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
