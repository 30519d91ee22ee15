package hangreport

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stackimage/stackimage/crashreport"
	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/internal/testcorpus"
)

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// nodeString describes a node for comparison: depth, count, parent, and
// the frame's symbol (or address when unnamed), image and source position.
func nodeString(r *Report, th *Thread, i int) string {
	n := th.Nodes[i]
	f := r.Frame(n.Text)
	what := f.Symbol
	switch {
	case what == "" && !f.HasAddress:
		what = f.Text
	case what == "":
		what = fmt.Sprintf("??? %#x", f.Address)
	}
	s := fmt.Sprintf("%d %d parent=%d %s in %s", n.Depth, n.Count, n.Parent, what, f.Image)
	if f.HasOffset {
		s += fmt.Sprintf(" +%d", f.SymbolOffset)
	}
	if f.HasImageOffset {
		s += fmt.Sprintf(" image+%#x", f.ImageOffset)
	}
	if f.File != "" {
		s += fmt.Sprintf(" %s:%d", f.File, f.Line)
	}
	if n.Kernel {
		s += " kernel"
	}
	if n.Samples != "" {
		s += " samples " + n.Samples
	}
	return s
}

func threadStrings(r *Report, th *Thread) []string {
	var out []string
	for i := range th.Nodes {
		out = append(out, nodeString(r, th, i))
	}
	return out
}

