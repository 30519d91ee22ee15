//go:build faults

package serve

// The store under faults (issue items 3, 4 and 5): versitygw, an S3
// gateway (installed by make e2e-deps), stopped and restarted
// mid-traffic, and its objects cut and flipped in its directory.

import (
	"archive/zip"
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/stackimage/stackimage/symstore/indexcache"
	"github.com/stackimage/stackimage/symstore/remote"
	"github.com/stackimage/stackimage/uuid"
)

const (
	gwAccess = "faults-access"
	gwSecret = "faults-secret-key"
	gwBucket = "symbols"
	gwPrefix = "store"
)

// gateway is a versitygw process serving one bucket from a directory,
// which the tests stop, restart on the same port and damage.
type gateway struct {
	t               *testing.T
	bin, dir, root  string
	addr            string
	p               *proc
	client          *minio.Client
	stopped, starts int
}

func startGateway(t *testing.T) *gateway {
	t.Helper()
	g := &gateway{t: t, bin: tool(t, "VERSITYGW", "versitygw", filepath.Join(os.Getenv("HOME"), "go", "bin", "versitygw")),
		dir: t.TempDir(), addr: freePort(t)}
	g.root = filepath.Join(g.dir, "gw")
	os.MkdirAll(g.root, 0o755)
	g.start()
	c, err := minio.New(g.addr, &minio.Options{Creds: credentials.NewStaticV4(gwAccess, gwSecret, ""), BucketLookup: minio.BucketLookupPath})
	if err != nil {
		t.Fatal(err)
	}
	g.client = c
	if err := c.MakeBucket(context.Background(), gwBucket, minio.MakeBucketOptions{}); err != nil {
		t.Fatal(err)
	}
	return g
}

func (g *gateway) start() {
	g.starts++
	g.p = start(g.t, g.dir, "versitygw"+strings.Repeat("-again", g.starts-1), []string{"ROOT_ACCESS_KEY=" + gwAccess, "ROOT_SECRET_KEY=" + gwSecret},
		g.bin, "--port", g.addr, "posix", g.root)
	waitHTTP(g.t, "http://"+g.addr+"/", g.p)
}

// stop kills the gateway: to the service, the store is gone.
func (g *gateway) stop() { g.p.kill() }

// source is the bucket as a service's source and store.
func (g *gateway) config(t *testing.T) Config {
	cfg := DefaultConfig("")
	cfg.Sources = []SourceConfig{{Name: "bucket", Type: "s3", Endpoint: "http://" + g.addr, Bucket: gwBucket, Prefix: gwPrefix,
		AccessKey: gwAccess, SecretKey: gwSecret, DownloadTimeout: 5 * time.Second}}
	cfg.Store = "bucket"
	cfg.Auth.UploadToken = "up"
	cfg.Cache.Dir = t.TempDir()
	cfg.Cache.FailedTTL = 3 * time.Second
	cfg.Cache.MissTTL = 3 * time.Second
	cfg.Limits.RequestTimeout = 10 * time.Second
	return cfg
}

// objectPath is where the gateway keeps an object of the store.
func (g *gateway) objectPath(key string) string {
	return filepath.Join(g.root, gwBucket, gwPrefix, filepath.FromSlash(key))
}

// put writes an object of the store behind the service's back.
func (g *gateway) put(key string, data []byte) {
	g.t.Helper()
	if _, err := g.client.PutObject(context.Background(), gwBucket, gwPrefix+"/"+key, bytes.NewReader(data), int64(len(data)), minio.PutObjectOptions{}); err != nil {
		g.t.Fatal(err)
	}
}

func (g *gateway) exists(key string) bool {
	_, err := g.client.StatObject(context.Background(), gwBucket, gwPrefix+"/"+key, minio.StatObjectOptions{})
	return err == nil
}

