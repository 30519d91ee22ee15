package crashreport

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// stacksCases are reports readFast reads but whose building finds a
// problem, which ReadIPSStacks must leave to ParseIPS, and reports it
// reads whole, with what the frames' other fields change.
var stacksCases = []ipsFastCase{
	{name: "faultingThread out of range", wantFast: true,
		payload: `{"faultingThread":3,"threads":[{"frames":[{"imageIndex":0}]}],"usedImages":[{"base":4096}]}`},
	{name: "negative faultingThread", wantFast: true,
		payload: `{"faultingThread":-1,"threads":[{"frames":[{"imageIndex":0}]}],"usedImages":[{"base":4096}]}`},
	{name: "lastExceptionBacktrace imageIndex out of range", wantFast: true,
		payload: `{"threads":[{"frames":[{"imageIndex":0}]}],"usedImages":[{"base":4096}],"lastExceptionBacktrace":[{"imageIndex":7}]}`},
	{name: "lastExceptionBacktrace frame not an object", wantFast: true,
		payload: `{"threads":[{"frames":[{"imageIndex":0}]}],"usedImages":[{"base":4096}],"lastExceptionBacktrace":[7]}`},
	{name: "threadState registers not an array", wantFast: true,
		payload: `{"threads":[{"threadState":{"x":{"value":1},"flavor":"ARM_THREAD_STATE64"},"frames":[{"imageIndex":0}]}],"usedImages":[{"base":4096,"arch":"arm64"}],"cpuType":"ARM-64"}`},
	{name: "inlined frames and symbols", wantFast: true,
		frames: `{"imageOffset":16,"symbol":"inner","inline":true,"imageIndex":0},{"imageOffset":16,"symbol":"outer","symbolLocation":4,"imageIndex":0},{"imageOffset":8,"imageIndex":1}`},
	// Frames that start as plainFrame reads them but end otherwise.
	{name: "plain frame then another key", wantFast: true, frames: `{"imageOffset":16,"imageIndex":1,"symbol":"f"},{"imageOffset":8,"imageIndex":0}`},
	{name: "plain frame with a space", wantFast: true, frames: `{"imageOffset":16,"imageIndex":1 },{"imageOffset":16 ,"imageIndex":1}`},
	{name: "plain frame with a hex offset", wantFast: true, frames: `{"imageOffset":"0x10","imageIndex":1}`},
	{name: "plain frame with a 19-digit offset", wantFast: true, frames: `{"imageOffset":1000000000000000000,"imageIndex":1}`},
	{name: "plain frame with a leading zero", frames: `{"imageOffset":016,"imageIndex":1}`},
	{name: "plain frame with an imageIndex past the limit", frames: `{"imageOffset":16,"imageIndex":65537}`},
	{name: "plain frame with a float imageIndex", frames: `{"imageOffset":16,"imageIndex":1.5}`},
	{name: "metadata and payload fields", wantFast: true,
		payload: `{"procName":"P","procPath":"/a","modelCode":"iPhone1,1","captureTime":"2026-11-01 00:00:00.00 +0000","osVersion":{"train":"iOS 18","build":"22A"},` +
			`"bundleInfo":{"CFBundleShortVersionString":"1.2","CFBundleVersion":"7"},"threads":[{"name":"main","frames":[{"imageIndex":0,"imageOffset":4}]},{"frames":[]},{"name":"w","frames":[{"imageIndex":1}]}],"usedImages":[` + imagesAB + `]}`},
}

