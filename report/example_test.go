package report_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"log"
	"strings"

	"github.com/stackimage/stackimage/open"
	"github.com/stackimage/stackimage/report"
	"github.com/stackimage/stackimage/symbolize"
	"github.com/stackimage/stackimage/symstore"
)

// Open any input (here a capture of a thread; a crash report, a sample, a
// minidump or a core is opened the same way), symbolicate it against a
// directory of binaries and dSYMs, and print the text summary.
func Example() {
	in, err := open.File(context.Background(), "../fixtures/snapshots/chain-arm64-O1-deepest.json")
	if in == nil {
		log.Fatal(err) // nothing could be read
	}
	defer in.Close()
	if err != nil {
		log.Printf("read only in part: %v", err)
	}

	syms := symstore.NewSymbols()
	defer syms.Close()
	if err := syms.AddDir(context.Background(), "../fixtures/bin"); err != nil {
		log.Fatal(err)
	}
	z := &symbolize.Symbolizer{Symbols: syms}

	var out strings.Builder
	if err := report.Write(context.Background(), z, in, report.NewText(&out)); err != nil {
		log.Fatal(err)
	}
	// The first lines: the format, then the crashed thread innermost first.
	sc := bufio.NewScanner(strings.NewReader(out.String()))
	for i := 0; i < 6 && sc.Scan(); i++ {
		fmt.Println(sc.Text())
	}
	// Output:
	// Format: stackimage snapshot
	//
	// Thread 1 Crashed (emu):
	// 0   chain-arm64-O1                 0x000000010000c5dc deepest + 12 (chain.c:65)
	// 1   chain-arm64-O1                 0x000000010000c5bc step_to_deepest (chain.c:72) [inlined]
	// 1   chain-arm64-O1                 0x000000010000c5bc inline_host + 28 (chain.c:76)  [found by compact unwind, trust cfi]
}

// Symbolicate a dump into a report to use in code; WriteJSON writes it
// as docs/json.md describes.
func ExampleSymbolicate() {
	in, err := open.File(context.Background(), "../crashreport/testdata/arm64.ips")
	if in == nil {
		log.Fatal(err)
	}
	defer in.Close()
	z := &symbolize.Symbolizer{Symbols: symstore.NewSymbols()}
	rep, err := report.Symbolicate(context.Background(), z, in.Dump())
	if err != nil {
		log.Fatal(err)
	}
	for _, th := range rep.Threads {
		if th.Crashed {
			f := th.Frames[0]
			fmt.Printf("crashed in %s at %#x in %s\n", f.Symbol, f.Address, f.Image)
		}
	}
	// Output:
	// crashed in crash at 0x100004008 in Sample
}

// Write one thread, or any set of them, in the JSON docs/json.md
// documents: FilterThreads keeps the threads it is asked for and the
// rest of the document (header, modules, warnings) whole.
func ExampleFilterThreads() {
	in, err := open.File(context.Background(), "../crashreport/testdata/arm64.ips")
	if in == nil {
		log.Fatal(err)
	}
	defer in.Close()
	z := &symbolize.Symbolizer{Symbols: symstore.NewSymbols()}
	var out strings.Builder
	crashed := func(th symbolize.Thread) bool { return th.Crashed }
	if err := report.Write(context.Background(), z, in, report.FilterThreads(report.NewJSON(&out), crashed)); err != nil {
		log.Fatal(err)
	}
	var doc struct {
		SchemaVersion int `json:"schema_version"`
		Threads       []struct {
			ID      int  `json:"id"`
			Crashed bool `json:"crashed"`
		} `json:"threads"`
	}
	if err := json.Unmarshal([]byte(out.String()), &doc); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("schema %d, %d thread: crashed %v\n", doc.SchemaVersion, len(doc.Threads), doc.Threads[0].Crashed)
	// Output:
	// schema 1, 1 thread: crashed true
}
