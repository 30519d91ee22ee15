package report

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/internal/hostile"
	"github.com/stackimage/stackimage/lookup"
	"github.com/stackimage/stackimage/open"
	"github.com/stackimage/stackimage/symbolize"
	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/uuid"
)

// cancelAfter passes threads to a Writer and cancels after n of them.
type cancelAfter struct {
	Writer
	n      int
	cancel context.CancelFunc
}

func (c *cancelAfter) Thread(th symbolize.Thread) error {
	if err := c.Writer.Thread(th); err != nil {
		return err
	}
	if c.n--; c.n == 0 {
		c.cancel()
	}
	return nil
}

// manyThreads is a dump of 1,000 threads walking one deep stack.
func manyThreads(t *testing.T) *dump.Dump {
	in, err := open.Bytes(hostile.SharedStackSnapshot(1000, 64, true))
	if err != nil {
		t.Fatal(err)
	}
	return in.Dump()
}

// TestCancelledContext: a context cancelled before the work stops it at
// once, and one cancelled midway stops it after the thread being done;
// either way what was done comes back (or is written, well-formed) with
// the context's error.
func TestCancelledContext(t *testing.T) {
	d := manyThreads(t)
	z := &symbolize.Symbolizer{Symbols: symstore.NewSymbols()}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	rep, err := Symbolicate(ctx, z, d)
	if !errors.Is(err, context.Canceled) || rep == nil || len(rep.Threads) != 0 {
		t.Errorf("Symbolicate(cancelled) = %v threads, %v; want none and context.Canceled", rep, err)
	}

	ctx, cancel = context.WithCancel(context.Background())
	defer cancel()
	var out bytes.Buffer
	w := &cancelAfter{Writer: NewJSON(&out), n: 3, cancel: cancel}
	_, err = Stream(ctx, z, d, w)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Stream = %v, want context.Canceled", err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	var doc JSON
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("the JSON written before the cancel is not a document: %v\n%s", err, out.String())
	}
	if len(doc.Threads) != 3 || len(doc.Warnings) == 0 || !strings.Contains(doc.Warnings[len(doc.Warnings)-1], "stopped after 3 of 1000 threads") {
		t.Errorf("cancelled after 3 threads: wrote %d threads, warnings %q; want 3 and a warning saying where it stopped", len(doc.Threads), doc.Warnings)
	}

	// A deadline already past is the same.
	ctx, cancel = context.WithTimeout(context.Background(), 0)
	defer cancel()
	if err := Write(ctx, z, &open.Input{Dumps: []*dump.Dump{d}}, NewText(&bytes.Buffer{})); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Write(past deadline) = %v, want context.DeadlineExceeded", err)
	}
}

// TestNilInput: every entry point refuses nil input with an error.
func TestNilInput(t *testing.T) {
	ctx := context.Background()
	z := &symbolize.Symbolizer{Symbols: symstore.NewSymbols()}
	if _, err := Symbolicate(ctx, nil, &dump.Dump{}); err == nil {
		t.Error("Symbolicate(nil symbolizer) did not fail")
	}
	if _, err := Symbolicate(ctx, z, nil); err == nil {
		t.Error("Symbolicate(nil dump) did not fail")
	}
	if _, err := Stream(ctx, z, nil, NewText(&bytes.Buffer{})); err == nil {
		t.Error("Stream(nil dump) did not fail")
	}
	if err := Write(ctx, z, nil, NewText(&bytes.Buffer{})); err == nil {
		t.Error("Write(nil input) did not fail")
	}
	if err := WriteSame(ctx, z, nil, &bytes.Buffer{}); err == nil {
		t.Error("WriteSame(nil input) did not fail")
	}
	if err := WriteText(&bytes.Buffer{}, nil); err == nil {
		t.Error("WriteText(nil report) did not fail")
	}
}

