package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"
)

// indexComparison is the dwarf comparison answered from a symindex file:
// it writes the index of bin with "stackimage index", prints its size
// against bin's and how long a first answer takes from each (a whole
// process looking up one address, best of runs), then compares "stackimage
// atos -o INDEX" with llvm-symbolizer reading bin's DWARF.
func indexComparison(bin, arch string, n int, ours []string, llvm, tmp string, runs int) (comparison, error) {
	c, err := dwarfComparison(bin, arch, n, ours, llvm)
	if err != nil {
		return comparison{}, err
	}
	store := filepath.Join(tmp, "store")
	start := time.Now()
	if out, err := exec.Command(ours[0], "index", "--symbols", bin, "--out", store).CombinedOutput(); err != nil {
		return comparison{}, fmt.Errorf("stackimage index: %v\n%s", err, out)
	}
	built := time.Since(start)
	files, _ := filepath.Glob(filepath.Join(store, "*", "*.symindex"))
	if len(files) != 1 {
		return comparison{}, fmt.Errorf("stackimage index wrote %d files for %s, want 1 (give -bin a thin file)", len(files), bin)
	}
	index := files[0]
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

	c.what += ", stackimage answering from the index"
	for i, a := range c.ours {
		if a == bin && i > 0 && c.ours[i-1] == "-o" {
			c.ours[i] = index
		}
	}
	// The index holds one slice: -arch does not apply to it.
	if j := slices.Index(c.ours, "-arch"); j >= 0 {
		c.ours = slices.Delete(c.ours, j, j+2)
	}
	return c, nil
}
