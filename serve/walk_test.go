package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/stackimage/stackimage/emu"
	"github.com/stackimage/stackimage/open"
	"github.com/stackimage/stackimage/report"
	"github.com/stackimage/stackimage/snapshot"
	"github.com/stackimage/stackimage/symbolize"
	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/symstore/remote"
	"github.com/stackimage/stackimage/uuid"
)

// The capture of code built without frame pointers (nofp_unicorn_test.go
// writes it), and the fixture it was taken from.
const (
	nofpSnapshot = "testdata/chain-nofp-arm64-O1-deepest.json"
	nofpBin      = "../fixtures/bin/chain-nofp-arm64-O1"
	nofpDSYM     = "../fixtures/bin/chain-nofp-arm64-O1.dSYM/Contents/Resources/DWARF/chain-nofp-arm64-O1"
)

// walkNames posts a snapshot to /v1/symbolicate and returns the names of
// the first thread's machine frames (inlined ones left out).
func walkNames(t *testing.T, url string, snap []byte) []string {
	t.Helper()
	resp, data := do(t, "POST", url+"/v1/symbolicate", bytes.NewReader(snap), nil)
	if resp.StatusCode != 200 {
		t.Fatalf("status %d: %s", resp.StatusCode, data)
	}
	var doc report.JSON
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatalf("answer %s: %v", data, err)
	}
	if len(doc.Threads) == 0 {
		t.Fatalf("answer %s: no thread", data)
	}
	var names []string
	for _, f := range doc.Threads[0].Frames {
		if !f.Inlined {
			names = append(names, f.Symbol)
		}
	}
	return names
}

// libraryNames walks the snapshot with the library over files on disk, as
// stackimage symbolicate --symbols does.
func libraryNames(t *testing.T, snap []byte, files ...string) []string {
	t.Helper()
	syms := symstore.NewSymbols()
	defer syms.Close()
	for _, f := range files {
		if err := syms.AddFile(context.Background(), f); err != nil {
			t.Fatal(err)
		}
	}
	in, err := open.Bytes(snap)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := report.Symbolicate(context.Background(), &symbolize.Symbolizer{Symbols: syms}, in.Dump())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range rep.Threads[0].Frames {
		if !f.Inlined {
			names = append(names, f.Symbol)
		}
	}
	return names
}

func nofpUUID(t *testing.T) uuid.UUID {
	t.Helper()
	syms := symstore.NewSymbols()
	defer syms.Close()
	if err := syms.AddFile(context.Background(), nofpBin); err != nil {
		t.Fatal(err)
	}
	return syms.UUIDs()[0]
}

