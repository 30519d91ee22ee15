package aggregate

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/stackimage/stackimage/internal/testcorpus"
	"github.com/stackimage/stackimage/open"
)

// testIPS returns an .ips report of threads of up to maxFrames frames
// over images images, with the fields records are made of: some frames
// named, some inlined, some threads named, some without frames.
func testIPS(rng *rand.Rand, device, threads, maxFrames, images int) []byte {
	b := fmt.Appendf(nil, `{"app_name":"T","timestamp":"2026-11-01 00:%02d:00.00 +0000","app_version":"2.0","build_version":"1","bug_type":"309","os_version":"iPhone OS 18.0 (22A1)","name":"T"}`+"\n", rng.IntN(60))
	b = fmt.Appendf(b, `{"procName":"T","procPath":"/app/T.app/T","modelCode":"iPhone%d,1","osVersion":{"train":"iPhone OS 18.%d","build":"22A1"},"bundleInfo":{"CFBundleShortVersionString":"2.%d","CFBundleVersion":"1"},"threads":[`,
		device, rng.IntN(3), rng.IntN(2))
	for t := range threads {
		if t > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"id":1`...)
		if rng.IntN(3) == 0 {
			b = fmt.Appendf(b, `,"name":"worker %d"`, rng.IntN(2))
		}
		b = append(b, `,"frames":[`...)
		for k := range rng.IntN(maxFrames + 1) {
			if k > 0 {
				b = append(b, ',')
			}
			b = fmt.Appendf(b, `{"imageOffset":%d,"imageIndex":%d`, 0x1000+4*rng.IntN(4), rng.IntN(images))
			switch rng.IntN(6) {
			case 0:
				b = fmt.Appendf(b, `,"symbol":"f%d","symbolLocation":4`, rng.IntN(5))
			case 1:
				b = fmt.Appendf(b, `,"symbol":"inlined%d","inline":true`, rng.IntN(5))
			}
			b = append(b, '}')
		}
		b = append(b, "]}"...)
	}
	b = append(b, `],"usedImages":[`...)
	for k := range images {
		if k > 0 {
			b = append(b, ',')
		}
		path := fmt.Sprintf("/usr/lib/image%d.dylib", k)
		if k == 0 {
			path = "/app/T.app/T"
		}
		b = fmt.Appendf(b, `{"arch":"arm64","base":%d,"size":%d,"uuid":"%08x-0000-4000-8000-000000000000","path":%q}`,
			0x100000000+k<<28+device<<16, 1<<28, k+1, path)
	}
	return append(b, "]}\n"...)
}

// ipsReader makes the records DumpRecords makes of the dump the door
// makes of the same report, reusing its buffers from report to report.
func TestIPSReaderMatchesDumpRecords(t *testing.T) {
	type report struct {
		name string
		data []byte
	}
	var reports []report
	fixture, err := os.ReadFile("../crashreport/testdata/arm64.ips")
	if err != nil {
		t.Fatal(err)
	}
	reports = append(reports, report{"arm64.ips", fixture})
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 20 {
		reports = append(reports, report{fmt.Sprintf("generated %d", i), testIPS(rng, i%3, 1+rng.IntN(20), 1+rng.IntN(40), 1+rng.IntN(5))})
	}
	t.Run("corpus", func(t *testing.T) {
		data, err := os.ReadFile(testcorpus.File(t, "macsymbolicator/MacSymbolicatorTests/Resources/Crashes/single-target-crash.ips"))
		if err != nil {
			t.Fatal(err)
		}
		var ir ipsReader
		checkIPSRecords(t, &ir, data)
	})
	var ir ipsReader
	labels := map[string]string{"api": "x"}
	for _, r := range reports {
		t.Run(r.name, func(t *testing.T) {
			checkIPSRecords(t, &ir, r.data)
			// And with labels.
			got, _, ok := ir.read(r.data, labels, ThreadsByInput)
			if !ok || len(got) == 0 || got[0].Labels["api"] != "x" {
				t.Errorf("records with labels: %v, %v", ok, got)
			}
		})
	}
}

func checkIPSRecords(t *testing.T, ir *ipsReader, data []byte) {
	t.Helper()
	opened, err := open.Bytes(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, threads := range []Threads{ThreadsByInput, ThreadsAll} {
		want, wantWarning, err := dumpRecords(context.Background(), nil, opened.Dump(), nil, threads)
		if err != nil {
			t.Fatal(err)
		}
		got, warning, ok := ir.read(data, nil, threads)
		if !ok {
			t.Fatal("ipsReader did not read it")
		}
		if len(want) == 0 {
			t.Fatal("no records: the test reads nothing")
		}
		if diff := cmp.Diff(want, got, cmp.AllowUnexported(Record{}), cmpopts.IgnoreFields(Record{}, "placed")); diff != "" {
			t.Errorf("threads %s: records (-dumpRecords +ipsReader):\n%s", threads, diff)
		}
		if warning != wantWarning {
			t.Errorf("threads %s: warning %q, dumpRecords' %q", threads, warning, wantWarning)
		}
	}
}

// Load counts its inputs in the order it finds them, however many
// workers read them: the aggregate, down to the numbering of its stacks
// and which stack represents a group, is that of reading the inputs one
// by one; and errors are told in that order too.
func TestLoadCountsInFoundOrder(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(7, 8))
	var names []string
	for i := range 60 {
		// Reports of very different sizes, so that the workers finish
		// them out of order.
		data := testIPS(rng, i%4, 1+rng.IntN(60), 1+rng.IntN(12), 3)
		switch i % 20 {
		case 7:
			data = data[:len(data)/2] // cut: read in part, with an error
		case 13:
			data = []byte("not a report")
		case 17:
			data = []byte(`{"images":[{"uuid":"00000001-0000-4000-8000-000000000000","load_address":4294967296,"name":"T"}],"frames":[4294971392,4294971396],"device":"s"}` + "\n")
		}
		name := filepath.Join(dir, fmt.Sprintf("%02d.ips", i))
		if err := os.WriteFile(name, data, 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	type loaded struct {
		agg    *Aggregator
		errors []string
	}
	load := func(workers int) loaded {
		var got loaded
		got.agg = New()
		l := &Loader{Aggregator: got.agg, Workers: workers, OnError: func(name string, err error) {
			got.errors = append(got.errors, filepath.Base(name))
		}}
		if err := l.Load(context.Background(), []string{dir}); err != nil {
			t.Fatal(err)
		}
		return got
	}
	// The reference: each input read on its own, in order.
	var want loaded
	want.agg = New()
	ref := &Loader{Aggregator: want.agg, OnError: func(name string, err error) { want.errors = append(want.errors, name) }}
	for _, name := range names {
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if err := ref.Read(context.Background(), filepath.Base(name), bytes.NewReader(data)); err != nil {
			want.errors = append(want.errors, filepath.Base(name))
		}
	}
	if want.agg.Records() == 0 || len(want.errors) == 0 {
		t.Fatalf("%d records, errors %v: the test reads nothing", want.agg.Records(), want.errors)
	}
	for _, workers := range []int{1, 2, 5} {
		for run := range 3 {
			got := load(workers)
			if !slices.Equal(got.errors, want.errors) {
				t.Errorf("%d workers, run %d: errors for %v, want %v", workers, run, got.errors, want.errors)
			}
			if diff := cmp.Diff(want.agg.stacks, got.agg.stacks, cmp.AllowUnexported(frameRef{})); diff != "" {
				t.Fatalf("%d workers, run %d: stacks (-one by one +Load):\n%s", workers, run, diff)
			}
			if diff := cmp.Diff(counts(want.agg), counts(got.agg)); diff != "" {
				t.Fatalf("%d workers, run %d: counts (-one by one +Load):\n%s", workers, run, diff)
			}
			wantGroups, wantProfile := outputs(t, want.agg)
			gotGroups, gotProfile := outputs(t, got.agg)
			if wantGroups != gotGroups {
				t.Fatalf("%d workers, run %d: groups differ:\n%s\nwant:\n%s", workers, run, gotGroups, wantGroups)
			}
			if !bytes.Equal(wantProfile, gotProfile) {
				t.Fatalf("%d workers, run %d: the pprof profiles differ", workers, run)
			}
		}
	}
}

// outputs returns the JSON of an aggregate's groups and its pprof
// profile.
func outputs(t *testing.T, a *Aggregator) (string, []byte) {
	t.Helper()
	res, err := a.Symbolicate(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var groups, profile bytes.Buffer
	if err := res.WriteGroupsJSON(&groups, res.Groups(GroupOptions{})); err != nil {
		t.Fatal(err)
	}
	if err := res.WriteProfile(&profile); err != nil {
		t.Fatal(err)
	}
	return groups.String(), profile.Bytes()
}
