package serve

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/stackimage/stackimage/aggregate"
)

// exampleStacks is docs/aggregate.md's stream example: three stacks of
// the fixture binary (weights 1, 3 and 1), labelled api=UserDefaults
// twice.
func exampleStacks(t testing.TB) []byte {
	t.Helper()
	doc, err := os.ReadFile("../docs/aggregate.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(doc), "```ndjson\n")
	block, _, _ := strings.Cut(rest, "```")
	return []byte(block)
}

// aggregateConfig scans the fixtures for symbols and keeps aggregates in
// store, a directory shared by every instance built on it.
func aggregateConfig(store string) Config {
	cfg := Config{Listen: "127.0.0.1:0", Store: "store", Sources: []SourceConfig{
		{Name: "local", Type: "filesystem", Path: "../fixtures/bin"},
		{Name: "store", Type: "filesystem", Path: store},
	}}
	return cfg
}

func groupsOf(t *testing.T, url string) aggregate.GroupsDocument {
	t.Helper()
	resp, body := do(t, "GET", url, nil, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, body)
	}
	var doc aggregate.GroupsDocument
	if err := json.Unmarshal(body, &doc); err != nil {
		t.Fatalf("GET %s: %v\n%s", url, err, body)
	}
	return doc
}

// Stacks acknowledged by one instance are answered by another on the
// same store, and after the first is gone: nothing lives in one
// process's memory.
func TestStacksSurviveRestartAndAreShared(t *testing.T) {
	store := t.TempDir()
	a, tsA := newTestServer(t, aggregateConfig(store))
	stacks := exampleStacks(t)
	resp, body := do(t, "POST", tsA.URL+"/v1/stacks", bytes.NewReader(stacks), nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /v1/stacks: %d %s", resp.StatusCode, body)
	}
	var ans stacksAnswer
	json.Unmarshal(body, &ans)
	if ans.Records != 3 || ans.UniqueStacks != 3 || !strings.HasPrefix(ans.Chunk, chunkPrefix) {
		t.Errorf("answer %s", body)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(stacks)
	zw.Write([]byte(`{"frames":"bad"}` + "\n"))
	zw.Close()
	resp, body = do(t, "POST", tsA.URL+"/v1/stacks", &gz, nil)
	json.Unmarshal(body, &ans)
	if resp.StatusCode != http.StatusOK || ans.Records != 3 || ans.BadRecords != 1 || !strings.Contains(ans.Errors[0], "line 4: frames") {
		t.Errorf("gzip upload with a bad record: %d %s", resp.StatusCode, body)
	}
	if resp, body := do(t, "POST", tsA.URL+"/v1/stacks", strings.NewReader("not stacks"), nil); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("garbage: %d %s, want 400", resp.StatusCode, body)
	}

	// A second instance, sharing only the store, sees both uploads.
	_, tsB := newTestServer(t, aggregateConfig(store))
	doc := groupsOf(t, tsB.URL+"/v1/groups")
	if doc.Records != 6 || len(doc.Groups) != 1 || doc.Groups[0].Weight != 10 ||
		strings.Join(doc.Groups[0].Fingerprint, ",") != "deepest,step_to_deepest,inline_host" {
		t.Errorf("instance B: %+v", doc)
	}
	// The first instance stops; a new one still answers the same.
	tsA.Close()
	a.Close()
	_, tsC := newTestServer(t, aggregateConfig(store))
	if doc := groupsOf(t, tsC.URL+"/v1/groups"); doc.Records != 6 {
		t.Errorf("after a restart: %d records, want 6", doc.Records)
	}

	for _, tt := range []struct {
		query   string
		records int64
	}{
		{"label=api=UserDefaults", 4},
		{"label=api=Nothing", 0},
		{"app_version=2.3+(41)", 4},
		{"from=2026-11-26T01:00:05Z", 2},
		{"from=2026-11-26T00:00:00Z&to=2026-11-26T01:00:03Z", 2},
		{"to=2025-01-01T00:00:00Z", 0},
	} {
		if doc := groupsOf(t, tsC.URL+"/v1/groups?"+tt.query); doc.Records != tt.records {
			t.Errorf("groups?%s: %d records, want %d", tt.query, doc.Records, tt.records)
		}
	}
	if resp, _ := do(t, "GET", tsC.URL+"/v1/groups?from=yesterday", nil, nil); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("from=yesterday: %d, want 400", resp.StatusCode)
	}
}