// TestFaultsStoreOutageWalk (item 3): an instance that holds a module's
// index walks that module's dumps without its unwind tables while the
// store is down, and with them again within failed_ttl of its return,
// with no restart.
func TestFaultsStoreOutageWalk(t *testing.T) {
	g := startGateway(t)
	cfg := g.config(t)
	_, a := newTestServer(t, cfg)
	for _, f := range []string{nofpBin, nofpDSYM} {
		if resp, data := upload(t, a.URL, readFile(t, f)); resp.StatusCode != http.StatusCreated {
			t.Fatalf("upload %s: %d %s", f, resp.StatusCode, data)
		}
	}
	snap := readFile(t, nofpSnapshot)
	full := libraryNames(t, snap, nofpBin, nofpDSYM)

	// B holds the index (names only: no walk, no binary fetched).
	cfg.Cache.Dir = t.TempDir()
	_, b := newTestServer(t, cfg)
	u := nofpUUID(t)
	if _, data := postJSON(t, b.URL+"/symbolicate", symbolicateBody(u.Hex(), 0x100000000, 0x100003f00, 0x100003f40)); decode(t, data).Modules[0].DebugStatus != indexcache.StatusFound {
		t.Fatalf("B before the outage: %s", data)
	}

	g.stop()
	during := walkNames(t, b.URL, snap)
	t.Logf("store down: %d frames %v; with the files: %d", len(during), during, len(full))
	if len(during) >= len(full) {
		t.Fatalf("with the store down the walk has %d frames, as many as with the files: the scenario tests nothing", len(during))
	}
	g.start()
	back := time.Now()
	for {
		got := walkNames(t, b.URL, snap)
		if cmp.Equal(got, full) {
			t.Logf("the walk is whole again %v after the store's return (failed_ttl %v)", time.Since(back).Round(10*time.Millisecond), cfg.Cache.FailedTTL)
			break
		}
		if time.Since(back) > cfg.Cache.FailedTTL+10*time.Second {
			t.Fatalf("%v after the store's return the walk still has %d frames, want %d: the failed fetch was not forgotten", time.Since(back), len(got), len(full))
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// TestFaultsStoreOutageUpload (item 5): uploads while the store is down
// answer 503 with Retry-After, a zip's members listed as failed with
// status "partial"; once the store is back they are stored.
func TestFaultsStoreOutageUpload(t *testing.T) {
	g := startGateway(t)
	cfg := g.config(t)
	_, ts := newTestServer(t, cfg)
	g.stop()
	start := time.Now()
	resp, data := upload(t, ts.URL, readFile(t, fixtureBin))
	t.Logf("binary with the store down: %d in %v: %s", resp.StatusCode, time.Since(start).Round(time.Millisecond), data)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("upload with the store down: %d (Retry-After %q) %s, want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"), data)
	}
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	for name, f := range map[string]string{"chain.dSYM/Contents/Resources/DWARF/chain": fixtureDSYM, "chain": fixtureBin} {
		w, _ := zw.Create(name)
		w.Write(readFile(t, f))
	}
	zw.Close()
	resp, data = upload(t, ts.URL, zb.Bytes())
	t.Logf("zip with the store down: %d: %s", resp.StatusCode, data)
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(data), `"status":"partial"`) || !strings.Contains(string(data), `"failed"`) {
		t.Errorf("zip upload with the store down: %d %s, want 503, status partial and the members under failed", resp.StatusCode, data)
	}
	g.start()
	if resp, data := upload(t, ts.URL, zb.Bytes()); resp.StatusCode != http.StatusCreated {
		t.Errorf("zip upload once the store is back: %d %s", resp.StatusCode, data)
	}
}

// linesOf posts the fixture's frames and counts those with a file and
// line, and returns the module's error.
func linesOf(t *testing.T, url string, u uuid.UUID) (int, string) {
	t.Helper()
	_, data := postJSON(t, url+"/symbolicate", symbolicateBody(u.Hex(), 0x100000000, 0x100000400, 0x100000484))
	a := decode(t, data)
	if len(a.Modules) != 1 || a.Modules[0].DebugStatus != indexcache.StatusFound {
		t.Fatalf("answer %s", data)
	}
	n := 0
	for _, st := range a.Stacktraces {
		for _, f := range st.Frames {
			if f.AbsPath != "" && f.Lineno > 0 {
				n++
			}
		}
	}
	return n, a.Modules[0].Error
}

// TestFaultsDegradedIndex (item 4): an index built from a truncated
// dSYM is never shared, says so, and a fixed dSYM gives every fresh
// instance file and line; a shared index flipped or cut in the bucket is
// built again and replaced.
func TestFaultsDegradedIndex(t *testing.T) {
	g := startGateway(t)
	cfg := g.config(t)
	u := fixtureUUID(t)
	fresh := func() string {
		c := cfg
		c.Cache.Dir = t.TempDir()
		_, ts := newTestServer(t, c)
		return ts.URL
	}
	a := fresh()
	if resp, data := upload(t, a, readFile(t, fixtureBin)); resp.StatusCode != http.StatusCreated {
		t.Fatalf("upload: %d %s", resp.StatusCode, data)
	}
	// The truncated dSYM lands in the bucket behind the service's back.
	dsym := readFile(t, fixtureDSYM)
	dsymKey := remote.LayoutPaths(remote.Layout{Type: "unified", Casing: "default"}, u, remote.KindDebug, "")[0]
	g.put(dsymKey, dsym[:len(dsym)/2])
	g.client.RemoveObject(context.Background(), gwBucket, gwPrefix+"/"+indexcache.SharedKey(u), minio.RemoveObjectOptions{})

	b := fresh()
	n, moduleErr := linesOf(t, b, u)
	t.Logf("from the truncated dSYM: %d frames with file:line; module error %q", n, moduleErr)
	if moduleErr == "" {
		t.Errorf("an index from a truncated dSYM: the module's answer does not say it is degraded")
	}
	if g.exists(indexcache.SharedKey(u)) {
		t.Errorf("an index built from a truncated dSYM was written to the shared cache")
	}

	g.put(dsymKey, dsym) // fixed
	c := fresh()
	if n, moduleErr := linesOf(t, c, u); n == 0 || moduleErr != "" {
		t.Errorf("a fresh instance after the dSYM is fixed: %d frames with file:line, module error %q; want lines and no error", n, moduleErr)
	}
	if !g.exists(indexcache.SharedKey(u)) || !g.exists(indexcache.RecordKey(u)) {
		t.Fatalf("the complete index or its record is not in the shared cache")
	}

	for _, damage := range []string{"flipped", "cut"} {
		p := g.objectPath(indexcache.SharedKey(u))
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if damage == "flipped" {
			data[len(data)/2] ^= 0xff
		} else {
			data = data[:len(data)/3]
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if n, moduleErr := linesOf(t, fresh(), u); n == 0 || moduleErr != "" {
			t.Errorf("%s shared index: a fresh instance answers %d frames with file:line, error %q", damage, n, moduleErr)
		}
		// Replaced: the next fresh instance reads the shared copy whole.
		again, err := os.ReadFile(p)
		if err != nil || bytes.Equal(again, data) {
			t.Errorf("%s shared index: not replaced in the bucket (%v)", damage, err)
		}
	}
}
