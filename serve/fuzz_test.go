package serve

import (
	"bytes"
	"context"
	"net/http/httptest"
	"testing"
)

// FuzzSymbolicate sends arbitrary bodies to POST /symbolicate against the
// fixtures: the answer is a client error or a completed symbolication,
// never a server error or a panic. Seeds are the requests the tests send.
func FuzzSymbolicate(f *testing.F) {
	u := fixtureUUID(f)
	for _, seed := range []string{
		`{"stacktraces":[{"frames":[{"instruction_addr":"0x104000400"},{"instruction_addr":"0x104000484","addr_mode":"rel:0"}]}],"modules":[{"type":"macho","debug_id":"` + u.Hex() + `","image_addr":"0x104000000","image_size":16384}]}`,
		`{"threads":[{"registers":{"pc":"0x1"},"frames":[{"instruction_addr":1}]}],"modules":[{"debug_id":"../x","image_addr":"0x0"}],"sources":[{"id":"local"}]}`,
		`{"stacktraces":[{"frames":[{"instruction_addr":"0xffffffffffffffff","adjust_instruction_addr":true}]}],"modules":[{"code_id":"` + u.Hex() + `","image_addr":"0xfffffffffffff000"}]}`,
	} {
		f.Add([]byte(seed))
	}
	cfg := DefaultConfig("../fixtures/bin")
	cfg.Cache.Dir = f.TempDir()
	s, err := New(context.Background(), cfg)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { s.Close() })
	f.Fuzz(func(t *testing.T, body []byte) {
		w := httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest("POST", "/symbolicate", bytes.NewReader(body)))
		if w.Code >= 500 {
			t.Errorf("status %d: %s", w.Code, w.Body.Bytes())
		}
		if w.Code == 200 && !bytes.HasPrefix(w.Body.Bytes(), []byte(`{"status":"completed"`)) {
			t.Errorf("200 without a completed answer: %.300s", w.Body.Bytes())
		}
	})
}
