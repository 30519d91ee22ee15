package chunkstore

import (
	"net/url"
	"reflect"
	"strings"
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

// TestParseQuery: every parameter the service's aggregate endpoints take,
// and an error naming the parameter for each bad value.
func TestParseQuery(t *testing.T) {
	q, _ := url.ParseQuery("from=2026-01-02T03:00:00Z&to=2026-01-02T04:00:00Z&app_version=1.2&os_version=17.1&device=iPhone15,2" +
		"&label=env=prod&label=team=a&frames=7&group_by=label:env&in_app=MyApp&in_app=/private/var/App.app/")
	filter, group, err := ParseQuery(q)
	if err != nil {
		t.Fatal(err)
	}
	want := Query{From: time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC), To: time.Date(2026, 1, 2, 4, 0, 0, 0, time.UTC),
		AppVersion: "1.2", OSVersion: "17.1", Device: "iPhone15,2",
		Labels: []aggregate.Label{{Key: "env", Value: "prod"}, {Key: "team", Value: "a"}}}
	if !reflect.DeepEqual(filter, want) {
		t.Errorf("filter %+v, want %+v", filter, want)
	}
	if group.Frames != 7 || group.Label != "env" || !reflect.DeepEqual(group.InApp.Names, []string{"MyApp"}) ||
		!reflect.DeepEqual(group.InApp.Paths, []string{"/private/var/App.app/"}) {
		t.Errorf("group %+v", group)
	}
	if _, group, _ := ParseQuery(url.Values{"group_by": {"stack"}}); group.Frames != -1 {
		t.Errorf("group_by=stack: frames %d, want -1 (the whole stack)", group.Frames)
	}
	for _, bad := range []string{"from=yesterday", "label=novalue", "frames=0", "frames=1001", "group_by=label:", "group_by=thread"} {
		q, _ := url.ParseQuery(bad)
		name, _, _ := strings.Cut(bad, "=")
		if _, _, err := ParseQuery(q); err == nil || !strings.Contains(err.Error(), name+"=") {
			t.Errorf("%s: error %v, want one naming %s", bad, err, name)
		}
	}
}
