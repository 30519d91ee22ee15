package serve

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// zipDir zips a directory as Xcode's archives hold a .dSYM bundle.
func zipDir(t *testing.T, dir string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	base := filepath.Dir(dir)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(base, p)
		w, err := zw.Create(filepath.ToSlash(rel))
		if err != nil {
			return err
		}
		_, err = w.Write(readFile(t, p))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	zw.Close()
	return buf.Bytes()
}

// TestUploadThenServe uploads the fixture's zipped dSYM, then its binary,
// then a Breakpad file, into a store: each is stored under its UUID, its
// index is built at once (rebuilt when the binary joins the dSYM), and
// debuginfod's GET /buildid serves the stored bytes.
func TestUploadThenServe(t *testing.T) {
	u := fixtureUUID(t)
	store := t.TempDir()
	cfg := DefaultConfig("")
	cfg.Sources = []SourceConfig{{Name: "store", Type: "filesystem", Path: store}}
	cfg.Store = "store"
	cfg.Auth.UploadToken = "up"
	s, ts := newTestServer(t, cfg)
	auth := map[string]string{"Authorization": "Bearer up"}
	upload := func(data []byte) uploadAnswer {
		t.Helper()
		resp, out := do(t, "PUT", ts.URL+"/v1/symbols", bytes.NewReader(data), auth)
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("upload: status %d: %s", resp.StatusCode, out)
		}
		var a uploadAnswer
		if err := json.Unmarshal(out, &a); err != nil {
			t.Fatal(err)
		}
		return a
	}
	a := upload(zipDir(t, "../fixtures/bin/chain-arm64-O1.dSYM"))
	if len(a.Stored) != 1 || a.Stored[0].UUID != u.String() || a.Stored[0].Kind != "debuginfo" || a.Stored[0].Index != "built" {
		t.Fatalf("zipped dSYM stored as %+v, want one debuginfo of %s with its index built", a, u)
	}
	if !strings.HasPrefix(a.Stored[0].Location, store) {
		t.Errorf("stored at %s, want under the store %s", a.Stored[0].Location, store)
	}
	resp, got := do(t, "GET", ts.URL+"/buildid/"+u.Hex()+"/debuginfo", nil, nil)
	if resp.StatusCode != 200 || !bytes.Equal(got, readFile(t, fixtureDSYM)) {
		t.Errorf("GET /buildid/%s/debuginfo: status %d, %d bytes, want the dSYM's DWARF file", u.Hex(), resp.StatusCode, len(got))
	}
	if resp, _ := do(t, "GET", ts.URL+"/buildid/"+u.Hex()+"/executable", nil, nil); resp.StatusCode != 404 {
		t.Errorf("executable before it was uploaded: status %d, want 404", resp.StatusCode)
	}
	_, data := postJSON(t, ts.URL+"/symbolicate", symbolicateBody(u.Hex(), 0x100000000, 0x100000400, 0x100000484))
	w := want(t, u, 0x100000400)
	if f := decode(t, data).Stacktraces[0].Frames; f[len(w)-1].Function != w[len(w)-1].Symbol {
		t.Errorf("after the upload: %s, want %s", data, w[len(w)-1].Symbol)
	}
	builds := metric(t, s, "stackimage_index_builds_total", "result", "ok")
	a = upload(readFile(t, fixtureBin))
	if len(a.Stored) != 1 || a.Stored[0].Kind != "executable" || a.Stored[0].Index != "built" {
		t.Fatalf("binary stored as %+v", a)
	}
	if b := metric(t, s, "stackimage_index_builds_total", "result", "ok"); b != builds+1 {
		t.Errorf("%v builds after the binary's upload, want %v: the index is rebuilt with both files", b, builds+1)
	}
	if resp, got := do(t, "GET", ts.URL+"/buildid/"+strings.ToUpper(u.Hex())+"/executable", nil, nil); resp.StatusCode != 200 || !bytes.Equal(got, readFile(t, fixtureBin)) {
		t.Errorf("executable: status %d, %d bytes", resp.StatusCode, len(got))
	}

	// A Breakpad file for another UUID: a module known from it alone
	// answers at module-relative addresses.
	sym := "MODULE mac arm64 0123456789ABCDEF0123456789ABCDEF0 App\nFILE 0 app.c\nFUNC 1000 20 0 app_main\n1000 20 7 0\n"
	a = upload([]byte(sym))
	if len(a.Stored) != 1 || a.Stored[0].Kind != "breakpad" || a.Stored[0].Index != "built" {
		t.Fatalf(".sym stored as %+v", a)
	}
	body := map[string]any{
		"stacktraces": []any{map[string]any{"frames": []any{map[string]any{"instruction_addr": "0x5000001004"}}}},
		"modules":     []any{map[string]any{"type": "macho", "debug_id": "01234567-89ab-cdef-0123-456789abcdef", "code_file": "App", "image_addr": "0x5000000000"}},
	}
	_, data = postJSON(t, ts.URL+"/symbolicate", body)
	if f := decode(t, data).Stacktraces[0].Frames[0]; f.Function != "app_main" || f.Lineno != 7 {
		t.Errorf("Breakpad frame %+v, want app_main at line 7: %s", f, data)
	}
	if _, err := os.Stat(filepath.Join(store, "_index", u.Hex()+".symindex")); err != nil {
		t.Errorf("the shared index is not in the store: %v", err)
	}

	// Uploads that are not symbol files are refused, saying why.
	for _, bad := range [][]byte{[]byte("hello"), zipOf(t, "readme.txt", []byte("no symbols"))} {
		resp, out := do(t, "PUT", ts.URL+"/v1/symbols", bytes.NewReader(bad), auth)
		if resp.StatusCode != 400 || !bytes.Contains(out, []byte("message")) {
			t.Errorf("upload of %q: status %d: %s", fmt.Sprintf("%.10s", bad), resp.StatusCode, out)
		}
	}
}

func zipOf(t *testing.T, name string, data []byte) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, _ := zw.Create(name)
	w.Write(data)
	zw.Close()
	return buf.Bytes()
}
