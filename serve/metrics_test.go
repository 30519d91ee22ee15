package serve

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// TestMetricsText checks the text /metrics writes: a source's name of
// any characters makes a valid series (escaped as Prometheus's text
// format asks), the latency histogram has its buckets, and the process's
// own metrics follow.
func TestMetricsText(t *testing.T) {
	m := newMetrics()
	m.sourceErrors.WithLabelValues("a \"quoted\" \\ name\nsplit").Inc()
	m.downloadBytes.WithLabelValues("plain").Add(1234)
	m.latency.WithLabelValues("symbolicate").Update(0.003)
	m.fetchesWaiting.Inc()
	m.frames.Add(30)

	rec := httptest.NewRecorder()
	m.serveHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/plain; version=0.0.4") {
		t.Errorf("Content-Type = %q, want Prometheus's text format", ct)
	}
	body := rec.Body.String()
	for _, want := range []string{
		`stackimage_source_errors_total{source="a \"quoted\" \\ name\nsplit"} 1` + "\n",
		`stackimage_source_download_bytes_total{source="plain"} 1234` + "\n",
		`stackimage_request_duration_seconds_bucket{endpoint="symbolicate",le="0.0025"} 0` + "\n",
		`stackimage_request_duration_seconds_bucket{endpoint="symbolicate",le="0.005"} 1` + "\n",
		`stackimage_request_duration_seconds_count{endpoint="symbolicate"} 1` + "\n",
		"stackimage_fetches_waiting 1\n",
		"stackimage_frames_total 30\n",
		"stackimage_requests_rejected_total 0\n",
		"go_goroutines ",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q:\n%s", want, body)
		}
	}

	// metric (the tests' reader) finds what was counted, by label.
	s := &Server{metrics: m}
	if v := metric(t, s, "stackimage_source_download_bytes_total", "source", "plain"); v != 1234 {
		t.Errorf("metric(download bytes, plain) = %v, want 1234", v)
	}
	if v := metric(t, s, "stackimage_source_download_bytes_total", "source", "other"); v != 0 {
		t.Errorf("metric(download bytes, other) = %v, want 0", v)
	}
}