func TestParseSampleTree(t *testing.T) {
	r, err := Parse(readTestdata(t, "branches-sample.txt"))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if r.Kind != KindSample || len(r.Processes) != 1 {
		t.Fatalf("Kind %q with %d processes, want sample with 1", r.Kind, len(r.Processes))
	}
	pr := r.Processes[0]
	got := struct {
		Name, Path, Identifier, Version, Arch string
		PID                                   int
		LoadAddress                           uint64
	}{pr.Name, pr.Path, pr.Identifier, pr.Version, pr.Arch, pr.PID, pr.LoadAddress}
	want := got
	want.Name, want.Path, want.Identifier, want.Version, want.Arch = "Demo", "/Applications/Demo.app/Contents/MacOS/Demo", "com.example.demo", "1.0 (1)", "ARM64"
	want.PID, want.LoadAddress = 42, 0x100000000
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("process (-want +got):\n%s", diff)
	}
	if len(pr.Threads) != 2 {
		t.Fatalf("%d threads, want 2", len(pr.Threads))
	}
	th := &pr.Threads[0]
	if th.ID != 1001 || th.Count != 100 || !strings.Contains(th.Heading, "com.apple.main-thread") {
		t.Errorf("thread 0: ID %d count %d heading %q", th.ID, th.Count, th.Heading)
	}
	wantNodes := []string{
		"0 100 parent=-1 start in dyld +2360",
		"1 100 parent=0 ??? 0x100003f00 in Demo image+0x3f00",
		"2 60 parent=1 ??? 0x100003e10 in Demo image+0x3e10",
		"3 60 parent=2 __psynch_mutexwait in libsystem_kernel.dylib +8",
		"2 40 parent=1 helper in Demo +12 helper.c:7",
		"3 40 parent=4 ??? 0x100003c20 in Demo image+0x3c20",
	}
	if diff := cmp.Diff(wantNodes, threadStrings(r, th)); diff != "" {
		t.Errorf("thread 0 call graph (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{2, 4}, th.Children(1)); diff != "" {
		t.Errorf("Children(1) (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]int{0}, th.Roots()); diff != "" {
		t.Errorf("Roots (-want +got):\n%s", diff)
	}
	wantNodes = []string{
		"0 100 parent=-1 thread_start in libsystem_pthread.dylib +8",
		"1 100 parent=0 ??? 0x1234 in <unknown binary>",
	}
	if diff := cmp.Diff(wantNodes, threadStrings(r, &pr.Threads[1])); diff != "" {
		t.Errorf("thread 1 call graph (-want +got):\n%s", diff)
	}
	var top []string
	for _, e := range pr.TopOfStack {
		f := r.Frame(e.Text)
		top = append(top, fmt.Sprintf("%d %q %#x", e.Count, f.Symbol, f.Address))
	}
	if diff := cmp.Diff([]string{`60 "__psynch_mutexwait" 0x0`, `40 "" 0x100003c20`, `100 "" 0x1234`}, top); diff != "" {
		t.Errorf("TopOfStack (-want +got):\n%s", diff)
	}
	if len(pr.TotalInStack) != 2 || pr.TotalInStack[1].Count != 60 {
		t.Errorf("TotalInStack = %+v, want 2 entries, the second counting 60", pr.TotalInStack)
	}
	if len(pr.Images) != 2 {
		t.Fatalf("%d images, want 2", len(pr.Images))
	}
	im := pr.Images[0]
	if im.Start != 0x100000000 || im.End != 0x100003fff || !im.Main || im.Name != "Demo" || im.Version != "1.0 - 1" ||
		im.UUID.String() != "11111111-2222-3333-4444-555555555555" || im.Path != "/Applications/Demo.app/Contents/MacOS/Demo" {
		t.Errorf("image 0 = %+v", im)
	}
}

func TestParseSpindump(t *testing.T) {
	r, err := Parse(readTestdata(t, "spindump.txt"))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if r.Kind != KindSpindump || len(r.Processes) != 2 {
		t.Fatalf("Kind %q with %d processes, want spindump with 2", r.Kind, len(r.Processes))
	}
	if got := r.Target(); got != 1 {
		t.Errorf("Target() = %d, want 1 (Demo, PID 42)", got)
	}
	demo := r.Processes[1]
	if demo.Name != "Demo" || demo.PID != 42 || demo.Arch != "arm64" || demo.Identifier != "com.example.demo" {
		t.Errorf("process 1 = %q [%d] %q %q", demo.Name, demo.PID, demo.Arch, demo.Identifier)
	}
	if len(demo.Threads) != 1 {
		t.Fatalf("%d threads, want 1", len(demo.Threads))
	}
	th := &demo.Threads[0]
	if th.ID != 0x1a2b || th.Count != 10 {
		t.Errorf("thread ID %#x count %d, want 0x1a2b and 10", th.ID, th.Count)
	}
	want := []string{
		"0 10 parent=-1 start in dyld +2360 image+0x6b38 samples 1-10",
		"1 10 parent=0 ??? 0x100003f00 in Demo image+0x3f00 samples 1-10",
		"2 6 parent=1 main in Demo +16 image+0x3e10 main.c:12 samples 1-6",
		"3 6 parent=2 __psynch_mutexwait in libsystem_kernel.dylib +8 image+0x38c8 samples 1-6",
		"4 6 parent=3 ??? 0xfffffe00070004d2 in kernel.release.t8112 image+0x4d2 kernel samples 1-6",
		"2 4 parent=1 <patched truncated backtrace> in  samples 7-10",
		"3 4 parent=5 ??? 0x100003c20 in Demo image+0x3c20 samples 7-10",
	}
	if diff := cmp.Diff(want, threadStrings(r, th)); diff != "" {
		t.Errorf("call graph (-want +got):\n%s", diff)
	}
	if f := r.Frame(th.Nodes[2].Text); f.Column != 3 {
		t.Errorf("main's column = %d, want 3", f.Column)
	}
	if r.Heaviest == nil {
		t.Fatal("no heaviest stack")
	}
	want = []string{
		"0 10 parent=-1 start in dyld +2360 image+0x6b38",
		"1 10 parent=0 ??? 0x100003f00 in Demo image+0x3f00",
		"2 10 parent=1 __psynch_mutexwait in libsystem_kernel.dylib +8 image+0x38c8",
	}
	if diff := cmp.Diff(want, threadStrings(r, r.Heaviest)); diff != "" {
		t.Errorf("heaviest stack (-want +got):\n%s", diff)
	}
	if n := len(demo.Images); n != 3 {
		t.Fatalf("%d images, want 3", n)
	}
	if k := demo.Images[2]; !k.Kernel || k.Start != 0xfffffe0007000000 || k.Name != "kernel.release.t8112" || k.Version != "10002.100.9" {
		t.Errorf("kernel image = %+v", k)
	}
	if b := demo.Images[0]; b.Name != "com.example.demo" || b.Version != "1.0 (1)" {
		t.Errorf("bundle image name %q version %q, want com.example.demo and 1.0 (1)", b.Name, b.Version)
	}
}

// names is a Namer over a table keyed by process and address.
func names(table map[[2]uint64]Name) Namer {
	return func(proc int, addr uint64) (Name, bool) {
		n, ok := table[[2]uint64{uint64(proc), addr}]
		return n, ok
	}
}

// TestWrite checks that Write changes the ??? frames a Namer names, in
// each style, and not one other byte. The expectation is the input with
// those frames replaced by hand.
func TestWrite(t *testing.T) {
	sampleNames := names(map[[2]uint64]Name{
		{0, 0x100003f00}: {Symbol: "main", Offset: 16, HasOffset: true, File: "/src/main.c", Line: 12},
		{0, 0x100003e10}: {Symbol: "wait_here", HasOffset: true},
		{0, 0x100003c20}: {Symbol: "worker", Offset: 32, HasOffset: true, File: "worker.c", Line: 9},
		// A named frame keeps the report's name.
		{0, 0x100003d0c}: {Symbol: "not_helper", HasOffset: true},
	})
	spindumpNames := names(map[[2]uint64]Name{
		{1, 0x100003f00}: {Symbol: "main", Offset: 16, HasOffset: true, File: "/src/main.c", Line: 12},
		{1, 0x100003c20}: {Symbol: "worker", Offset: 32, HasOffset: true},
		{0, 0x102000064}: {Symbol: "other_main", Offset: 100, HasOffset: true},
		// Process 0's address space is not process 1's.
		{0, 0x100003f00}: {Symbol: "wrong_process"},
	})
	tests := []struct {
		name, file string
		names      Namer
		style      Style
		replace    []string // old, new pairs
	}{
		{"sample", "branches-sample.txt", sampleNames, StyleReport, []string{
			"???  (in Demo)  load address 0x100000000 + 0x3f00  [0x100003f00]", "main  (in Demo) + 16  [0x100003f00]  main.c:12",
			"???  (in Demo)  load address 0x100000000 + 0x3e10  [0x100003e10]", "wait_here  (in Demo) + 0  [0x100003e10]",
			"???  (in Demo)  load address 0x100000000 + 0x3c20  [0x100003c20]", "worker  (in Demo) + 32  [0x100003c20]  worker.c:9",
		}},
		{"sample atos", "branches-sample.txt", sampleNames, StyleAtos, []string{
			"???  (in Demo)  load address 0x100000000 + 0x3f00  [0x100003f00]", "main (in Demo) (main.c:12) [0x100003f00]",
			"???  (in Demo)  load address 0x100000000 + 0x3e10  [0x100003e10]", "wait_here (in Demo) + 0 [0x100003e10]",
			"???  (in Demo)  load address 0x100000000 + 0x3c20  [0x100003c20]", "worker (in Demo) (worker.c:9) [0x100003c20]",
		}},
		{"spindump", "spindump.txt", spindumpNames, StyleReport, []string{
			"??? (Demo + 16128) [0x100003f00]", "main + 16 (main.c:12 in Demo + 16128) [0x100003f00]",
			"??? (Demo + 15392) [0x100003c20]", "worker + 32 (Demo + 15392) [0x100003c20]",
			"??? (other + 100) [0x102000064]", "other_main + 100 (other + 100) [0x102000064]",
		}},
		{"spindump atos", "spindump.txt", spindumpNames, StyleAtos, []string{
			"??? (Demo + 16128) [0x100003f00]", "main (in Demo) (main.c:12) [0x100003f00]",
			"??? (Demo + 15392) [0x100003c20]", "worker (in Demo) + 32 [0x100003c20]",
			"??? (other + 100) [0x102000064]", "other_main (in other) + 100 [0x102000064]",
		}},
		{"no names", "spindump.txt", nil, StyleReport, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := readTestdata(t, tt.file)
			r, err := Parse(data)
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			var buf bytes.Buffer
			if err := r.Write(&buf, tt.names, tt.style); err != nil {
				t.Fatal(err)
			}
			want := string(data)
			for i := 0; i < len(tt.replace); i += 2 {
				if !strings.Contains(want, tt.replace[i]) {
					t.Fatalf("testdata has no %q", tt.replace[i])
				}
				want = strings.ReplaceAll(want, tt.replace[i], tt.replace[i+1])
			}
			if diff := cmp.Diff(strings.Split(want, "\n"), strings.Split(buf.String(), "\n")); diff != "" {
				t.Errorf("Write (-want +got):\n%s", diff)
			}
		})
	}
}

