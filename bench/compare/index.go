package main

import (
	"fmt"
	"github.com/stackimage/stackimage/bench/internal/benchkit"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// indexComparison is the dwarf comparison answered from a symindex file:
// it writes the index of bin with "stackimage index", prints its size
// against bin's and how long a first answer takes from each (a whole
// process looking up one address, best of runs), then compares "stackimage
// atos -o INDEX" with llvm-symbolizer reading bin's DWARF.
func indexComparison(bin, arch string, n int, ours []string, llvm, tmp string, runs int) (comparison, error) {
	c, err := dwarfComparison(bin, arch, n, ours)
	if err != nil {
		return comparison{}, err
	}
	index, built, err := writeIndex(bin, ours, tmp)
	if err != nil {
		return comparison{}, err
	}
	binInfo, err := os.Stat(bin)
	if err != nil {
		return comparison{}, err
	}
	indexInfo, err := os.Stat(index)
	if err != nil {
		return comparison{}, err
	}

	first := fmt.Sprintf("%#x", c.addrs[0])
	var fromIndex, fromBin result
	for i := 0; i < runs; i++ {
		if err := measure(&fromIndex, append(slices.Clone(ours), "-i", "-o", index, first), nil); err != nil {
			return comparison{}, err
		}
		if err := measure(&fromBin, append(slices.Clone(ours), "-i", "-o", bin, first), nil); err != nil {
			return comparison{}, err
		}
	}
	fmt.Printf("index: %s\n", index)
	fmt.Printf("index size: %d bytes; symbol file %d bytes; ratio %.3f\n", indexInfo.Size(), binInfo.Size(), float64(indexInfo.Size())/float64(binInfo.Size()))
	fmt.Printf("index written in %s (stackimage index, whole process)\n", built.Round(time.Millisecond))
	fmt.Printf("first answer (stackimage atos -i, one address, whole process, best of %d):\n", runs)
	fmt.Printf("  from the index: wall %s, cpu %s, peak RSS %.1f MiB\n", fromIndex.wall.Round(100*time.Microsecond), fromIndex.cpu.Round(100*time.Microsecond), float64(fromIndex.rss)/(1<<20))
	fmt.Printf("  from the DWARF: wall %s, cpu %s, peak RSS %.1f MiB\n\n", fromBin.wall.Round(100*time.Microsecond), fromBin.cpu.Round(100*time.Microsecond), float64(fromBin.rss)/(1<<20))
	if string(fromIndex.out) != string(fromBin.out) {
		return comparison{}, fmt.Errorf("first answer differs: index %q, DWARF %q", fromIndex.out, fromBin.out)
	}
	return fromIndexFile(c, bin, index), nil
}

// writeIndex writes bin's symindex file with "stackimage index" into a
// store under tmp and returns its path and how long the whole process
// took.
func writeIndex(bin string, ours []string, tmp string) (string, time.Duration, error) {
	store := filepath.Join(tmp, "store")
	start := time.Now()
	if out, err := exec.Command(ours[0], "index", "--symbols", bin, "--out", store).CombinedOutput(); err != nil {
		return "", 0, fmt.Errorf("stackimage index: %v\n%s", err, out)
	}
	built := time.Since(start)
	files, _ := filepath.Glob(filepath.Join(store, "*", "*.symindex"))
	if len(files) != 1 {
		return "", 0, fmt.Errorf("stackimage index wrote %d files for %s, want 1 (give -bin a thin file)", len(files), bin)
	}
	return files[0], built, nil
}

// fromIndexFile turns a dwarf comparison into one where our atos answers
// from the index file instead of bin.
func fromIndexFile(c comparison, bin, index string) comparison {
	c.what += ", stackimage answering from the index"
	c.ours = slices.Clone(c.ours)
	for i, a := range c.ours {
		if a == bin && i > 0 && c.ours[i-1] == "-o" {
			c.ours[i] = index
		}
	}
	// The index holds one slice: -arch does not apply to it.
	if j := slices.Index(c.ours, "-arch"); j >= 0 {
		c.ours = slices.Delete(c.ours, j, j+2)
	}
	return c
}

// firstAnswer times a whole process answering c's first address: our
// atos and each peer, runs times each, alternating. It fails when a
// peer's frames differ from ours.
func firstAnswer(c comparison, peers []string, runs int) (ours result, theirs []result, err error) {
	addr := fmt.Sprintf("%#x", c.addrs[0])
	theirs = make([]result, len(peers))
	for i := 0; i < runs; i++ {
		if err := measure(&ours, append(slices.Clone(c.ours), addr), nil); err != nil {
			return ours, theirs, err
		}
		for p, peer := range peers {
			if err := measure(&theirs[p], append(append([]string{peer}, c.llvm...), addr), nil); err != nil {
				return ours, theirs, err
			}
		}
	}
	want, err := c.parseOurs(ours.out)
	if err != nil {
		return ours, theirs, err
	}
	for p, peer := range peers {
		got, err := c.parseLLVM(theirs[p].out)
		if err != nil {
			return ours, theirs, err
		}
		if !slices.Equal(got, want) {
			return ours, theirs, fmt.Errorf("first answer at %s: ours %q, %s %q", addr, want, peer, got)
		}
	}
	return ours, theirs, nil
}

// Targets of the big-dSYM comparison (docs/bench-bigdsym.md).
const (
	firstFromIndexTarget = 20 * time.Millisecond
	indexSizeTarget      = 0.25 // of the DWARF file
)

// bigDSYM runs the comparisons on a real-size dSYM (bin is its DWARF
// file): a first answer from the DWARF against every peer and the index's
// size and first answer (firstRuns runs each), then the batch of n
// addresses from the DWARF and from the index against every peer (runs
// each). It prints each target as met or
// missed (for the batches the target is the same answers; their speed is
// reported); it fails only when answers differ.
func bigDSYM(bin string, n int, ours, peers []string, tmp string, runs, firstRuns int) error {
	c, err := dwarfComparison(bin, "", n, ours)
	if err != nil {
		return err
	}
	binInfo, err := os.Stat(bin)
	if err != nil {
		return err
	}
	fmt.Printf("DWARF file: %s (%d bytes)\n\n", bin, binInfo.Size())
	var targets []string
	target := func(met bool, format string, args ...any) {
		verdict := "met"
		if !met {
			verdict = "MISSED"
		}
		targets = append(targets, fmt.Sprintf("%-6s "+format, append([]any{verdict}, args...)...))
	}
	row := func(name string, r result) {
		fmt.Printf("  %-26s %10s %10s %9.1f MiB\n", name, r.wall.Round(100*time.Microsecond), r.cpu.Round(100*time.Microsecond), float64(r.rss)/(1<<20))
	}

	ourFirst, peerFirst, err := firstAnswer(c, peers, firstRuns)
	if err != nil {
		return err
	}
	fmt.Printf("first answer from the DWARF (one address, whole process, best of %d):\n", firstRuns)
	row("stackimage atos", ourFirst)
	for p, peer := range peers {
		them := peerFirst[p]
		row(peer, them)
		target(ourFirst.wall <= them.wall && ourFirst.cpu <= them.cpu,
			"first answer from the DWARF at least as fast as %s: wall %.2fx, cpu %.2fx (theirs / ours); peak RSS %.1f against %.1f MiB",
			peer, benchkit.Ratio(them.wall, ourFirst.wall), benchkit.Ratio(them.cpu, ourFirst.cpu), float64(ourFirst.rss)/(1<<20), float64(them.rss)/(1<<20))
	}
	fmt.Println()

	index, built, err := writeIndex(bin, ours, tmp)
	if err != nil {
		return err
	}
	indexInfo, err := os.Stat(index)
	if err != nil {
		return err
	}
	size := float64(indexInfo.Size()) / float64(binInfo.Size())
	fmt.Printf("index %s: %d bytes, %.3f of the DWARF file; written in %s (stackimage index, whole process)\n\n",
		index, indexInfo.Size(), size, built.Round(time.Millisecond))
	target(size <= indexSizeTarget, "index size %.3f of the DWARF file (target <= %.2f)", size, indexSizeTarget)

	ci := fromIndexFile(c, bin, index)
	indexFirst, _, err := firstAnswer(ci, peers, firstRuns)
	if err != nil {
		return err
	}
	fmt.Printf("first answer from the index (best of %d):\n", firstRuns)
	row("stackimage atos", indexFirst)
	fmt.Println()
	target(indexFirst.wall <= firstFromIndexTarget, "first answer from the index in %s wall (target <= %s)",
		indexFirst.wall.Round(100*time.Microsecond), firstFromIndexTarget)

	var differ []string
	for _, bc := range []comparison{c, ci} {
		br, err := batch(bc, peers, runs)
		if err != nil {
			differ = append(differ, err.Error())
		}
		for p, peer := range peers {
			them := br.peers[p]
			target(err == nil, "%d addresses (%s) against %s: same answers; wall %.1fx, cpu %.1fx (theirs / ours); peak RSS %.2f of theirs",
				len(bc.addrs), bc.what, peer, benchkit.Ratio(them.wall, br.ours.wall), benchkit.Ratio(them.cpu, br.ours.cpu), float64(br.ours.rss)/float64(max(them.rss, 1)))
		}
	}
	fmt.Println("targets:")
	for _, t := range targets {
		fmt.Println("  " + t)
	}
	if len(differ) > 0 {
		return fmt.Errorf("%s", strings.Join(differ, "; "))
	}
	return nil
}
