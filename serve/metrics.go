package serve

import (
	"net/http"
	"strings"

	vm "github.com/VictoriaMetrics/metrics"
)

// metrics are the service's Prometheus metrics, in a set of the Server's
// own, so that several servers in one process (tests) do not share
// counters. They are held by VictoriaMetrics/metrics rather than
// Prometheus's client: every command of the one program pays for the
// package initialisation of what it links, and Prometheus's client
// (which registers its Go and process collectors at init and brings
// protobuf) took about a third of `stackimage version`'s time
// (docs/serve.md). The series and their meanings are listed in
// docs/serve.md ("Metrics").
type metrics struct {
	set           *vm.Set
	requests      family[*vm.Counter]             // endpoint, code
	latency       family[*vm.PrometheusHistogram] // endpoint
	inFlight      *vm.Gauge
	rejected      *vm.Counter
	cache         family[*vm.Counter] // result
	cacheBytes    *vm.Gauge
	evictions     *vm.Counter
	indexBuilds   family[*vm.Counter]      // result
	sharedWrites  family[*vm.Counter]      // result
	sourceErrors  family[*vm.Counter]      // source
	downloads     family[*vm.Counter]      // source
	downloadBytes family[*vm.FloatCounter] // source
	frames        *vm.FloatCounter
	compactions   family[*vm.Counter] // result
	partials      family[*vm.Counter] // result
	// fetchesInFlight and fetchesWaiting are the lookups fetching from
	// the sources now, and those waiting for one of limits.max_fetches.
	fetchesInFlight *vm.Gauge
	fetchesWaiting  *vm.Gauge
}

// latencyBuckets are the upper bounds of stackimage_request_duration_seconds.
var latencyBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

func newMetrics() *metrics {
	set := vm.NewSet()
	counters := func(name string, labels ...string) family[*vm.Counter] {
		return family[*vm.Counter]{name, labels, set.GetOrCreateCounter}
	}
	return &metrics{
		set:      set,
		requests: counters("stackimage_requests_total", "endpoint", "code"),
		latency: family[*vm.PrometheusHistogram]{"stackimage_request_duration_seconds", []string{"endpoint"},
			func(series string) *vm.PrometheusHistogram {
				return set.GetOrCreatePrometheusHistogramExt(series, latencyBuckets)
			}},
		inFlight:      set.NewGauge("stackimage_requests_in_flight", nil),
		rejected:      set.NewCounter("stackimage_requests_rejected_total"),
		cache:         counters("stackimage_index_cache_total", "result"),
		cacheBytes:    set.NewGauge("stackimage_index_cache_bytes", nil),
		evictions:     set.NewCounter("stackimage_index_cache_evictions_total"),
		indexBuilds:   counters("stackimage_index_builds_total", "result"),
		sharedWrites:  counters("stackimage_shared_index_writes_total", "result"),
		sourceErrors:  counters("stackimage_source_errors_total", "source"),
		downloads:     counters("stackimage_source_downloads_total", "source"),
		downloadBytes: family[*vm.FloatCounter]{"stackimage_source_download_bytes_total", []string{"source"}, set.GetOrCreateFloatCounter},
		frames:        set.NewFloatCounter("stackimage_frames_total"),
		compactions:   counters("stackimage_aggregate_compactions_total", "result"),
		partials:      counters("stackimage_aggregate_partial_chunks_total", "result"),

		fetchesInFlight: set.NewGauge("stackimage_fetches_in_flight", nil),
		fetchesWaiting:  set.NewGauge("stackimage_fetches_waiting", nil),
	}
}

// serveHTTP writes the metrics in Prometheus's text format, the
// process's own (go_*, process_*) after the service's.
func (m *metrics) serveHTTP(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	m.set.WritePrometheus(w)
	vm.WriteProcessMetrics(w)
}

// family is one metric with labels: a series for each set of label
// values, made on first use (get is the set's GetOrCreate method).
type family[M any] struct {
	name   string
	labels []string
	get    func(series string) M
}

// WithLabelValues returns the series of the given label values, one for
// each label in order.
func (f family[M]) WithLabelValues(values ...string) M {
	var b strings.Builder
	b.WriteString(f.name)
	b.WriteByte('{')
	for i, label := range f.labels {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(label)
		b.WriteString(`="`)
		labelEscaper.WriteString(&b, values[i])
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return f.get(b.String())
}

// labelEscaper escapes a label value as Prometheus's text format does, so
// that a source's name (any string of the configuration) makes a valid
// series.
var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
