package metrickit

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// payloadJSON is a payload of each kind, keys in an order of their own
// (jsonRepresentation() writes them in any order), with an unknown field
// at each level.
const payloadJSON = `{
  "timeStampEnd": "2026-11-28 10:00:00",
  "hangDiagnostics": [{
    "callStackTree": {"callStackPerThread": true, "callStacks": [
      {"threadAttributed": true, "callStackRootFrames": [
        {"subFrames": [
          {"binaryUUID": "2B063BFD-1034-4DF1-A195-30DBC462B747", "binaryName": "App", "offsetIntoBinaryTextSegment": 256, "address": 4294967552, "sampleCount": 7, "newFrameField": [1, {"x": 2}]},
          {"binaryUUID": "97D62FA4-1DF8-4CF5-8D0B-13F0AD6E1C45", "binaryName": "UIKitCore", "offsetIntoBinaryTextSegment": 4096, "address": 6442455040, "sampleCount": 3}
        ], "binaryUUID": "2B063BFD-1034-4DF1-A195-30DBC462B747", "binaryName": "App", "offsetIntoBinaryTextSegment": 128, "address": 4294967424, "sampleCount": 12}
      ]}
    ], "newTreeField": null},
    "diagnosticMetaData": {"hangDuration": "3 sec", "osVersion": "iPhone OS 15.4 (19E241)", "nested": {"a": [1]}},
    "version": "1.0.0"
  }],
  "crashDiagnostics": [{
    "version": "1.0.0",
    "diagnosticMetaData": {"exceptionType": 1, "signal": 11, "exceptionCode": 0, "terminationReason": "Namespace SIGNAL, Code 0xb", "appVersion": "2.3", "appBuildVersion": "41", "platformArchitecture": "arm64e"},
    "callStackTree": {"callStackPerThread": true, "callStacks": [
      {"threadAttributed": false, "callStackRootFrames": [{"binaryUUID": "2B063BFD-1034-4DF1-A195-30DBC462B747", "binaryName": "App", "offsetIntoBinaryTextSegment": 16, "address": 4294967312, "sampleCount": 1}]},
      {"threadAttributed": true, "callStackRootFrames": [{"binaryUUID": "2B063BFD-1034-4DF1-A195-30DBC462B747", "binaryName": "App", "offsetIntoBinaryTextSegment": 32, "address": 4294967328, "sampleCount": 1,
        "subFrames": [{"binaryUUID": "97D62FA4-1DF8-4CF5-8D0B-13F0AD6E1C45", "binaryName": "UIKitCore", "offsetIntoBinaryTextSegment": 8, "address": 6442450952, "sampleCount": 1}]}]}
    ]}
  }],
  "newPayloadField": "x",
  "timeStampBegin": "2026-11-27 10:00:00"
}`

func TestParsePayload(t *testing.T) {
	in, err := Parse([]byte(payloadJSON))
	if err != nil {
		t.Fatal(err)
	}
	if in.Shape != ShapePayload || len(in.Payloads) != 1 {
		t.Fatalf("shape %q, %d payloads", in.Shape, len(in.Payloads))
	}
	p := in.Payloads[0]
	if p.TimeStampBegin != "2026-11-27 10:00:00" || p.TimeStampEnd != "2026-11-28 10:00:00" {
		t.Errorf("timestamps %q %q", p.TimeStampBegin, p.TimeStampEnd)
	}
	var kinds []Kind
	for _, d := range p.Diagnostics {
		kinds = append(kinds, d.Kind)
	}
	// Crashes first, whatever the order of the arrays in the object.
	if diff := cmp.Diff([]Kind{KindCrash, KindHang}, kinds); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
	hang := p.Diagnostics[1]
	if hang.Path != "hangDiagnostics[0]" || hang.Version != "1.0.0" {
		t.Errorf("hang path %q version %q", hang.Path, hang.Version)
	}
	wantMeta := []Field{{"hangDuration", "3 sec"}, {"osVersion", "iPhone OS 15.4 (19E241)"}, {"nested", `{"a": [1]}`}}
	if diff := cmp.Diff(wantMeta, hang.Metadata); diff != "" {
		t.Errorf("metadata (-want +got):\n%s", diff)
	}
	frames := hang.Tree.Stacks[0].Frames
	if len(frames) != 3 || frames[0].Parent != -1 || frames[1].Parent != 0 || frames[2].Parent != 0 {
		t.Fatalf("frames %+v, want a root and its two subFrames in order", frames)
	}
	if f := frames[0]; f.SampleCount != 12 || f.Offset != 128 || f.Address != 4294967424 || f.Has != HasOffset|HasAddress|HasSampleCount {
		t.Errorf("root frame %+v", f)
	}
	if in.Binaries[frames[1].Binary].Name != "App" || in.Binaries[frames[2].Binary].Name != "UIKitCore" || frames[0].Binary != frames[1].Binary {
		t.Errorf("binaries %+v, frames %+v", in.Binaries, frames)
	}
	if len(in.Warnings) != 3 {
		t.Errorf("warnings %q, want one per unknown field name", in.Warnings)
	}
	if !strings.Contains(strings.Join(in.Warnings, "\n"), `"newFrameField" ignored (first at hangDiagnostics[0].callStackTree.callStacks[0].callStackRootFrames[0].subFrames[0].newFrameField)`) {
		t.Errorf("warnings %q do not name the unknown frame field's path", in.Warnings)
	}
}

