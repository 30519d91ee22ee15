package crashreport

import (
	"bytes"
	"runtime"
	"strings"
	"testing"
)

// fuzzName is what the fuzz targets' lookups answer for every frame.
var fuzzName = FrameName{Symbol: "-[Fuzz frame:]", SymbolOffset: 12, HasOffset: true, File: "/src/Fuzz.m", Line: 42,
	Inlined: []FrameName{{Symbol: "inlined_fuzz", File: "Fuzz.h", Line: 7}}}

// allocated returns the bytes allocated while fn ran.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// allocBudget is what writing a report back may allocate: the parse's own
// copies of the input's lines and model (a small multiple of its size),
// the frame names, and a fixed allowance for buffers.
func allocBudget(data []byte, frames int) uint64 {
	return 64*uint64(len(data)) + 1024*uint64(frames) + 1<<20
}

// fuzzWrite checks what must hold when any input is written back: no
// panic; without names the output is the input, byte for byte; with names
// it grows by at most the names' text and a copy of each named frame
// line's head (for its inlined line), and stays within an allocation
// budget.
func fuzzWrite(t *testing.T, data []byte, format Format) {
	var same bytes.Buffer
	if err := WriteSymbolicated(&same, data, format, func(FrameRef) (FrameName, bool) { return FrameName{}, false }); err != nil {
		t.Fatalf("WriteSymbolicated without names: %v", err)
	}
	if !bytes.Equal(same.Bytes(), data) {
		t.Fatalf("WriteSymbolicated without names changed the input:\n%q\n%q", data, same.Bytes())
	}

	var out bytes.Buffer
	frames := 0
	var err error
	alloc := allocated(func() {
		err = WriteSymbolicated(&out, data, format, func(FrameRef) (FrameName, bool) {
			frames++
			return fuzzName, true
		})
	})
	if err != nil {
		t.Fatalf("WriteSymbolicated: %v", err)
	}
	perFrame := 2*len(fuzzName.Symbol) + len(fuzzName.File) + len(fuzzName.Inlined[0].File) + 128
	if limit := 2*len(data) + frames*perFrame; out.Len() > limit {
		t.Fatalf("%d bytes out of %d in with %d frames named: more than %d", out.Len(), len(data), frames, limit)
	}
	if budget := allocBudget(data, frames); alloc > budget {
		t.Fatalf("allocated %d bytes for %d bytes of input and %d frames: more than %d", alloc, len(data), frames, budget)
	}

	// A well-formed .ips stays one, with its threads, and every frame
	// object of it named.
	if format != FormatIPS {
		return
	}
	if in, err := ParseIPS(data); err == nil && in.Format == FormatIPS {
		r, err := ParseIPS(out.Bytes())
		if err != nil || len(r.Threads) != len(in.Threads) {
			t.Fatalf("output of a well-formed .ips: %v; %d threads, want %d\n%s", err, len(r.Threads), len(in.Threads), out.Bytes())
		}
		for i, th := range r.Threads {
			for j, f := range th.Frames {
				if want := []string{fuzzName.Inlined[0].Symbol, fuzzName.Symbol}[j%2]; f.Symbol != want {
					t.Fatalf("output thread %d frame %d is %q, want %q", i, j, f.Symbol, want)
				}
			}
		}
	}
}

func FuzzWriteSymbolicatedCrash(f *testing.F) {
	addSeeds(f, []string{"arm64.crash"}, append(ksFiles(".txt"), macsymCrashes+"single-target-crash.crash"))
	f.Add([]byte(textReport))
	f.Add([]byte("Thread 0:\n0 a 0x1\r\nLast Exception Backtrace:\n0 b 0x2 0x0 + 2 (s + 1) [inlined]\n(0x1 0x2)\nHandler crashed while reporting:\nThread 0:\n0 c 0x3\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzWrite(t, data, FormatCrash) })
}

func FuzzWriteSymbolicatedIPS(f *testing.F) {
	addSeeds(f, []string{"arm64.ips"}, []string{macsymCrashes + "single-target-crash.ips"})
	f.Add([]byte(ipsReport))
	f.Add([]byte(ipsHeader + `{"threads":[{"frames":[{"symbol":1,"symbol":"x"},{},[],{"a":{"b":[1,{"c":2}]}}]},7,{"frames":7}],"lastExceptionBacktrace":[{"inline":true}]}`))
	f.Add([]byte(`{"bug_type":"109"}` + "\nThread 0:\n0 a 0x1 0x0 + 1\n"))
	f.Fuzz(func(t *testing.T, data []byte) { fuzzWrite(t, data, FormatIPS) })
}

// TestWriteSymbolicatedHugeLines: 10 MB lines (garbage, and a frame line
// whose image name is 10 MB long) are copied through or filled in, within
// the allocation budget.
func TestWriteSymbolicatedHugeLines(t *testing.T) {
	const huge = 10 << 20
	garbage := strings.Repeat("\x00\xff garbage ", huge/10)
	longName := strings.Repeat("N", huge)
	in := "Process: A [1]\n" + garbage + "\n\nThread 0 Crashed:\n0   " + longName + " 0x1010 0x1000 + 16\n1 A 0x1020 0x1000 + 32\n" +
		garbage + "\n\nBinary Images:\n0x1000 - 0x1fff A arm64 <01d2a9d51f8a35c892287c7cca13c5fc> /A\n"
	fuzzWrite(t, []byte(in), FormatCrash)

	var out bytes.Buffer
	if err := WriteSymbolicated(&out, []byte(in), "", func(ref FrameRef) (FrameName, bool) {
		return FrameName{Symbol: "main", SymbolOffset: 16, HasOffset: true}, ref.Frame == 0
	}); err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(in, "0x1010 0x1000 + 16", "0x1010 main + 16", 1); out.String() != want {
		t.Errorf("the 10 MB frame line was not filled in, or other lines changed")
	}

	ips := ipsHeader + `{"junk":"` + strings.Repeat("x", huge) + `","threads":[{"frames":[{"imageOffset":1,"pad":"` +
		strings.Repeat("y", huge) + `"}]}]}`
	fuzzWrite(t, []byte(ips), FormatIPS)
}