// TestWriteKeepsBytes checks that CRLF line ends and a missing final
// newline survive Write.
func TestWriteKeepsBytes(t *testing.T) {
	data := strings.ReplaceAll(string(readTestdata(t, "branches-sample.txt")), "\n", "\r\n")
	data = strings.TrimSuffix(data, "\r\n")
	r, err := Parse([]byte(data))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	var buf bytes.Buffer
	if err := r.Write(&buf, nil, StyleReport); err != nil {
		t.Fatal(err)
	}
	if buf.String() != data {
		t.Errorf("Write changed the input without names")
	}
	if n := len(r.Processes[0].Threads[0].Nodes); n != 6 {
		t.Errorf("CRLF input: %d nodes in thread 0, want 6", n)
	}
}

func TestDetect(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  bool
	}{
		{"sample", "Analysis of sampling Demo (pid 42) every 1 millisecond\nProcess: Demo [42]\n", true},
		{"sample from its first line", "Sampling process 42 for 3 seconds with 1 millisecond of run time between samples\n", true},
		{"sample call graph only", "\nCall graph:\n    1 Thread_1\n", true},
		{"spindump", "Date/Time:        x\nData Source:      Stackshots\n\nDuration:         1.00s\nSteps:            10\n", true},
		{"crash", "Incident Identifier: X\nProcess:   T [1]\nBinary Images:\n", false},
		{"crash with a Data Source but no steps", "Process:   T [1]\nData Source:  x\n", false},
		{"ips", `{"bug_type":"309"}` + "\n{}", false},
		{"json naming a call graph", "{\"x\":\"\nCall graph:\n\"}", false},
		{"spindump processes without the header", "Process:          Demo [42]\nPath:             /x\n\n  Thread 0x1a2b    10 samples (1-10)    priority 47\n  10  ??? (Demo + 16128) [0x100003f00] 1-10\n", true},
		{"spindump process of one sample", "Process:  Demo [42]\n\n  Thread 0x1a2b    1 sample (1)\n", true},
		{"markdown quoting a call graph", "# Notes\n\n```\nCall graph:\n    2449 Thread_16614993   DispatchQueue_1\n```\n", false},
		{"markdown quoting a spindump", "Notes on the hang.\n\nProcess:          Demo [42]\n  Thread 0x1a2b    10 samples (1-10)\n", false},
		{"empty", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Detect([]byte(tt.input)); got != tt.want {
				t.Errorf("Detect(%.30q) = %v, want %v", tt.input, got, tt.want)
			}
		})
	}
}

