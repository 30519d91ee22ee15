package symbolicator

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"

	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/symbolize"
	"github.com/stackimage/stackimage/symstore"
)

// TestLongThreadEncodedInParallelAlike: a backtrace long enough to be
// encoded on several goroutines is written byte for byte as one encoded
// frame after another, at every length around the chunks' edges.
func TestLongThreadEncodedInParallelAlike(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	}
	d := &dump.Dump{Images: []dump.Image{{Name: "App", LoadAddress: 0x100000000, Size: 0x100000}}}
	modules := []CompleteModule{{Module: Module{Type: "macho", CodeFile: "/App"}, DebugStatus: StatusFound}}
	for _, n := range []int{0, 1, 2*framesPerEncoder - 1, 2 * framesPerEncoder, 2*framesPerEncoder + 1, 5*encodeChunk + 3, 1000} {
		frames := make([]symstore.Frame, n)
		for i := range frames {
			frames[i] = symstore.Frame{Index: i, Address: 0x100000000 + uint64(i)*4, Image: "App", ImageLoadAddress: 0x100000000,
				Symbol: fmt.Sprintf("f%d", i), HasOffset: true, SymbolOffset: 4, File: "/src/a.c", Line: i + 1}
		}
		th := symbolize.Thread{ID: 1, Name: "main", Frames: frames}
		got := NewAnswer(d, nil, modules).AppendThread(nil, th)
		a := NewAnswer(d, nil, modules)
		st, raw := a.stacktrace(th)
		want := appendStacktraceTail(a.appendFrames(appendStacktraceHead(nil, &st), frames, raw), &st)
		if !bytes.Equal(got, want) {
			t.Errorf("%d frames: the answer differs from one written frame by frame:\n got %.300s\nwant %.300s", n, got, want)
		}
		// Encoded where named (symbolize's EncodeFrames), in runs of 7.
		if n > 0 {
			encoder := NewAnswer(d, nil, modules)
			for lo := 0; lo < n; lo += 7 {
				th.Encoded = append(th.Encoded, encoder.EncodeFrames(nil, 0, frames[lo:min(lo+7, n)], lo == 0))
			}
			if got := NewAnswer(d, nil, modules).AppendThread(nil, th); !bytes.Equal(got, want) {
				t.Errorf("%d frames encoded in runs: the answer differs from one written frame by frame:\n got %.300s\nwant %.300s", n, got, want)
			}
		}
	}
}

// TestAnswerWorkersBound: an answer whose Workers is 1 (a busy
// service's) encodes a long walked backtrace on the caller's goroutine,
// starting none, as the encoders of more workers do.
func TestAnswerWorkersBound(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	}
	d := &dump.Dump{Images: []dump.Image{{Name: "App", LoadAddress: 0x100000000, Size: 0x100000}}}
	modules := []CompleteModule{{Module: Module{Type: "macho", CodeFile: "/App"}, DebugStatus: StatusFound}}
	frames := make([]symstore.Frame, 8*framesPerEncoder)
	for i := range frames {
		frames[i] = symstore.Frame{Index: i, Address: 0x100000000 + uint64(i)*4, Image: "App", ImageLoadAddress: 0x100000000, Symbol: "f"}
	}
	th := symbolize.Thread{ID: 1, Frames: frames}
	buf := make([]byte, 0, 1<<20)
	allocs := func(workers int) float64 {
		a := NewAnswer(d, nil, modules)
		a.Workers = workers
		return testing.AllocsPerRun(20, func() {
			a.count = 0
			a.AppendThread(buf[:0], th)
		})
	}
	// The stack trace's head takes one allocation either way; the
	// encoders of two workers take their goroutine and buffers besides.
	if one, two := allocs(1), allocs(2); one >= two {
		t.Errorf("allocations per backtrace: %v with one worker, %v with two; want fewer with one (no goroutine started)", one, two)
	}
}
