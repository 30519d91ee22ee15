// Command startup times the start of whole stackimage processes: it runs
// `BIN version` for each binary given, in turn, for -n rounds (the order
// reversed every other round, so that a change of load falls on all of
// them alike), and prints for each the median and the 10th–90th
// percentiles of the wall time and of the CPU time (user + system, from
// the child's rusage), with the ratios of the medians to the first
// binary's. docs/serve.md gives the figures: the price of linking the
// service into the one program.
//
//	go run ./bench/startup [-n 300] BIN [BIN...]
//
// Build the binaries to compare first, for example the command from two
// commits (go build -o /tmp/before ./cmd/stackimage, then after the
// change go build -o /tmp/after ./cmd/stackimage).
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"time"
)

func main() {
	rounds := flag.Int("n", 300, "rounds; each runs every binary once")
	flag.Parse()
	bins := flag.Args()
	if len(bins) == 0 || *rounds < 1 {
		fmt.Fprintln(os.Stderr, "usage: startup [-n 300] BIN [BIN...]")
		os.Exit(2)
	}
	wall := make([][]time.Duration, len(bins))
	cpu := make([][]time.Duration, len(bins))
	for r := 0; r < *rounds; r++ {
		for k := range bins {
			i := k
			if r%2 == 1 {
				i = len(bins) - 1 - k
			}
			cmd := exec.Command(bins[i], "version")
			start := time.Now()
			if out, err := cmd.CombinedOutput(); err != nil {
				fmt.Fprintf(os.Stderr, "startup: %s version: %v\n%s", bins[i], err, out)
				os.Exit(1)
			}
			wall[i] = append(wall[i], time.Since(start))
			cpu[i] = append(cpu[i], cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
		}
	}
	fmt.Printf("%d rounds of `BIN version`, alternating; median [p10–p90]\n", *rounds)
	wall0, cpu0 := median(wall[0]), median(cpu[0])
	for i, bin := range bins {
		w, c := median(wall[i]), median(cpu[i])
		fmt.Printf("%s\n  wall %s [%s–%s] ratio %.2f; CPU %s [%s–%s] ratio %.2f\n", bin,
			ms(w), ms(percentile(wall[i], 10)), ms(percentile(wall[i], 90)), float64(w)/float64(wall0),
			ms(c), ms(percentile(cpu[i], 10)), ms(percentile(cpu[i], 90)), float64(c)/float64(cpu0))
	}
}

func median(d []time.Duration) time.Duration { return percentile(d, 50) }

// percentile is the p-th percentile of d (nearest rank).
func percentile(d []time.Duration, p int) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[(len(s)-1)*p/100]
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }
