// Command libclient is a small service-like program built on the library
// alone (no code of package main): it opens an input of any format,
// symbolicates it and writes it as text, JSON or in its own layout, as
// stackimage symbolicate does. A test builds it and compares its output
// with the command's.
package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/stackimage/stackimage/open"
	"github.com/stackimage/stackimage/report"
	"github.com/stackimage/stackimage/symbolize"
	"github.com/stackimage/stackimage/symstore"
)

func main() {
	symbols := flag.String("symbols", "", "a directory of binaries and dSYMs")
	format := flag.String("format", "text", "text, json or same")
	flag.Parse()
	if flag.NArg() != 1 {
		fmt.Fprintln(os.Stderr, "usage: libclient [-symbols DIR] [-format text|json|same] INPUT")
		os.Exit(2)
	}
	// A service bounds each request's work.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	in, err := open.File(ctx, flag.Arg(0))
	if in == nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer in.Close()
	syms := symstore.NewSymbols()
	defer syms.Close()
	if *symbols != "" {
		if err := syms.AddDir(ctx, *symbols); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	z := &symbolize.Symbolizer{Symbols: syms}
	out := bufio.NewWriter(os.Stdout)
	defer out.Flush()
	var werr error
	switch *format {
	case "json":
		werr = report.Write(ctx, z, in, report.NewJSON(out))
	case "same":
		werr = report.WriteSame(ctx, z, in, out)
	default:
		werr = report.Write(ctx, z, in, report.NewText(out))
	}
	if werr != nil {
		out.Flush()
		fmt.Fprintln(os.Stderr, werr)
		os.Exit(1)
	}
}