func TestDumpsOfPayload(t *testing.T) {
	in, err := Parse([]byte(payloadJSON))
	if err != nil {
		t.Fatal(err)
	}
	dumps := in.Dumps()
	if len(dumps) != 2 {
		t.Fatalf("%d dumps, want one per diagnostic", len(dumps))
	}
	crash, hang := dumps[0], dumps[1]
	if crash.CallGraph || !hang.CallGraph {
		t.Errorf("CallGraph: crash %v, hang %v; want false, true", crash.CallGraph, hang.CallGraph)
	}
	if crash.Crash == nil || crash.Crash.Type != "EXC_BAD_ACCESS" || crash.Crash.Signal != "SIGSEGV" || crash.Crash.Codes != "0x0" || crash.Crash.Diagnosis != "Namespace SIGNAL, Code 0xb" {
		t.Errorf("crash %+v", crash.Crash)
	}
	if crash.Process.Version != "2.3 (41)" || crash.Arch == nil || crash.Arch.Name != "arm64e" || crash.Process.Time != "2026-11-28 10:00:00" {
		t.Errorf("process %+v arch %v", crash.Process, crash.Arch)
	}
	if crash.CrashedThread() != 1 {
		t.Errorf("crashed thread %d, want the thread-attributed 1", crash.CrashedThread())
	}
	// A stack innermost first: UIKitCore called from App.
	th := crash.Threads[1]
	if len(th.Frames) != 2 || th.Frames[0].ImageName != "UIKitCore" || th.Frames[0].Address != 6442450952 || th.Frames[1].ImageOffset != 32 {
		t.Errorf("crashed thread frames %+v", th.Frames)
	}
	if im := crash.Images[th.Frames[0].ImageIndex]; im.LoadAddress != 6442450944 || im.UUID.String() != "97D62FA4-1DF8-4CF5-8D0B-13F0AD6E1C45" {
		t.Errorf("UIKitCore image %+v", im)
	}
	// A call tree in the tree's order, root first.
	if f := hang.Threads[0].Frames; len(f) != 3 || f[0].ImageOffset != 128 || f[1].ImageOffset != 256 || f[2].ImageName != "UIKitCore" {
		t.Errorf("hang frames %+v", f)
	}
	got := map[string]string{}
	for _, a := range hang.Annotations {
		got[a.Key] = a.Value
	}
	if got["diagnostic"] != "hang" || got["hangDuration"] != "3 sec" || got["timeStampBegin"] != "2026-11-27 10:00:00" || got["version"] != "1.0.0" {
		t.Errorf("annotations %v", hang.Annotations)
	}
}

