package chunkstore

import (
	"fmt"
	"net/url"
	"strconv"
	"strings"
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

// ParseQuery reads a query's filter and grouping from URL parameters, as
// the service's GET /v1/aggregate and /v1/groups take them (docs/serve.md):
// from and to (RFC 3339), app_version, os_version, device, label=KEY=VALUE
// (repeated), frames (1 to 1000), group_by (frames, stack or label:KEY) and
// in_app (repeated; a path when it holds a slash, else a name).
func ParseQuery(q url.Values) (Query, aggregate.GroupOptions, error) {
	var filter Query
	var group aggregate.GroupOptions
	for _, f := range []struct {
		name string
		dst  *time.Time
	}{{"from", &filter.From}, {"to", &filter.To}} {
		if v := q.Get(f.name); v != "" {
			t, err := time.Parse(time.RFC3339, v)
			if err != nil {
				return filter, group, fmt.Errorf("%s=%q: want an RFC 3339 time", f.name, v)
			}
			*f.dst = t
		}
	}
	filter.AppVersion, filter.OSVersion, filter.Device = q.Get("app_version"), q.Get("os_version"), q.Get("device")
	for _, kv := range q["label"] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return filter, group, fmt.Errorf("label=%q: want KEY=VALUE", kv)
		}
		filter.Labels = append(filter.Labels, aggregate.Label{Key: k, Value: v})
	}
	if v := q.Get("frames"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			return filter, group, fmt.Errorf("frames=%q: want 1 to 1000", v)
		}
		group.Frames = n
	}
	switch g := q.Get("group_by"); {
	case g == "" || g == "frames":
	case g == "stack":
		group.Frames = -1
	case strings.HasPrefix(g, "label:") && len(g) > len("label:"):
		group.Label = strings.TrimPrefix(g, "label:")
	default:
		return filter, group, fmt.Errorf("group_by=%q: want frames, stack or label:KEY", g)
	}
	for _, p := range q["in_app"] {
		if strings.Contains(p, "/") {
			group.InApp.Paths = append(group.InApp.Paths, p)
		} else {
			group.InApp.Names = append(group.InApp.Names, p)
		}
	}
	return filter, group, nil
}