// TestBadInput feeds broken reports: each must give an error naming the
// line, and keep what came before it.
func TestBadInput(t *testing.T) {
	sample := string(readTestdata(t, "branches-sample.txt"))
	cutAt := func(s, marker string) string {
		i := strings.Index(s, marker)
		if i < 0 {
			t.Fatalf("testdata has no %q", marker)
		}
		return s[:i]
	}
	tests := []struct {
		name    string
		input   string
		inErr   string
		threads int // threads of process 0 still read
		nodes   int // nodes of its first thread
	}{
		{"cut in the header", cutAt(sample, "Date/Time"), "before any call graph", 0, 0},
		{"cut after a thread heading", cutAt(sample, "    + 100 start"), "line 21", 1, 0},
		{"cut in a frame", cutAt(sample, "(in libsystem_kernel.dylib) + 8"), "", 1, 4},
		{"garbage line", strings.Replace(sample, "    +     40 helper", "    +     forty helper", 1), "line 25", 2, 5},
		{"absurd count", strings.Replace(sample, "    +     40 helper", "    +     99999999999999999999999 helper", 1), "does not fit 64 bits", 2, 6},
		{"count without a frame", strings.Replace(sample, "    +     40 helper  (in Demo) + 12  [0x100003d0c]  helper.c:7", "    +     40", 1), "no frame", 2, 5},
		{"bad image line", strings.Replace(sample, "       0x180a0a000 -", "       0xzz -", 1), "START - END", 2, 6},
		{"not a report", "hello\nworld\n", "not a sample", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Parse([]byte(tt.input))
			if r == nil {
				t.Fatalf("Parse returned no report (err %v)", err)
			}
			if tt.inErr != "" && (err == nil || !strings.Contains(err.Error(), tt.inErr)) {
				t.Errorf("Parse error = %v, want it to contain %q", err, tt.inErr)
			}
			if tt.name == "not a report" && !errors.Is(err, ErrNotHangReport) {
				t.Errorf("Parse error = %v, want ErrNotHangReport", err)
			}
			threads, nodes := 0, 0
			if len(r.Processes) > 0 {
				threads = len(r.Processes[0].Threads)
				if threads > 0 {
					nodes = len(r.Processes[0].Threads[0].Nodes)
				}
			}
			if threads != tt.threads || nodes != tt.nodes {
				t.Errorf("kept %d threads, %d nodes in the first; want %d, %d", threads, nodes, tt.threads, tt.nodes)
			}
			var buf bytes.Buffer
			if err := r.Write(&buf, nil, StyleReport); err != nil || buf.String() != tt.input {
				t.Errorf("Write of a partial report did not give back its input (err %v)", err)
			}
		})
	}
}