// TestSymbolicateBytes goes from bytes to reports in one call: one report
// per process of a spindump, and an unrecognized input's error.
func TestSymbolicateBytes(t *testing.T) {
	data, err := os.ReadFile("../hangreport/testdata/spindump.txt")
	if err != nil {
		t.Fatal(err)
	}
	z := &symbolize.Symbolizer{Symbols: symstore.NewSymbols()}
	reps, err := SymbolicateBytes(context.Background(), z, data)
	if err != nil || len(reps) != 2 || reps[0].Dump.Process.Name != "Demo" || reps[1].Dump.Process.Name != "other" {
		t.Fatalf("SymbolicateBytes(spindump) = %d reports, %v; want Demo's, then other's", len(reps), err)
	}
	if len(reps[0].Threads) == 0 || len(reps[0].Threads[0].Frames) == 0 {
		t.Errorf("Demo's report has no frames")
	}
	if _, err := SymbolicateBytes(context.Background(), z, []byte("hello")); !errors.Is(err, open.ErrUnrecognizedFormat) {
		t.Errorf("SymbolicateBytes(hello) = %v, want ErrUnrecognizedFormat", err)
	}
}

// TestCancelWhileLoadingSymbols: a cancel while symbol files load (a big
// dSYM, a download) stops before the next image's, and the source is
// asked under the caller's context; what was cut short is asked again
// next time.
func TestCancelWhileLoadingSymbols(t *testing.T) {
	d := &dump.Dump{Format: dump.FormatCrash, Images: []dump.Image{
		{Name: "a", UUID: uuid.UUID{1}}, {Name: "b", UUID: uuid.UUID{2}}, {Name: "c", UUID: uuid.UUID{3}},
	}, Threads: []dump.Thread{{Frames: []dump.Frame{{Address: 0x1000, ImageIndex: -1}}}}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var asked []uuid.UUID
	slow := symstore.SourceFunc(func(sctx context.Context, u uuid.UUID, _ *archregs.Arch) ([]symstore.SymbolFile, error) {
		asked = append(asked, u)
		cancel() // the request goes away during the download
		select {
		case <-sctx.Done():
			return nil, sctx.Err()
		default:
			return nil, symstore.ErrNoSymbols
		}
	})
	syms := symstore.NewSymbols()
	defer syms.Close()
	syms.AddSource(slow)
	z := &symbolize.Symbolizer{Symbols: syms}
	rep, err := Symbolicate(ctx, z, d)
	if !errors.Is(err, context.Canceled) || rep == nil || len(rep.Threads) != 0 {
		t.Fatalf("Symbolicate = %v, %v; want no threads and context.Canceled", rep, err)
	}
	if len(asked) != 1 {
		t.Errorf("the source was asked for %d images after the cancel, want 1 and a stop", len(asked))
	}
	asked = nil
	quick := symstore.SourceFunc(func(context.Context, uuid.UUID, *archregs.Arch) ([]symstore.SymbolFile, error) {
		return nil, symstore.ErrNoSymbols
	})
	syms2 := symstore.NewSymbols()
	defer syms2.Close()
	var n atomic.Int32
	syms2.AddSource(symstore.SourceFunc(func(c context.Context, u uuid.UUID, a *archregs.Arch) ([]symstore.SymbolFile, error) {
		n.Add(1)
		return quick(c, u, a)
	}))
	if _, err := Symbolicate(context.Background(), &symbolize.Symbolizer{Symbols: syms2}, d); err != nil {
		t.Fatal(err)
	}
	if n.Load() != 3 {
		t.Errorf("a source was asked %d times for 3 images, want 3", n.Load())
	}
	// The cut-short lookup is not remembered: a new request asks again.
	if e, err := syms.LookupContext(context.Background(), uuid.UUID{1}); e != nil || !errors.Is(err, lookup.ErrNotFound) || len(asked) != 1 {
		t.Errorf("LookupContext after a cancel = %v, %v, asked %d; want the source asked again", e, err, len(asked))
	}
}
