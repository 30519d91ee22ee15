package chunkstore

import (
	"time"

	"github.com/stackimage/stackimage/aggregate"
)

// Query is the samples a merge keeps: those of the given app version, OS
// version and device (empty: any), with every one of Labels, seen within
// [From, To] (zero: unbounded on that side; a sample without a timestamp
// is in no time range).
type Query struct {
	From, To   time.Time
	AppVersion string
	OSVersion  string
	Device     string
	Labels     []aggregate.Label
}

// Keep is the query as an aggregate.Filter.
func (q *Query) Keep(a *aggregate.Attributes, s *aggregate.ChunkSample) bool {
	if q.AppVersion != "" && a.AppVersion != q.AppVersion ||
		q.OSVersion != "" && a.OSVersion != q.OSVersion ||
		q.Device != "" && a.Device != q.Device {
		return false
	}
	if !q.From.IsZero() || !q.To.IsZero() {
		if s.First.IsZero() {
			return false // no timestamp: in no time range
		}
		if !q.From.IsZero() && s.Last.Before(q.From) || !q.To.IsZero() && s.First.After(q.To) {
			return false
		}
	}
	for _, want := range q.Labels {
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
func (q *Query) mayHold(key string) bool {
	if q.From.IsZero() && q.To.IsZero() {
		return true
	}
	first, last, ok := chunkSpan(key)
	if !ok {
		return false
	}
	return !(!q.From.IsZero() && last.Before(q.From) || !q.To.IsZero() && first.After(q.To))
}