// TestNoFramePointerWalk posts a capture of code without frame pointers
// to the service, whose symbols come from a scanned directory, from an
// HTTP symbol server (the index built here, the binary downloaded and
// kept beside it) and from another instance's shared index (the binary
// and dSYM fetched when the walk needs them): each time the walk has as
// many frames as the library's over the binary and dSYM on disk, the true
// chain. With the dSYM alone the service walks as the library does, by the
// dSYM's __debug_frame. (Before the index was given its Mach-O files, the
// walk stopped after three frames.)
func TestNoFramePointerWalk(t *testing.T) {
	snap := readFile(t, nofpSnapshot)
	truth := readChain(t, "testdata/chain-nofp-arm64-O1-deepest.chain")
	want := libraryNames(t, snap, nofpBin, nofpDSYM)
	if diff := cmp.Diff(truth, want[:len(want)-1]); diff != "" {
		t.Fatalf("the library's walk is not the true chain (-truth +walk):\n%s", diff)
	}
	u := nofpUUID(t)

	t.Run("scanned", func(t *testing.T) {
		_, ts := newTestServer(t, DefaultConfig(filepath.Dir(nofpBin)))
		if diff := cmp.Diff(want, walkNames(t, ts.URL, snap)); diff != "" {
			t.Errorf("the service's walk differs from the library's (-library +service):\n%s", diff)
		}
	})

	// A Go program's own source, its files in memory: the service keeps
	// copies of them for the walker, which needs their unwind tables.
	t.Run("in process", func(t *testing.T) {
		var mem symstore.MemorySource
		for _, path := range []string{nofpBin, nofpDSYM} {
			if _, err := mem.Add(path, readFile(t, path)); err != nil {
				t.Fatal(err)
			}
		}
		cfg := DefaultConfig("")
		cfg.InProcessSources = []symstore.Source{&mem}
		_, ts := newTestServer(t, cfg)
		if diff := cmp.Diff(want, walkNames(t, ts.URL, snap)); diff != "" {
			t.Errorf("the service's walk differs from the library's (-library +service):\n%s", diff)
		}
	})

	src := newSymbolServer(t, u, map[remote.Kind][]byte{remote.KindCode: readFile(t, nofpBin), remote.KindDebug: readFile(t, nofpDSYM)})
	store := t.TempDir()
	cfg := DefaultConfig("")
	cfg.Sources = []SourceConfig{{Name: "store", Type: "filesystem", Path: store}, {Name: "http", Type: "http", URL: src.URL}}
	cfg.Store = "store"
	t.Run("built", func(t *testing.T) {
		s, ts := newTestServer(t, cfg)
		if diff := cmp.Diff(want, walkNames(t, ts.URL, snap)); diff != "" {
			t.Errorf("the service's walk differs from the library's (-library +service):\n%s", diff)
		}
		if n := metric(t, s, "stackimage_index_builds_total", "result", "ok"); n != 1 {
			t.Errorf("%v index builds, want 1", n)
		}
	})
	t.Run("shared", func(t *testing.T) {
		before := src.total.Load()
		s, ts := newTestServer(t, cfg)
		if diff := cmp.Diff(want, walkNames(t, ts.URL, snap)); diff != "" {
			t.Errorf("the service's walk differs from the library's (-library +service):\n%s", diff)
		}
		if n := metric(t, s, "stackimage_index_builds_total", "result", "ok"); n != 0 {
			t.Errorf("%v index builds, want none: the index is the shared one", n)
		}
		if got := src.total.Load() - before; got != 2 {
			t.Errorf("%d requests to the symbol server, want 2: the executable and the dSYM", got)
		}
		// A second dump finds them kept.
		walkNames(t, ts.URL, snap)
		if got := src.total.Load() - before; got != 2 {
			t.Errorf("%d requests to the symbol server after a second dump, want still 2", got)
		}
	})
	t.Run("dSYM only", func(t *testing.T) {
		dsymOnly := newSymbolServer(t, u, map[remote.Kind][]byte{remote.KindDebug: readFile(t, nofpDSYM)})
		cfg := DefaultConfig("")
		cfg.Sources = []SourceConfig{{Name: "http", Type: "http", URL: dsymOnly.URL}}
		_, ts := newTestServer(t, cfg)
		got := walkNames(t, ts.URL, snap)
		if diff := cmp.Diff(libraryNames(t, snap, nofpDSYM), got); diff != "" {
			t.Errorf("with the dSYM alone, the service's walk differs from the library's (-library +service):\n%s", diff)
		}
	})
}

// TestDumpDeadline: a dump whose image's symbols do not arrive before
// limits.request_timeout is still answered in time, walked without them:
// our JSON and text say in their warnings that the lookup timed out, and
// symbolicator's answer gives the module the status "timeout".
func TestDumpDeadline(t *testing.T) {
	src, sc := slowSource(t)
	defer close(src.release)
	cfg := DefaultConfig("")
	cfg.Sources = []SourceConfig{sc}
	cfg.Limits.RequestTimeout = 300 * time.Millisecond
	_, ts := newTestServer(t, cfg)
	snapData := readFile(t, "../fixtures/snapshots/chain-arm64-O1-deepest.json")
	u := fixtureUUID(t)
	for _, format := range []string{"json", "text"} {
		start := time.Now()
		resp, data := do(t, "POST", ts.URL+"/v1/symbolicate?format="+format, bytes.NewReader(snapData), nil)
		// The source answers only when the test ends: any answer before
		// that is the deadline's. The bound is loose, for a loaded host.
		if resp.StatusCode != 200 || time.Since(start) > 20*time.Second {
			t.Fatalf("format=%s: status %d after %v: %s", format, resp.StatusCode, time.Since(start), data)
		}
		if !strings.Contains(string(data), u.String()) || !strings.Contains(string(data), "(timeout)") || !strings.Contains(string(data), "0x") {
			t.Errorf("format=%s: answer does not say the symbols of %s timed out, or has no frames:\n%s", format, u, data)
		}
	}
	snap, err := snapshot.Parse(snapData)
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := emu.WriteMinidump(&md, snap); err != nil {
		t.Fatal(err)
	}
	body, ct := multipartBody(t, "upload_file_minidump", "capture.dmp", md.Bytes(), "")
	resp, data := do(t, "POST", ts.URL+"/minidump", body, map[string]string{"Content-Type": ct})
	if resp.StatusCode != 200 {
		t.Fatalf("/minidump: status %d: %s", resp.StatusCode, data)
	}
	a := decode(t, data)
	if len(a.Modules) == 0 || a.Modules[0].DebugStatus != "timeout" || len(a.Stacktraces) == 0 || len(a.Stacktraces[0].Frames) == 0 {
		t.Errorf("/minidump: answer %s; want the module timed out and the thread walked", data)
	}
}