// TestReadIPSStacks checks that ReadIPSStacks reads what ParseIPS reads,
// and reads every report that readFast reads and ParseIPS finds nothing
// wrong with. One Stacks reads all the reports, as a loader's worker's
// does.
func TestReadIPSStacks(t *testing.T) {
	var st Stacks
	for _, c := range append(append([]ipsFastCase(nil), ipsFastCases...), stacksCases...) {
		t.Run(c.name, func(t *testing.T) {
			data := c.report()
			if readsFast(data) != c.wantFast {
				t.Fatalf("readFast read it: %v, want %v", !c.wantFast, c.wantFast)
			}
			checkStacks(t, data, &st)
		})
	}
	t.Run("arm64.ips", func(t *testing.T) {
		if !checkStacks(t, readTestdata(t, "arm64.ips"), &st) {
			t.Error("ReadIPSStacks did not read it")
		}
	})
	t.Run("aggregation benchmark's shape", func(t *testing.T) {
		if !checkStacks(t, benchIPS(100, 30, 20), &st) {
			t.Error("ReadIPSStacks did not read it")
		}
	})
	t.Run("not .ips", func(t *testing.T) {
		for _, data := range []string{"", "{}", "{\"bug_type\":\"309\"}\n", "{\"bug_type\":\"309\"}\nIncident Identifier: x\n", "x\n{}"} {
			if ReadIPSStacks([]byte(data), &st) {
				t.Errorf("ReadIPSStacks(%q) = true, want false", data)
			}
		}
	})
}

func TestReadIPSStacksCorpus(t *testing.T) {
	var st Stacks
	for _, file := range []string{macsymCrashes + "single-target-crash.ips"} {
		t.Run(file, func(t *testing.T) {
			if !checkStacks(t, readCorpus(t, file), &st) {
				t.Error("ReadIPSStacks did not read it")
			}
		})
	}
}

// checkStacks fails t when ReadIPSStacks reads data other than ParseIPS
// does, or leaves a report to it that it should read; it returns whether
// ReadIPSStacks read it.
func checkStacks(t *testing.T, data []byte, st *Stacks) bool {
	t.Helper()
	ok := ReadIPSStacks(data, st)
	r, err := ParseIPS(data)
	if want := readsFast(data) && err == nil && r != nil && r.Format == FormatIPS; ok != want {
		t.Fatalf("ReadIPSStacks = %v, want %v (readFast reads it: %v; ParseIPS error: %v)", ok, want, readsFast(data), err)
	}
	if !ok {
		return false
	}
	if diff := cmp.Diff(stacksOf(r), st, cmpopts.IgnoreUnexported(Stacks{}), cmpopts.EquateEmpty()); diff != "" {
		t.Fatalf("stacks (-ParseIPS +ReadIPSStacks):\n%s", diff)
	}
	return true
}

// stacksOf returns what ReadIPSStacks should read from a report.
func stacksOf(r *Report) *Stacks {
	st := &Stacks{Path: r.Path, Version: r.Version, OS: r.OS, Hardware: r.Hardware, Time: r.Time, Images: r.Images}
	for _, th := range r.Threads {
		t := StackThread{Name: th.Name, Crashed: th.Crashed}
		for _, f := range th.Frames {
			t.Frames = append(t.Frames, StackFrame{Address: f.Address, Symbol: f.Symbol, Inlined: f.Inlined})
		}
		st.Threads = append(st.Threads, t)
	}
	return st
}

func FuzzReadIPSStacks(f *testing.F) {
	for _, c := range append(append([]ipsFastCase(nil), ipsFastCases...), stacksCases...) {
		f.Add(c.report())
	}
	f.Add(readTestdata(f, "arm64.ips"))
	f.Add(benchIPS(2, 3, 2))
	var st Stacks
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 || !strings.Contains(string(data), "\n") {
			return // the payload starts after the metadata line
		}
		checkStacks(t, data, &st)
	})
}

// BenchmarkReadIPSStacks measures ReadIPSStacks beside ParseIPS and the
// dump Report.Dump makes of its report, on a report shaped as the
// aggregation benchmark's .ips files (BenchmarkParseIPSHang).
func BenchmarkReadIPSStacks(b *testing.B) {
	data := benchIPS(100, 30, 20)
	b.Run("ReadIPSStacks", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		var st Stacks
		for b.Loop() {
			if !ReadIPSStacks(data, &st) {
				b.Fatal("not read")
			}
		}
	})
	b.Run("ParseIPS+Dump", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		b.ReportAllocs()
		for b.Loop() {
			r, err := ParseIPS(data)
			if err != nil {
				b.Fatal(err)
			}
			if d := r.Dump(); len(d.Threads) != 100 {
				b.Fatal(fmt.Sprint(len(d.Threads), " threads"))
			}
		}
	})
}
