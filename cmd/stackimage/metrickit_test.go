package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/internal/metrickitfixture"
	"github.com/stackimage/stackimage/internal/testtool"
	"github.com/stackimage/stackimage/report"
	"github.com/stackimage/stackimage/uuid"
)

var updateMetricKit = flag.Bool("update-metrickit", false, "rewrite testdata/metrickit from the fixture binaries")

// metricKitSeeds are the committed payloads: testdata/metrickit/NAME.json
// written by metrickitfixture.Generate with the seed, the second with the
// crash's offsets as iOS 14 and 15 wrote them (the load address).
var metricKitSeeds = []struct {
	name  string
	seed  uint64
	quirk bool
}{
	{"payload-seed1", 1, false},
	{"payload-ios14-seed2", 2, true},
}

// metricKitBinaries are the images the generated payloads' frames are in:
// two fixture binaries with dSYMs and a system library without symbols.
func metricKitBinaries(t testing.TB) []metrickitfixture.Binary {
	t.Helper()
	var bins []metrickitfixture.Binary
	for _, b := range []struct{ file, name string }{{"chain-arm64-O1", "Chain"}, {"dwarf-arm64-O1", "DwarfKit"}} {
		bin, err := metrickitfixture.LoadBinary(filepath.Join(symbolsDir, b.file), b.name)
		if err != nil {
			t.Fatal(err)
		}
		bins = append(bins, bin)
	}
	id, err := uuid.Parse("0F6A3D1E-5B2C-3A41-9D7E-2C8B4F1A6E90")
	if err != nil {
		t.Fatal(err)
	}
	return append(bins, metrickitfixture.SystemLibrary("UIKitCore", id))
}

// TestMetricKitFixtures checks that the committed payloads are what the
// generator writes from the fixture binaries (-update-metrickit rewrites
// them).
func TestMetricKitFixtures(t *testing.T) {
	bins := metricKitBinaries(t)
	for _, s := range metricKitSeeds {
		got := metrickitfixture.Generate(bins, s.seed, s.quirk).JSON
		path := filepath.Join("testdata", "metrickit", s.name+".json")
		if *updateMetricKit {
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, got, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		want, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from what metrickitfixture.Generate writes: run go test ./cmd/stackimage -run TestMetricKitFixtures -update-metrickit", path)
		}
	}
}

// symbolizerTruth answers addresses of the fixture binaries with
// llvm-symbolizer-16, run on their dSYMs: the truth the symbolicated
// payloads are checked against.
type symbolizerTruth struct {
	tool   string
	bins   []metrickitfixture.Binary
	textVM []uint64 // each binary's __TEXT vmaddr
	cache  map[[2]uint64][]truthLine
}

// truthLine is one function at an address, innermost first.
type truthLine struct {
	Function, File string
	Line           int
}

func newSymbolizerTruth(t *testing.T, bins []metrickitfixture.Binary) *symbolizerTruth {
	t.Helper()
	st := &symbolizerTruth{bins: bins, cache: map[[2]uint64][]truthLine{},
		tool: testtool.Path(t, "llvm-symbolizer-16", "llvm-16", "the truth MetricKit payloads' names, files and lines are checked against")}
	for _, b := range bins {
		var vm uint64
		if b.Path != "" {
			f, err := image.Open(b.Path)
			if err != nil {
				t.Fatal(err)
			}
			text, _ := f.Images[0].TextSegment()
			vm = text.Addr
			f.Close()
		}
		st.textVM = append(st.textVM, vm)
	}
	return st
}

// lookup returns the functions llvm-symbolizer finds at offset in binary
// bi, innermost first; nil for a binary without a file. Offsets not
// prefetched are asked one by one.
func (st *symbolizerTruth) lookup(t *testing.T, bi int, offset uint64) []truthLine {
	t.Helper()
	if st.bins[bi].Path == "" {
		return nil
	}
	if lines, ok := st.cache[[2]uint64{uint64(bi), offset}]; ok {
		return lines
	}
	st.prefetch(t, bi, []uint64{offset})
	return st.cache[[2]uint64{uint64(bi), offset}]
}

