package aggregate

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/open"
	"github.com/stackimage/stackimage/symbolize"
	"github.com/stackimage/stackimage/symindex"
	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/uuid"
)

// The stack of fixtures/snapshots/chain-arm64-O1-deepest.json as the walk
// finds it, relative to the image's load address (the snapshot loads it
// at 0x10000c000):
// deepest ← inline_host (step_to_deepest inlined) ← with_alloca ←
// via_pointer ← dispatch ← big_frame ← recurse ×3 ← vsum ← start.
var chainO1Offsets = []uint64{0x5dc, 0x5bc, 0x578, 0x4e0, 0x4c0, 0x45c, 0x3ac, 0x3a0, 0x3a0, 0x370, 0x320}

func fixtureUUID(t testing.TB, path string) uuid.UUID {
	t.Helper()
	f, err := image.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return f.Images[0].UUID
}

// countingLookup counts the symbol lookups per UUID.
type countingLookup struct {
	syms *symstore.Symbols
	mu   sync.Mutex
	n    map[uuid.UUID]int
}

func (c *countingLookup) LookupContext(ctx context.Context, id uuid.UUID) (*symstore.Entry, error) {
	c.mu.Lock()
	c.n[id]++
	c.mu.Unlock()
	return c.syms.LookupContext(ctx, id)
}

func fixtureSymbols(t testing.TB) *countingLookup {
	t.Helper()
	syms := symstore.NewSymbols()
	t.Cleanup(func() { syms.Close() })
	if err := syms.AddDir(context.Background(), "../fixtures/bin"); err != nil {
		t.Fatal(err)
	}
	return &countingLookup{syms: syms, n: map[uuid.UUID]int{}}
}

// chainRecord is the fixture's stack as a record with the image loaded at
// load, and a second image (not in-app) below it.
func chainRecord(id uuid.UUID, load uint64) *Record {
	rec := &Record{Images: []Image{
		{UUID: id, LoadAddress: Address(load), Name: "chain-arm64-O1", Path: "/private/var/containers/Bundle/Application/X/Chain.app/chain-arm64-O1", Main: true},
		{UUID: uuid.UUID{1}, LoadAddress: 0x180000000, Size: 0x100000, Name: "libsystem_kernel.dylib", Path: "/usr/lib/system/libsystem_kernel.dylib"},
	}}
	for _, off := range chainO1Offsets {
		rec.Frames = append(rec.Frames, load+off)
	}
	return rec
}

func TestDedupeAndSymbolicateOnce(t *testing.T) {
	id := fixtureUUID(t, "../fixtures/bin/chain-arm64-O1")
	agg := New()
	// The same stack from three processes, each loading the image
	// elsewhere (ASLR), twice each, and once with a kernel frame on top.
	for i, load := range []uint64{0x100000000, 0x104560000, 0x1a0000000} {
		rec := chainRecord(id, load)
		rec.AppVersion = "1.0"
		rec.Timestamp = time.Date(2026, 1, 1+i, 0, 0, 0, 0, time.UTC)
		agg.Add(rec)
		agg.Add(rec)
	}
	other := chainRecord(id, 0x100000000)
	other.Frames = append([]uint64{0x180001234}, other.Frames...)
	other.AppVersion = "1.1"
	agg.Add(other)
	if agg.Records() != 7 || agg.UniqueStacks() != 2 {
		t.Fatalf("Records, UniqueStacks = %d, %d; want 7, 2", agg.Records(), agg.UniqueStacks())
	}
	syms := fixtureSymbols(t)
	res, err := agg.Symbolicate(context.Background(), syms)
	if err != nil {
		t.Fatal(err)
	}
	if syms.n[id] != 1 {
		t.Errorf("chain-arm64-O1 looked up %d times, want once", syms.n[id])
	}
	// 10 distinct addresses of chain (recurse's return address repeats),
	// deepest's PC also as a caller below the kernel frame, and the
	// kernel's: each a location once.
	if len(res.Locations) != 12 {
		t.Errorf("%d locations, want 12 (one per unique address)", len(res.Locations))
	}
	groups := res.Groups(GroupOptions{Frames: -1})
	if len(groups) != 1 {
		t.Fatalf("%d groups, want 1 (the kernel frame is not in-app): %v", len(groups), groups)
	}
	g := groups[0]
	want := []string{"deepest", "step_to_deepest", "inline_host", "with_alloca", "via_pointer", "dispatch", "big_frame", "recurse", "vsum", "start"}
	if diff := cmp.Diff(want, g.Fingerprint); diff != "" {
		t.Errorf("fingerprint (-want +got):\n%s", diff)
	}
	if g.Count != 7 || g.Stacks != 2 || !g.InApp {
		t.Errorf("group count %d, unique stacks %d, in-app %v; want 7, 2, true", g.Count, g.Stacks, g.InApp)
	}
	if !g.FirstSeen.Equal(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)) || !g.LastSeen.Equal(time.Date(2026, 1, 3, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("first, last seen = %v, %v", g.FirstSeen, g.LastSeen)
	}
	if diff := cmp.Diff([]Seen{{"1.0", 6}, {"1.1", 1}}, g.AppVersions); diff != "" {
		t.Errorf("app versions (-want +got):\n%s", diff)
	}
	rep := g.Representative
	if len(rep) != 12 || rep[0].Function != "deepest" || rep[0].Line != 65 || rep[1].Function != "step_to_deepest" || !rep[1].Inlined {
		t.Errorf("representative stack = %v", rep)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "libsystem_kernel.dylib") {
		t.Errorf("warnings = %q, want one naming the image without symbols", res.Warnings)
	}
}

