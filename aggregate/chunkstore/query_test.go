package chunkstore

import (
	"testing"
	"time"

	"github.com/stackimage/stackimage/aggregate"
)

// A query keeps the samples of its attributes, labels and time range;
// a sample without a timestamp is in no time range.
func TestQueryFilters(t *testing.T) {
	c := newChunks(t, newMemStore(), -1)
	writeAt(t, c, time.Now())
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tt := range []struct {
		name    string
		query   Query
		records int64
	}{
		{"all", Query{}, 3},
		{"label", Query{Labels: []aggregate.Label{{Key: "api", Value: "UserDefaults"}}}, 2},
		{"label absent", Query{Labels: []aggregate.Label{{Key: "api", Value: "Nothing"}}}, 0},
		{"app version", Query{AppVersion: "2.3 (41)"}, 2},
		{"device", Query{Device: "iPhone14,2"}, 2},
		{"os version", Query{OSVersion: "iOS 17"}, 0},
		{"from", Query{From: at("2026-11-26T01:00:05Z")}, 1},
		{"from and to", Query{From: at("2026-11-26T00:00:00Z"), To: at("2026-11-26T01:00:03Z")}, 1},
		{"to, before every stack", Query{To: at("2025-01-01T00:00:00Z")}, 0},
	} {
		if records, _ := counts(t, c, tt.query); records != tt.records {
			t.Errorf("%s: %d records, want %d", tt.name, records, tt.records)
		}
	}
}