// prefetch asks llvm-symbolizer for the offsets of binary bi in one run.
func (st *symbolizerTruth) prefetch(t *testing.T, bi int, offsets []uint64) {
	t.Helper()
	b := st.bins[bi]
	if b.Path == "" || len(offsets) == 0 {
		return
	}
	var in strings.Builder
	for _, off := range offsets {
		fmt.Fprintf(&in, "%#x\n", st.textVM[bi]+off)
	}
	dwarf := filepath.Join(b.Path+".dSYM", "Contents", "Resources", "DWARF", filepath.Base(b.Path))
	cmd := exec.Command(st.tool, "--obj="+dwarf, "--inlining", "--output-style=JSON")
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("llvm-symbolizer: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	k := 0
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var answer struct {
			Symbol []struct {
				FunctionName, FileName string
				Line                   int
			}
		}
		if err := json.Unmarshal(line, &answer); err != nil {
			t.Fatalf("llvm-symbolizer output %q: %v", line, err)
		}
		if k >= len(offsets) {
			t.Fatalf("llvm-symbolizer answered more lines than the %d addresses asked", len(offsets))
		}
		var lines []truthLine
		for _, s := range answer.Symbol {
			lines = append(lines, truthLine{Function: s.FunctionName, File: filepath.Base(s.FileName), Line: s.Line})
		}
		st.cache[[2]uint64{uint64(bi), offsets[k]}] = lines
		k++
	}
	if k != len(offsets) {
		t.Fatalf("llvm-symbolizer answered %d of %d addresses", k, len(offsets))
	}
}

// prefetchPayloads asks for every frame's offset, and the offsets a
// caller is looked up at (one byte and one instruction back), at once.
func (st *symbolizerTruth) prefetchPayloads(t *testing.T, payloads []*metrickitfixture.Payload) {
	t.Helper()
	want := map[int][]uint64{}
	for _, p := range payloads {
		for _, d := range p.Diagnostics {
			for _, s := range d.Stacks {
				metrickitfixture.Walk(s, func(path []*metrickitfixture.Frame) {
					f := path[len(path)-1]
					want[f.Binary] = append(want[f.Binary], f.Offset, f.Offset-1, f.Offset-4)
				})
			}
		}
	}
	for bi, offs := range want {
		slices.Sort(offs)
		st.prefetch(t, bi, slices.Compact(offs))
	}
}

// metricKitPayloads are the payloads the truth tests read: the committed
// ones and one from a seed of this run.
func metricKitPayloads(t *testing.T, bins []metrickitfixture.Binary) []*metrickitfixture.Payload {
	seed := uint64(time.Now().UnixNano())
	t.Logf("fresh payload from seed %d", seed)
	var out []*metrickitfixture.Payload
	for _, s := range metricKitSeeds {
		out = append(out, metrickitfixture.Generate(bins, s.seed, s.quirk))
	}
	return append(out, metrickitfixture.Generate(bins, seed, seed%2 == 0))
}

