package symbolicator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// frameInputs are frames arrays of the usual shape and of every shape the
// hand-written reader leaves to encoding/json.
var frameInputs = []string{
	`[]`,
	` [ ] `,
	`[{}]`,
	`[{"instruction_addr":"0x104000400"},{"instruction_addr":"0x104000484"}]`,
	`[ {"instruction_addr" : "0X10AbCdEf", "addr_mode": "rel:0", "trust": "cfi", "adjust_instruction_addr": false} ]`,
	`[{"instruction_addr":4294967296,"adjust_instruction_addr":true},{"instruction_addr":"1234"}]`,
	`[{"instruction_addr":"0x1","adjust_instruction_addr":true,"adjust_instruction_addr":null}]`,
	`[{"instruction_addr":"0xffffffffffffffff"}]`,
	`[{"instruction_addr":"0x10000000000000000"}]`,
	`[{"instruction_addr":"18446744073709551616"}]`,
	`[{"instruction_addr":"0x"}]`,
	`[{"instruction_addr":""}]`,
	`[{"instruction_addr":null}]`,
	`[{"instruction_addr":-1}]`,
	`[{"instruction_addr":1e3}]`,
	`[{"instruction_addr":"0x1g"}]`,
	`[{"INSTRUCTION_ADDR":"0x10"}]`,
	`[{"instruction_addr":"0x10","function":"main","lineno":3}]`,
	`[{"instruction_addr":"0x10","addr_mode":"r\u0065l:1"}]`,
	`[{"instruction_addr":"0x10","addr_mode":null}]`,
	`[{"instruction_addr":"0x10","addr_mode":7}]`,
	`[{"instruction_addr":"0x10"},]`,
	`[{"instruction_addr":"0x10"} {"instruction_addr":"0x20"}]`,
	`[{"instruction_addr":"0x10"`,
	`null`,
	`{}`,
	`[1]`,
	`[{"trust":"é"}]`,
}

// TestFramesDecodeAsJSON: frames read by hand are what encoding/json
// reads, errors included, and the usual shapes are read by hand.
func TestFramesDecodeAsJSON(t *testing.T) {
	for _, in := range frameInputs {
		checkFramesDecode(t, []byte(in))
	}
	for _, in := range frameInputs[:8] {
		if _, ok := parseFrames([]byte(in)); !ok {
			t.Errorf("parseFrames(%s) left the usual shape to encoding/json", in)
		}
	}
}

func checkFramesDecode(t *testing.T, in []byte) {
	t.Helper()
	var want []Frame
	wantErr := json.Unmarshal(in, &want)
	var got Frames
	gotErr := json.Unmarshal(in, &got)
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("%s: error %v, encoding/json's %v", in, gotErr, wantErr)
	}
	if wantErr != nil {
		return
	}
	if diff := cmp.Diff(want, []Frame(got)); diff != "" {
		t.Errorf("%s: frames differ from encoding/json's (-json +ours):\n%s", in, diff)
	}
}

func FuzzFrames(f *testing.F) {
	for _, in := range frameInputs {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		checkFramesDecode(t, in)
	})
}

