package hangreport

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stackimage/stackimage/internal/testcorpus"
	"github.com/stackimage/stackimage/internal/testtool"
)

// FuzzParse checks that Parse never panics, that its allocations stay
// within 64 times the input plus 1 MiB, and that Write and Dump of
// whatever it read never panic and give the input back when no name is
// filled in.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"branches-sample.txt", "spindump.txt", "microstackshot-diskwrites.ips"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	if dir, err := testcorpus.Find(); err == nil {
		if data, err := os.ReadFile(filepath.Join(dir, "macsymbolicator/MacSymbolicatorTests/Resources/Samples/singlethread-sample.txt")); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte("Call graph:\n    1 Thread_1\n    + 1 ???  (in A)  load address 0x1 + 0x2  [0x3]\n"))
	f.Add([]byte("Data Source: x\nSteps: 1\nProcess: A [1]\n  Thread 0x1\n  1  ??? (A + 1) [0x2] 1-1\n   *1  f + 1 (f.c:1,2 in A + 3) [0x4]\n"))
	f.Add([]byte("{\"bug_type\":\"202\"}\nData Source: Microstackshots\nEvent: cpu usage\n\nHeaviest stack for the target process:\n  2  ??? (A + 1) [0x2]\n\n" +
		"Powerstats for:   A [1]\n  2  ??? (A + 1) [0x2]\n    1  f + 1 (A + 3) [0x4]\n    1  ??? (A + 5)\n      1  <Kernel mode>\n\n  Binary Images:\n  0x1 - ???  A  <11111111-2222-3333-4444-555555555555>  /A\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		var r *Report
		limit := 64*uint64(len(data)) + 1<<20
		if got := testtool.HeapAllocated(func() { r, _ = Parse(data) }, limit); got > limit {
			t.Errorf("Parse of %d bytes allocated %d bytes, more than %d", len(data), got, limit)
		}
		if r == nil {
			return
		}
		var out countingWriter
		if err := r.Write(&out, nil, StyleReport); err != nil || out.n != len(data) {
			t.Errorf("Write without names gave %d bytes (err %v), want the input's %d", out.n, err, len(data))
		}
		all := func(int, uint64) (Name, bool) {
			return Name{Symbol: "f", HasOffset: true, File: "a/b.c", Line: 1}, true
		}
		for _, style := range []Style{StyleReport, StyleAtos} {
			if err := r.Write(io.Discard, all, style); err != nil {
				t.Fatal(err)
			}
		}
		for i := range r.Processes {
			r.processDump(i)
		}
	})
}

type countingWriter struct{ n int }

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n += len(p)
	return len(p), nil
}

// TestAllocationBudget parses inputs made of the shortest line of each
// kind, repeated to 1 MiB: allocations stay within FuzzParse's budget.
func TestAllocationBudget(t *testing.T) {
	const size = 1 << 20
	spindump := "Data Source: x\nSteps: 1\n"
	microstackshot := "Data Source: Microstackshots\n"
	tests := []struct{ name, head, line string }{
		{"sample nodes", "Call graph:\n    1 Thread_1\n", "      1 x\n"},
		{"sample threads", "Call graph:\n", "1 Thread_\n"},
		{"summary entries", "Call graph:\n    1 Thread_1\nSort by top of stack\n", "x 1\n"},
		{"images", "Binary Images:\n", "0x1 - 0x2 a\n"},
		{"header fields", "Call graph:\n", "a: b\n"},
		{"spindump processes", spindump, "Process: a\n"},
		{"spindump threads", spindump + "Process: a\n", "Thread 0x1\n"},
		{"spindump nodes", spindump + "Process: a\nThread 0x1\n", " 1 x\n"},
		{"garbage", "Call graph:\n    1 Thread_1\n", "x\n"},
		{"microstackshot processes", microstackshot, "Powerstats for: a\n"},
		{"microstackshot nodes", microstackshot + "Powerstats for: a\n", " 1 x\n"},
		{"microstackshot images", microstackshot + "Powerstats for: a\n 1 x\nBinary Images:\n", "0x1 - 0x2 a\n"},
		{"microstackshot heaviest", microstackshot + "Heaviest stack for the target process:\n", " 1 x\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := []byte(tt.head + strings.Repeat(tt.line, size/len(tt.line)))
			var r *Report
			limit := 64*uint64(len(data)) + 1<<20
			got := testtool.HeapAllocated(func() { r, _ = Parse(data) }, limit)
			t.Logf("%.1f bytes allocated per input byte", float64(got)/float64(len(data)))
			if got > limit {
				t.Errorf("Parse of %d bytes allocated %d bytes (%.1f per input byte), more than %d", len(data), got, float64(got)/float64(len(data)), limit)
			}
			if r == nil {
				t.Fatal("no report")
			}
		})
	}
}
