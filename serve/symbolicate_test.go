package serve

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/symstore/remote"
	"github.com/stackimage/stackimage/walker"
)

// symbolicateBody is a /symbolicate request for the fixture loaded at
// base: frame 0 at pc, one caller at ret.
func symbolicateBody(debugID string, base, pc, ret uint64) map[string]any {
	return map[string]any{
		"stacktraces": []any{map[string]any{
			"registers": map[string]any{"pc": fmt.Sprintf("0x%x", pc)},
			"frames": []any{
				map[string]any{"instruction_addr": fmt.Sprintf("0x%x", pc)},
				map[string]any{"instruction_addr": fmt.Sprintf("0x%x", ret)},
				map[string]any{"instruction_addr": "0x10"},
			},
		}},
		"modules": []any{map[string]any{"type": "macho", "debug_id": debugID, "code_file": "/private/var/chain",
			"image_addr": fmt.Sprintf("0x%x", base), "image_size": 0x4000}},
		"options": map[string]any{"dif_candidates": true},
	}
}

// TestSymbolicateMatchesLibrary checks /symbolicate against the library:
// frame 0 is looked up at its address, a caller one instruction before
// its return address, the image slid by image_addr; an address in no
// module is an unknown image.
func TestSymbolicateMatchesLibrary(t *testing.T) {
	u := fixtureUUID(t)
	_, ts := newTestServer(t, DefaultConfig("../fixtures/bin"))
	const text = 0x100000000 // the fixture's __TEXT vmaddr
	const base = 0x104000000
	pc, ret := uint64(base+0x400), uint64(base+0x484)
	for _, id := range []string{strings.ToLower(u.String()), strings.ToLower(u.String()) + "-0", u.Hex()} {
		t.Run(id, func(t *testing.T) {
			resp, data := postJSON(t, ts.URL+"/symbolicate", symbolicateBody(id, base, pc, ret))
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("status %d: %s", resp.StatusCode, data)
			}
			a := decode(t, data)
			if a.Status != "completed" || len(a.Stacktraces) != 1 || len(a.Modules) != 1 {
				t.Fatalf("answer %s: want one completed stack trace and module", data)
			}
			if m := a.Modules[0]; m.DebugStatus != "found" || m.Arch != "arm64" || len(m.Candidates) != 1 || m.Candidates[0].Source != "local" {
				t.Errorf("module = %+v, want found, arm64, from source local", m)
			}
			frames := a.Stacktraces[0].Frames
			arm64, _ := archregs.ByName("arm64")
			lookups := []uint64{pc - base + text, walker.CallerLookupAddress(arm64, ret) - base + text}
			i := 0
			for k, unslid := range lookups {
				for _, w := range want(t, u, unslid) {
					if i >= len(frames) {
						t.Fatalf("only %d frames: %s", len(frames), data)
					}
					f := frames[i]
					if f.OriginalIndex != k || f.Status != "symbolicated" || f.Function != w.Symbol || f.Lineno != w.Line || f.AbsPath != w.File || f.Inlined != w.Inlined {
						t.Errorf("frame %d = %+v, want index %d, %s at %s:%d", i, f, k, w.Symbol, w.File, w.Line)
					}
					if w.HasOffset {
						start := fmt.Sprintf("0x%x", unslid-w.SymbolOffset-text+base)
						if f.SymAddr != start {
							t.Errorf("frame %d sym_addr = %s, want %s", i, f.SymAddr, start)
						}
					}
					i++
				}
			}
			if i != len(frames)-1 || frames[i].Status != "unknown_image" {
				t.Errorf("want %d symbolicated frames then one unknown_image, got %s", i, data)
			}
		})
	}
}

// TestSymbolicateRelativeAddresses checks addr_mode rel:N and an explicit
// adjust_instruction_addr: false, which looks a caller up at its own address.
func TestSymbolicateRelativeAddresses(t *testing.T) {
	u := fixtureUUID(t)
	_, ts := newTestServer(t, DefaultConfig("../fixtures/bin"))
	body := map[string]any{
		"stacktraces": []any{map[string]any{"frames": []any{
			map[string]any{"instruction_addr": "0x0", "addr_mode": "abs"},
			map[string]any{"instruction_addr": "0x480", "addr_mode": "rel:0", "adjust_instruction_addr": false},
		}}},
		"modules": []any{map[string]any{"type": "macho", "code_id": u.Hex(), "image_addr": "0x200000000"}},
	}
	_, data := postJSON(t, ts.URL+"/symbolicate", body)
	a := decode(t, data)
	frames := a.Stacktraces[0].Frames
	w := want(t, u, 0x100000480)
	last := frames[len(frames)-1]
	if frames[0].Status != "unknown_image" || last.Function != w[len(w)-1].Symbol || last.Lineno != w[len(w)-1].Line {
		t.Errorf("frames %s, want unknown_image then %s:%d", data, w[len(w)-1].Symbol, w[len(w)-1].Line)
	}
}

