package plcrash_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/stackimage/stackimage/internal/hostile"
	"github.com/stackimage/stackimage/internal/plcrashgen"
	"github.com/stackimage/stackimage/plcrash"
	"google.golang.org/protobuf/encoding/protowire"
)

// header is a .plcrash file's first bytes.
const header = plcrash.Magic + "\x01"

func bytesField(b []byte, num protowire.Number, v []byte) []byte {
	b = protowire.AppendTag(b, num, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

// repeat returns n copies of one field.
func repeat(num protowire.Number, v []byte, n int) []byte {
	one := bytesField(nil, num, v)
	return bytes.Repeat(one, n)
}

// TestHostile: each damaged or hostile report gives an error naming the
// field and its offset, keeps what could be read, and stays within the
// hostile budget.
func TestHostile(t *testing.T) {
	emptyFrame := bytesField(nil, 2, nil) // Thread.frames: an empty StackFrame
	nested := func(depth int) []byte {
		// An unknown group field nested depth deep inside a thread.
		var b []byte
		for range depth {
			b = protowire.AppendTag(b, 15, protowire.StartGroupType)
		}
		for range depth {
			b = protowire.AppendTag(b, 15, protowire.EndGroupType)
		}
		return bytesField(nil, 3, b)
	}
	for _, tc := range []struct {
		name string
		body []byte
		// want is a substring of the error; empty for none.
		want string
		// check looks at what was read.
		check func(t *testing.T, r *plcrash.Report)
	}{
		{
			name: "length past the end",
			body: protowire.AppendVarint(protowire.AppendTag(nil, 3, protowire.BytesType), 1<<62),
			want: "offset 9: threads: length 4611686018427387904 runs past the end of the file (0 bytes left)",
		},
		{
			name: "truncated varint",
			body: bytesField(nil, 6, []byte{0x18, 0xff, 0xff}),
			want: "offset 11: signal.address: varint: ",
		},
		{
			name: "overlong varint",
			body: bytesField(nil, 6, append([]byte{0x18}, bytes.Repeat([]byte{0xff}, 11)...)),
			want: "offset 11: signal.address: varint: ", // protowire's own words vary between builds
		},
		{
			name: "field number 0",
			body: []byte{0x00, 0x01},
			want: "offset 8: field tag: ",
		},
		{
			name: "stray end group",
			body: protowire.AppendTag(nil, 3, protowire.EndGroupType),
			want: "offset 8: threads: wire type 4",
		},
		{
			name: "deep nesting of an unknown group",
			body: nested(20000),
			want: "threads[0].field 15",
			check: func(t *testing.T, r *plcrash.Report) {
				if len(r.Threads) != 1 {
					t.Errorf("%d threads, want the damaged one kept", len(r.Threads))
				}
			},
		},
		{
			name: "absurd thread count",
			body: repeat(3, nil, plcrash.MaxThreads+5000),
			want: "threads: more than 16384 threads; the rest are dropped",
			check: func(t *testing.T, r *plcrash.Report) {
				if len(r.Threads) != plcrash.MaxThreads {
					t.Errorf("%d threads, want the first %d", len(r.Threads), plcrash.MaxThreads)
				}
			},
		},
		{
			name: "absurd frame count in one thread",
			body: bytesField(nil, 3, bytes.Repeat(emptyFrame, plcrash.MaxFrames+10)),
			want: "threads[0].frames: more than 65536 frames in a backtrace",
			check: func(t *testing.T, r *plcrash.Report) {
				if len(r.Threads[0].Frames) != plcrash.MaxFrames {
					t.Errorf("%d frames, want the first %d", len(r.Threads[0].Frames), plcrash.MaxFrames)
				}
			},
		},
		{
			name: "millions of frames over many threads",
			body: repeat(3, bytes.Repeat(emptyFrame, 60000), 40),
			want: "more than 262144 frames in the report",
			check: func(t *testing.T, r *plcrash.Report) {
				n := 0
				for _, th := range r.Threads {
					n += len(th.Frames)
				}
				if n != plcrash.MaxTotalFrames || len(r.Threads) != 40 {
					t.Errorf("%d frames in %d threads, want %d in 40", n, len(r.Threads), plcrash.MaxTotalFrames)
				}
			},
		},
		{
			name: "absurd register count",
			body: bytesField(nil, 3, repeat(4, nil, plcrash.MaxRegisters+1)),
			want: "threads[0].registers: more than 256 registers",
		},
		{
			name: "wrong wire type on a known field",
			body: append(protowire.AppendVarint(protowire.AppendTag(nil, 6, protowire.VarintType), 5), bytesField(nil, 10, []byte("kept"))...),
			check: func(t *testing.T, r *plcrash.Report) {
				if r.CustomData != "kept" || len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "signal: a varint") {
					t.Errorf("custom data %q, warnings %q; want the field after kept and one warning", r.CustomData, r.Warnings)
				}
			},
		},
		{
			name: "UUID of the wrong size",
			body: bytesField(nil, 4, bytesField(nil, 4, []byte("short"))),
			check: func(t *testing.T, r *plcrash.Report) {
				if len(r.Images) != 1 || r.Images[0].HasUUID || len(r.Warnings) != 1 || !strings.Contains(r.Warnings[0], "binary_images[0].uuid: 5 bytes") {
					t.Errorf("images %+v, warnings %q", r.Images, r.Warnings)
				}
			},
		},
		{
			name: "damage inside one thread keeps the next",
			body: append(bytesField(nil, 3, []byte{0x08, 0xff}), bytesField(nil, 3, []byte{0x08, 0x07})...),
			want: "offset 11: threads[0].thread_number: varint: ",
			check: func(t *testing.T, r *plcrash.Report) {
				if len(r.Threads) != 2 || r.Threads[1].Number != 7 {
					t.Errorf("threads %+v, want the second one read", r.Threads)
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := append([]byte(header), tc.body...)
			var r *plcrash.Report
			var err error
			hostile.CaseBudget(t, int64(len(data)), func() {
				r, err = plcrash.Parse(data)
				if r != nil {
					r.Dump()
				}
			})
			if r == nil {
				t.Fatalf("no report: %v", err)
			}
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("Parse: %v, want no error", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("Parse: %v, want an error containing %q", err, tc.want)
			}
			var fe *plcrash.FormatError
			if err != nil && !errors.As(err, &fe) {
				t.Errorf("error %T, want *plcrash.FormatError", err)
			}
			if tc.check != nil {
				tc.check(t, r)
			}
		})
	}
}

// FuzzParse: no input panics Parse or Dump, and none costs more than the
// hostile budget.
func FuzzParse(f *testing.F) {
	r := &plcrash.Report{Version: 1,
		Threads:   []plcrash.Thread{{Crashed: true, Frames: []plcrash.Frame{{PC: 0x1000}, {PC: 0x5a6b9101cc7ac6c4, Symbol: &plcrash.Symbol{Name: "_main", Start: 0x1000}}}, Registers: []plcrash.Register{{Name: "pc", Value: 0x1000}}}},
		Images:    []plcrash.BinaryImage{{Base: 0x1000, Size: 0x1000, Name: "/a", HasUUID: true, CodeType: &plcrash.Processor{Encoding: 1, Type: 0x0100000c, Subtype: 2}}},
		Exception: &plcrash.Exception{Name: "E", Frames: []plcrash.Frame{{PC: 0x1004}}},
		Signal:    plcrash.Signal{Name: "SIGSEGV", Mach: &plcrash.MachException{Type: 1, Codes: []uint64{1, 2}}},
		Process:   &plcrash.ProcessInfo{Name: "a", Path: "/a"},
		Machine:   &plcrash.MachineInfo{Model: "iPhone14,5"},
		Info:      &plcrash.ReportInfo{HasUUID: true},
	}
	seed, err := plcrashgen.Encode(r)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add([]byte(header))
	f.Fuzz(func(t *testing.T, data []byte) {
		hostile.Budget(t, int64(len(data)), func() {
			if r, _ := plcrash.Parse(data); r != nil {
				r.Dump()
			}
		})
	})
}
