package main

import (
	"fmt"
	"io"

	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/hangreport"
	"github.com/stackimage/stackimage/symbolize"
)

func readHangReport(in *input, f *inputFormat) (*dump.Dump, error) {
	data, err := in.bytes(f)
	if err != nil {
		return nil, err
	}
	r, err := hangreport.Parse(data)
	if r == nil || len(r.Processes) == 0 {
		return nil, err
	}
	return r.Dump(), err
}

// writeSame symbolicates a sample or spindump report and prints it in its
// own layout, names filled in where it had "???". An input that could be
// read only in part is printed as far as it was read, and parseErr says
// why.
func writeSame(z *symbolize.Symbolizer, in *input, f *inputFormat, w io.Writer, style hangreport.Style) (parseErr, err error) {
	data, err := in.bytes(f)
	if err != nil {
		return nil, err
	}
	r, parseErr := hangreport.Parse(data)
	if r == nil || len(r.Processes) == 0 {
		return nil, parseErr
	}
	names, nameErr, closeNames := hangNamer(z, r)
	defer closeNames()
	if err := r.Write(w, names, style); err != nil {
		return parseErr, err
	}
	if *nameErr != nil {
		return parseErr, *nameErr
	}
	return parseErr, nil
}

// hangNamer names a report's addresses from the symbol files, with one
// symbolize.Process per process of the report, built when first asked.
// Every address is looked up as the report gives it, as atos (and sample
// itself) does: a call graph's addresses are return addresses, and their
// line is the one the call returns to. The name is the machine frame's:
// the function holding the address, with the source position of the code
// there. The error of building a process is left in *err; closeAll
// closes the processes built.
func hangNamer(z *symbolize.Symbolizer, r *hangreport.Report) (names hangreport.Namer, err *error, closeAll func()) {
	var firstErr error
	procs := make([]*symbolize.Process, len(r.Processes))
	failed := make([]bool, len(r.Processes))
	names = func(pi int, addr uint64) (hangreport.Name, bool) {
		if pi < 0 || pi >= len(procs) || failed[pi] {
			return hangreport.Name{}, false
		}
		p := procs[pi]
		if p == nil {
			d := r.ProcessDump(pi)
			var err error
			if p, err = z.NewDumpProcess(d); err != nil {
				failed[pi] = true
				if firstErr == nil {
					firstErr = fmt.Errorf("process %q: %w", d.Process.Name, err)
				}
				return hangreport.Name{}, false
			}
			procs[pi] = p
		}
		fs := p.Frames(0, addr, addr, symbolize.FoundByReport)
		f := fs[len(fs)-1]
		if f.Symbol == "" {
			return hangreport.Name{}, false
		}
		return hangreport.Name{Symbol: f.Symbol, Offset: f.SymbolOffset, HasOffset: f.HasOffset, File: f.File, Line: f.Line}, true
	}
	closeAll = func() {
		for _, p := range procs {
			if p != nil {
				p.Close()
			}
		}
	}
	return names, &firstErr, closeAll
}
