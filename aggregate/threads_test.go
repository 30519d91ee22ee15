package aggregate

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/hangreport"
	"github.com/stackimage/stackimage/internal/testcorpus"
	"github.com/stackimage/stackimage/open"
)

// loadCrashes aggregates MacSymbolicator's crash reports (.ips and
// .crash, symbolicated or not) counting the given threads.
func loadCrashes(t *testing.T, dir string, threads Threads) (*Result, []string) {
	t.Helper()
	var warnings []string
	l := &Loader{Aggregator: New(), Threads: threads, Workers: 1,
		OnError:   func(name string, err error) { t.Errorf("%s: %v", name, err) },
		OnWarning: func(name, w string) { warnings = append(warnings, filepath.Base(name)+": "+w) }}
	if err := l.Load(context.Background(), []string{dir}); err != nil {
		t.Fatal(err)
	}
	res, err := l.Aggregator.Symbolicate(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return res, warnings
}

// TestCrashedThreadGroups: a crash report adds its crashed thread alone
// to the groups, so that the groups of real crash reports (MacSymbolicator's
// .ips and .crash, KSCrash's example reports, in its JSON and as Apple's
// text) are led by the crashes, not by idle worker threads; ThreadsAll
// counts every thread with frames, as the reports list them.
func TestCrashedThreadGroups(t *testing.T) {
	for _, dir := range []string{"macsymbolicator/MacSymbolicatorTests/Resources/Crashes", "kscrash/Example-Reports"} {
		t.Run(filepath.Base(dir), func(t *testing.T) { checkCrashedThreadGroups(t, testcorpus.File(t, dir)) })
	}
}

func checkCrashedThreadGroups(t *testing.T, dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	// What the reports hold, read through the door: their threads with
	// frames, and their crashed threads' innermost frames.
	var reports, threadsWithFrames int
	crashedTop := map[uint64]bool{}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		in, err := open.Bytes(data)
		if err != nil {
			t.Fatalf("%s: %v", e.Name(), err)
		}
		d := in.Dump()
		reports++
		for _, th := range d.Threads {
			if len(th.Frames) > 0 {
				threadsWithFrames++
			}
		}
		c := d.CrashedThread()
		if c < 0 || len(d.Threads[c].Frames) == 0 {
			t.Fatalf("%s: no crashed thread with frames", e.Name())
		}
		crashedTop[d.Threads[c].Frames[0].Address-d.Images[d.Threads[c].Frames[0].ImageIndex].LoadAddress] = true
	}

	byInput, warnings := loadCrashes(t, dir, ThreadsByInput)
	if byInput.Records != int64(reports) || len(warnings) != 0 {
		t.Errorf("by input: %d records (warnings %q), want one per report, %d", byInput.Records, warnings, reports)
	}
	groups := byInput.Groups(GroupOptions{})
	if len(groups) == 0 {
		t.Fatal("no groups")
	}
	for _, g := range groups {
		top := g.Representative[0]
		if !crashedTop[uint64(top.Offset)] && !crashedTop[uint64(top.Offset)+1] {
			t.Errorf("group %v (weight %d) is not led by a crashed thread's frame (%s+%#x)", g.Fingerprint, g.Weight, top.Image, top.Offset)
		}
		if strings.HasPrefix(strings.Join(g.Fingerprint, ";"), "libsystem_pthread.dylib!") {
			t.Errorf("group %v is an idle worker thread's", g.Fingerprint)
		}
	}

	all, warnings := loadCrashes(t, dir, ThreadsAll)
	if all.Records != int64(threadsWithFrames) || len(warnings) != 0 {
		t.Errorf("all threads: %d records (warnings %q), want %d, every thread with frames", all.Records, warnings, threadsWithFrames)
	}
	if threadsWithFrames > reports && len(all.Groups(GroupOptions{})) <= len(groups) {
		t.Errorf("all threads: %d groups, not more than the crashed threads' %d", len(all.Groups(GroupOptions{})), len(groups))
	}
}

// A microstackshot report's records carry its event as the label
// "event", unless the caller gave that label; every node with samples of
// its own is a record, and the weights add up to the process's samples.
func TestMicrostackshotRecords(t *testing.T) {
	data, err := os.ReadFile("../hangreport/testdata/microstackshot-diskwrites.ips")
	if err != nil {
		t.Fatal(err)
	}
	r, err := hangreport.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	th := &r.Processes[0].Threads[0]
	var samples int64
	for _, root := range th.Roots() {
		samples += int64(th.Nodes[root].Count)
	}
	for _, c := range []struct {
		labels map[string]string
		want   string
	}{
		{nil, "disk writes"},
		{map[string]string{"api": "x"}, "disk writes"},
		{map[string]string{"event": "mine"}, "mine"},
	} {
		recs := HangRecords(r, c.labels)
		var weight int64
		for _, rec := range recs {
			weight += rec.Weight
			if rec.Labels["event"] != c.want || len(c.labels) > 0 && len(rec.Labels) != len(c.labels)+boolInt(c.labels["event"] == "") {
				t.Fatalf("labels %v: record labels %v, want event %q beside the given ones", c.labels, rec.Labels, c.want)
			}
		}
		if weight != samples {
			t.Errorf("labels %v: records weigh %d, want the process's %d samples", c.labels, weight, samples)
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// The rule every input's records follow, on dumps of each kind.
func TestThreadsCrashedOnly(t *testing.T) {
	crash := &dump.Dump{Threads: []dump.Thread{{}, {Crashed: true}, {}}}
	live := &dump.Dump{Threads: []dump.Thread{{}, {}}}
	single := &dump.Dump{Threads: []dump.Thread{{}}}
	sampled := &dump.Dump{Counting: dump.CountAllThreads, Threads: []dump.Thread{{Crashed: true}, {}}}
	for _, c := range []struct {
		name    string
		d       *dump.Dump
		threads Threads
		only    bool
		warning string
	}{
		{"crash", crash, ThreadsByInput, true, ""},
		{"crash, all", crash, ThreadsAll, false, ""},
		{"no crashed thread", live, ThreadsByInput, false, noCrashedThread},
		{"no crashed thread, all", live, ThreadsAll, false, ""},
		{"one thread", single, ThreadsByInput, false, ""},
		{"sampled", sampled, ThreadsByInput, false, ""},
	} {
		if only, warning := c.threads.CrashedOnly(c.d); only != c.only || warning != c.warning {
			t.Errorf("%s: CrashedOnly = %v, %q; want %v, %q", c.name, only, warning, c.only, c.warning)
		}
	}
	for _, s := range []string{"", "input", "all"} {
		th, err := ParseThreads(s)
		if err != nil || s != "" && th.String() != s {
			t.Errorf("ParseThreads(%q) = %v, %v", s, th, err)
		}
	}
	if _, err := ParseThreads("crashed"); err == nil {
		t.Error("ParseThreads(crashed) is no error")
	}
}