func writeTemp(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestMetricKitSymbolicateTruth symbolicates generated payloads (the
// committed ones, one of them written as iOS 14 wrote crashes, and a
// fresh one) and checks every frame against the generator's truth and
// llvm-symbolizer: each diagnostic a process of the JSON, in the
// payload's order; a crash's threads innermost first with the
// thread-attributed one crashed; a call tree's frames in the tree's
// order; each frame's image and offset as generated, and in the fixture
// binaries its functions (inlined ones first), files and lines as
// llvm-symbolizer gives them at the frame's lookup address.
func TestMetricKitSymbolicateTruth(t *testing.T) {
	bins := metricKitBinaries(t)
	truth := newSymbolizerTruth(t, bins)
	payloads := metricKitPayloads(t, bins)
	truth.prefetchPayloads(t, payloads)
	for i, p := range payloads {
		path := writeTemp(t, fmt.Sprintf("payload%d.json", i), p.JSON)
		var rep jsonReport
		if err := json.Unmarshal([]byte(runOK(t, "symbolicate", path, "--symbols", symbolsDir, "--json")), &rep); err != nil {
			t.Fatal(err)
		}
		if rep.Format != "metrickit" {
			t.Fatalf("format %q, want metrickit", rep.Format)
		}
		procs := append([]jsonProcess{rep.JSONProcess}, rep.Processes...)
		if len(procs) != len(p.Diagnostics) {
			t.Fatalf("payload %d: %d processes, want one per diagnostic, %d", i, len(procs), len(p.Diagnostics))
		}
		checked := 0
		for di, d := range p.Diagnostics {
			proc := procs[di]
			kind := strings.TrimSuffix(d.Key, "Diagnostics")
			if got := annotation(proc.Header, "diagnostic"); got != kind {
				t.Errorf("payload %d diagnostic %d: annotation diagnostic = %q, want %q", i, di, got, kind)
			}
			for k, v := range d.Metadata {
				if got, want := annotation(proc.Header, k), fmt.Sprint(v); got != want {
					t.Errorf("payload %d %s: annotation %s = %q, want %q", i, kind, k, got, want)
				}
			}
			crash := d.Key == "crashDiagnostics"
			if crash && (proc.Header.Crash == nil || proc.Header.Crash.Type != "EXC_BAD_ACCESS" || proc.Header.Crash.Signal != "SIGSEGV") {
				t.Errorf("payload %d crash header %+v, want EXC_BAD_ACCESS (SIGSEGV)", i, proc.Header.Crash)
			}
			if len(proc.Threads) != len(d.Stacks) {
				t.Fatalf("payload %d %s: %d threads, want %d", i, kind, len(proc.Threads), len(d.Stacks))
			}
			for si, s := range d.Stacks {
				th := proc.Threads[si]
				if th.Crashed != (crash && s.ThreadAttributed) {
					t.Errorf("payload %d %s thread %d: crashed %v, want %v", i, kind, si, th.Crashed, crash && s.ThreadAttributed)
				}
				var want []*metrickitfixture.Frame
				metrickitfixture.Walk(s, func(path []*metrickitfixture.Frame) { want = append(want, path[len(path)-1]) })
				if crash {
					slices.Reverse(want) // a stack, innermost first
				}
				machine := framesByAddress(th.Frames)
				if len(machine) != len(want) {
					t.Fatalf("payload %d %s thread %d: %d frames, want %d", i, kind, si, len(machine), len(want))
				}
				for k, group := range machine {
					f := group[len(group)-1]
					w := want[k]
					if got := parseHex(t, f.Address); got != w.Address {
						t.Errorf("payload %d %s thread %d frame %d: address %#x, want %#x", i, kind, si, k, got, w.Address)
					}
					if f.Image != bins[w.Binary].Name || parseHex(t, f.ImageOffset) != w.Offset {
						t.Errorf("payload %d %s thread %d frame %d: %s+%s, want %s+%#x", i, kind, si, k, f.Image, f.ImageOffset, bins[w.Binary].Name, w.Offset)
					}
					// Frame 0 is looked up at its address, the others (return
					// addresses) inside the call: an instruction back on arm64.
					lookup := parseHex(t, f.LookupAddress)
					if k == 0 && lookup != w.Address || k > 0 && lookup != w.Address-4 {
						t.Errorf("payload %d %s thread %d frame %d: lookup address %#x for the address %#x", i, kind, si, k, lookup, w.Address)
					}
					lines := truth.lookup(t, w.Binary, w.Offset-(w.Address-lookup))
					var got []truthLine
					for _, g := range group {
						if g.Symbol != "" {
							got = append(got, truthLine{Function: strings.TrimPrefix(g.Symbol, "_"), File: filepath.Base(g.File), Line: g.Line})
						}
					}
					if bins[w.Binary].Path == "" {
						lines = nil // a system library: named by neither
					}
					if !slices.Equal(got, lines) {
						t.Errorf("payload %d %s thread %d frame %d (%s+%#x): %v, want llvm-symbolizer's %v", i, kind, si, k, f.Image, w.Offset, got, lines)
					}
					checked++
				}
			}
		}
		t.Logf("payload %d: %d frames checked", i, checked)
	}
}

// framesByAddress groups a thread's JSON frames by machine frame: the
// inlined functions at an address, then the function they are in.
func framesByAddress(frames []jsonFrame) [][]jsonFrame {
	var out [][]jsonFrame
	var cur []jsonFrame
	for _, f := range frames {
		cur = append(cur, f)
		if !f.Inlined {
			out = append(out, cur)
			cur = nil
		}
	}
	return out
}

func annotation(h *report.JSONHeader, key string) string {
	if h == nil {
		return ""
	}
	for _, a := range h.Annotations {
		if a.Key == key {
			return a.Value
		}
	}
	return ""
}

func parseHex(t *testing.T, s string) uint64 {
	t.Helper()
	v, err := strconv.ParseUint(strings.TrimPrefix(s, "0x"), 16, 64)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return v
}

// foldedWeights reads folded stacks, summing the lines of one stack.
func foldedWeights(t *testing.T, out string) map[string]int64 {
	t.Helper()
	got := map[string]int64{}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		i := strings.LastIndexByte(line, ' ')
		w, err := strconv.ParseInt(line[i+1:], 10, 64)
		if i < 0 || err != nil {
			t.Fatalf("folded line %q", line)
		}
		got[line[:i]] += w
	}
	return got
}

// TestMetricKitAggregateTruth aggregates generated payloads and checks
// the folded stacks' names and weights against the generator's truth
// named by llvm-symbolizer: a crash's threads count 1 each, at their
// innermost frame; a call tree's frames count their own samples (their
// sampleCount less their subFrames'); frames of the system library keep
// their image and offset ("UIKitCore+0x1234"). The pprof profile of the
// same payload, read by the real go tool pprof, shows the same weights
// per function, and the speedscope file weighs as much in all.
func TestMetricKitAggregateTruth(t *testing.T) {
	bins := metricKitBinaries(t)
	truth := newSymbolizerTruth(t, bins)
	payloads := metricKitPayloads(t, bins)
	truth.prefetchPayloads(t, payloads)
	for i, p := range payloads {
		path := writeTemp(t, fmt.Sprintf("payload%d.json", i), p.JSON)
		want := map[string]int64{}
		flat := map[string]int64{}
		var total int64
		for _, d := range p.Diagnostics {
			crash := d.Key == "crashDiagnostics"
			for _, s := range d.Stacks {
				if crash && !s.ThreadAttributed {
					continue // a crash counts its thread-attributed stack alone
				}
				metrickitfixture.Walk(s, func(path []*metrickitfixture.Frame) {
					f := path[len(path)-1]
					w := int64(f.Self)
					if crash {
						w = 0
						if len(f.Children) == 0 {
							w = 1
						}
					}
					if w == 0 {
						return
					}
					var names []string
					for k, pf := range path {
						offset := pf.Offset
						if k < len(path)-1 {
							offset-- // a caller: looked up inside the call
						}
						lines := truth.lookup(t, pf.Binary, offset)
						if lines == nil {
							// No symbols: the image and the offset as written.
							names = append(names, fmt.Sprintf("%s+%#x", bins[pf.Binary].Name, pf.Offset))
							continue
						}
						for j := len(lines) - 1; j >= 0; j-- {
							names = append(names, lines[j].Function)
						}
					}
					want[strings.Join(names, ";")] += w
					flat[names[len(names)-1]] += w
					total += w
				})
			}
		}
		got := foldedWeights(t, runOK(t, "aggregate", path, "--symbols", symbolsDir, "--format", "folded", "--quiet"))
		for k := range got {
			if strings.HasPrefix(k, "_") || strings.Contains(k, ";_") {
				// C's leading underscore: the symbol table's spelling.
				got[strings.ReplaceAll(strings.TrimPrefix(k, "_"), ";_", ";")] = got[k]
				delete(got, k)
			}
		}
		if diff := cmpMaps(want, got); diff != "" {
			t.Errorf("payload %d: folded stacks differ from the truth:\n%s", i, diff)
		}

		profile := filepath.Join(t.TempDir(), "p.pb.gz")
		runOK(t, "aggregate", path, "--symbols", symbolsDir, "--format", "pprof", "-o", profile, "--quiet")
		top := goToolPprofTop(t, profile)
		var sum int64
		for name, w := range flat {
			if top[name] != w {
				t.Errorf("payload %d: go tool pprof -top: %s flat %d, want %d", i, name, top[name], w)
			}
			sum += w
		}
		if sum != total || top[""] != total {
			t.Errorf("payload %d: go tool pprof -top total %d, want %d", i, top[""], total)
		}

		var speedscope struct {
			Profiles []struct {
				EndValue int64   `json:"endValue"`
				Weights  []int64 `json:"weights"`
			} `json:"profiles"`
		}
		if err := json.Unmarshal([]byte(runOK(t, "aggregate", path, "--symbols", symbolsDir, "--format", "speedscope", "--quiet")), &speedscope); err != nil {
			t.Fatal(err)
		}
		if len(speedscope.Profiles) != 1 || speedscope.Profiles[0].EndValue != total {
			t.Errorf("payload %d: speedscope %+v, want one profile weighing %d", i, speedscope.Profiles, total)
		}
	}
}

func cmpMaps(want, got map[string]int64) string {
	var b strings.Builder
	for k, w := range want {
		if got[k] != w {
			fmt.Fprintf(&b, "  %s: %d, want %d\n", k, got[k], w)
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			fmt.Fprintf(&b, "  %s: %d, want none\n", k, g)
		}
	}
	return b.String()
}

// goToolPprofTop runs go tool pprof -top on a profile's weight and
// returns each function's flat value, the total under "".
func goToolPprofTop(t *testing.T, profile string) map[string]int64 {
	t.Helper()
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go command: %v", err)
	}
	out, err := exec.Command(goCmd, "tool", "pprof", "-top", "-nodecount=100000", "-nodefraction=0", "-sample_index=weight", profile).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof: %v\n%s", err, out)
	}
	top := map[string]int64{}
	for _, line := range strings.Split(string(out), "\n") {
		fields := strings.Fields(line)
		if len(fields) >= 6 && strings.Contains(fields[1], "%") {
			flatV, err := strconv.ParseInt(fields[0], 10, 64)
			if err != nil {
				continue
			}
			// pprof marks a function inlined at a location " (inline)";
			// its samples are the function's all the same.
			name := strings.TrimSuffix(strings.Join(fields[5:], " "), " (inline)")
			top[strings.TrimPrefix(name, "_")] += flatV
		}
		if strings.HasPrefix(strings.TrimSpace(line), "Showing nodes accounting for") {
			// "Showing nodes accounting for 123, 100% of 123 total"
			if i := strings.Index(line, " of "); i >= 0 {
				rest := strings.Fields(line[i+4:])
				if v, err := strconv.ParseInt(rest[0], 10, 64); err == nil {
					top[""] = v
				}
			}
		}
	}
	return top
}

