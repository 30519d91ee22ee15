// Package symbolize is the symbolizer: it walks the threads of a dump and
// names their frames from symbol files.
//
// A Symbolizer takes its symbol files from a symstore.Symbols. Symbolicate
// turns a dump.Dump into a Report: each thread walked from its registers
// and stack (walker, with the images' unwind tables and code from the
// symbol files), or taken from the backtrace a crash reporter recorded,
// compared with our own walk where the report held registers and stack.
// Every frame is a symstore.Frame, named with its inlined functions;
// images without symbol files are listed as missing.
//
// A Process is one process's images with their symbols attached, for
// callers that walk or look up addresses themselves (NewProcess, Walk,
// Frames).
//
//	syms := symstore.NewSymbols()
//	defer syms.Close()
//	syms.AddDir(ctx, "dSYMs")
//	z := &symbolize.Symbolizer{Symbols: syms}
//	rep, err := z.Symbolicate(d)
package symbolize
