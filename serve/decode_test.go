package serve

import (
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
	var want []rawFrame
	wantErr := json.Unmarshal(in, &want)
	var got rawFrames
	gotErr := json.Unmarshal(in, &got)
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("%s: error %v, encoding/json's %v", in, gotErr, wantErr)
	}
	if wantErr != nil {
		return
	}
	if diff := cmp.Diff(want, []rawFrame(got)); diff != "" {
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
			var fs []rawFrame
			if err := json.Unmarshal(in, &fs); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("by-hand", func(b *testing.B) {
		b.ReportAllocs()
		for range b.N {
			var fs rawFrames
			if err := json.Unmarshal(in, &fs); err != nil {
				b.Fatal(err)
			}
		}
	})
}
