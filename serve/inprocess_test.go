package serve_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stackimage/stackimage/serve"
	"github.com/stackimage/stackimage/symstore"
)

// symbolicate posts a symbolicator request for one frame pair in the
// module u loaded at base to a service built from cfg, and returns the
// answer decoded.
func symbolicate(t *testing.T, cfg serve.Config, debugID string, base uint64) map[string]any {
	t.Helper()
	cfg.Cache.Dir = t.TempDir()
	srv, err := serve.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	ts := httptest.NewServer(srv)
	defer ts.Close()
	body, _ := json.Marshal(map[string]any{
		"stacktraces": []any{map[string]any{"frames": []any{
			map[string]any{"instruction_addr": fmt.Sprintf("%#x", base+0x400)},
			map[string]any{"instruction_addr": fmt.Sprintf("%#x", base+0x484)},
		}}},
		"modules": []any{map[string]any{"type": "macho", "debug_id": debugID, "image_addr": fmt.Sprintf("%#x", base), "image_size": 0x4000}},
	})
	resp, err := http.Post(ts.URL+"/symbolicate", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("POST /symbolicate: status %d: %s", resp.StatusCode, data)
	}
	var a map[string]any
	if err := json.Unmarshal(data, &a); err != nil {
		t.Fatalf("answer %s: %v", data, err)
	}
	return a
}

// TestInProcessSource: a Go program hands the service a source of its own
// (here a symstore.MemorySource holding a binary and its dSYM) and no
// configured source; /symbolicate names the frames as a service over the
// files' directory does.
func TestInProcessSource(t *testing.T) {
	var mem symstore.MemorySource
	var id string
	for _, path := range []string{"../fixtures/bin/chain-arm64-O1", "../fixtures/bin/chain-arm64-O1.dSYM/Contents/Resources/DWARF/chain-arm64-O1"} {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		ids, err := mem.Add(path, data)
		if err != nil {
			t.Fatal(err)
		}
		id = ids[0].String()
	}
	cfg := serve.DefaultConfig("")
	cfg.InProcessSources = []symstore.Source{&mem}
	got := symbolicate(t, cfg, id, 0x104000000)
	want := symbolicate(t, serve.DefaultConfig("../fixtures/bin"), id, 0x104000000)

	modules := got["modules"].([]any)
	if len(modules) != 1 || modules[0].(map[string]any)["debug_status"] != "found" {
		t.Fatalf("modules %v, want one found", modules)
	}
	frames := got["stacktraces"].([]any)[0].(map[string]any)["frames"].([]any)
	for i, f := range frames {
		if fr := f.(map[string]any); fr["status"] != "symbolicated" || fr["function"] == nil || fr["function"] == "" {
			t.Errorf("frame %d = %v, want a named frame", i, fr)
		}
	}
	// The module's candidates name its source; the frames are the same.
	for _, a := range []map[string]any{got, want} {
		for _, m := range a["modules"].([]any) {
			delete(m.(map[string]any), "candidates")
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the in-process source's answer differs from the scanned directory's (-want +got):\n%s", diff)
	}
}