// TestDeepAndWide builds call graphs a hundred thousand nodes deep and
// wide: the tree is built without recursion, and linking a node to its
// siblings does not walk them.
func TestDeepAndWide(t *testing.T) {
	const n = 100000
	var deep, wide strings.Builder
	deep.WriteString("Call graph:\n    1 Thread_1\n")
	wide.WriteString("Call graph:\n    1 Thread_1\n")
	for i := 0; i < n; i++ {
		deep.WriteString(strings.Repeat(" ", 6+i%2000))
		deep.WriteString("1 f  (in A) + 1  [0x1]\n")
		wide.WriteString("      1 f  (in A) + 1  [0x1]\n")
	}
	r, err := Parse([]byte(deep.String()))
	if err != nil {
		t.Fatalf("deep: %v", err)
	}
	th := &r.Processes[0].Threads[0]
	if len(th.Nodes) != n || th.Nodes[1999].Depth != 1999 || th.Nodes[2000].Depth != 0 {
		t.Errorf("deep: %d nodes, depths %d and %d; want %d, 1999 and 0", len(th.Nodes), th.Nodes[1999].Depth, th.Nodes[2000].Depth, n)
	}
	r, err = Parse([]byte(wide.String()))
	if err != nil {
		t.Fatalf("wide: %v", err)
	}
	th = &r.Processes[0].Threads[0]
	if got := len(th.Roots()); got != n {
		t.Errorf("wide: %d roots, want %d", got, n)
	}
	if d := r.Dump(); len(d.Threads) != 1 || len(d.Threads[0].Frames) != n {
		t.Errorf("wide: Dump has %d threads, want 1 with %d frames", len(d.Threads), n)
	}
}

// TestLongLine parses a call graph with a 10 MiB line in it.
func TestLongLine(t *testing.T) {
	input := "Call graph:\n    1 Thread_1\n      1 " + strings.Repeat("(in ", 10<<20/4) + "\n      1 f  (in A) + 1  [0x1]\n"
	r, err := Parse([]byte(input))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if n := len(r.Processes[0].Threads[0].Nodes); n != 2 {
		t.Errorf("%d nodes, want 2", n)
	}
	var buf bytes.Buffer
	if err := r.Write(&buf, names(nil), StyleReport); err != nil || buf.String() != input {
		t.Errorf("Write did not give back the input (err %v)", err)
	}
}

func TestDump(t *testing.T) {
	r, err := Parse(readTestdata(t, "spindump.txt"))
	if err != nil {
		t.Fatal(err)
	}
	d := r.Dump()
	if d.Format != "sample" || d.Arch == nil || d.Arch.Name != "arm64" || d.Process.Name != "Demo" || d.System.Hardware != "Mac14,2" {
		t.Fatalf("Dump: format %q arch %v process %q hardware %q", d.Format, d.Arch, d.Process.Name, d.System.Hardware)
	}
	if len(d.Threads) != 1 || d.Threads[0].Name != "com.apple.main-thread" {
		t.Fatalf("Dump threads = %+v", d.Threads)
	}
	var got []string
	for _, f := range d.Threads[0].Frames {
		img := "-"
		if f.ImageIndex >= 0 {
			img = d.Images[f.ImageIndex].Name
		}
		got = append(got, fmt.Sprintf("%#x %s+%#x %q", f.Address, img, f.ImageOffset, f.Symbol))
	}
	want := []string{
		`0x180a10b38 dyld+0x6b38 "start"`,
		`0x100003f00 Demo+0x3f00 ""`,
		`0x100003e10 Demo+0x3e10 "main"`,
		`0x180d5a8c8 -+0x0 "__psynch_mutexwait"`, // libsystem_kernel is not in the list
		`0xfffffe00070004d2 kernel.release.t8112+0x4d2 ""`,
		`0x100003c20 Demo+0x3c20 ""`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("frames (-want +got):\n%s", diff)
	}
	if im := d.Images[0]; im.Size != 0x4000 || im.UUID.String() != "11111111-2222-3333-4444-555555555555" {
		t.Errorf("image 0 size %#x UUID %s", im.Size, im.UUID)
	}
}

