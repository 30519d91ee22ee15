package symbolize

import (
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/google/go-cmp/cmp"
	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/internal/hostile"
	"github.com/stackimage/stackimage/snapshot"
	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/walker"
)

func sharedStackDump(t testing.TB, threads, frames int, distinct bool) *snapshot.Snapshot {
	t.Helper()
	snap, err := snapshot.Parse(hostile.SharedStackSnapshot(threads, frames, distinct))
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// TestMaxTotalFrames checks the report-wide bound on frames: the threads
// before it keep all their frames, the one at it keeps what fits, the
// later ones none; each cut thread says so, and so does the report.
func TestMaxTotalFrames(t *testing.T) {
	// Each walk: frame 0 (PC), its caller from LR, and one frame per
	// frame record.
	const threads, frames, walked = 10, 100, 102
	for _, distinct := range []bool{false, true} {
		snap := sharedStackDump(t, threads, frames, distinct)
		z := &Symbolizer{MaxTotalFrames: 250}
		rep, err := z.Symbolicate(snap.Dump())
		if err != nil {
			t.Fatal(err)
		}
		var got []int
		total := 0
		for _, th := range rep.Threads {
			got = append(got, len(th.Frames))
			total += len(th.Frames)
			cut := th.StopReason == StopMaxTotalFrames
			if wantCut := len(th.Frames) < walked; cut != wantCut {
				t.Errorf("distinct=%v: thread %d has %d frames, stop %q (%s); want cut=%v",
					distinct, th.ID, len(th.Frames), th.StopReason, th.StopDetail, wantCut)
			}
			if cut && !strings.Contains(th.StopDetail, "250 frames") {
				t.Errorf("thread %d: stop detail %q does not name the bound", th.ID, th.StopDetail)
			}
		}
		want := []int{walked, walked, 250 - 2*walked, 0, 0, 0, 0, 0, 0, 0}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("distinct=%v: frames per thread (-want +got):\n%s", distinct, diff)
		}
		if total > 250 {
			t.Errorf("distinct=%v: %d frames in all, above the bound of 250", distinct, total)
		}
		if w := strings.Join(rep.Warnings, "\n"); !strings.Contains(w, "at most 250 frames (MaxTotalFrames): 8 threads") {
			t.Errorf("distinct=%v: warnings %q lack the bound", distinct, rep.Warnings)
		}
	}
}

// TestIdenticalThreadsWalkedOnce checks that threads with the same state
// share one walk's frames, each with its own ID, and that threads that
// differ are walked apart.
func TestIdenticalThreadsWalkedOnce(t *testing.T) {
	for _, distinct := range []bool{false, true} {
		snap := sharedStackDump(t, 5, 20, distinct)
		rep, err := (&Symbolizer{}).Symbolicate(snap.Dump())
		if err != nil {
			t.Fatal(err)
		}
		first := rep.Threads[0]
		for i, th := range rep.Threads {
			if th.ID != uint64(i+1) {
				t.Errorf("thread %d has ID %d, want %d", i, th.ID, i+1)
			}
			shared := &th.Frames[0] == &first.Frames[0]
			if shared == distinct && i > 0 {
				t.Errorf("distinct=%v: thread %d shares thread 1's frames: %v", distinct, th.ID, shared)
			}
			if diff := cmp.Diff(first.Frames[1:], th.Frames[1:]); diff != "" {
				t.Errorf("thread %d's callers differ from thread 1's (-1 +%d):\n%s", th.ID, th.ID, diff)
			}
		}
	}
}

