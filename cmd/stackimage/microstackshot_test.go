package main

import (
	"debug/dwarf"
	"debug/macho"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/pprof/profile"
)

// fixtureFunc is one function of a fixture binary as its symbol table
// gives it: the name without the leading underscore, and its range as
// offsets from the image's header, [start, end).
type fixtureFunc struct {
	name       string
	start, end uint64
}

// fixtureImage is a fixture binary read with the standard library's
// debug/macho, apart from the readers under test: its UUID, architecture
// and functions.
type fixtureImage struct {
	name, uuid, arch string
	funcs            []fixtureFunc
	size             uint64
	inlined          [][2]uint64 // inlinedRanges
}

func readFixtureImage(t *testing.T, path string) fixtureImage {
	t.Helper()
	f, err := macho.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	im := fixtureImage{name: filepath.Base(path)}
	switch f.Cpu {
	case macho.CpuArm64:
		im.arch = "arm64"
	case macho.CpuAmd64:
		im.arch = "x86_64"
	default:
		t.Fatalf("%s: CPU %v", path, f.Cpu)
	}
	for _, l := range f.Loads {
		raw := l.Raw()
		if len(raw) >= 24 && f.ByteOrder.Uint32(raw) == 0x1b { // LC_UUID
			u := raw[8:24]
			im.uuid = fmt.Sprintf("%X-%X-%X-%X-%X", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
		}
	}
	text := f.Segment("__TEXT")
	code := f.Section("__text")
	if text == nil || code == nil || im.uuid == "" || f.Symtab == nil {
		t.Fatalf("%s: no __TEXT, __text, UUID or symbol table", path)
	}
	im.size = text.Memsz
	textIndex := 0
	for i, s := range f.Sections {
		if s == code {
			textIndex = i + 1
		}
	}
	var starts []fixtureFunc
	for _, s := range f.Symtab.Syms {
		// N_SECT symbols within __text named as C functions are (the
		// mach header's symbol lies before it).
		if s.Type&0x0e == 0x0e && int(s.Sect) == textIndex && strings.HasPrefix(s.Name, "_") && s.Value >= code.Addr {
			starts = append(starts, fixtureFunc{name: s.Name[1:], start: s.Value - text.Addr})
		}
	}
	sort.Slice(starts, func(i, j int) bool { return starts[i].start < starts[j].start })
	codeEnd := code.Addr + code.Size - text.Addr
	for i, fn := range starts {
		fn.end = codeEnd
		if i+1 < len(starts) {
			fn.end = starts[i+1].start
		}
		// Room for an address and the one before it (a caller's lookup
		// address) inside the function.
		if fn.end > fn.start+8 {
			im.funcs = append(im.funcs, fn)
		}
	}
	if len(im.funcs) < 2 {
		t.Fatalf("%s: %d functions", path, len(im.funcs))
	}
	im.inlined = inlinedRanges(t, filepath.Join(path+".dSYM", "Contents", "Resources", "DWARF", im.name), text.Addr)
	return im
}

// inlinedRanges reads the code ranges of inlined functions from a dSYM's
// DWARF (debug/dwarf), as offsets from the image's header: an address
// there is named by the inlined function as well as by its host.
func inlinedRanges(t *testing.T, dsym string, textAddr uint64) [][2]uint64 {
	t.Helper()
	f, err := macho.Open(dsym)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := f.DWARF()
	if err != nil {
		t.Fatal(err)
	}
	var out [][2]uint64
	r := d.Reader()
	for {
		e, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if e == nil {
			return out
		}
		if e.Tag != dwarf.TagInlinedSubroutine {
			continue
		}
		ranges, err := d.Ranges(e)
		if err != nil {
			t.Fatal(err)
		}
		for _, rg := range ranges {
			out = append(out, [2]uint64{rg[0] - textAddr, rg[1] - textAddr})
		}
	}
}

// inInlined reports whether an offset, or the one before it (a caller's
// lookup address), lies in inlined code.
func (im *fixtureImage) inInlined(off uint64) bool {
	for _, rg := range im.inlined {
		if off+1 > rg[0] && off-1 < rg[1] {
			return true
		}
	}
	return false
}

// msNode is one node of a generated microstackshot call graph.
type msNode struct {
	fn       int    // index in fixtureImage.funcs
	offset   uint64 // from the image's header
	count    int
	children []*msNode
}

// genTree makes a random call graph of count samples, at most depth deep.
func genTree(rng *rand.Rand, im fixtureImage, count, depth int) *msNode {
	// An address outside inlined code, so that the symbol table alone
	// names it.
	n := &msNode{count: count}
	for {
		n.fn = rng.IntN(len(im.funcs))
		f := im.funcs[n.fn]
		if n.offset = f.start + 4 + rng.Uint64N(f.end-f.start-8); !im.inInlined(n.offset) {
			break
		}
	}
	left := count - rng.IntN(count/2+1) // the rest is this node's own
	for depth > 0 && left > 0 && len(n.children) < 3 {
		c := 1 + rng.IntN(left)
		n.children = append(n.children, genTree(rng, im, c, depth-1))
		left -= c
	}
	return n
}

// microstackshotReport writes a CPU-usage microstackshot report of one
// process of im, loaded at load, whose call graph is roots; with ips it
// starts with an .ips report's JSON line. It returns the report and its
// truth: for every address, the function; for every stack (root first,
// names joined by ";"), the samples it was on top of.
func microstackshotReport(im fixtureImage, load uint64, roots []*msNode, ips bool) (string, map[uint64]string, map[string]int) {
	var b strings.Builder
	if ips {
		fmt.Fprintf(&b, `{"app_name":%q,"bug_type":"202","timestamp":"2025-01-31 10:11:12.00 +0000","os_version":"macOS 14.4 (23E214)","slice_uuid":%q,"name":%q}`+"\n", im.name, im.uuid, im.name)
	}
	total := 0
	for _, r := range roots {
		total += r.count
	}
	fmt.Fprintf(&b, "Date/Time:        2025-01-31 10:08:12.000 +0000\nEnd time:         2025-01-31 10:11:12.000 +0000\n"+
		"OS Version:       macOS 14.4 (Build 23E214)\nArchitecture:     %s\nReport Version:   40\n\n"+
		"Data Source:      Microstackshots\n\nCommand:          %s\nPath:             /Applications/%[2]s\nPID:              4242\n\n"+
		"Event:            cpu usage\nAction taken:     none\nCPU:              90 seconds cpu time over 180 seconds (50%% cpu average), exceeding limit of 50%% cpu over 180 seconds\n"+
		"Duration:         180.00s\nDuration Sampled: 179.00s\nSteps:            %d\n\n", im.arch, im.name, total)
	width := len(fmt.Sprint(total)) + 1
	frame := func(n *msNode) string {
		return fmt.Sprintf("%-*d ??? (%s + %d) [%#x]", width, n.count, im.name, n.offset, load+n.offset)
	}
	// The heaviest stack: the heaviest child all the way down.
	b.WriteString("Heaviest stack for the target process:\n")
	for n := roots[0]; n != nil; {
		b.WriteString("  " + frame(n) + "\n")
		var next *msNode
		for _, c := range n.children {
			if next == nil || c.count > next.count {
				next = c
			}
		}
		n = next
	}
	fmt.Fprintf(&b, "\n\nPowerstats for:   %[1]s [4242]\nUUID:             %[2]s\nPath:             /Applications/%[1]s\nArchitecture:     %[3]s\nNum samples:      %[4]d (100%%)\n",
		im.name, im.uuid, im.arch, total)
	names := map[uint64]string{}
	stacks := map[string]int{}
	var write func(n *msNode, depth int, path []string)
	write = func(n *msNode, depth int, path []string) {
		b.WriteString(strings.Repeat("  ", depth+1) + frame(n) + "\n")
		name := im.funcs[n.fn].name
		names[load+n.offset] = name
		path = append(path, name)
		self := n.count
		for _, c := range n.children {
			self -= c.count
			write(c, depth+1, path)
		}
		if self > 0 {
			stacks[strings.Join(path, ";")] += self
		}
	}
	for _, r := range roots {
		write(r, 0, nil)
	}
	fmt.Fprintf(&b, "\n  Binary Images:\n           %#x -        %#x  %s  <%s>  /Applications/%[3]s\n",
		load, load+im.size-1, im.name, im.uuid)
	return b.String(), names, stacks
}

// TestMicrostackshotFixtures symbolicates and aggregates microstackshot
// reports generated here, with random call graphs, of the fixture
// binaries built without optimization, at addresses outside inlined code:
// every frame is named as the binary's symbol table says, and every stack
// weighs the samples it was on top of.
func TestMicrostackshotFixtures(t *testing.T) {
	seed := uint64(os.Getpid())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 31))
	paths, err := filepath.Glob(filepath.Join(symbolsDir, "*-O0"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixture binaries: %v", err)
	}
	for _, path := range paths {
		if strings.Contains(path, "armv7") {
			continue // 32-bit: no microstackshot report is written for it
		}
		im := readFixtureImage(t, path)
		t.Run(im.name, func(t *testing.T) {
			load := 0x100000000 + rng.Uint64N(1<<20)<<14
			var roots []*msNode
			for range 1 + rng.IntN(3) {
				roots = append(roots, genTree(rng, im, 1+rng.IntN(60), 1+rng.IntN(6)))
			}
			report, names, stacks := microstackshotReport(im, load, roots, rng.IntN(2) == 0)
			file := writeFile(t, filepath.Join(t.TempDir(), im.name+"_cpu_resource.diag"), []byte(report))

			text := runOK(t, "symbolicate", file, "--symbols", symbolsDir)
			for _, want := range []string{"Format: macOS or iOS microstackshot resource report\n", "Event = cpu usage"} {
				if !strings.Contains(strings.Join(strings.Fields(text), " "), strings.Join(strings.Fields(want), " ")) {
					t.Errorf("text output lacks %q:\n%s", want, text)
				}
			}

			var rep jsonReport
			if err := json.Unmarshal([]byte(runOK(t, "symbolicate", file, "--symbols", symbolsDir, "--json")), &rep); err != nil {
				t.Fatal(err)
			}
			if len(rep.Threads) != 1 {
				t.Fatalf("JSON: %d threads, want 1 (the process's call graph)", len(rep.Threads))
			}
			got := map[uint64]string{}
			for _, f := range rep.Threads[0].Frames {
				var addr uint64
				fmt.Sscanf(f.Address, "0x%x", &addr)
				got[addr] = f.Symbol
			}
			if diff := cmp.Diff(names, got); diff != "" {
				t.Errorf("JSON frame names by address (-symbol table +symbolicated):\n%s", diff)
			}

			// --format same names every frame in the report's own layout,
			// the heaviest stack's too.
			same := runOK(t, "symbolicate", file, "--symbols", symbolsDir, "--format", "same")
			for _, line := range strings.Split(same, "\n") {
				open := strings.LastIndex(line, "[0x")
				if open < 0 || !strings.HasSuffix(line, "]") {
					continue
				}
				var addr uint64
				fmt.Sscanf(line[open:], "[0x%x]", &addr)
				fields := strings.Fields(line)
				if want, ok := names[addr]; !ok || len(fields) < 2 || fields[1] != want {
					t.Errorf("--format same: line %q, want %s named %q", line, line[open:], want)
				}
			}

			folded := runOK(t, "aggregate", file, "--symbols", symbolsDir, "--format", "folded", "--quiet")
			gotStacks := map[string]int{}
			for _, line := range strings.Split(strings.TrimSpace(folded), "\n") {
				i := strings.LastIndexByte(line, ' ')
				var n int
				fmt.Sscan(line[i+1:], &n)
				gotStacks[line[:i]] += n
			}
			if diff := cmp.Diff(stacks, gotStacks); diff != "" {
				t.Errorf("folded stacks (-truth +aggregate):\n%s\nreport:\n%s", diff, report)
			}

			// pprof's weight and speedscope's weights are the samples.
			total := 0
			for _, r := range roots {
				total += r.count
			}
			pb := filepath.Join(t.TempDir(), "p.pb.gz")
			runOK(t, "aggregate", file, "--symbols", symbolsDir, "--format", "pprof", "--quiet", "-o", pb)
			pf, err := os.Open(pb)
			if err != nil {
				t.Fatal(err)
			}
			defer pf.Close()
			prof, err := profile.Parse(pf)
			if err != nil {
				t.Fatal(err)
			}
			var weight int64
			for _, s := range prof.Sample {
				weight += s.Value[1]
			}
			if prof.SampleType[1].Type != "weight" || weight != int64(total) {
				t.Errorf("pprof: %s %d, want weight %d", prof.SampleType[1].Type, weight, total)
			}
			var speedscope struct {
				Profiles []struct{ Weights []int64 } `json:"profiles"`
			}
			if err := json.Unmarshal([]byte(runOK(t, "aggregate", file, "--symbols", symbolsDir, "--format", "speedscope", "--quiet")), &speedscope); err != nil {
				t.Fatal(err)
			}
			weight = 0
			for _, p := range speedscope.Profiles {
				for _, w := range p.Weights {
					weight += w
				}
			}
			if weight != int64(total) {
				t.Errorf("speedscope weights %d, want %d", weight, total)
			}
		})
	}
}
