//go:build unicorn

// Command accuracy runs the emulator's accuracy sweep (emu.Sweep): every
// fixture program, single-stepped, with the stack walked, symbolicated and
// compared with the true call chain at every instruction boundary. It
// prints the accuracy table of docs/accuracy.md, one row per group
// (emu.SweepGroup: frame pointers, none, none in leaves, DWARF-only
// functions, Swift async frames), architecture and level; -misses lists
// every boundary that was not exact.
//
//	go run -tags unicorn ./cmd/accuracy [-fixtures DIR] [-group G] [-fixture NAME] [-stale none|replay|fill] [-misses]
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/stackimage/stackimage/emu"
	"github.com/stackimage/stackimage/fixtures"
)

func main() {
	fixturesDir := flag.String("fixtures", "fixtures", "the fixtures directory (with MANIFEST.json and bin/)")
	listMisses := flag.Bool("misses", false, "list every non-exact boundary after the table")
	only := flag.String("group", "", "sweep only the fixtures of this group (and the groups that sweep them again with their unwind tables withheld)")
	fixture := flag.String("fixture", "", "sweep only this fixture (its name, as chain-nofp-x86_64-O1)")
	staleFlag := flag.String("stale", "none", "what the stack holds before each run: none (zeroes, the table), replay (what a first run of the program left) or fill (the program's return addresses in every word)")
	flag.Parse()
	stale, err := emu.ParseStaleStack(*staleFlag)
	if err == nil {
		err = run(os.Stdout, *fixturesDir, *only, *fixture, stale, *listMisses)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "accuracy:", err)
		os.Exit(1)
	}
}

func run(w io.Writer, dir, only, fixture string, stale emu.StaleStack, listMisses bool) error {
	begin := time.Now()
	keep := func(out fixtures.Output) bool {
		return (only == "" || emu.SweepGroup(out) == only) && (fixture == "" || out.Name() == fixture)
	}
	rep, err := emu.SweepStale(dir, keep, stale)
	if err != nil {
		return err
	}
	elapsed := time.Since(begin)
	fmt.Fprint(w, rep.Table())
	total := 0
	for _, c := range rep.Cells {
		total += c.Checked
	}
	fmt.Fprintf(w, "\n%d boundaries in %.1fs\n", total, elapsed.Seconds())
	if !listMisses {
		return nil
	}
	fmt.Fprintln(w)
	for _, m := range rep.Misses {
		fmt.Fprintf(w, "%s (%s) step %d %s+%d [%s]", m.Fixture, m.Group, m.Step, m.Function, m.Offset, m.Phase)
		if m.Why != "" {
			fmt.Fprintf(w, " (%s)", m.Why)
		}
		fmt.Fprintf(w, "\n  truth: %s\n  walk:  %s (%s)\n", strings.Join(m.Truth, " "), strings.Join(m.Walk, " "), m.Stop)
	}
	return nil
}