// TestSymbolicateEachMatchesSymbolicate checks that the threads handed
// over one by one are those Symbolicate returns, and that an error from
// the callback stops the work.
func TestSymbolicateEachMatchesSymbolicate(t *testing.T) {
	snap := sharedStackDump(t, 20, 30, true)
	z := &Symbolizer{MaxTotalFrames: 300}
	rep, err := z.Symbolicate(snap.Dump())
	if err != nil {
		t.Fatal(err)
	}
	var got []Thread
	head, err := z.SymbolicateEach(snap.Dump(), func(th Thread) error {
		got = append(got, th)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(rep.Threads, got); diff != "" {
		t.Errorf("SymbolicateEach's threads differ from Symbolicate's (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(rep.Warnings, head.Warnings); diff != "" || head.Threads != nil {
		t.Errorf("SymbolicateEach's report: threads %d, warnings (-want +got):\n%s", len(head.Threads), diff)
	}
	stop := errStop{}
	n := 0
	if _, err := z.SymbolicateEach(snap.Dump(), func(Thread) error { n++; return stop }); err != stop || n != 1 {
		t.Errorf("SymbolicateEach after an error: err %v after %d calls; want errStop after 1", err, n)
	}
}

type errStop struct{}

func (errStop) Error() string { return "stop" }

// FuzzSymbolicateSnapshot symbolicates any snapshot under a small bound:
// the report never holds more frames than the bound, and the threads
// handed over one by one are those Symbolicate returns.
func FuzzSymbolicateSnapshot(f *testing.F) {
	f.Add(hostile.SharedStackSnapshot(3, 10, false), uint16(25))
	f.Add(hostile.SharedStackSnapshot(4, 8, true), uint16(7))
	f.Fuzz(func(t *testing.T, data []byte, bound uint16) {
		if len(data) > 1<<20 {
			return
		}
		snap, err := snapshot.Parse(data)
		if err != nil {
			return
		}
		z := &Symbolizer{MaxTotalFrames: 1 + int(bound%2048), MaxDepth: 64}
		rep, err := z.Symbolicate(snap.Dump())
		if err != nil {
			return
		}
		total := 0
		for _, th := range rep.Threads {
			total += len(th.Frames)
			if th.Walk != nil {
				total += len(th.Walk.Frames)
			}
		}
		if total > z.MaxTotalFrames {
			t.Errorf("%d frames in the report, above the bound of %d", total, z.MaxTotalFrames)
		}
		var each []Thread
		if _, err := z.SymbolicateEach(snap.Dump(), func(th Thread) error { each = append(each, th); return nil }); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(rep.Threads, each); diff != "" {
			t.Errorf("SymbolicateEach differs from Symbolicate (-want +got):\n%s", diff)
		}
	})
}

// TestSymbolicateEachHoldsOneThread checks that a caller handed threads
// one by one holds one thread's frames at a time, plus the caches: the
// live heap while 1,000 distinct threads of 512 frames go by (about
// 100 MB of frames all told) stays far below the report's size.
func TestSymbolicateEachHoldsOneThread(t *testing.T) {
	const threads, frames = 1000, 512
	snap := sharedStackDump(t, threads, frames, true)
	d := snap.Dump()
	z := &Symbolizer{MaxTotalFrames: 1 << 30}
	var stats runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&stats)
	base := stats.HeapAlloc
	var peak uint64
	var total, size int
	_, err := z.SymbolicateEach(d, func(th Thread) error {
		total += len(th.Frames)
		size += len(th.Frames) * int(unsafe.Sizeof(symstore.Frame{}))
		if th.ID%100 == 0 {
			runtime.GC()
			runtime.ReadMemStats(&stats)
			peak = max(peak, stats.HeapAlloc)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if total < threads*frames {
		t.Fatalf("%d frames in all, want at least %d: the threads were not walked", total, threads*frames)
	}
	const limit = 32 << 20
	t.Logf("%d frames, %d bytes of frames; live heap grew by at most %d bytes", total, size, peak-base)
	if peak > base && peak-base > limit {
		t.Errorf("live heap grew by %d bytes while threads went by, above %d: the threads' frames (%d bytes in all) are kept",
			peak-base, limit, size)
	}
}

// TestMaxTotalFramesReported checks the bound on a crash report's threads:
// the reporter's frames and our walk beside them both count, and a thread
// past the bound says what it lost.
func TestMaxTotalFramesReported(t *testing.T) {
	d := sharedStackDump(t, 4, 10, false).Dump()
	d.Format = dump.FormatIPS
	for i := range d.Threads {
		for j := 0; j < 5; j++ {
			d.Threads[i].Frames = append(d.Threads[i].Frames, dump.Frame{Address: hostile.SharedStackImage + 0x1004 + 4*uint64(j), ImageIndex: 0})
		}
	}
	// Thread 1: 5 reported, 12 walked; thread 2: 5 reported, 3 of its
	// walk; thread 3: 0 reported and no walk; thread 4 the same.
	rep, err := (&Symbolizer{MaxTotalFrames: 25}).Symbolicate(d)
	if err != nil {
		t.Fatal(err)
	}
	type outcome struct {
		Frames, Walked int
		Stop, WalkStop StopReason
		Detail         string
	}
	var got []outcome
	for _, th := range rep.Threads {
		o := outcome{Frames: len(th.Frames), Walked: -1, Stop: th.StopReason}
		if strings.Contains(th.StopDetail, "walk of this thread is left out") {
			o.Detail = "walk left out"
		}
		if th.Walk != nil {
			o.Walked, o.WalkStop = len(th.Walk.Frames), th.Walk.StopReason
		}
		got = append(got, o)
	}
	want := []outcome{
		{Frames: 5, Walked: 12, WalkStop: StopReason(walker.StopFramePointerZero)},
		{Frames: 5, Walked: 3, WalkStop: StopMaxTotalFrames},
		{Frames: 0, Walked: -1, Stop: StopMaxTotalFrames, Detail: "walk left out"},
		{Frames: 0, Walked: -1, Stop: StopMaxTotalFrames, Detail: "walk left out"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("threads (-want +got):\n%s", diff)
	}
	if w := strings.Join(rep.Warnings, "\n"); !strings.Contains(w, "3 threads were cut") {
		t.Errorf("warnings %q do not count 3 threads cut", rep.Warnings)
	}
}
