// Package report symbolicates dumps and writes the results: as text (a
// crash-report-like summary), as JSON (the schema docs/json.md documents,
// with its schema_version), as Apple's .crash text (NewCrash, for any
// input whose threads are stacks), or in the input's own layout ("same
// format": a .crash or .ips report, a sample or spindump report, with the
// frames filled in; a .plcrash as .crash text).
//
// Package open turns an input into dumps; a symbolize.Symbolizer names
// their frames from symbol files. Together:
//
//	in, err := open.File(ctx, "crash.ips")
//	if in == nil {
//		return err
//	}
//	defer in.Close()
//	syms := symstore.NewSymbols()
//	defer syms.Close()
//	syms.AddDir(ctx, "dSYMs")
//	z := &symbolize.Symbolizer{Symbols: syms}
//	err = report.Write(ctx, z, in, report.NewText(os.Stdout))
//
// Symbolication takes a context: cancelling it, or its deadline, stops the
// work after the thread being symbolicated, and what was done is returned
// (or written, well-formed) together with the context's error.
package report