// The default fingerprint is the innermost three in-app functions, and
// with no in-app frame at all every frame counts.
func TestFingerprintDefaultsAndFallback(t *testing.T) {
	id := fixtureUUID(t, "../fixtures/bin/chain-arm64-O1")
	agg := New()
	rec := chainRecord(id, 0x100000000)
	rec.Images[0].Main = false
	rec.Images[0].Path = "/usr/lib/chain"
	rec.Images[1].Main = true // the kernel's image is "main" but holds no frame
	agg.Add(rec)
	res, err := agg.Symbolicate(context.Background(), fixtureSymbols(t))
	if err != nil {
		t.Fatal(err)
	}
	g := res.Groups(GroupOptions{})[0]
	if g.InApp || len(g.Fingerprint) != 3 || g.Fingerprint[0] != "deepest" {
		t.Errorf("no in-app frame: fingerprint %q in-app %v, want the first 3 of all frames", g.Fingerprint, g.InApp)
	}
	g = res.Groups(GroupOptions{InApp: InApp{Names: []string{"chain-*"}}, Frames: 2})[0]
	if !g.InApp || !slices.Equal(g.Fingerprint, []string{"deepest", "step_to_deepest"}) {
		t.Errorf("in-app by name pattern: fingerprint %q in-app %v", g.Fingerprint, g.InApp)
	}
	g = res.Groups(GroupOptions{InApp: InApp{Paths: []string{"/usr/lib/"}}})[0]
	if !g.InApp {
		t.Errorf("in-app by path prefix: not in-app")
	}
}

