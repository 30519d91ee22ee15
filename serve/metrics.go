package serve

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/stackimage/stackimage/symstore/indexcache"
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
	downloads     *prometheus.CounterVec
	downloadBytes *prometheus.CounterVec
	frames        prometheus.Counter
	compactions   *prometheus.CounterVec
	partials      *prometheus.CounterVec
	// cache are the index cache's, sourceErrors among them.
	cache *indexcache.Metrics
}

func newMetrics() *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		cache:    indexcache.NewMetrics(),
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
	}
	m.registry.MustRegister(m.cache.Collectors()...)
	m.registry.MustRegister(m.requests, m.latency, m.inFlight, m.rejected, m.downloads, m.downloadBytes, m.frames, m.compactions, m.partials,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}