func TestAggregateFormats(t *testing.T) {
	_, ts := newTestServer(t, aggregateConfig(t.TempDir()))
	if resp, body := do(t, "POST", ts.URL+"/v1/stacks", bytes.NewReader(exampleStacks(t)), nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("POST: %d %s", resp.StatusCode, body)
	}
	resp, body := do(t, "GET", ts.URL+"/v1/aggregate?format=pprof", nil, nil)
	p, err := profile.Parse(bytes.NewReader(body))
	if resp.StatusCode != http.StatusOK || err != nil {
		t.Fatalf("pprof: %d %v", resp.StatusCode, err)
	}
	if len(p.Mapping) == 0 || p.Mapping[0].BuildID != fixtureUUID(t).String() {
		t.Errorf("pprof mappings %v", p.Mapping)
	}
	_, body = do(t, "GET", ts.URL+"/v1/aggregate?format=folded&label=api=UserDefaults", nil, nil)
	if !strings.Contains(string(body), "inline_host;step_to_deepest;deepest 1\n") {
		t.Errorf("folded:\n%s", body)
	}
	_, body = do(t, "GET", ts.URL+"/v1/aggregate?format=speedscope", nil, nil)
	if !bytes.Contains(body, []byte(`"https://www.speedscope.app/file-format-schema.json"`)) || !bytes.Contains(body, []byte(`"deepest"`)) {
		t.Errorf("speedscope: %s", body)
	}
	if resp, _ := do(t, "GET", ts.URL+"/v1/aggregate?format=svg", nil, nil); resp.StatusCode != http.StatusBadRequest {
		t.Errorf("format=svg: %d, want 400", resp.StatusCode)
	}
}

func TestStacksNeedAStore(t *testing.T) {
	cfg := Config{Listen: "127.0.0.1:0", Sources: []SourceConfig{{Name: "local", Type: "filesystem", Path: "../fixtures/bin"}}}
	_, ts := newTestServer(t, cfg)
	if resp, body := do(t, "POST", ts.URL+"/v1/stacks", bytes.NewReader(exampleStacks(t)), nil); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("POST without a store: %d %s, want 503", resp.StatusCode, body)
	}
}

// A memory dump posted to /v1/stacks is walked at ingest with its
// images' unwind tables: a capture of code built without frame pointers
// gives its true chain, which frame records alone lose after 3 frames.
func TestStacksWalkMemoryDumps(t *testing.T) {
	truth := readChain(t, "testdata/chain-nofp-arm64-O1-deepest.chain")
	cfg := DefaultConfig(filepath.Dir(nofpBin))
	cfg.Sources = append(cfg.Sources, SourceConfig{Name: "store", Type: "filesystem", Path: t.TempDir()})
	cfg.Store = "store"
	_, ts := newTestServer(t, cfg)
	if resp, body := do(t, "POST", ts.URL+"/v1/stacks", bytes.NewReader(readFile(t, nofpSnapshot)), nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("POST a snapshot: %d %s", resp.StatusCode, body)
	}
	_, body := do(t, "GET", ts.URL+"/v1/aggregate?format=folded", nil, nil)
	line, _, _ := strings.Cut(string(body), "\n")
	stack, count, _ := strings.Cut(line, " ")
	// The chain lists the functions that have frames; the folded stack
	// adds the functions inlined into them.
	rootFirst := slices.Clone(truth)
	slices.Reverse(rootFirst)
	rest := strings.Split(stack, ";")
	for _, fn := range rootFirst {
		i := slices.Index(rest, fn)
		if i < 0 {
			t.Fatalf("folded stack %q of the posted snapshot lacks %s of its true chain %q", stack, fn, rootFirst)
		}
		rest = rest[i+1:]
	}
	if count != "1" || strings.Count(string(body), "\n") != 1 {
		t.Errorf("folded stacks %q, want the one stack once", body)
	}
}

// A crash report posted to /v1/stacks adds its crashed thread alone,
// every thread with ?threads=all; a microstackshot report adds every
// node of its call graph that was on top of a stack.
func TestStacksThreads(t *testing.T) {
	_, ts := newTestServer(t, aggregateConfig(t.TempDir()))
	ips := readFile(t, "../crashreport/testdata/arm64.ips")
	for _, c := range []struct {
		query   string
		status  int
		records int64
	}{
		{"", http.StatusOK, 1},
		{"?threads=input", http.StatusOK, 1},
		{"?threads=all", http.StatusOK, 2},
		{"?threads=crashed", http.StatusBadRequest, 0},
	} {
		resp, body := do(t, "POST", ts.URL+"/v1/stacks"+c.query, bytes.NewReader(ips), nil)
		var ans stacksAnswer
		json.Unmarshal(body, &ans)
		if resp.StatusCode != c.status || ans.Records != c.records {
			t.Errorf("POST /v1/stacks%s: %d %s, want %d and %d records", c.query, resp.StatusCode, body, c.status, c.records)
		}
	}
	resp, body := do(t, "POST", ts.URL+"/v1/stacks", bytes.NewReader(readFile(t, "../hangreport/testdata/microstackshot-diskwrites.ips")), nil)
	var ans stacksAnswer
	json.Unmarshal(body, &ans)
	if resp.StatusCode != http.StatusOK || ans.Records == 0 {
		t.Errorf("POST a microstackshot report: %d %s", resp.StatusCode, body)
	}
}