// TestSampleGuidesAndCollapsedFrames reads a call graph drawn with every
// guide character, a C++ name holding "(in ", and a frame sample
// collapsed over several addresses, which keeps no address and is left as
// written.
func TestSampleGuidesAndCollapsedFrames(t *testing.T) {
	input := "Call graph:\n" +
		"    10 Thread_7\n" +
		"      10 start  (in dyld) + 1  [0x10]\n" +
		"      + 9 f(int (in))  (in A) + 2  [0x20]  f.cc:3\n" +
		"      + ! 8 ???  (in A)  load address 0x0 + 0x30  [0x30]\n" +
		"      + ! : 7 g  (in A) + 4,8,...  [0x40,0x44,...]  g.cc:9\n" +
		"      + ! : | 6 ???  (in A)  load address 0x0 + 0x50  [0x50]\n" +
		"      + ! : | + 5 h  (in A) + 1  [0x60]\n" +
		"      + ! 1 ???  (in A)  load address 0x0 + 0x70  [0x70]\n" +
		"      1 ???  (in A)  load address 0x0 + 0x80  [0x80]\n"
	r, err := Parse([]byte(input))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	want := []string{
		"0 10 parent=-1 start in dyld +1",
		"1 9 parent=0 f(int (in)) in A +2 f.cc:3",
		"2 8 parent=1 ??? 0x30 in A image+0x30",
		"3 7 parent=2 g in A g.cc:9",
		"4 6 parent=3 ??? 0x50 in A image+0x50",
		"5 5 parent=4 h in A +1",
		"2 1 parent=1 ??? 0x70 in A image+0x70",
		"0 1 parent=-1 ??? 0x80 in A image+0x80",
	}
	th := &r.Processes[0].Threads[0]
	if diff := cmp.Diff(want, threadStrings(r, th)); diff != "" {
		t.Errorf("call graph (-want +got):\n%s", diff)
	}
	var buf bytes.Buffer
	all := func(int, uint64) (Name, bool) { return Name{Symbol: "n"}, true }
	if err := r.Write(&buf, all, StyleReport); err != nil {
		t.Fatal(err)
	}
	wantOut := strings.NewReplacer(
		"???  (in A)  load address 0x0 + 0x30  [0x30]", "n  (in A)  [0x30]",
		"???  (in A)  load address 0x0 + 0x50  [0x50]", "n  (in A)  [0x50]",
		"???  (in A)  load address 0x0 + 0x70  [0x70]", "n  (in A)  [0x70]",
		"???  (in A)  load address 0x0 + 0x80  [0x80]", "n  (in A)  [0x80]",
	).Replace(input)
	if diff := cmp.Diff(strings.Split(wantOut, "\n"), strings.Split(buf.String(), "\n")); diff != "" {
		t.Errorf("Write (-want +got):\n%s", diff)
	}
}

// TestDetectFiles runs Detect over the crash reports crashreport's tests
// use, which it must not claim, and over the sample and spindump here and
// the corpus's sample, which it must.
func TestDetectFiles(t *testing.T) {
	type detectCase struct {
		path string
		want bool
	}
	tests := []detectCase{
		{"../crashreport/testdata/arm64.crash", false},
		{"../crashreport/testdata/arm64.ips", false},
		{"../crashreport/testdata/x86_64-kscrash.json", false},
		{"testdata/branches-sample.txt", true},
		{"testdata/spindump.txt", true},
		// The README quotes a sample's call graph: it is no report.
		{"../README.md", false},
		{"../docs/hangreports.md", false},
	}
	if dir, err := testcorpus.Find(); err == nil {
		res := filepath.Join(dir, "macsymbolicator", "MacSymbolicatorTests", "Resources")
		tests = append(tests,
			detectCase{filepath.Join(res, "Samples", "singlethread-sample.txt"), true},
			detectCase{filepath.Join(res, "Crashes", "single-target-crash.crash"), false})
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.path), func(t *testing.T) {
			data, err := os.ReadFile(tt.path)
			if err != nil {
				t.Fatal(err)
			}
			if got := Detect(data); got != tt.want {
				t.Errorf("Detect(%s) = %v, want %v", tt.path, got, tt.want)
			}
		})
	}
}

// TestManySectionHeadings parses a run of section headings with no blank
// line between them: each is sized from the first one's count, so the
// input is scanned once, not once per heading.
func TestManySectionHeadings(t *testing.T) {
	for _, heading := range []string{"Total number in stack\n", "Sort by top of stack\n", "Binary Images:\n"} {
		input := "Call graph:\n    1 Thread_1\n" + strings.Repeat(heading, 10000)
		p := newParser([]byte(input))
		if r, _ := p.run(); len(r.Processes) != 1 {
			t.Fatalf("%q: no report", heading)
		}
		if p.scanned > len(input) {
			t.Errorf("%q: sections scanned %d bytes of a %d-byte input", heading, p.scanned, len(input))
		}
	}
}

