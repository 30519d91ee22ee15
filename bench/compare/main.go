// Command compare runs our atos and llvm-symbolizer on the same addresses of
// the same Mach-O, each as a whole process, checks that they name the same
// functions, and prints how their time and peak memory compare. `make
// bench` runs it.
//
//	go run ./bench/compare [-mode symtab|dwarf|index|bigdsym] [-bin MACHO] [-arch ARCH] [-n 100000] [-runs 5] [-first-runs 10] [-llvm llvm-symbolizer,llvm-symbolizer-16]
//
// Without -bin it builds GOOS=darwin GOARCH=arm64 cmd/go (about 20k
// symbols) into the user's cache directory, once per Go version. Addresses
// are uniformly random in __TEXT,__text (fixed seed). Each program runs
// -runs times, alternating; the best wall time, the best CPU time (user +
// system, steadier on a busy machine) and the highest peak RSS are kept.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"github.com/stackimage/stackimage/bench/internal/benchkit"

	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/stackimage/stackimage/internal/testcorpus"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "compare:", err)
		os.Exit(1)
	}
}

// result is the best of a program's runs.
type result struct {
	wall, cpu time.Duration
	rss       int64
	out       []byte
}

func run() error {
	bin := flag.String("bin", "", "the Mach-O to look addresses up in (default: a darwin build of cmd/go)")
	arch := flag.String("arch", "", "the slice of a fat file")
	n := flag.Int("n", 100_000, "how many addresses")
	runs := flag.Int("runs", 5, "runs of each program; the best is kept")
	mode := flag.String("mode", "symtab", `what to compare: "symtab" (names from the symbol table), "dwarf" (functions, files and lines with inline chains), "index" (dwarf, answered from a symindex file of -bin) or "bigdsym" (a first answer and the batch from -bin's DWARF and from its index, with targets)`)
	llvm := flag.String("llvm", "llvm-symbolizer", "the llvm-symbolizers to compare with, comma-separated")
	firstRuns := flag.Int("first-runs", 10, "runs of each program for a first answer in -mode bigdsym (one address: cheap, and noisier than a batch)")
	writeAddrs := flag.String("write-addresses", "", "write the addresses the comparison would use (a symtab one, or with -mode dwarf a dwarf one) to this file, one per line, and run nothing (for profiling one side alone)")
	flag.Parse()

	peers := strings.Split(*llvm, ",")
	tmp, err := os.MkdirTemp("", "stackimage-compare")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if *bin == "" {
		if *bin, err = testcorpus.GoDarwinBinary(); err != nil {
			return err
		}
	}
	if *writeAddrs != "" {
		pick := benchkit.TextAddresses
		if *mode == "dwarf" {
			pick = func(bin string, n int) ([]uint64, error) { return dwarfAddresses(bin, *arch, n) }
		}
		addrs, err := pick(*bin, *n)
		if err != nil {
			return err
		}
		var b bytes.Buffer
		for _, a := range addrs {
			fmt.Fprintf(&b, "%#x\n", a)
		}
		return os.WriteFile(*writeAddrs, b.Bytes(), 0o644)
	}
	ours, err := buildOurs(tmp)
	if err != nil {
		return err
	}
	var c comparison
	switch *mode {
	case "symtab":
		c, err = symtabComparison(*bin, *arch, *n, ours)
	case "dwarf":
		c, err = dwarfComparison(*bin, *arch, *n, ours)
	case "index":
		c, err = indexComparison(*bin, *arch, *n, ours, peers[0], tmp, *runs)
	case "bigdsym":
		return bigDSYM(*bin, *n, ours, peers, tmp, *runs, *firstRuns)
	default:
		return fmt.Errorf("-mode %q: want symtab, dwarf, index or bigdsym", *mode)
	}
	if err != nil {
		return err
	}
	fmt.Printf("binary: %s\n", *bin)
	_, err = batch(c, peers, *runs)
	return err
}

// batchResult is what a batch comparison measured: our best run and each
// peer's.
type batchResult struct {
	ours  result
	peers []result
}

// batch looks c's addresses up with our atos and each peer, runs times
// each, alternating, prints the table and the ratios, and fails when any
// peer's answers differ from ours.
func batch(c comparison, peers []string, runs int) (batchResult, error) {
	var in bytes.Buffer
	for _, a := range c.addrs {
		fmt.Fprintf(&in, "%#x\n", a)
	}
	br := batchResult{peers: make([]result, len(peers))}
	for i := 0; i < runs; i++ {
		if err := measure(&br.ours, c.ours, in.Bytes()); err != nil {
			return br, err
		}
		for p, peer := range peers {
			if err := measure(&br.peers[p], append([]string{peer}, c.llvm...), in.Bytes()); err != nil {
				return br, err
			}
		}
	}
	ourAnswers, err := c.parseOurs(br.ours.out)
	if err != nil {
		return br, err
	}

	fmt.Printf("%s: %d addresses, best of %d runs, whole process each\n\n", c.what, len(c.addrs), runs)
	fmt.Printf("%-28s %10s %10s %12s\n", "", "wall", "cpu", "peak RSS")
	row := func(name string, r result) {
		fmt.Printf("%-28s %10s %10s %9.1f MiB\n", name, r.wall.Round(time.Millisecond), r.cpu.Round(time.Millisecond), float64(r.rss)/(1<<20))
	}
	row("stackimage atos", br.ours)
	for p, peer := range peers {
		row(peer, br.peers[p])
	}
	fmt.Println()
	var differ error
	for p, peer := range peers {
		them := br.peers[p]
		llvmAnswers, err := c.parseLLVM(them.out)
		if err != nil {
			return br, err
		}
		if len(ourAnswers) != len(llvmAnswers) {
			return br, fmt.Errorf("answers: ours %d, %s %d, for %d addresses", len(ourAnswers), peer, len(llvmAnswers), len(c.addrs))
		}
		same := 0
		for i := range ourAnswers {
			if ourAnswers[i] == llvmAnswers[i] {
				same++
			} else if i-same < 5 { // the first few differences
				fmt.Printf("differs at frame %d: ours %q, %s %q\n", i, ourAnswers[i], peer, llvmAnswers[i])
			}
		}
		fmt.Printf("against %s: same answers %d of %d; speed ratio (theirs / ours) wall %.1fx, cpu %.1fx", peer, same, len(ourAnswers), benchkit.Ratio(them.wall, br.ours.wall), benchkit.Ratio(them.cpu, br.ours.cpu))
		if br.ours.rss > 0 && them.rss > 0 {
			fmt.Printf("; memory ratio (ours / theirs peak RSS) %.2f", float64(br.ours.rss)/float64(them.rss))
		}
		fmt.Println()
		if same != len(ourAnswers) && differ == nil {
			differ = fmt.Errorf("%d answers differ from %s's", len(ourAnswers)-same, peer)
		}
	}
	fmt.Println()
	return br, differ
}

// comparison is one kind of comparison: the addresses, our command and
// llvm-symbolizer's arguments (after the program's name), and how to read
// each one's answers into comparable strings.
type comparison struct {
	what       string
	addrs      []uint64
	ours, llvm []string
	parseOurs  func([]byte) ([]string, error)
	parseLLVM  func([]byte) ([]string, error)
}

// symtabComparison compares names from the symbol table at random
// addresses of __TEXT,__text. stackimage answers without DWARF because
// llvm-symbolizer 14 cannot read Go's compressed DWARF: both then answer
// from the symbol table.
func symtabComparison(bin, arch string, n int, ours []string) (comparison, error) {
	addrs, err := benchkit.TextAddresses(bin, n)
	if err != nil {
		return comparison{}, err
	}
	c := comparison{what: "names from the symbol table", addrs: addrs,
		ours:      append(ours, "--no-debug-info", "-o", bin),
		llvm:      []string{"--obj=" + bin, "--functions=linkage", "--no-inlines", "--no-demangle"},
		parseOurs: parseAtos, parseLLVM: parseSymbolizer}
	if arch != "" {
		c.ours = append(c.ours, "-arch", arch)
		c.llvm = append(c.llvm, "--default-arch="+arch)
	}
	return c, nil
}

// gnuTime is GNU time, which reports its child's peak RSS (%M, KiB).
const gnuTime = "/usr/bin/time"

// measure runs the command once with stdin and folds the run into r.
//
// Peak RSS comes from GNU time when it is installed: a child forked by a
// Go program starts out sharing the parent's memory, and Linux counts that
// toward the child's peak, so wait4's figure would be the driver's size.
func measure(r *result, argv []string, stdin []byte) error {
	timeOut := ""
	if _, err := os.Stat(gnuTime); err == nil {
		f, err := os.CreateTemp("", "stackimage-time")
		if err != nil {
			return err
		}
		f.Close()
		defer os.Remove(f.Name())
		timeOut = f.Name()
		argv = append([]string{gnuTime, "-f", "%M", "-o", timeOut}, argv...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return fmt.Errorf("%s: %v\n%s", strings.Join(argv, " "), err, errb.Bytes())
	}
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	if r.wall == 0 || wall < r.wall {
		r.wall = wall
	}
	if r.cpu == 0 || cpu < r.cpu {
		r.cpu = cpu
	}
	rss := benchkit.PeakRSS(cmd.ProcessState)
	if timeOut != "" {
		b, err := os.ReadFile(timeOut)
		if err != nil {
			return err
		}
		kib, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			return fmt.Errorf("%s wrote %q, want the peak RSS in KiB", gnuTime, b)
		}
		rss = kib * 1024
	}
	r.rss = max(r.rss, rss)
	r.out = out.Bytes()
	return nil
}

// buildOurs builds the stackimage command into dir and returns the command
// prefix that runs its atos.
func buildOurs(dir string) ([]string, error) {
	exe := filepath.Join(dir, "stackimage")
	if err := benchkit.BuildStackimage(exe); err != nil {
		return nil, err
	}
	return []string{exe, "atos"}, nil
}

// parseAtos reads atos-style answers, one per line: "NAME (in IMAGE) + N",
// or the address alone when nothing answered ("??", as llvm-symbolizer
// says).
func parseAtos(out []byte) ([]string, error) {
	var names []string
	for _, line := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		i := strings.LastIndex(line, " (in ")
		if i < 0 {
			names = append(names, "??")
			continue
		}
		names = append(names, line[:i])
	}
	return names, nil
}

// parseSymbolizer reads llvm-symbolizer's answers: per address, the name,
// file:line:column, and an empty line.
func parseSymbolizer(out []byte) ([]string, error) {
	var names []string
	for i, b := range strings.Split(strings.TrimRight(string(out), "\n"), "\n\n") {
		lines := strings.Split(b, "\n")
		if len(lines) != 2 {
			return nil, fmt.Errorf("llvm-symbolizer answer %d has %d lines, want 2: %q", i, len(lines), b)
		}
		names = append(names, lines[0])
	}
	return names, nil
}
