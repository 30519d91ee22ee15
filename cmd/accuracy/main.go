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
//
// With -seeds or -fresh it sweeps programs generated afresh (emu/progen)
// instead of the fixtures: one per seed, built with clang-16 and
// ld64.lld-16 for arm64 and x86_64 at -O0, -O1 and -O2 without frame
// pointers, walked with their unwind tables (fresh), with them withheld
// (fresh-notables) and built without them (fresh-nounwind):
//
//	go run -tags unicorn ./cmd/accuracy -fresh 20 [-seeds 1,2,3] [-stale replay]
//
// -group takes a comma-separated list there. The groups fresh-dsym and
// fresh-dsym-nocallsites build the programs with -g and a dSYM
// (dsymutil-16) and walk them with the dSYM alone, with its DWARF call
// sites and without them:
//
//	go run -tags unicorn ./cmd/accuracy -fresh 10 -group fresh-dsym,fresh-dsym-nocallsites
//
// -archs armv7,i386 builds the programs' portable text (progen) for the
// 32-bit targets: armv7 linked by ld64.lld-16, i386 run as an object file.
package main

import (
	"flag"
	"fmt"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/stackimage/stackimage/emu"
	"github.com/stackimage/stackimage/fixtures"
)

func main() {
	fixturesDir := flag.String("fixtures", "fixtures", "the fixtures directory (with MANIFEST.json and bin/)")
	listMisses := flag.Bool("misses", false, "list every non-exact boundary after the table")
	only := flag.String("group", "", "sweep only the fixtures of this group (and the groups that sweep them again with their unwind tables withheld); with -seeds or -fresh, the generated programs' groups, comma-separated")
	fixture := flag.String("fixture", "", "sweep only this fixture (its name, as chain-nofp-x86_64-O1)")
	staleFlag := flag.String("stale", "none", "what the stack holds before each run: none (zeroes, the table), replay (what a first run of the program left) or fill (the program's return addresses in every word)")
	seeds := flag.String("seeds", "", "sweep programs generated from these seeds (comma-separated) instead of the fixtures")
	fresh := flag.Int("fresh", 0, "sweep this many programs generated from seeds drawn now (printed), besides -seeds")
	archs := flag.String("archs", "arm64,x86_64", "with -seeds or -fresh, the architectures to build for (armv7 and i386 build the programs' portable text)")
	flag.Parse()
	stale, err := emu.ParseStaleStack(*staleFlag)
	if err == nil && (*seeds != "" || *fresh > 0) {
		err = runFresh(os.Stdout, *seeds, *fresh, *only, strings.Split(*archs, ","), stale, *listMisses)
	} else if err == nil {
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
	printReport(w, rep, time.Since(begin), listMisses)
	return nil
}

// runFresh sweeps generated programs: the seeds listed, and n drawn now.
func runFresh(w io.Writer, list string, n int, only string, archs []string, stale emu.StaleStack, listMisses bool) error {
	var seeds []int64
	for _, f := range strings.Split(list, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return fmt.Errorf("-seeds: %w", err)
		}
		seeds = append(seeds, v)
	}
	rng := rand.New(rand.NewSource(time.Now().UnixNano()))
	for range n {
		seeds = append(seeds, rng.Int63n(1<<31))
	}
	cc, err := exec.LookPath("clang-16")
	if err != nil {
		return fmt.Errorf("%w (make fixture-deps installs it)", err)
	}
	ld, err := exec.LookPath("ld64.lld-16")
	if err != nil {
		return fmt.Errorf("%w (make fixture-deps installs it)", err)
	}
	dir, err := os.MkdirTemp("", "stackimage-fresh-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	groups := []string{emu.GroupFresh, emu.GroupFreshNoTables, emu.GroupFreshBuiltNoTables}
	if only != "" {
		groups = strings.Split(only, ",")
	}
	var dsymutil string
	for _, g := range groups {
		if g == emu.GroupFreshDSYM || g == emu.GroupFreshDSYMNoCallSites {
			if dsymutil, err = exec.LookPath("dsymutil-16"); err != nil {
				return fmt.Errorf("%w (make fixture-deps installs it)", err)
			}
		}
	}
	fmt.Fprintf(w, "seeds %s\n\n", strings.Trim(fmt.Sprint(seeds), "[]"))
	begin := time.Now()
	rep, err := emu.SweepFresh(emu.FreshOptions{Dir: dir, CC: cc, LD: ld, Seeds: seeds,
		Archs: archs, Opts: []string{"O0", "O1", "O2"}, Groups: groups, Stale: stale, DSYMUtil: dsymutil})
	if err != nil {
		return err
	}
	printReport(w, rep, time.Since(begin), listMisses)
	return nil
}

func printReport(w io.Writer, rep *emu.SweepReport, elapsed time.Duration, listMisses bool) {
	fmt.Fprint(w, rep.Table())
	total := 0
	for _, c := range rep.Cells {
		total += c.Checked
	}
	fmt.Fprintf(w, "\n%d boundaries in %.1fs\n", total, elapsed.Seconds())
	if !listMisses {
		return
	}
	fmt.Fprintln(w)
	for _, m := range rep.Misses {
		fmt.Fprintf(w, "%s (%s) step %d %s+%d [%s]", m.Fixture, m.Group, m.Step, m.Function, m.Offset, m.Phase)
		if m.Why != "" {
			fmt.Fprintf(w, " (%s)", m.Why)
		}
		fmt.Fprintf(w, "\n  truth: %s\n  walk:  %s (%s)\n", strings.Join(m.Truth, " "), strings.Join(m.Walk, " "), m.Stop)
	}
}
