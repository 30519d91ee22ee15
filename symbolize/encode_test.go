package symbolize

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"

	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/symstore"
)

// TestEncodedFramesMatchFrames: a backtrace named by several goroutines
// and encoded where it was named (EncodeFrames) is encoded byte for byte
// as its frames are, one after another, whatever the length around the
// goroutines' runs, with and without ReuseFrames; a thread the report's
// bound cuts has no encoding (its writer encodes what was kept).
func TestEncodedFramesMatchFrames(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	}
	syms := fixtureSymbols(t)
	defer syms.Close()
	const name = "chain-arm64-O1"
	u := fixtureUUID(t, name)
	e, err := syms.Lookup(u)
	if err != nil || e == nil {
		t.Fatalf("Lookup(%s) = %v, %v", u, e, err)
	}
	lo, hi, ok := e.Debug()[0].Bounds()
	text, _ := e.Image().TextSegment()
	e.Release()
	if !ok {
		t.Fatal("no line rows")
	}
	// encode writes what a test can compare: each frame's thread, index,
	// symbol and line, runs separated by '|'.
	encode := func(dst []byte, thread int, frames []symstore.Frame, opens bool) []byte {
		if !opens {
			dst = append(dst, '|')
		}
		for _, f := range frames {
			dst = fmt.Appendf(dst, "%d:%d:%s:%d;", thread, f.Index, f.Symbol, f.Line)
		}
		return dst
	}
	lengths := []int{0, 1, 2*framesPerNamer - 1, 2 * framesPerNamer, 2*framesPerNamer + 1, 7*namerChunk + 3, 1001}
	d := &dump.Dump{Format: dump.FormatSymbolicator, Images: []dump.Image{{Name: name, UUID: u, LoadAddress: text.Addr, Size: text.Size}}}
	for i, n := range lengths {
		frames := make([]dump.Frame, n)
		for j := range frames {
			// Addresses all over the code: inlined frames among them.
			frames[j] = dump.Frame{Address: lo + uint64(j*37)%(hi-lo), ImageIndex: 0}
		}
		d.Threads = append(d.Threads, dump.Thread{Index: i, Frames: frames})
	}
	for _, reuse := range []bool{false, true} {
		z := &Symbolizer{Symbols: syms, ReuseFrames: reuse, EncodeFrames: encode}
		encoded, inlined := 0, false
		_, err := z.SymbolicateEach(d, func(th Thread) error {
			n := len(d.Threads[encoded].Frames)
			want := encode(nil, encoded, th.Frames, true)
			parallel := n >= 2*framesPerNamer
			switch {
			case parallel && th.Encoded == nil:
				t.Errorf("reuse %v, %d frames: named in parallel but not encoded", reuse, n)
			case !parallel && th.Encoded != nil:
				t.Errorf("reuse %v, %d frames: named by one goroutine, yet encoded (%.100s)", reuse, n, th.Encoded)
			case parallel && !bytes.Equal(bytes.ReplaceAll(bytes.Join(th.Encoded, nil), []byte("|"), nil), want):
				t.Errorf("reuse %v, %d frames: encoded differs from the frames:\n got %.300s\nwant %.300s", reuse, n, bytes.Join(th.Encoded, nil), want)
			}
			if joined := bytes.Join(th.Encoded, nil); parallel && bytes.Count(joined, []byte("|")) != (n+namerChunk-1)/namerChunk-1 {
				t.Errorf("reuse %v, %d frames: %d runs' separators; want one between each run", reuse, n, bytes.Count(joined, []byte("|")))
			}
			for k := 1; k < len(th.Frames); k++ {
				inlined = inlined || th.Frames[k].Index == th.Frames[k-1].Index
			}
			encoded++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if encoded != len(lengths) {
			t.Fatalf("reuse %v: %d threads handed over; want %d", reuse, encoded, len(lengths))
		}
		if !inlined {
			t.Error("no inlined frame among the backtraces: the runs' lengths were not put to the test")
		}
	}
	// One worker (a busy service's): named and left to the writer to
	// encode, the frames the same.
	one := &Symbolizer{Symbols: syms, EncodeFrames: encode, Workers: 1}
	all := &Symbolizer{Symbols: syms}
	long := &dump.Dump{Format: d.Format, Images: d.Images, Threads: d.Threads[len(d.Threads)-1:]}
	got, err := one.Symbolicate(long)
	if err != nil {
		t.Fatal(err)
	}
	want, err := all.Symbolicate(long)
	if err != nil {
		t.Fatal(err)
	}
	if th := got.Threads[0]; th.Encoded != nil || len(th.Frames) != len(want.Threads[0].Frames) {
		t.Errorf("Workers 1: %d bytes encoded, %d frames; want none encoded and the %d frames of GOMAXPROCS workers",
			len(th.Encoded), len(th.Frames), len(want.Threads[0].Frames))
	}
	// Cut by the report's bound: the encoding of frames cut off is not
	// handed over.
	z := &Symbolizer{Symbols: syms, EncodeFrames: encode, MaxTotalFrames: 600}
	last := Thread{}
	if _, err := z.SymbolicateEach(&dump.Dump{Format: d.Format, Images: d.Images, Threads: d.Threads[len(d.Threads)-1:]}, func(th Thread) error {
		last = th
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if last.StopReason != StopMaxTotalFrames || last.Encoded != nil {
		t.Errorf("a thread cut by the bound: stop %v, %d bytes encoded; want %v and none", last.StopReason, len(last.Encoded), StopMaxTotalFrames)
	}
}
