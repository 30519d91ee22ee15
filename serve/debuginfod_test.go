package serve

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stackimage/stackimage/internal/testtool"
)

// TestDebuginfodScannedDir: debuginfod-find gets the binary and the
// dSYM of a UUID from `serve --symbols DIR`, found through the scan's
// UUID → file map; a UUID the directory lacks is a 404. (Before, a
// scanned directory answered 404 for every UUID.)
func TestDebuginfodScannedDir(t *testing.T) {
	find := testtool.Path(t, "debuginfod-find", "debuginfod", "the debuginfod client fetches files from the service")
	_, ts := newTestServer(t, DefaultConfig("../fixtures/bin"))
	u := fixtureUUID(t)
	cache := t.TempDir()
	for _, c := range []struct{ kind, want string }{{"executable", fixtureBin}, {"debuginfo", fixtureDSYM}} {
		cmd := exec.Command(find, c.kind, u.Hex())
		cmd.Env = append(os.Environ(), "DEBUGINFOD_URLS="+ts.URL, "DEBUGINFOD_CACHE_PATH="+filepath.Join(cache, c.kind), "DEBUGINFOD_TIMEOUT=30")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("debuginfod-find %s %s: %v\n%s", c.kind, u.Hex(), err, out)
		}
		if got := readFile(t, strings.TrimSpace(string(out))); !bytes.Equal(got, readFile(t, c.want)) {
			t.Errorf("debuginfod-find %s: %d bytes that are not %s", c.kind, len(got), c.want)
		}
	}
	resp, data := do(t, "GET", ts.URL+"/buildid/"+strings.Repeat("ab", 16)+"/executable", nil, nil)
	if resp.StatusCode != 404 {
		t.Errorf("an unknown UUID: %d %s, want 404", resp.StatusCode, data)
	}
}