// The text output of a payload: each diagnostic with its header (the
// crash's exception, every metadata field as an annotation), a call
// tree's order said; --format same refuses MetricKit plainly, as Apple
// defines no text layout of a payload.
func TestMetricKitText(t *testing.T) {
	path := filepath.Join("testdata", "metrickit", "payload-seed1.json")
	out := runOK(t, "symbolicate", path, "--symbols", symbolsDir)
	for _, want := range []string{
		"Format: MetricKit diagnostic payload\n",
		"Exception:  EXC_BAD_ACCESS (SIGSEGV)\n",
		"  diagnostic = crash\n", "  diagnostic = hang\n", "  diagnostic = cpuException\n",
		"  diagnostic = diskWriteException\n", "  diagnostic = appLaunch\n",
		"  hangDuration = 3.2 sec\n",
		"Order:      call graph, outermost first",
		" Crashed:\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
	var stdout, stderr bytes.Buffer
	code := run([]string{"symbolicate", path, "--format", "same"}, strings.NewReader(""), &stdout, &stderr)
	if code != 1 || stdout.Len() != 0 || !strings.Contains(stderr.String(), "--format same writes .crash, .ips, .plcrash, sample, spindump and microstackshot reports; this is a MetricKit diagnostic payload") {
		t.Errorf("--format same: exit %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
}

// Each diagnostic's kind and metadata are labels: --group-by
// label:diagnostic gives a group per kind, weighted as the truth says.
func TestMetricKitGroupByKind(t *testing.T) {
	bins := metricKitBinaries(t)
	p := metrickitfixture.Generate(bins, 1, false)
	want := map[string]int64{}
	for _, d := range p.Diagnostics {
		kind := strings.TrimSuffix(d.Key, "Diagnostics")
		for _, s := range d.Stacks {
			if d.Key == "crashDiagnostics" && !s.ThreadAttributed {
				continue // a crash counts its thread-attributed stack alone
			}
			metrickitfixture.Walk(s, func(path []*metrickitfixture.Frame) {
				f := path[len(path)-1]
				if d.Key == "crashDiagnostics" {
					if len(f.Children) == 0 {
						want[kind]++
					}
					return
				}
				want[kind] += int64(f.Self)
			})
		}
	}
	out := runOK(t, "aggregate", filepath.Join("testdata", "metrickit", "payload-seed1.json"), "--symbols", symbolsDir,
		"--group-by", "label:diagnostic", "--format", "json", "--quiet")
	var doc struct {
		Groups []struct {
			Fingerprint []string `json:"fingerprint"`
			Weight      int64    `json:"weight"`
		} `json:"groups"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, g := range doc.Groups {
		label := g.Fingerprint[len(g.Fingerprint)-1]
		got[strings.TrimPrefix(label, "diagnostic=")] += g.Weight
	}
	if diff := cmpMaps(want, got); diff != "" {
		t.Errorf("weight per diagnostic kind:\n%s", diff)
	}
}
