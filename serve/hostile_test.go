package serve

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stackimage/stackimage/internal/hostile"
)

// TestHostileInputsThroughEndpoints sends the project's hostile corpus
// through the service: Mach-O cases are uploaded with PUT /v1/symbols and
// then symbolicated against, dumps are posted to /v1/symbolicate. Every
// request must end, answer with a client error or a result (never a
// server error), and keep within the allocation budget every parser
// keeps (internal/hostile), measured around the whole HTTP exchange.
func TestHostileInputsThroughEndpoints(t *testing.T) {
	cfg := DefaultConfig("")
	cfg.Sources = []SourceConfig{{Name: "store", Type: "filesystem", Path: t.TempDir()}}
	cfg.Store = "store"
	cfg.Auth.UploadToken = "up"
	_, ts := newTestServer(t, cfg)
	auth := map[string]string{"Authorization": "Bearer up"}
	for _, c := range hostile.Cases() {
		t.Run(c.Name, func(t *testing.T) {
			input := c.Build()
			hostile.Returns(t, 2*time.Minute, nil, func() {
				hostile.Budget(t, int64(len(input)), func() {
					switch c.Kind {
					case hostile.KindMachO:
						resp, data := do(t, "PUT", ts.URL+"/v1/symbols", bytes.NewReader(input), auth)
						checkHostileAnswer(t, "PUT /v1/symbols", resp, data)
						var up uploadAnswer
						json.Unmarshal(data, &up)
						for _, st := range up.Stored {
							body := map[string]any{
								"stacktraces": []any{map[string]any{"frames": []any{map[string]any{"instruction_addr": fmt.Sprintf("%#x", hostile.CodeAddr)}}}},
								"modules":     []any{map[string]any{"type": "macho", "debug_id": st.UUID, "image_addr": fmt.Sprintf("%#x", hostile.TextAddr)}},
							}
							resp, data := postJSON(t, ts.URL+"/symbolicate", body)
							checkHostileAnswer(t, "POST /symbolicate", resp, data)
							if c.WantSymbol != "" && st.Index == "built" {
								a := decode(t, data)
								if f := a.Stacktraces[0].Frames; len(f) == 0 || f[len(f)-1].Symbol != c.WantSymbol {
									t.Errorf("symbol at the good address: %s, want %s", data, c.WantSymbol)
								}
							}
						}
					case hostile.KindDump:
						// The answer is read in pieces and dropped: the test
						// measures the service, not a client holding it whole.
						resp, err := http.Post(ts.URL+"/v1/symbolicate", "application/octet-stream", bytes.NewReader(input))
						if err != nil {
							t.Fatal(err)
						}
						head := make([]byte, 4096)
						n, _ := io.ReadFull(resp.Body, head)
						io.Copy(io.Discard, resp.Body)
						resp.Body.Close()
						checkHostileAnswer(t, "POST /v1/symbolicate", resp, head[:n])
					}
				})
			})
		})
	}
}

func checkHostileAnswer(t *testing.T, what string, resp *http.Response, data []byte) {
	t.Helper()
	if resp.StatusCode >= 500 {
		t.Errorf("%s: status %d: %.300s", what, resp.StatusCode, data)
	}
	if resp.StatusCode >= 400 && !bytes.Contains(data, []byte(`"message"`)) {
		t.Errorf("%s: status %d without a message: %.300s", what, resp.StatusCode, data)
	}
}
