package report

import (
	"context"
	"errors"
	"fmt"

	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/lookup"
	"github.com/stackimage/stackimage/open"
	"github.com/stackimage/stackimage/symbolize"
)

// A Writer writes symbolicated dumps thread by thread: Begin before a
// dump's first thread, Thread for each thread, End with the dump's report
// (its missing images and warnings; its Threads may be nil), and Close
// after the last dump. A Writer takes several dumps in a row (the
// processes of a spindump report) and writes them as one document.
type Writer interface {
	Begin(d *dump.Dump) error
	Thread(th symbolize.Thread) error
	End(rep *symbolize.Report) error
	Close() error
}

// ErrNilDump is the error for a nil dump, input or symbolizer.
var ErrNilDump = errors.New("report: nil dump")

// Symbolicate walks and symbolicates d as z.Symbolicate does, stopping
// when ctx is done: the report then holds the threads done so far and the
// error is ctx's.
func Symbolicate(ctx context.Context, z *symbolize.Symbolizer, d *dump.Dump) (*symbolize.Report, error) {
	if z == nil || d == nil {
		return nil, ErrNilDump
	}
	var threads []symbolize.Thread
	rep, err := each(ctx, z, d, func(th symbolize.Thread) error {
		threads = append(threads, th)
		return nil
	})
	if rep != nil {
		rep.Threads = threads
	}
	return rep, err
}

// SymbolicateBytes opens an input held in memory (open.Bytes) and
// symbolicates every dump it holds: one report per process, the first
// the process the input is about. An input read only in part gives the
// reports of what was read, with the error that cut it.
func SymbolicateBytes(ctx context.Context, z *symbolize.Symbolizer, data []byte) ([]*symbolize.Report, error) {
	if z == nil {
		return nil, ErrNilDump
	}
	in, openErr := open.Bytes(data)
	if in == nil {
		return nil, openErr
	}
	var reps []*symbolize.Report
	for _, d := range in.Dumps {
		rep, err := Symbolicate(ctx, z, d)
		if rep != nil {
			reps = append(reps, rep)
		}
		if err != nil {
			return reps, err
		}
	}
	return reps, openErr
}

// each symbolicates d, handing each thread to fn, and stops when ctx is
// done, after the thread being symbolicated.
func each(ctx context.Context, z *symbolize.Symbolizer, d *dump.Dump, fn func(symbolize.Thread) error) (*symbolize.Report, error) {
	if err := load(ctx, z, d); err != nil {
		rep := &symbolize.Report{Format: d.Format, Dump: d, Arch: d.Arch}
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("stopped before the first thread, loading symbol files: %v", err))
		return rep, err
	}
	done := 0
	rep, err := z.SymbolicateEach(d, func(th symbolize.Thread) error {
		if err := fn(th); err != nil {
			return err
		}
		done++
		return ctx.Err()
	})
	if rep == nil {
		rep = &symbolize.Report{Format: d.Format, Dump: d, Arch: d.Arch}
	}
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("stopped after %d of %d threads: %v", done, threadCount(d), err))
	}
	return rep, err
}

// load opens the symbol files of the dump's images, one image at a time,
// stopping when ctx is done: the files are what can take long (a big
// dSYM, a download from a source), and Symbolicate finds them loaded.
// An image the Symbolizer's Entries holds open already needs no loading.
func load(ctx context.Context, z *symbolize.Symbolizer, d *dump.Dump) error {
	syms := z.Symbols
	if err := ctx.Err(); err != nil || syms == nil {
		return err
	}
	for _, im := range d.Images {
		if im.UUID.IsZero() {
			continue
		}
		if z.Entries != nil {
			if e := z.Entries(im.UUID); e != nil {
				e.Release()
				continue
			}
		}
		// With the image's name, as symbolize asks: a store whose paths
		// hold it (Breakpad's) is asked here, within ctx.
		name := im.Path
		if name == "" {
			name = im.Name
		}
		e, err := syms.LookupImage(ctx, im.UUID, name)
		if errors.Is(err, lookup.ErrNotFound) {
			continue // reported as a missing image when the frames are named
		}
		if err != nil {
			return err
		}
		e.Release()
	}
	return nil
}

func threadCount(d *dump.Dump) int {
	n := len(d.Threads)
	if len(d.LastExceptionBacktrace) > 0 {
		n++
	}
	if d.RecrashThread != nil {
		n++
	}
	return n
}

// Stream symbolicates d and writes it through w thread by thread, as each
// is done, so that the memory a report takes is one thread's however many
// it has; it ends the dump (w.End) but does not close w. It returns the
// report without its threads. When ctx is done the dump is ended with the
// threads written so far, and the error is ctx's.
func Stream(ctx context.Context, z *symbolize.Symbolizer, d *dump.Dump, w Writer) (*symbolize.Report, error) {
	if z == nil || d == nil || w == nil {
		return nil, ErrNilDump
	}
	began := false
	rep, err := each(ctx, z, d, func(th symbolize.Thread) error {
		if !began {
			began = true
			if err := w.Begin(d); err != nil {
				return err
			}
		}
		return w.Thread(th)
	})
	if err != nil && ctx.Err() == nil {
		// A writer's error, or symbolication failing: nothing more can be
		// written.
		return rep, err
	}
	if !began {
		if berr := w.Begin(d); berr != nil {
			return rep, berr
		}
	}
	if z.Symbols != nil {
		rep.Warnings = appendNew(rep.Warnings, z.Symbols.Warnings()...)
	}
	if eerr := w.End(rep); eerr != nil && err == nil {
		err = eerr
	}
	return rep, err
}

// Write symbolicates every dump of in and writes them through w, closing
// it. The error is the first of symbolication, writing or ctx; an input
// open read only in part is not an error here (open returned it).
func Write(ctx context.Context, z *symbolize.Symbolizer, in *open.Input, w Writer) error {
	if in == nil || len(in.Dumps) == 0 {
		return ErrNilDump
	}
	for _, d := range in.Dumps {
		if _, err := Stream(ctx, z, d, w); err != nil {
			w.Close()
			return err
		}
	}
	return w.Close()
}

// WriteReport writes a report already symbolicated, with its threads,
// through w as one dump; it does not close w.
func WriteReport(w Writer, rep *symbolize.Report) error {
	if rep == nil {
		return ErrNilDump
	}
	d := rep.Dump
	if d == nil {
		d = &dump.Dump{Format: rep.Format, Arch: rep.Arch}
	}
	if err := w.Begin(d); err != nil {
		return err
	}
	for _, th := range rep.Threads {
		if err := w.Thread(th); err != nil {
			return err
		}
	}
	return w.End(rep)
}

// appendNew appends to list the items it does not hold yet.
func appendNew(list []string, items ...string) []string {
	have := make(map[string]bool, len(list))
	for _, s := range list {
		have[s] = true
	}
	for _, s := range items {
		if !have[s] {
			have[s] = true
			list = append(list, s)
		}
	}
	return list
}

// FilterThreads returns a Writer that writes through w only the threads
// keep accepts: one thread (the crashed one, say) or any set of them, in
// the same document, with the dump's header, modules, missing images and
// warnings as w writes them for the whole dump. Closing it closes w.
func FilterThreads(w Writer, keep func(symbolize.Thread) bool) Writer {
	return &threadFilter{Writer: w, keep: keep}
}

type threadFilter struct {
	Writer
	keep func(symbolize.Thread) bool
}

func (f *threadFilter) Thread(th symbolize.Thread) error {
	if !f.keep(th) {
		return nil
	}
	return f.Writer.Thread(th)
}
