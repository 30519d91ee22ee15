package serve

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// metrics are the service's Prometheus metrics, in a registry of the
// Server's own, so that several servers in one process (tests) do not
// share counters.
type metrics struct {
	registry      *prometheus.Registry
	requests      *prometheus.CounterVec
	latency       *prometheus.HistogramVec
	inFlight      prometheus.Gauge
	rejected      prometheus.Counter
	cache         *prometheus.CounterVec
	cacheBytes    prometheus.Gauge
	evictions     prometheus.Counter
	indexBuilds   *prometheus.CounterVec
	sharedWrites  *prometheus.CounterVec
	sourceErrors  *prometheus.CounterVec
	downloads     *prometheus.CounterVec
	downloadBytes *prometheus.CounterVec
	frames        prometheus.Counter
	compactions   *prometheus.CounterVec
	partials      *prometheus.CounterVec
	// fetchesInFlight and fetchesWaiting are the lookups fetching from
	// the sources now, and those waiting for one of limits.max_fetches.
	fetchesInFlight prometheus.Gauge
	fetchesWaiting  prometheus.Gauge
}

func newMetrics() *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "stackimage_requests_total", Help: "HTTP requests answered, by endpoint and status code.",
		}, []string{"endpoint", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "stackimage_request_duration_seconds", Help: "Time to answer a request, by endpoint.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"endpoint"}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "stackimage_requests_in_flight", Help: "Requests being served now.",
		}),
		rejected: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "stackimage_requests_rejected_total", Help: "Requests refused with 503 because limits.max_concurrent were being served.",
		}),
		cache: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "stackimage_index_cache_total", Help: "Index lookups by where they were answered: memory, disk, shared (the store), negative (a remembered miss) or miss.",
		}, []string{"result"}),
		cacheBytes: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "stackimage_index_cache_bytes", Help: "Bytes of index files in the local cache.",
		}),
		evictions: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "stackimage_index_cache_evictions_total", Help: "Index files evicted from the local cache.",
		}),
		indexBuilds: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "stackimage_index_builds_total", Help: "Indexes built from symbol files, by result (ok or failed).",
		}, []string{"result"}),
		sharedWrites: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "stackimage_shared_index_writes_total", Help: "Indexes offered to the shared cache: written, or exists (another instance wrote it first).",
		}, []string{"result"}),
		sourceErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "stackimage_source_errors_total", Help: "Failed fetches from a source (not counting files it lacks).",
		}, []string{"source"}),
		downloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "stackimage_source_downloads_total", Help: "Files downloaded from a source.",
		}, []string{"source"}),
		downloadBytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "stackimage_source_download_bytes_total", Help: "Bytes downloaded from a source.",
		}, []string{"source"}),
		frames: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "stackimage_frames_total", Help: "Frames symbolicated.",
		}),
		compactions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "stackimage_aggregate_compactions_total", Help: "Compactions of the aggregates' closed hours, by result (ok or failed).",
		}, []string{"result"}),
		partials: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "stackimage_aggregate_partial_chunks_total", Help: "Partial chunks written of the aggregates' open hours, by result (ok or failed).",
		}, []string{"result"}),
		fetchesInFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "stackimage_fetches_in_flight", Help: "Symbol lookups fetching from the sources now (at most limits.max_fetches).",
		}),
		fetchesWaiting: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "stackimage_fetches_waiting", Help: "Symbol lookups waiting for one of limits.max_fetches.",
		}),
	}
	m.registry.MustRegister(m.fetchesInFlight, m.fetchesWaiting, m.requests, m.latency, m.inFlight, m.rejected, m.cache, m.cacheBytes,
		m.evictions, m.indexBuilds, m.sharedWrites, m.sourceErrors, m.downloads, m.downloadBytes, m.frames, m.compactions, m.partials,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}