// BenchmarkFramesDecode reads the frames of a 100-frame request through
// encoding/json and by hand, side by side.
func BenchmarkFramesDecode(b *testing.B) {
	var frames []map[string]string
	for i := range 100 {
		frames = append(frames, map[string]string{"instruction_addr": fmt.Sprintf("%#x", 0x300000000+i*4093)})
	}
	in, _ := json.Marshal(frames)
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			var fs []Frame
			if err := json.Unmarshal(in, &fs); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("by-hand", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			var fs Frames
			if err := json.Unmarshal(in, &fs); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// requestInputs are request bodies of the usual shapes (the first
// usualRequests, which must be read by hand) and of shapes the hand-written
// reader leaves to encoding/json or must refuse as it does.
var requestInputs = []string{
	`{"modules":[{"debug_id":"b0d7a0a8-7c5e-3b1c-9b0f-8f4b7e4f5a01","image_addr":"0x300000000","image_size":268435456,"type":"macho"}],"stacktraces":[{"frames":[{"instruction_addr":"0x300001234"},{"instruction_addr":"0x300005678"}]}]}`,
	` { "stacktraces" : [ { "registers" : { "pc" : "0x10", "sp" : 4096 } , "frames" : [ { "instruction_addr" : 16 } ] } ] , "modules" : [ ] } `,
	`{"platform":"native","signal":11,"sources":[{"id":"local"}],"options":{"dif_candidates":true},"threads":[{"frames":[]}],"modules":[{"type":"macho","code_id":"x","debug_file":"App","code_file":"/Applications/App","image_addr":4096,"image_size":null,"arch":"arm64"}]}`,
	`{"stacktraces":[{"frames":[{"instruction_addr":"0x10","function":"main","lineno":3,"in_app":true}],"thread_id":1}],"modules":[]} and what follows`,
	`{"modules":[{"image_addr":"0x1","image_addr":"0x2","image_size":"0X10"}],"stacktraces":[{},{"registers":{}}]}`,
	`{}`,
	`{"stacktraces":[{"frames":[{"instruction_addr":"0x1"}],"registers":{"x0":"0x1","x0":"0x2"}}]}`,
	`{"modules":[{"debug_id":"naïve"}]}}`,
	// Several stack traces read into one slab of frames: one without
	// frames, frames without instruction_addr (more frames than the
	// slab was made for), a register named like the key (fewer).
	`{"stacktraces":[{"frames":[{"instruction_addr":"0x1"},{"instruction_addr":"0x2"}]},{"frames":[]},{"registers":{"instruction_addr":"0x9"},"frames":[{"addr_mode":"rel:0"},{"instruction_addr":"0x3"},{"trust":"cfi"}]},{"frames":[{"instruction_addr":"0x4"}]}]}`,
	// Usual shapes end here (usualRequests).
	``,
	`   `,
	`[]`,
	`null`,
	`{`,
	`{"modules":[]`,
	`{,}`,
	`{"modules":[],}`,
	`{"modules" []}`,
	`{"modules":[,]}`,
	`{"x":tru}`,
	`{"x":[1,}`,
	`{"x":01}`,
	`{"signal":01}`,
	`{"signal":1.0}`,
	`{"signal":"11"}`,
	`{"signal":null}`,
	`{"Modules":[{"image_addr":"0x1"}]}`,
	`{"ſtacktraces":[{"frames":[{"instruction_addr":"0x1"}]}]}`,
	`{"modules":[{"image_addr":"0x1"}],"modules":[{"type":"macho"}]}`,
	`{"options":{"dif_candidates":true},"options":{"no_demangle":true}}`,
	`{"stacktraces":[{"registers":{"pc":"0x1"},"registers":{"lr":"0x2"}}]}`,
	`{"stacktraces":null}`,
	`{"stacktraces":[null]}`,
	`{"stacktraces":[{"frames":null}]}`,
	`{"stacktraces":[{"FRAMES":[]}]}`,
	`{"stacktraces":[{"frames":[{"instruction_addr":"0x10"},]}]}`,
	`{"stacktraces":[{"frames":[{"instruction_addr":01}]}]}`,
	`{"stacktraces":[{"frames":[{"instruction_addr":0}]}]}`,
	`{"stacktraces":[{"frames":[{"instruction_addr":1e3}]}]}`,
	`{"stacktraces":[{"frames":[{"instruction_addr":-1}]}]}`,
	`{"stacktraces":[{"frames":[{"instruction_addr":"0x1","adjust_instruction_addr":truex}]}]}`,
	`{"stacktraces":[{"registers":{"pc":null}}]}`,
	`{"stacktraces":[{"registers":{"pc":"0x1g"}}]}`,
	`{"stacktraces":[{"registers":{"p\u0063":"0x1"}}]}`,
	`{"stacktraces":[{"registers":[]}]}`,
	`{"modules":[{"debug_id":"\u0041"}]}`,
	`{"modules":[{"debug_id":null}]}`,
	`{"modules":[{"debug_id":7}]}`,
	`{"modules":[{"image_addr":"0x10000000000000000"}]}`,
	`{"modules":[{"image_addr":"0x"}]}`,
	"{\"modules\":[{\"debug_id\":\"\xff\"}]}",
	"{\"modules\":[{\"debug_id\":\"a\tb\"}]}",
	"{\"modules\":[]\x00}",
	`{"sources":"local"}`,
	`{"sources":[{"id":"local"},]}`,
	`{"platform":"native","platform":"cocoa"}`,
}

// usualRequests is how many of requestInputs have the usual shapes.
const usualRequests = 9

// plainRequest is Request without the hand-written frames
// reader, for encoding/json's own answer.
type plainRequest struct {
	Platform    string            `json:"platform,omitempty"`
	Signal      *int              `json:"signal,omitempty"`
	Sources     []json.RawMessage `json:"sources,omitempty"`
	Stacktraces []plainStacktrace `json:"stacktraces"`
	Threads     []plainStacktrace `json:"threads,omitempty"`
	Modules     []Module          `json:"modules"`
	Options     struct {
		DIFCandidates bool `json:"dif_candidates"`
		NoDemangle    bool `json:"no_demangle"`
	} `json:"options"`
}

type plainStacktrace struct {
	Registers map[string]Hex `json:"registers,omitempty"`
	Frames    []Frame        `json:"frames"`
}

func (p *plainRequest) request() Request {
	traces := func(in []plainStacktrace) []Stacktrace {
		if in == nil {
			return nil
		}
		out := []Stacktrace{}
		for _, st := range in {
			out = append(out, Stacktrace{Registers: st.Registers, Frames: Frames(st.Frames)})
		}
		return out
	}
	req := Request{Platform: p.Platform, Signal: p.Signal, Sources: p.Sources,
		Stacktraces: traces(p.Stacktraces), Threads: traces(p.Threads), Modules: p.Modules}
	req.Options.DIFCandidates, req.Options.NoDemangle = p.Options.DIFCandidates, p.Options.NoDemangle
	return req
}

// TestRequestDecodeAsJSON: a request read by hand is what encoding/json
// reads, errors included, and the usual shapes are read by hand.
func TestRequestDecodeAsJSON(t *testing.T) {
	for i, in := range requestInputs {
		byHand := checkRequestDecode(t, []byte(in))
		if i < usualRequests && !byHand {
			t.Errorf("%s: left to encoding/json, want read by hand", in)
		}
	}
}

// checkRequestDecode compares DecodeRequest with json.Decoder on in and
// reports whether the hand-written reader read it.
func checkRequestDecode(t *testing.T, in []byte) bool {
	t.Helper()
	var plain plainRequest
	wantErr := json.NewDecoder(bytes.NewReader(in)).Decode(&plain)
	var got Request
	gotErr := DecodeRequest(in, &got)
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("%q: error %v, encoding/json's %v", in, gotErr, wantErr)
	}
	var byHand Request
	r := newRequestReader(in)
	read := r.request(&byHand)
	if read && wantErr != nil {
		t.Fatalf("%q: read by hand, but encoding/json says %v", in, wantErr)
	}
	if wantErr != nil {
		return read
	}
	want := plain.request()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%q: request differs from encoding/json's (-json +ours):\n%s", in, diff)
	}
	if read {
		if diff := cmp.Diff(want, byHand); diff != "" {
			t.Errorf("%q: request read by hand differs from encoding/json's (-json +by hand):\n%s", in, diff)
		}
	}
	return read
}

