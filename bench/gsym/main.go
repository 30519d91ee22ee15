// Command gsym compares a symindex file with LLVM's GSYM, the closest
// persisted format, on the same inputs in the same run: the size of each
// file, the time and peak memory to build it from a Mach-O with DWARF
// ("GOMAXPROCS=1 stackimage index" against "llvm-gsymutil-16 --convert
// --num-threads=1", and stackimage index on every core for information), 100,000 lookups with inline chains as whole processes
// ("stackimage atos -i --no-demangle -o X.symindex" against
// "llvm-gsymutil-16 --addresses-from-stdin", both printing linkage names;
// atos's default, demangled names, is timed beside them) and a first answer from each file (one address,
// whole process). Every timed run of ours must print what the atos
// library answers from the index, every run of GSYM what its first run
// printed; and the index must answer as GSYM does (function names, files
// and lines of every frame) at every address GSYM answers,
// and prints the table with the ratios and the targets of issue 21. `make
// bench` runs it on the darwin cmd/go and on the generated big dSYM.
//
//	go run ./bench/gsym -bin FILE [-bin FILE...] [-runs 5] [-first-runs 20] [-n 100000] [-gsymutil llvm-gsymutil-16] [-builds-only] [-baseline STACKIMAGE]
//
// -builds-only times the builds alone (the size and build rows, without
// lookups, first answers or the answer check). -baseline names another
// stackimage binary (one built from an earlier commit, say) whose
// one-thread build runs in turn with ours and GSYM's: the table then has
// a row holding ours against it, for a before-and-after in one run.
//
// Each program runs -runs times, alternating with its peer; the median
// wall time is the figure and the range is printed beside it; the median
// CPU time (user + system), steadier on a busy machine, is printed for
// information. Peak memory is the
// highest peak RSS of any run (GNU time's %M). Addresses are uniformly
// random in __TEXT,__text (fixed seed).
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/stackimage/stackimage/atos"
	"github.com/stackimage/stackimage/bench/internal/benchkit"
	"github.com/stackimage/stackimage/symindex"
)

// Targets of issue 21, as ratios to GSYM (ours / theirs), and the first
// answer's bound on the big dSYM.
const (
	sizeTarget   = 0.8
	buildTarget  = 0.7
	memTarget    = 1.0
	lookupTarget = 0.5
	firstTarget  = 5 * time.Millisecond
)

type binList []string

func (b *binList) String() string     { return strings.Join(*b, ",") }
func (b *binList) Set(s string) error { *b = append(*b, s); return nil }

func main() {
	var bins binList
	flag.Var(&bins, "bin", "a Mach-O with DWARF (a binary or a dSYM's DWARF file); repeatable")
	runs := flag.Int("runs", 5, "runs of each build and batch; the median is reported")
	firstRuns := flag.Int("first-runs", 20, "runs of each first answer")
	n := flag.Int("n", 100_000, "addresses per batch")
	gsymutil := flag.String("gsymutil", "llvm-gsymutil-16", "LLVM's gsymutil")
	buildsOnly := flag.Bool("builds-only", false, "time the builds only: no lookups, first answers or answer check")
	baseline := flag.String("baseline", "", "another stackimage binary whose one-thread build is timed in turn with ours")
	flag.Parse()
	if len(bins) == 0 {
		fmt.Fprintln(os.Stderr, "gsym: give at least one -bin")
		os.Exit(2)
	}
	tmp, err := os.MkdirTemp("", "stackimage-gsym")
	if err != nil {
		fmt.Fprintln(os.Stderr, "gsym:", err)
		os.Exit(1)
	}
	defer os.RemoveAll(tmp)
	ours := filepath.Join(tmp, "stackimage")
	if err := benchkit.BuildStackimage(ours); err != nil {
		fmt.Fprintf(os.Stderr, "gsym: %v", err)
		os.Exit(1)
	}
	failed := false
	for _, bin := range bins {
		o := options{n: *n, runs: *runs, firstRuns: *firstRuns, buildsOnly: *buildsOnly, baseline: *baseline}
		if err := compare(bin, ours, *gsymutil, tmp, o); err != nil {
			fmt.Fprintf(os.Stderr, "gsym: %s: %v\n", bin, err)
			failed = true
		}
	}
	if failed {
		os.Exit(1)
	}
}

// runs is the figures of one program's runs.
type runs struct {
	wall, cpu []time.Duration // cpu: user + system
	rss       int64
	out       []byte
	// want is what every run must print: set beforehand from the
	// library's answers, or else from the first run, so that no run is
	// timed that printed something else.
	want []byte
	what string // what want is, for the error
}

func (r *runs) median() time.Duration { return median(r.wall) }

func (r *runs) span() string { return span(r.wall) }

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

func span(d []time.Duration) string {
	return fmt.Sprintf("%s–%s", dur(slices.Min(d)), dur(slices.Max(d)))
}

func dur(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2f s", d.Seconds())
	default:
		return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
	}
}

func mib(b int64) string { return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20)) }

// options are compare's settings, from the flags.
type options struct {
	n, runs, firstRuns int
	buildsOnly         bool
	baseline           string // a stackimage binary, "" for none
}

// compare measures one input and prints its table.
func compare(bin, ours, gsymutil, tmp string, o options) error {
	n, nruns, firstRuns := o.n, o.runs, o.firstRuns
	info, err := os.Stat(bin)
	if err != nil {
		return err
	}
	addrs, err := benchkit.TextAddresses(bin, n)
	if err != nil {
		return err
	}
	store := filepath.Join(tmp, "store")
	gsymFile := filepath.Join(tmp, "x.gsym")

	// Builds, alternating: one thread each (GOMAXPROCS=1: stackimage index
	// parses compile units on GOMAXPROCS goroutines), and ours on every
	// core for information.
	var buildOurs, buildAll, buildGSYM, buildBase runs
	for i := 0; i < nruns; i++ {
		if o.baseline != "" {
			os.RemoveAll(store)
			if err := measure(&buildBase, []string{"env", "GOMAXPROCS=1", o.baseline, "index", "--symbols", bin, "--out", store}, nil); err != nil {
				return err
			}
		}
		os.RemoveAll(store)
		if err := measure(&buildOurs, []string{"env", "GOMAXPROCS=1", ours, "index", "--symbols", bin, "--out", store}, nil); err != nil {
			return err
		}
		os.Remove(gsymFile)
		if err := measure(&buildGSYM, []string{gsymutil, "--convert", bin, "--num-threads=1", "--out-file", gsymFile}, nil); err != nil {
			return err
		}
		os.RemoveAll(store)
		if err := measure(&buildAll, []string{ours, "index", "--symbols", bin, "--out", store}, nil); err != nil {
			return err
		}
	}
	files, _ := filepath.Glob(filepath.Join(store, "*", "*"+symindex.Extension))
	if len(files) != 1 {
		return fmt.Errorf("stackimage index wrote %d files, want 1 (give a thin file)", len(files))
	}
	index := files[0]
	ixInfo, err := os.Stat(index)
	if err != nil {
		return err
	}
	gsInfo, err := os.Stat(gsymFile)
	if err != nil {
		return err
	}

	if o.buildsOnly {
		fmt.Printf("== symindex builds against GSYM (%s): %s, %d bytes\n", gsymutil, bin, info.Size())
		fmt.Printf("   %d runs of each build, alternating; median [range]; peak RSS the highest\n\n", nruns)
		var t table
		t.builds(ixInfo.Size(), gsInfo.Size(), &buildOurs, &buildAll, &buildGSYM, &buildBase)
		t.summary()
		return nil
	}

	// Batches, alternating.
	var inOurs, inGSYM bytes.Buffer
	for _, a := range addrs {
		fmt.Fprintf(&inOurs, "%#x\n", a)
		fmt.Fprintf(&inGSYM, "%#x %s\n", a, gsymFile)
	}
	// GSYM prints linkage names: atos --no-demangle does too, and is the
	// figure held against it; atos's default, demangled C++, Rust and
	// Swift names, is measured beside it.
	var lookOurs, lookDemangled, lookGSYM runs
	// Our timed processes must print what the atos library answers from
	// the index, which sameAnswers then holds against GSYM's answers.
	var err2 error
	if lookOurs.want, err2 = atosAnswers(index, addrs, true); err2 != nil {
		return err2
	}
	if lookDemangled.want, err2 = atosAnswers(index, addrs, false); err2 != nil {
		return err2
	}
	lookOurs.what, lookDemangled.what = "the atos library's answers from the index (linkage names)", "the atos library's answers from the index (demangled)"
	for i := 0; i < nruns; i++ {
		if err := measure(&lookOurs, []string{ours, "atos", "-i", "--no-demangle", "-o", index}, inOurs.Bytes()); err != nil {
			return err
		}
		if err := measure(&lookGSYM, []string{gsymutil, "--addresses-from-stdin"}, inGSYM.Bytes()); err != nil {
			return err
		}
		if err := measure(&lookDemangled, []string{ours, "atos", "-i", "-o", index}, inOurs.Bytes()); err != nil {
			return err
		}
	}
	for _, r := range []*runs{&lookOurs, &lookDemangled} {
		if got := bytes.Count(r.out, []byte("\n")); got < len(addrs) {
			return fmt.Errorf("stackimage atos wrote %d lines for %d addresses", got, len(addrs))
		}
	}

	// First answers: one address, whole process.
	first := fmt.Sprintf("%#x", addrs[0])
	var firstOurs, firstGSYM runs
	if firstOurs.want, err2 = atosAnswers(index, addrs[:1], false); err2 != nil {
		return err2
	}
	firstOurs.what = "the atos library's answer from the index"
	for i := 0; i < firstRuns; i++ {
		if err := measureRSS(&firstOurs, []string{ours, "atos", "-i", "-o", index, first}, nil, false); err != nil {
			return err
		}
		if err := measureRSS(&firstGSYM, []string{gsymutil, "--address=" + first, gsymFile}, nil, false); err != nil {
			return err
		}
	}

	fmt.Printf("checked: each timed run of stackimage atos printed the atos library's answers from the index (%d lookup runs, %d first answers); each GSYM run printed what its first did\n",
		len(lookOurs.wall)+len(lookDemangled.wall), len(firstOurs.wall))
	answered, frames, differ, differAddrs, differMine, err := sameAnswers(index, addrs, lookGSYM.out)
	if err != nil {
		return err
	}
	confirmed, unconfirmed, err := arbitrate(bin, differAddrs, differMine)
	if err != nil {
		return err
	}

	fmt.Printf("== symindex against GSYM (%s): %s, %d bytes\n", gsymutil, bin, info.Size())
	fmt.Printf("   %d runs of each build and batch, %d of each first answer, alternating; median [range]; peak RSS the highest\n\n", nruns, firstRuns)
	var t table
	line := t.line
	t.builds(ixInfo.Size(), gsInfo.Size(), &buildOurs, &buildAll, &buildGSYM, &buildBase)
	lr := benchkit.Ratio(lookOurs.median(), lookGSYM.median())
	line(fmt.Sprintf("%dk lookups, whole process", len(addrs)/1000), dur(lookOurs.median())+" ["+lookOurs.span()+"]", dur(lookGSYM.median())+" ["+lookGSYM.span()+"]", lr, fmt.Sprintf("<= %.2f", lookupTarget), lr <= lookupTarget)
	line("lookups, cpu (information)", dur(median(lookOurs.cpu))+" ["+span(lookOurs.cpu)+"]", dur(median(lookGSYM.cpu))+" ["+span(lookGSYM.cpu)+"]", benchkit.Ratio(median(lookOurs.cpu), median(lookGSYM.cpu)), "", true)
	line("lookups, peak RSS", mib(lookOurs.rss), mib(lookGSYM.rss), float64(lookOurs.rss)/float64(max(lookGSYM.rss, 1)), "", true)
	line("lookups demangled (info)", dur(lookDemangled.median())+" ["+lookDemangled.span()+"]", dur(lookGSYM.median())+" (mangled)", benchkit.Ratio(lookDemangled.median(), lookGSYM.median()), "", true)
	line("demangled, cpu (info)", dur(median(lookDemangled.cpu))+" ["+span(lookDemangled.cpu)+"]", dur(median(lookGSYM.cpu))+" (mangled)", benchkit.Ratio(median(lookDemangled.cpu), median(lookGSYM.cpu)), "", true)
	fr := benchkit.Ratio(firstOurs.median(), firstGSYM.median())
	line("first answer, whole process", dur(firstOurs.median())+" ["+firstOurs.span()+"]", dur(firstGSYM.median())+" ["+firstGSYM.span()+"]", fr, fmt.Sprintf("<= %s", dur(firstTarget)), firstOurs.median() <= firstTarget)
	fmt.Printf("\nanswers: GSYM answered %d of %d addresses (%d frames); the index answers the same at %d;\n", answered, len(addrs), frames, answered-len(differ))
	fmt.Printf("  where they differ (%d), %s reading the DWARF agrees with the index at %d\n", len(differ), symbolizer, confirmed)
	for i, d := range differ[:min(2, len(differ))] {
		fmt.Printf("  e.g. %s (%s agrees: %v)\n", d, symbolizer, !slices.Contains(unconfirmed, i))
	}
	for _, i := range unconfirmed[:min(5, len(unconfirmed))] {
		fmt.Printf("  %s differs from both: %s\n", symbolizer, differ[i])
	}
	t.summary()
	if confirmed < len(differ) {
		return fmt.Errorf("the index differs from GSYM at %d addresses, %d of them not confirmed by %s", len(differ), len(differ)-confirmed, symbolizer)
	}
	return nil
}

// atosAnswers is what stackimage atos -i [--no-demangle] -o index prints
// for addrs, as the atos library answers them.
func atosAnswers(index string, addrs []uint64, noDemangle bool) ([]byte, error) {
	a, err := atos.Open(context.Background(), index, atos.Options{Inlines: true, NoDemangle: noDemangle})
	if err != nil {
		return nil, err
	}
	defer a.Close()
	var out []byte
	for _, addr := range addrs {
		out = a.AppendAnswer(out, addr)
	}
	return out, nil
}

// firstDifference is the offset of the first byte where a and b differ.
func firstDifference(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// table prints the rows of a comparison and keeps their verdicts.
type table struct {
	verdicts []bool
	started  bool
}

// line prints one row: what is measured, ours, theirs, the ratio and the
// target with its verdict ("" for a row given for information).
func (t *table) line(what, a, b string, r float64, target string, met bool) {
	if !t.started {
		fmt.Printf("%-28s %-30s %-30s %7s  %s\n", "", "symindex", "GSYM", "ratio", "target")
		t.started = true
	}
	v := "met"
	if !met {
		v = "MISSED"
	}
	if target == "" {
		v = ""
	}
	fmt.Printf("%-28s %-30s %-30s %7.2f  %s %s\n", what, a, b, r, target, v)
	if target != "" {
		t.verdicts = append(t.verdicts, met)
	}
}

// builds prints the size and build rows; with baseline runs, ours held
// against them too.
func (t *table) builds(ixSize, gsSize int64, ours, all, gsym, baseline *runs) {
	sr := float64(ixSize) / float64(gsSize)
	t.line("size", fmt.Sprintf("%d B", ixSize), fmt.Sprintf("%d B", gsSize), sr, fmt.Sprintf("<= %.2f", sizeTarget), sr <= sizeTarget)
	br := benchkit.Ratio(ours.median(), gsym.median())
	t.line("build, one thread", dur(ours.median())+" ["+ours.span()+"]", dur(gsym.median())+" ["+gsym.span()+"]", br, fmt.Sprintf("<= %.2f", buildTarget), br <= buildTarget)
	t.line("build, cpu (information)", dur(median(ours.cpu))+" ["+span(ours.cpu)+"]", dur(median(gsym.cpu))+" ["+span(gsym.cpu)+"]", benchkit.Ratio(median(ours.cpu), median(gsym.cpu)), "", true)
	t.line(fmt.Sprintf("build, %d cores (info)", runtime.NumCPU()), dur(all.median())+" ["+all.span()+"]", dur(gsym.median())+" (one thread)", benchkit.Ratio(all.median(), gsym.median()), "", true)
	mr := float64(max(ours.rss, all.rss)) / float64(max(gsym.rss, 1))
	t.line("build, peak RSS", mib(max(ours.rss, all.rss)), mib(gsym.rss), mr, fmt.Sprintf("<= %.2f", memTarget), mr <= memTarget)
	if len(baseline.wall) > 0 {
		fmt.Printf("%-28s %-30s %-30s\n", "", "symindex", "baseline")
		fmt.Printf("%-28s %-30s %-30s %7.2f\n", "build, one thread (wall)", dur(ours.median())+" ["+ours.span()+"]", dur(baseline.median())+" ["+baseline.span()+"]", benchkit.Ratio(ours.median(), baseline.median()))
		fmt.Printf("%-28s %-30s %-30s %7.2f\n", "build, one thread (cpu)", dur(median(ours.cpu))+" ["+span(ours.cpu)+"]", dur(median(baseline.cpu))+" ["+span(baseline.cpu)+"]", benchkit.Ratio(median(ours.cpu), median(baseline.cpu)))
		fmt.Printf("%-28s %-30s %-30s %7.2f\n", "build, one thread (peak)", mib(ours.rss), mib(baseline.rss), float64(ours.rss)/float64(max(baseline.rss, 1)))
	}
}

// summary prints how many targets were met.
func (t *table) summary() {
	missed := 0
	for _, m := range t.verdicts {
		if !m {
			missed++
		}
	}
	fmt.Printf("targets: %d of %d met\n\n", len(t.verdicts)-missed, len(t.verdicts))
}

// sameAnswers parses gsymutil's answers to addrs and compares each one
// GSYM gives with the index's: every frame's function (the linkage name
// where there is one, as GSYM keeps it), file and line, innermost first;
// where GSYM knows no line, the name alone. It returns how many addresses
// and frames GSYM answered and the differences.
func sameAnswers(index string, addrs []uint64, gsymOut []byte) (answered, frames int, differ []string, differAddrs []uint64, differMine [][]string, err error) {
	ix, err := symindex.Open(index)
	if err != nil {
		return 0, 0, nil, nil, nil, err
	}
	defer ix.Close()
	blocks := parseGSYM(gsymOut)
	if len(blocks) != len(addrs) {
		return 0, 0, nil, nil, nil, fmt.Errorf("gsymutil gave %d answers for %d addresses", len(blocks), len(addrs))
	}
	for i, addr := range addrs {
		theirs := blocks[i]
		if theirs == nil {
			continue
		}
		answered++
		frames += len(theirs)
		a, _ := ix.Lookup(addr) // not found: no symbol and no frames, compared below
		var mine []string
		if len(a.Frames) == 0 || (len(theirs) == 1 && !strings.Contains(theirs[0], " @ ")) {
			// GSYM answers from the symbol table, or from a function with
			// no line table.
			name := a.Symbol.Name
			if len(a.Frames) > 0 {
				name = frameName(a.Frames[len(a.Frames)-1].LinkageName, a.Frames[len(a.Frames)-1].Function)
			}
			mine = []string{name}
		} else {
			for _, f := range a.Frames {
				if f.Line == 0 { // no line: the name alone, as llvm-symbolizer has it
					mine = append(mine, frameName(f.LinkageName, f.Function))
					continue
				}
				mine = append(mine, fmt.Sprintf("%s @ %s:%d", frameName(f.LinkageName, f.Function), path.Clean(f.File), f.Line))
			}
		}
		if !slices.Equal(mine, theirs) {
			differ = append(differ, fmt.Sprintf("%#x: index %q, GSYM %q", addr, mine, theirs))
			differAddrs = append(differAddrs, addr)
			// A frame without a line is printed by the symbol's name (atos
			// does the same): Go's ABI wrappers are "NAME.abi0" there.
			if len(a.Frames) == 1 && a.Frames[0].Line == 0 && a.HasSymbol {
				mine = []string{a.Symbol.Name}
			}
			differMine = append(differMine, mine)
		}
	}
	return answered, frames, differ, differAddrs, differMine, nil
}

// symbolizer is the DWARF reader that arbitrates where the index and GSYM
// differ.
const symbolizer = "llvm-symbolizer-16"

// arbitrate asks llvm-symbolizer, reading bin's DWARF, for the frames at
// addrs and returns how many of mine (the index's answers) it confirms.
func arbitrate(bin string, addrs []uint64, mine [][]string) (confirmed int, unconfirmed []int, err error) {
	if len(addrs) == 0 {
		return 0, nil, nil
	}
	var in bytes.Buffer
	for _, a := range addrs {
		fmt.Fprintf(&in, "%#x\n", a)
	}
	cmd := exec.Command(symbolizer, "--obj="+bin, "--inlines", "--functions=linkage", "--no-demangle", "--output-style=JSON")
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		return 0, nil, fmt.Errorf("%s: %v", symbolizer, err)
	}
	type frame struct {
		FunctionName, FileName string
		Line                   int
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for i := 0; sc.Scan() && i < len(addrs); i++ {
		var ans struct{ Symbol []frame }
		if err := json.Unmarshal(sc.Bytes(), &ans); err != nil {
			return 0, nil, fmt.Errorf("%s output %q: %w", symbolizer, sc.Text(), err)
		}
		var theirs []string
		for _, f := range ans.Symbol {
			if f.Line == 0 || len(mine[i]) == 1 && !strings.Contains(mine[i][0], " @ ") {
				theirs = append(theirs, f.FunctionName)
			} else {
				theirs = append(theirs, fmt.Sprintf("%s @ %s:%d", f.FunctionName, path.Clean(f.FileName), f.Line))
			}
		}
		if slices.Equal(theirs, mine[i]) {
			confirmed++
		} else {
			unconfirmed = append(unconfirmed, i)
		}
	}
	return confirmed, unconfirmed, sc.Err()
}

func frameName(linkage, function string) string {
	if linkage != "" {
		return linkage
	}
	return function
}

// parseGSYM reads gsymutil's answers: per address a block of lines ended
// by an empty line, the first "0xADDR: NAME + OFF @ FILE:LINE [inlined]"
// and the callers indented, or "0xADDR: NAME" with no line, or an error.
// A block becomes its frames as "NAME @ FILE:LINE" (offsets dropped), nil
// for an address GSYM does not answer.
func parseGSYM(out []byte) [][]string {
	var blocks [][]string
	var cur []string
	open := false
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		l := sc.Text()
		if l == "" {
			if open {
				blocks = append(blocks, cur)
			}
			cur, open = nil, false
			continue
		}
		if !open {
			open = true
			if strings.Contains(l, "error:") || strings.Contains(l, "not found") {
				cur = nil
				continue
			}
			if i := strings.Index(l, ": "); i >= 0 {
				l = l[i+2:]
			}
		}
		if cur == nil && strings.Contains(l, "error:") {
			continue
		}
		l = strings.TrimSpace(strings.TrimSuffix(l, " [inlined]"))
		name, pos, hasPos := strings.Cut(l, " @ ")
		if j := strings.LastIndex(name, " + "); j >= 0 {
			if _, err := strconv.ParseUint(name[j+3:], 10, 64); err == nil {
				name = name[:j]
			}
		}
		if hasPos {
			// GSYM joins a relative file with the compilation directory
			// ("./<autogenerated>"): both sides are cleaned.
			if k := strings.LastIndex(pos, ":"); k >= 0 {
				pos = path.Clean(pos[:k]) + pos[k:]
			}
			cur = append(cur, name+" @ "+pos)
		} else {
			cur = append(cur, name)
		}
	}
	if open {
		blocks = append(blocks, cur)
	}
	return blocks
}

// gnuTime is GNU time, which reports its child's peak RSS (%M, KiB).
const gnuTime = "/usr/bin/time"

// measure runs the command once with stdin and adds the run to r. Peak
// RSS comes from GNU time when it is installed (a child forked by a Go
// program would otherwise count the parent's memory), else from wait4.
func measure(r *runs, argv []string, stdin []byte) error {
	return measureRSS(r, argv, stdin, true)
}

// measureRSS is measure, with GNU time only when withTime is set: a first
// answer is timed without it, since exec'ing it adds a millisecond.
func measureRSS(r *runs, argv []string, stdin []byte, withTime bool) error {
	timeOut := ""
	if _, err := os.Stat(gnuTime); err == nil && withTime {
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
	if r.want == nil {
		r.want, r.what = slices.Clone(out.Bytes()), "the first run's output"
	} else if !bytes.Equal(out.Bytes(), r.want) {
		return fmt.Errorf("%s printed %d bytes that are not %s (%d bytes); first difference at byte %d",
			strings.Join(argv, " "), out.Len(), r.what, len(r.want), firstDifference(out.Bytes(), r.want))
	}
	r.wall = append(r.wall, wall)
	r.cpu = append(r.cpu, cmd.ProcessState.UserTime()+cmd.ProcessState.SystemTime())
	r.rss = max(r.rss, rss)
	r.out = out.Bytes()
	return nil
}