// TestSymbolicateMissingAndMalformedModules: a UUID no source has is
// "missing" with its frames "missing"; a debug id that is no UUID is
// "malformed"; a module no frame uses is "unused" and never fetched.
func TestSymbolicateMissingAndMalformedModules(t *testing.T) {
	_, ts := newTestServer(t, DefaultConfig("../fixtures/bin"))
	body := map[string]any{
		"stacktraces": []any{map[string]any{"frames": []any{
			map[string]any{"instruction_addr": "0x1010"},
			map[string]any{"instruction_addr": "0x2010"},
		}}},
		"modules": []any{
			map[string]any{"type": "macho", "debug_id": "00000000-1111-2222-3333-444444444444", "image_addr": "0x1000", "image_size": 0x1000},
			map[string]any{"type": "macho", "debug_id": "../../etc/passwd", "image_addr": "0x2000", "image_size": 0x1000},
			map[string]any{"type": "macho", "debug_id": "55555555-1111-2222-3333-444444444444", "image_addr": "0x9000", "image_size": 0x1000},
		},
	}
	_, data := postJSON(t, ts.URL+"/symbolicate", body)
	a := decode(t, data)
	got := []string{a.Modules[0].DebugStatus, a.Modules[1].DebugStatus, a.Modules[2].DebugStatus,
		a.Stacktraces[0].Frames[0].Status, a.Stacktraces[0].Frames[1].Status}
	wantStatus := []string{"missing", "malformed", "unused", "missing", "malformed"}
	if fmt.Sprint(got) != fmt.Sprint(wantStatus) {
		t.Errorf("statuses %v, want %v: %s", got, wantStatus, data)
	}
}

// TestSymbolicateConcurrentOneBuild sends many requests for one cold UUID
// at once through an HTTP source: one download of each file, one build.
func TestSymbolicateConcurrentOneBuild(t *testing.T) {
	u := fixtureUUID(t)
	src := newSymbolServer(t, u, map[remote.Kind][]byte{remote.KindCode: readFile(t, fixtureBin), remote.KindDebug: readFile(t, fixtureDSYM)})
	src.release = make(chan struct{})
	cfg := DefaultConfig("")
	cfg.Sources = []SourceConfig{{Name: "http", Type: "http", URL: src.URL}}
	s, ts := newTestServer(t, cfg)
	const n = 16
	var wg sync.WaitGroup
	answers := make([]answer, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, data := postJSON(t, ts.URL+"/symbolicate", symbolicateBody(u.Hex(), 0x100000000, 0x100000400, 0x100000484))
			answers[i] = decode(t, data)
		}()
	}
	// Let every request reach the cache before the files arrive.
	for metric(t, s, "stackimage_requests_in_flight") < n {
		runtimeGosched()
	}
	close(src.release)
	wg.Wait()
	for i, a := range answers {
		if a.Modules[0].DebugStatus != "found" || a.Stacktraces[0].Frames[0].Status != "symbolicated" {
			t.Errorf("answer %d: %+v", i, a)
		}
	}
	if b := metric(t, s, "stackimage_index_builds_total", "result", "ok"); b != 1 {
		t.Errorf("%v index builds, want 1", b)
	}
	for path, hits := range src.hits {
		if hits != 1 {
			t.Errorf("%s fetched %d times, want once", path, hits)
		}
	}
}

// TestMissesAndFailuresRemembered: a UUID no source has is asked of the
// source once within miss_ttl; a file that cannot be indexed is fetched
// and built once within failed_ttl, and its module says "malformed".
func TestMissesAndFailuresRemembered(t *testing.T) {
	u := fixtureUUID(t)
	src := newSymbolServer(t, u, map[remote.Kind][]byte{remote.KindDebug: []byte("\xcf\xfa\xed\xfe garbage that is no Mach-O file")})
	cfg := DefaultConfig("")
	cfg.Sources = []SourceConfig{{Name: "http", Type: "http", URL: src.URL}}
	s, ts := newTestServer(t, cfg)
	missing := symbolicateBody("00000000-1111-2222-3333-444444444444", 0x100000000, 0x100000400, 0x100000484)
	broken := symbolicateBody(u.Hex(), 0x100000000, 0x100000400, 0x100000484)
	for range 3 {
		_, data := postJSON(t, ts.URL+"/symbolicate", missing)
		if st := decode(t, data).Modules[0].DebugStatus; st != "missing" {
			t.Errorf("missing UUID: status %q", st)
		}
		_, data = postJSON(t, ts.URL+"/symbolicate", broken)
		if m := decode(t, data).Modules[0]; m.DebugStatus != "malformed" || m.Error == "" {
			t.Errorf("broken file: module %+v, want malformed with the reason", m)
		}
	}
	// Three kinds are asked for each UUID, once.
	if got := src.total.Load(); got != 6 {
		t.Errorf("%d requests to the source, want 6 (3 kinds × 2 UUIDs, once each)", got)
	}
	if f := metric(t, s, "stackimage_index_builds_total", "result", "failed"); f != 1 {
		t.Errorf("%v failed builds, want 1", f)
	}
}