// TestDumpUnknownBinary: sample's "<unknown binary>" is no image name.
func TestDumpUnknownBinary(t *testing.T) {
	r, err := Parse(readTestdata(t, "branches-sample.txt"))
	if err != nil {
		t.Fatal(err)
	}
	d := r.Dump()
	if len(d.Threads) != 2 || len(d.Threads[1].Frames) != 2 {
		t.Fatalf("Dump threads = %+v", d.Threads)
	}
	if f := d.Threads[1].Frames[1]; f.Address != 0x1234 || f.ImageName != "" || f.ImageIndex != -1 {
		t.Errorf("frame in <unknown binary> = %+v, want address 0x1234, no image", f)
	}
}

// TestParseSpindumpListing reads spindump's processes pasted without its
// header: each "Process:" starts a process of its own, as after a header,
// and a .crash parser does not claim the text.
func TestParseSpindumpListing(t *testing.T) {
	data, err := os.ReadFile("testdata/spindump.txt")
	if err != nil {
		t.Fatal(err)
	}
	listing := data[bytes.Index(data, []byte("Process:")):]
	if !Detect(listing) {
		t.Fatalf("Detect(listing) = false, want true")
	}
	if f, ok := crashreport.Detect(listing); ok {
		t.Errorf("crashreport.Detect(listing) = %s, want no format", f)
	}
	r, err := Parse(listing)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, pr := range r.Processes {
		names = append(names, fmt.Sprintf("%s [%d]: %d threads", pr.Name, pr.PID, len(pr.Threads)))
	}
	if diff := cmp.Diff([]string{"other [7]: 1 threads", "Demo [42]: 1 threads"}, names); r.Kind != KindSpindump || diff != "" {
		t.Errorf("kind %s, processes (-want +got):\n%s", r.Kind, diff)
	}
}

// TestMicrostackshotReport reads a real disk-writes report (see
// testdata/README.md): its header, heaviest stack, the process's one call
// graph with its counts, and its images; every frame's address is its
// image's load address plus the offset the frame gives.
func TestMicrostackshotReport(t *testing.T) {
	data := readTestdata(t, "microstackshot-diskwrites.ips")
	if !DetectMicrostackshot(data) || Detect(data) {
		t.Fatalf("DetectMicrostackshot = %v, Detect = %v; want true, false", DetectMicrostackshot(data), Detect(data))
	}
	r, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	if r.Kind != KindMicrostackshot || r.BugType != "145" || r.Event() != "disk writes" {
		t.Errorf("Kind %q, BugType %q, Event %q; want microstackshot, 145, disk writes", r.Kind, r.BugType, r.Event())
	}
	if r.Heaviest == nil || len(r.Heaviest.Nodes) != 23 {
		t.Fatalf("heaviest stack %+v, want 23 frames", r.Heaviest)
	}
	if len(r.Processes) != 1 || r.Target() != 0 {
		t.Fatalf("%d processes, target %d; want 1, 0", len(r.Processes), r.Target())
	}
	pr := r.Processes[0]
	if pr.Name != "aggregated" || pr.PID != 417 || len(pr.Threads) != 1 || len(pr.Images) != 9 {
		t.Fatalf("process %q [%d] with %d threads and %d images; want aggregated [417], 1, 9", pr.Name, pr.PID, len(pr.Threads), len(pr.Images))
	}
	th := &pr.Threads[0]
	roots := th.Roots()
	if len(roots) != 1 || th.Nodes[roots[0]].Count != 57 {
		t.Fatalf("roots %v, want one of 57 samples (the process's Num samples)", roots)
	}
	starts := map[string]uint64{}
	for _, im := range pr.Images {
		starts[im.Name] = im.Start
	}
	for i, n := range th.Nodes {
		var children uint64
		for _, c := range th.Children(i) {
			children += th.Nodes[c].Count
		}
		if children > n.Count {
			t.Errorf("line %d: children count %d samples, more than the node's %d", n.Line, children, n.Count)
		}
		f := r.Frame(n.Text)
		if !f.HasAddress {
			if !strings.HasPrefix(f.Text, "<") {
				t.Errorf("line %d: frame %q has no address", n.Line, f.Text)
			}
			continue
		}
		if start, ok := starts[f.Image]; !ok || start+f.ImageOffset != f.Address {
			t.Errorf("line %d: %s + %d at %#x, image at %#x (listed %v)", n.Line, f.Image, f.ImageOffset, f.Address, start, ok)
		}
	}
	d := r.Dump()
	if d.Format != dump.FormatMicrostackshot || d.Counting != dump.CountAllThreads || d.Process.Name != "aggregated" || d.Arch == nil || d.Arch.Name != "arm64" {
		t.Errorf("dump %s %v %q %v", d.Format, d.Counting, d.Process.Name, d.Arch)
	}
	want := []dump.Annotation{{Key: "bug_type", Value: "145"}, {Key: "Event", Value: "disk writes"}, {Key: "Action taken", Value: "none"},
		{Key: "Writes", Value: "1073.75 MB of file backed memory dirtied over 28159 seconds (38.13 KB per second average), exceeding limit of 12.43 KB per second over 86400 seconds"},
		{Key: "Duration", Value: "28158.82s"}, {Key: "Duration Sampled", Value: "28054.23s"}, {Key: "Steps", Value: "685 ( (10.49 MB/step))"}}
	if diff := cmp.Diff(want, d.Annotations); diff != "" {
		t.Errorf("annotations (-want +got):\n%s", diff)
	}
	// The .diag text, without the .ips line, reads the same.
	diag := data[bytes.IndexByte(data, '\n')+1:]
	r2, err := Parse(diag)
	if err != nil || r2.Kind != KindMicrostackshot || len(r2.Processes) != 1 || len(r2.Processes[0].Threads[0].Nodes) != len(th.Nodes) {
		t.Errorf(".diag text: %v, kind %q", err, r2.Kind)
	}
}