// TestNativeIncompleteInput: a report cut short is answered with what
// could be read, and X-Stackimage-Incomplete says what cut it, where the
// command exits 1 after printing.
func TestNativeIncompleteInput(t *testing.T) {
	ips := readFile(t, "../crashreport/testdata/arm64.ips")
	_, ts := newTestServer(t, DefaultConfig("../fixtures/bin"))
	whole, _ := do(t, "POST", ts.URL+"/v1/symbolicate?format=text", bytes.NewReader(ips), nil)
	if got := whole.Header.Get("X-Stackimage-Incomplete"); whole.StatusCode != 200 || got != "" {
		t.Fatalf("whole report: status %d, X-Stackimage-Incomplete %q; want 200 and none", whole.StatusCode, got)
	}
	cut := ips[:len(ips)-100]
	if in, err := open.Bytes(cut); in == nil || err == nil {
		t.Fatalf("open.Bytes of the report cut short = %v, %v; want what was read and an error", in, err)
	}
	resp, data := do(t, "POST", ts.URL+"/v1/symbolicate?format=text", bytes.NewReader(cut), nil)
	if got := resp.Header.Get("X-Stackimage-Incomplete"); resp.StatusCode != 200 || !strings.Contains(got, "truncated") || !strings.Contains(string(data), "Thread") {
		t.Errorf("report cut short: status %d, X-Stackimage-Incomplete %q:\n%s\nwant 200, the error and the threads read", resp.StatusCode, got, data)
	}
}

// TestReportsFetchNoBinaries: a .crash report holds no stack memory, so
// nothing is walked: an instance whose index comes from the shared cache
// answers it without fetching the binary and dSYM, which a dump of the
// same image then fetches, once.
func TestReportsFetchNoBinaries(t *testing.T) {
	u := fixtureUUID(t)
	src := newSymbolServer(t, u, map[remote.Kind][]byte{remote.KindCode: readFile(t, fixtureBin), remote.KindDebug: readFile(t, fixtureDSYM)})
	cfg := DefaultConfig("")
	cfg.Sources = []SourceConfig{{Name: "store", Type: "filesystem", Path: t.TempDir()}, {Name: "http", Type: "http", URL: src.URL}}
	cfg.Store = "store"
	_, builder := newTestServer(t, cfg)
	snap := readFile(t, "../fixtures/snapshots/chain-arm64-O1-deepest.json")
	walkNames(t, builder.URL, snap) // builds the index and shares it
	crash := strings.ReplaceAll(strings.ReplaceAll(string(readFile(t, "../crashreport/testdata/arm64.crash")),
		"aaaaaaaabbbbccccddddeeeeeeeeeeee", u.Hex()), "0x100004008 crash + 8", "0x100000400 crash + 8")

	_, ts := newTestServer(t, cfg)
	fetched := func() int {
		src.mu.Lock()
		defer src.mu.Unlock()
		n := 0
		for _, kind := range []remote.Kind{remote.KindCode, remote.KindDebug} {
			n += src.hits["/"+remote.LayoutPaths(remote.Layout{Type: "unified"}, u, kind, "")[0]]
		}
		return n
	}
	before := fetched()
	resp, data := do(t, "POST", ts.URL+"/v1/symbolicate?format=text", strings.NewReader(crash), nil)
	if resp.StatusCode != 200 || !strings.Contains(string(data), "big_frame") {
		t.Fatalf("the crash report: status %d:\n%s", resp.StatusCode, data)
	}
	if got := fetched() - before; got != 0 {
		t.Errorf("the fixture's files were fetched %d times for a report, want none", got)
	}
	walkNames(t, ts.URL, snap)
	walkNames(t, ts.URL, snap)
	if got := fetched() - before; got != 2 {
		t.Errorf("the fixture's files were fetched %d times for two dumps, want 2: the binary and dSYM, once", got)
	}
}