func TestParseShapes(t *testing.T) {
	tree := `{"callStacks": [{"callStackRootFrames": [{"binaryName": "A", "address": 4096, "offsetIntoBinaryTextSegment": 0, "sampleCount": 2}]}], "callStackPerThread": false}`
	in, err := Parse([]byte(tree))
	if err != nil {
		t.Fatal(err)
	}
	if in.Shape != ShapeTree || len(in.Payloads) != 1 || len(in.Payloads[0].Diagnostics) != 1 || in.Payloads[0].Diagnostics[0].Kind != KindCallStackTree {
		t.Fatalf("tree read as %+v", in)
	}
	if d := in.Dumps()[0]; d.Threads[0].Name != "all threads" || !d.CallGraph {
		t.Errorf("a tree not per thread: %+v", d.Threads[0])
	}
	array := "\ufeff[" + payloadJSON + ", " + payloadJSON + "]"
	in, err = Parse([]byte(array))
	if err != nil {
		t.Fatal(err)
	}
	if in.Shape != ShapePayloads || len(in.Payloads) != 2 || len(in.Dumps()) != 4 {
		t.Fatalf("array read as shape %q, %d payloads", in.Shape, len(in.Payloads))
	}
	if p := in.Payloads[1].Diagnostics[1].Path; p != "[1].hangDiagnostics[0]" {
		t.Errorf("second payload's hang at %q", p)
	}
	// A frame naming its UUID alone is named by it; one naming neither
	// is in no image.
	in, err = Parse([]byte(`{"callStacks": [{"callStackRootFrames": [{"binaryUUID": "9E8D8DE6-EEC1-3199-8720-9ED68EE3F967", "address": 8192, "offsetIntoBinaryTextSegment": 4096, "subFrames": [{"address": 12}]}]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	d := in.Dumps()[0]
	if f := d.Threads[0].Frames; len(f) != 2 || f[0].ImageName != "9E8D8DE6-EEC1-3199-8720-9ED68EE3F967" || f[1].ImageIndex != -1 || f[1].Address != 12 {
		t.Errorf("frames %+v", f)
	}
}

// Garbage is an error naming the field by its JSON path, the rest read;
// malformed JSON stops the reading where it is, keeping what was read.
func TestParseErrors(t *testing.T) {
	frame := func(fields string) string {
		return `{"crashDiagnostics": [{"callStackTree": {"callStacks": [{"callStackRootFrames": [{"address": 4096, "subFrames": [{` + fields + `}]}]}]}}]}`
	}
	const at = "crashDiagnostics[0].callStackTree.callStacks[0].callStackRootFrames[0].subFrames[0]."
	tests := []struct {
		name, input string
		wantErr     string
		wantFrames  int // frames read in the first stack
	}{
		{"address a string", frame(`"address": "0x10"`), at + `address: want a non-negative integer, got a string`, 2},
		{"negative address", frame(`"address": -1`), at + "address: want a non-negative integer, got the number -1", 2},
		{"fraction", frame(`"sampleCount": 1.5`), at + "sampleCount: want a non-negative integer, got the number 1.5", 2},
		{"too large", frame(`"address": 18446744073709551616`), at + "address: integer larger than", 2},
		{"bad uuid", frame(`"binaryUUID": "xyz"`), at + `binaryUUID: bad UUID "xyz"`, 2},
		{"name a number", frame(`"binaryName": 7`), at + "binaryName: want a string, got the number 7", 2},
		{"subFrames an object", frame(`"subFrames": {}`), at + "subFrames: want an array of frames, got an object", 2},
		{"threadAttributed a string", `{"callStacks": [{"threadAttributed": "yes"}]}`, `callStacks[0].threadAttributed: want true or false, got a string`, 0},
		{"truncated", `{"hangDiagnostics": [{"callStackTree": {"callStacks": [{"callStackRootFrames": [{"address": 1, "subFrames": [{"address": 2}`, "hangDiagnostics[0].callStackTree.callStacks[0].callStackRootFrames[0].subFrames: the input ends inside an array", 2},
		{"bad bytes", `{"callStacks": [{"callStackRootFrames": [{"address": 1}, {"address": 2 x}]}]}`, "callStacks[0].callStackRootFrames[1]: want ',' or '}'", 2},
		{"trailing", `{"callStacks": []} {}`, "the document: data after the document", -1},
		{"not JSON", `<html>`, "want a MetricKit payload", -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := Parse([]byte(tt.input))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Parse error %v, want one containing %q", err, tt.wantErr)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Errorf("error %T is not a *metrickit.Error", err)
			}
			if tt.wantFrames < 0 {
				return
			}
			if in == nil {
				t.Fatal("nothing kept of what was read")
			}
			var stacks []Stack
			for _, d := range in.Payloads[0].Diagnostics {
				stacks = append(stacks, d.Tree.Stacks...)
			}
			n := 0
			if len(stacks) > 0 {
				n = len(stacks[0].Frames)
			}
			if n != tt.wantFrames {
				t.Errorf("%d frames read, want %d", n, tt.wantFrames)
			}
		})
	}
}

// More than maxErrors bad fields give maxErrors errors and a count.
func TestParseManyErrors(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"callStacks": [{"callStackRootFrames": [`)
	for i := range 25 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"address": "x"}`)
	}
	b.WriteString(`]}]}`)
	in, err := Parse([]byte(b.String()))
	if in == nil || err == nil || !strings.Contains(err.Error(), "15 more errors") {
		t.Fatalf("err %v", err)
	}
	if got := strings.Count(err.Error(), "want a non-negative integer"); got != maxErrors {
		t.Errorf("%d errors spelled out, want %d", got, maxErrors)
	}
	if n := len(in.Payloads[0].Diagnostics[0].Tree.Stacks[0].Frames); n != 25 {
		t.Errorf("%d frames kept, want 25", n)
	}
}

func TestDetect(t *testing.T) {
	for _, tt := range []struct {
		head string
		want bool
	}{
		{payloadJSON, true},
		{`[{"timeStampBegin": "x", "crashDiagnostics": []}]`, true},
		{`  {"callStacks": [], "callStackPerThread": true}`, true},
		{`{"app_name": "x", "bug_type": "309", "crashDiagnostics": 1}`, true},
		{`{"format": "stackimage.snapshot/v1", "threads": []}`, false},
		{`{"report": {"id": "x"}, "crash": {"threads": []}}`, false},
		{"Process: x\ncrashDiagnostics", false},
		{"", false},
	} {
		if got := Detect([]byte(tt.head)); got != tt.want {
			t.Errorf("Detect(%.40q) = %v, want %v", tt.head, got, tt.want)
		}
	}
}

// The iOS 14 and 15 offsets: a crash's frames held their image's load
// address in offsetIntoBinaryTextSegment. Over many random layouts, the
// offsets written either way give the same images and offsets.
func TestLoadAddressInOffsetField(t *testing.T) {
	for seed := range 200 {
		loads := []uint64{0x100000000 + uint64(seed%61)<<14, 0x180000000 + uint64(seed*7919%4096)<<14}
		type fr struct {
			image int
			off   uint64
		}
		var frames []fr
		for k := range 2 + seed%5 {
			frames = append(frames, fr{k % 2, 0x100 + uint64((seed*31+k*977)%200000)*4})
		}
		write := func(quirk bool) string {
			var b strings.Builder
			b.WriteString(`{"crashDiagnostics": [{"callStackTree": {"callStacks": [{"threadAttributed": true, "callStackRootFrames": [`)
			for i, f := range frames {
				off := f.off
				if quirk {
					off = loads[f.image]
				}
				if i > 0 {
					b.WriteString(`, "subFrames": [`)
				}
				fmt.Fprintf(&b, `{"binaryName": "B%d", "binaryUUID": "00000000-0000-0000-0000-00000000000%d", "offsetIntoBinaryTextSegment": %d, "address": %d`, f.image, f.image, off, loads[f.image]+f.off)
			}
			for i := range frames {
				if i > 0 {
					b.WriteString("]")
				}
				b.WriteString("}")
			}
			b.WriteString(`]}]}}]}`)
			return b.String()
		}
		for _, quirk := range []bool{false, true} {
			in, err := Parse([]byte(write(quirk)))
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
			d := in.Dumps()[0]
			th := d.Threads[0].Frames
			for k, f := range th {
				want := frames[len(frames)-1-k]
				if f.ImageOffset != want.off || f.ImageLoadAddress != loads[want.image] || f.Address != loads[want.image]+want.off {
					t.Fatalf("seed %d quirk %v frame %d: %s+%#x loaded at %#x, want offset %#x at %#x", seed, quirk, k, f.ImageName, f.ImageOffset, f.ImageLoadAddress, want.off, loads[want.image])
				}
			}
			warned := strings.Contains(strings.Join(d.Warnings, "\n"), "holds the load address")
			if warned != quirk {
				t.Errorf("seed %d quirk %v: warnings %q", seed, quirk, d.Warnings)
			}
		}
	}
}