// TestMicrostackshotFrameWithoutAddress: a frame written as "(image +
// offset)" alone takes its address from the image's load address.
func TestMicrostackshotFrameWithoutAddress(t *testing.T) {
	r, err := Parse([]byte("Date/Time: 2025-01-01\nData Source:      Microstackshots\nEvent:            cpu usage\n\n" +
		"Powerstats for:   App [7]\n  3  ??? (App + 100)\n    2  ??? (libx.dylib + 16)\n\n  Binary Images:\n" +
		"           0x100000000 -        0x100003fff  App  <11111111-2222-3333-4444-555555555555>  /App\n" +
		"           0x180000000 -                ???  libx.dylib  <21111111-2222-3333-4444-555555555555>  /usr/lib/libx.dylib\n"))
	if err != nil {
		t.Fatal(err)
	}
	d := r.Dump()
	var got []uint64
	for _, f := range d.Threads[0].Frames {
		got = append(got, f.Address)
	}
	if want := []uint64{0x100000064, 0x180000010}; !cmp.Equal(want, got) {
		t.Errorf("addresses %#x, want %#x", got, want)
	}
}

// TestMicrostackshotDetect tells microstackshot reports from the other
// inputs that share their lines or their .ips first line.
func TestMicrostackshotDetect(t *testing.T) {
	for _, c := range []struct {
		name string
		data string
		want bool
	}{
		{"diag", "Date/Time:        2021-02-15\nData Source:      Microstackshots\n", true},
		{"heaviest only", "Command:          x\nEvent:            wakeups\n\nHeaviest stack for the target process:\n  1  ??? (x + 1) [0x2]\n", true},
		{"ips", "{\"bug_type\":\"202\"}\nDate/Time:        2021-02-15\nData Source:      Microstackshots\n", true},
		{"crash ips", "{\"bug_type\":\"309\"}\n{\"procName\":\"x\",\"threads\":[]}\n", false},
		{"spindump", string(readTestdata(t, "spindump.txt")), false},
		{"quoted", "```\nData Source:      Microstackshots\n```\n", false},
		{"json", "{\"bug_type\": 145", false},
	} {
		if got := DetectMicrostackshot([]byte(c.data)); got != c.want {
			t.Errorf("%s: DetectMicrostackshot = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestMicrostackshotGarbage: lines that are not a call graph's are errors
// naming their line; what could be read is kept.
func TestMicrostackshotGarbage(t *testing.T) {
	data := "Data Source:      Microstackshots\n\nPowerstats for:   App [7]\n  3  ??? (App + 100) [0x100000064]\n  .\n  99999999999999999999999  ??? (App + 1) [0x1]\n"
	r, err := Parse([]byte(data))
	if r == nil || len(r.Processes) != 1 || len(r.Processes[0].Threads[0].Nodes) != 2 {
		t.Fatalf("report %+v, want the process and its two nodes", r)
	}
	for _, want := range []string{"line 5 (byte", `not "COUNT FRAME"`, "line 6 (byte", "does not fit 64 bits"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v, want it to say %q", err, want)
		}
	}
}