// Two builds of one program (different UUIDs, different addresses) group
// together: the fingerprint names functions, never addresses. The dumps
// come through the library's door and are walked.
func TestNewBuildGroupsWithOld(t *testing.T) {
	syms := symstore.NewSymbols()
	defer syms.Close()
	if err := syms.AddDir(context.Background(), "../fixtures/bin"); err != nil {
		t.Fatal(err)
	}
	z := &symbolize.Symbolizer{Symbols: syms}
	agg := New()
	for _, path := range []string{"../fixtures/snapshots/chain-arm64-O1-deepest.json", "../fixtures/snapshots/chain-x86_64-O1-deepest.json"} {
		in, err := open.File(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range in.Dumps {
			if err := agg.AddDump(context.Background(), z, d, map[string]string{"file": path}); err != nil {
				t.Fatal(err)
			}
		}
		in.Close()
	}
	res, err := agg.Symbolicate(context.Background(), syms)
	if err != nil {
		t.Fatal(err)
	}
	groups := res.Groups(GroupOptions{})
	if len(groups) != 1 || groups[0].Count != 2 || groups[0].Stacks != 2 {
		t.Fatalf("groups = %+v, want one of 2 stacks", groups)
	}
	if want := []string{"deepest", "step_to_deepest", "inline_host"}; !slices.Equal(groups[0].Fingerprint, want) {
		t.Errorf("fingerprint %q, want %q", groups[0].Fingerprint, want)
	}
	// Grouping by the label splits them again.
	if byFile := res.Groups(GroupOptions{Label: "file"}); len(byFile) != 2 || byFile[0].Count != 1 || byFile[0].Stacks != 1 {
		t.Errorf("grouped by label: %+v, want 2 groups of 1", byFile)
	}
}

func TestNoSymbolsNamesNoAddresses(t *testing.T) {
	agg := New()
	agg.Add(&Record{Images: []Image{{UUID: uuid.UUID{9}, LoadAddress: 0x1000, Name: "App"}}, Frames: []uint64{0x1010, 0x1020, 0x9}})
	agg.Add(&Record{Images: []Image{{UUID: uuid.UUID{9}, LoadAddress: 0x5000, Name: "App"}}, Frames: []uint64{0x5010, 0x5020, 0x9}})
	res, err := agg.Symbolicate(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	g := res.Groups(GroupOptions{Frames: -1})
	if len(g) != 1 || !slices.Equal(g[0].Fingerprint, []string{"App!???"}) || g[0].Count != 2 {
		t.Errorf("groups = %+v, want one, fingerprint [App!???], count 2", g)
	}
}

// Symbols from an index file (package symindex, what the service serves)
// name inlined functions and lines as the dSYM does.
func TestSymbolicateFromIndexFile(t *testing.T) {
	id := fixtureUUID(t, "../fixtures/bin/chain-arm64-O1")
	direct := fixtureSymbols(t)
	e, err := direct.syms.LookupContext(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "chain"+symindex.Extension)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.WriteIndex(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	e.Release()
	indexed := symstore.NewSymbols()
	defer indexed.Close()
	if err := indexed.AddFile(context.Background(), path); err != nil {
		t.Fatal(err)
	}
	agg := New()
	agg.Add(chainRecord(id, 0x100000000))
	want, err := agg.Symbolicate(context.Background(), direct)
	if err != nil {
		t.Fatal(err)
	}
	got, err := agg.Symbolicate(context.Background(), indexed)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want.Groups(GroupOptions{Frames: -1})[0].Representative, got.Groups(GroupOptions{Frames: -1})[0].Representative); diff != "" {
		t.Errorf("from the index file (-dSYM +index):\n%s", diff)
	}
}

// A sample's call graph becomes one record per node on top of the stack
// in some samples, weighted by those samples.
func TestSampleCallGraphWeights(t *testing.T) {
	data, err := os.ReadFile("../hangreport/testdata/branches-sample.txt")
	if err != nil {
		t.Fatal(err)
	}
	l := &Loader{Aggregator: New()}
	if err := l.Read(context.Background(), "sample", bytes.NewReader(data)); err != nil {
		t.Fatal(err)
	}
	res, err := l.Aggregator.Symbolicate(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var folded bytes.Buffer
	res.WriteFolded(&folded)
	// Root first, named as the report names them where no symbol file
	// does (there is none here); "???" frames the report could not name
	// either are named by their image and the offset the report gives
	// ("load address 0x100000000 + 0x3e10"), each a frame of its own.
	want := "start;Demo+0x3f00;Demo+0x3e10;__psynch_mutexwait 60\n" +
		"start;Demo+0x3f00;helper;Demo+0x3c20 40\n" +
		"thread_start;??? 100\n"
	if got := folded.String(); got != want {
		t.Errorf("folded:\n%s\nwant:\n%s", got, want)
	}
	if res.Records != 3 {
		t.Errorf("%d records, want 3 (one per node on top of a stack)", res.Records)
	}
	g := res.Groups(GroupOptions{})
	if len(g) == 0 || g[0].Weight != 100 {
		t.Errorf("groups %+v", g)
	}
}

// An .ips report's own names name the frames no symbol file names; its
// crashed thread alone is counted, unless every thread is asked for.
func TestReportNamesWithoutSymbols(t *testing.T) {
	data, err := os.ReadFile("../crashreport/testdata/arm64.ips")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		threads Threads
		want    []string // folded lines
		notWant []string
	}{
		{ThreadsByInput, []string{"crash 1"}, []string{"mach_msg2_trap"}},
		{ThreadsAll, []string{"mach_msg2_trap 1", "crash 1"}, nil},
	} {
		l := &Loader{Aggregator: New(), Threads: c.threads}
		if err := l.Read(context.Background(), "ips", bytes.NewReader(data)); err != nil {
			t.Fatal(err)
		}
		res, err := l.Aggregator.Symbolicate(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		var folded bytes.Buffer
		res.WriteFolded(&folded)
		for _, name := range c.want {
			if !strings.Contains(folded.String(), name) {
				t.Errorf("threads %s: folded lacks %q:\n%s", c.threads, name, folded.String())
			}
		}
		for _, name := range c.notWant {
			if strings.Contains(folded.String(), name) {
				t.Errorf("threads %s: folded has %q, of a thread that did not crash:\n%s", c.threads, name, folded.String())
			}
		}
	}
}

// counts describes what an aggregator counted, independently of the
// order its stacks and attribute sets were numbered in.
func counts(a *Aggregator) map[string]string {
	out := map[string]string{}
	for _, s := range a.samples {
		var key strings.Builder
		for _, f := range a.stacks[s.stack] {
			id := "-"
			if f.image >= 0 {
				im := a.images[f.image]
				id = fmt.Sprintf("%s/%s/%v", im.UUID, im.Name, im.Main)
			}
			fmt.Fprintf(&key, "%s+%#x;", id, f.offset)
		}
		fmt.Fprintf(&key, " %+v", a.attrs[s.attrs])
		out[key.String()] = fmt.Sprintf("%d %d %v %v %v", s.count, s.weight, s.first, s.last, s.hasFirst)
	}
	return out
}

// A stream read and decoded on several goroutines counts what one
// goroutine counts.
func TestStreamCountedInShards(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var stream bytes.Buffer
	for i := range 5000 { // several batches of batchLines
		if i%1500 == 0 { // a new process: its images elsewhere
			fmt.Fprintf(&stream, `{"image_set":"p","images":[{"uuid":"4c4c444c55553144a1173e15af6b6cff","load_address":%d,"name":"Chain","main":true},{"uuid":"00112233445566778899aabbccddeeff","load_address":%d,"name":"libk"}],`,
				0x100000000+i<<20, 0x180000000+i<<16)
		} else {
			stream.WriteString(`{"image_set":"p",`)
		}
		base := uint64(0x100000000 + (i/1500*1500)<<20)
		fmt.Fprintf(&stream, `"frames":[%d,%d,%d,%d],"thread":"t%d","device":"d%d","labels":{"api":"a%d","k":"v"},"weight":%d`,
			base+uint64(rng.IntN(40)*4), base+0x100, 0x180000000+uint64((i/1500*1500)<<16)+uint64(rng.IntN(3)*8), 0x42, rng.IntN(2), rng.IntN(3), rng.IntN(4), rng.IntN(3))
		if i%7 != 0 {
			fmt.Fprintf(&stream, `,"timestamp":"2026-11-26T01:%02d:%02dZ"`, rng.IntN(60), rng.IntN(60))
		}
		stream.WriteString("}\n")
	}
	read := func(workers int) *Aggregator {
		agg := New()
		l := &Loader{Aggregator: agg, Workers: workers, OnError: func(name string, err error) { t.Errorf("%s: %v", name, err) }}
		if err := l.Read(context.Background(), "stream", bytes.NewReader(stream.Bytes())); err != nil {
			t.Fatal(err)
		}
		return agg
	}
	one, three := read(1), read(3)
	if one.Records() != 5000 || three.Records() != 5000 || one.UniqueStacks() != three.UniqueStacks() {
		t.Errorf("records %d and %d, unique stacks %d and %d; want 5000 records and the same stacks",
			one.Records(), three.Records(), one.UniqueStacks(), three.UniqueStacks())
	}
	if diff := cmp.Diff(counts(one), counts(three)); diff != "" {
		t.Errorf("one counter and three differ (-one +three):\n%s", diff)
	}
}
