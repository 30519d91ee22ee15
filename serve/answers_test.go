package serve

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stackimage/stackimage/image"
)

var updateAnswers = flag.Bool("update-answers", false, "rewrite testdata/answers.sha256 from this build's answers")

// answersGolden holds the SHA-256 of each answer of variedRequests, one
// line per request, as the build that wrote it answered.
const answersGolden = "testdata/answers.sha256"

// variedRequests are /symbolicate requests of the shapes pipelines send,
// over five fixture images: from 1 to 130 frames (below and above the
// count resolved on several goroutines and the size of net/http's
// buffer), several stack traces, registers, relative addresses, frames
// told to be adjusted or not, addresses in no image, a module of a UUID
// no source has and one whose debug_id is malformed, names kept mangled,
// candidates listed.
func variedRequests(t *testing.T, n int) [][]byte {
	t.Helper()
	type mod struct {
		id         string
		base, text uint64
		lo, size   uint64
	}
	var mods []mod
	for i, name := range []string{"chain-arm64-O1", "chain-x86_64-O1", "dwarf-arm64-O2", "chain-nofp-arm64-O1", "async-x86_64-O1"} {
		f, err := image.Open(filepath.Join("..", "fixtures", "bin", name))
		if err != nil {
			t.Fatal(err)
		}
		im := f.Images[0]
		m := mod{id: strings.ToLower(im.UUID.String()), base: uint64(0x200000000 + i*0x10000000)}
		text, _ := im.TextSegment()
		m.text = text.Addr
		for _, s := range im.Sections {
			if s.Segment == "__TEXT" && s.Name == "__text" {
				m.lo, m.size = s.Addr, s.Size
			}
		}
		f.Close()
		mods = append(mods, m)
	}
	rng := rand.New(rand.NewPCG(7, 8))
	counts := []int{1, 3, 20, 49, 50, 64, 100, 130}
	var out [][]byte
	for k := range n {
		frameCount := counts[k%len(counts)]
		stacks := 1 + k%3/2 // every third request has two stack traces
		var traces []any
		for s := range stacks {
			var frames []any
			for j := range frameCount {
				m := mods[rng.IntN(len(mods))]
				addr := m.lo + rng.Uint64N(m.size) - m.text
				f := map[string]any{"instruction_addr": fmt.Sprintf("%#x", addr+m.base)}
				switch rng.IntN(16) {
				case 0:
					f["instruction_addr"] = fmt.Sprintf("%#x", 0x10+j) // in no image
				case 1:
					f["instruction_addr"] = fmt.Sprintf("%#x", addr)
					f["addr_mode"] = fmt.Sprintf("rel:%d", rng.IntN(len(mods)))
				case 2:
					f["adjust_instruction_addr"] = rng.IntN(2) == 0
				case 3:
					f["trust"] = "cfi"
				case 4:
					f["instruction_addr"] = fmt.Sprintf("%#x", 0x700000000+j*4) // the missing UUID's module
				case 5:
					f["instruction_addr"] = addr + m.base // a JSON number
				case 6:
					f["instruction_addr"] = fmt.Sprintf("%#x", 0x800000000+j*4) // the malformed debug_id's module
				}
				frames = append(frames, f)
			}
			st := map[string]any{"frames": frames}
			if (k+s)%4 == 0 {
				st["registers"] = map[string]any{"pc": fmt.Sprintf("%#x", mods[0].base+0x400), "sp": "0x16fdff000"}
			}
			traces = append(traces, st)
		}
		var modules []any
		for _, m := range mods {
			modules = append(modules, map[string]any{"type": "macho", "debug_id": m.id, "code_file": "/private/var/" + m.id[:8],
				"image_addr": fmt.Sprintf("%#x", m.base), "image_size": 1 << 28})
		}
		modules = append(modules,
			map[string]any{"type": "macho", "debug_id": "0badc0de-0000-4000-8000-000000000000", "image_addr": "0x700000000", "image_size": 4096},
			map[string]any{"type": "macho", "debug_id": "not-a-uuid", "image_addr": "0x800000000"})
		req := map[string]any{"stacktraces": traces, "modules": modules,
			"options": map[string]any{"dif_candidates": k%5 == 0, "no_demangle": k%7 == 0}}
		if k%6 == 0 {
			req["signal"] = 11
		}
		body, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, body)
	}
	return out
}

// TestAnswersUnchanged: the answers to 300 varied requests are byte for
// byte those recorded in testdata/answers.sha256 (by the build before the
// answer path's speed-ups; go test -update-answers rewrites it after a
// change meant to change answers), and an answer sent by Serve over a
// keep-alive connection is the handler's own.
func TestAnswersUnchanged(t *testing.T) {
	bodies := variedRequests(t, 300)
	s, addr := serveFixtures(t)
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(time.Minute))
	r := bufio.NewReader(conn)

	// The shapes the requests are meant to give, each seen at least once.
	shapes := map[string]int{`"status":"symbolicated"`: 0, `"status":"unknown_image"`: 0, `"status":"missing"`: 0,
		`"status":"malformed"`: 0, `"inlined":true`: 0, `"sym_addr":`: 0, `"lineno":`: 0, `"candidates":`: 0,
		`"registers":`: 0, `"addr_mode":"rel:`: 0, `"trust":"cfi"`: 0, `"signal":11`: 0}
	var digests strings.Builder
	for i, body := range bodies {
		w := httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest("POST", "/symbolicate", bytes.NewReader(body)))
		if w.Code != http.StatusOK {
			t.Fatalf("request %d: status %d: %.300s", i, w.Code, w.Body.Bytes())
		}
		answer := w.Body.Bytes()
		for shape := range shapes {
			shapes[shape] += bytes.Count(answer, []byte(shape))
		}
		fmt.Fprintf(&digests, "%d %x\n", i, sha256.Sum256(answer))

		req, _ := http.NewRequest("POST", "http://"+addr+"/symbolicate", bytes.NewReader(body))
		if err := req.Write(conn); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(r, req)
		if err != nil {
			t.Fatalf("request %d over TCP: %v", i, err)
		}
		overTCP, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || !bytes.Equal(overTCP, answer) {
			t.Fatalf("request %d: over TCP (%v)\n%.300s\nServeHTTP\n%.300s", i, err, overTCP, answer)
		}
	}
	for shape, n := range shapes {
		if n == 0 {
			t.Errorf("no answer has %s", shape)
		}
	}
	if *updateAnswers {
		if err := os.WriteFile(answersGolden, []byte(digests.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(answersGolden)
	if err != nil {
		t.Fatal(err)
	}
	wantLines, gotLines := strings.Split(string(want), "\n"), strings.Split(digests.String(), "\n")
	if len(wantLines) != len(gotLines) {
		t.Fatalf("%d answers, %s has %d", len(gotLines)-1, answersGolden, len(wantLines)-1)
	}
	changed := 0
	for i := range gotLines {
		if gotLines[i] != wantLines[i] {
			if changed < 5 {
				t.Errorf("answer %d differs from the recorded one: %.400s", i, bodies[i])
			}
			changed++
		}
	}
	if changed > 0 {
		t.Errorf("%d of %d answers differ from %s", changed, len(bodies), answersGolden)
	}
}
