package serve

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stackimage/stackimage/symstore/indexcache"
	"github.com/stackimage/stackimage/symstore/remote"
)

// TestSharedIndexProvenance: a fresh instance uses a shared index only
// when its record says its inputs are those the store holds now; a dSYM
// replaced in the store behind the service's back, a record removed, or
// an index's bytes flipped each get the index built again, and the
// shared copy replaced so that the next instance reads it.
func TestSharedIndexProvenance(t *testing.T) {
	u := fixtureUUID(t)
	store := t.TempDir()
	cfg := DefaultConfig("")
	cfg.Sources = []SourceConfig{{Name: "store", Type: "filesystem", Path: store}}
	cfg.Store = "store"
	cfg.Auth.UploadToken = "up"
	_, first := newTestServer(t, cfg)
	for _, f := range []string{fixtureBin, fixtureDSYM} {
		if resp, data := upload(t, first.URL, readFile(t, f)); resp.StatusCode != 201 {
			t.Fatalf("upload %s: %d %s", f, resp.StatusCode, data)
		}
	}
	body := symbolicateBody(u.Hex(), 0x100000000, 0x100000400, 0x100000484)
	// fresh answers through a new instance and says where its index came
	// from: read from the shared cache, or built.
	fresh := func() (shared, built float64) {
		s, ts := newTestServer(t, cfg)
		if resp, data := postJSON(t, ts.URL+"/symbolicate", body); resp.StatusCode != 200 {
			t.Fatalf("status %d: %s", resp.StatusCode, data)
		}
		return metric(t, s, "stackimage_index_cache_total", "result", "shared"), metric(t, s, "stackimage_index_builds_total", "result", "ok")
	}
	if shared, built := fresh(); shared != 1 || built != 0 {
		t.Fatalf("untouched: %v read from the shared cache, %v built; want 1, 0", shared, built)
	}
	dsymPath := filepath.Join(store, remote.LayoutPaths(remote.Layout{Type: "unified", Casing: "default"}, u, remote.KindDebug, "")[0])
	indexPath := filepath.Join(store, indexcache.SharedKey(u))
	for _, c := range []struct {
		name   string
		damage func()
	}{
		{"dSYM replaced", func() {
			data := readFile(t, fixtureDSYM)
			os.WriteFile(dsymPath, append(data, make([]byte, 16)...), 0o644)
		}},
		{"record removed", func() { os.Remove(filepath.Join(store, indexcache.RecordKey(u))) }},
		{"index flipped", func() {
			data := readFile(t, indexPath)
			data[len(data)/2] ^= 0x55
			os.WriteFile(indexPath, data, 0o644)
		}},
	} {
		c.damage()
		if shared, built := fresh(); shared != 0 || built != 1 {
			t.Errorf("%s: %v read from the shared cache, %v built; want 0, 1", c.name, shared, built)
		}
		if shared, built := fresh(); shared != 1 || built != 0 {
			t.Errorf("%s, then the next instance: %v read from the shared cache, %v built; want 1, 0 (the copy replaced)", c.name, shared, built)
		}
	}
}