func FuzzRequest(f *testing.F) {
	for _, in := range requestInputs {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		checkRequestDecode(t, in)
	})
}

// BenchmarkRequestDecode reads a whole 100-frame request through
// encoding/json (with the frames read by hand, as before the one-pass
// reader) and in one pass by hand, side by side.
func BenchmarkRequestDecode(b *testing.B) {
	var frames []map[string]string
	for i := range 100 {
		frames = append(frames, map[string]string{"instruction_addr": fmt.Sprintf("%#x", 0x300000000+i*4093)})
	}
	in, _ := json.Marshal(map[string]any{"stacktraces": []any{map[string]any{"frames": frames}},
		"modules": []any{map[string]any{"type": "macho", "debug_id": "b0d7a0a8-7c5e-3b1c-9b0f-8f4b7e4f5a01", "image_addr": "0x300000000", "image_size": 1 << 28}}})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			var req Request
			if err := json.NewDecoder(bytes.NewReader(in)).Decode(&req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("one-pass", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			var req Request
			if err := DecodeRequest(in, &req); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestFramesOfOneStackTraceOnly: stack traces read into one slab of
// frames are each their own: appending to one never changes the next.
func TestFramesOfOneStackTraceOnly(t *testing.T) {
	in := `{"stacktraces":[{"frames":[{"instruction_addr":"0x1"},{"instruction_addr":"0x2"}]},{"frames":[{"instruction_addr":"0x3"}]}]}`
	var req Request
	if err := DecodeRequest([]byte(in), &req); err != nil {
		t.Fatal(err)
	}
	if len(req.Stacktraces) != 2 || len(req.Stacktraces[0].Frames) != 2 || len(req.Stacktraces[1].Frames) != 1 {
		t.Fatalf("read %+v, want stack traces of 2 and 1 frames", req.Stacktraces)
	}
	req.Stacktraces[0].Frames = append(req.Stacktraces[0].Frames, Frame{InstructionAddr: 0xbad})
	if got := req.Stacktraces[1].Frames[0].InstructionAddr; got != 0x3 {
		t.Errorf("second stack trace's frame is %#x after appending to the first's, want 0x3", uint64(got))
	}
}
