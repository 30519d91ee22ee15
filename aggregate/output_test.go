package aggregate

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// chainResult aggregates the fixture's stack three times (twice with one
// label, once with another) and a kernel stack once.
func chainResult(t *testing.T) *Result {
	t.Helper()
	id := fixtureUUID(t, "../fixtures/bin/chain-arm64-O1")
	agg := New()
	for i := range 3 {
		rec := chainRecord(id, 0x100000000+uint64(i)<<20)
		rec.Labels = map[string]string{"api": "NSUserDefaults"}
		if i == 2 {
			rec.Labels["api"] = "UIDevice.name"
			rec.Weight = 4
		}
		rec.Thread, rec.Device = "main", "iPhone14,2"
		agg.Add(rec)
	}
	kernel := chainRecord(id, 0x100000000)
	kernel.Frames = []uint64{0x180001000}
	agg.Add(kernel)
	res, err := agg.Symbolicate(context.Background(), fixtureSymbols(t))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func goTool(t *testing.T) string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("no go command to run go tool pprof: %v", err)
	}
	return goBin
}

// The profile is valid, carries UUIDs, inlined lines and labels, and the
// real `go tool pprof` reads it.
func TestProfileReadByGoToolPprof(t *testing.T) {
	res := chainResult(t)
	p := res.Profile()
	if err := p.CheckValid(); err != nil {
		t.Fatalf("CheckValid: %v", err)
	}
	id := fixtureUUID(t, "../fixtures/bin/chain-arm64-O1")
	if p.Mapping[0].BuildID != id.String() || !p.Mapping[0].HasInlineFrames {
		t.Errorf("mapping 0: build ID %q inline %v, want %q true", p.Mapping[0].BuildID, p.Mapping[0].HasInlineFrames, id)
	}
	var inlined bool
	for _, loc := range p.Location {
		if len(loc.Line) == 2 && loc.Line[0].Function.Name == "step_to_deepest" && loc.Line[1].Function.Name == "inline_host" {
			inlined = true
		}
	}
	if !inlined {
		t.Errorf("no location with step_to_deepest inlined into inline_host")
	}
	var total int64
	for _, s := range p.Sample {
		total += s.Value[0]
		if len(s.Location) > 1 && (s.Label["thread"][0] != "main" || s.Label["device"] != nil) {
			t.Errorf("sample labels %v, want thread main and no device", s.Label)
		}
	}
	if total != 4 {
		t.Errorf("samples count %d stacks, want 4", total)
	}

	path := filepath.Join(t.TempDir(), "stacks.pb.gz")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Write(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	back, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := profile.Parse(bytes.NewReader(back)); err != nil {
		t.Fatalf("profile.Parse of what we wrote: %v", err)
	}
	goBin := goTool(t)
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"-top", "-sample_index=stacks"}, []string{"deepest", "libsystem_kernel.dylib+0x1000", "Showing nodes"}},
		{[]string{"-traces"}, []string{"deepest", "step_to_deepest", "inline_host", "(inline)", "api:", "NSUserDefaults"}},
		{[]string{"-top", "-tagfocus=api=UIDevice.name", "-sample_index=weight"}, []string{"deepest"}},
	} {
		cmd := exec.Command(goBin, append(append([]string{"tool", "pprof"}, tt.args...), path)...)
		cmd.Env = append(os.Environ(), "PPROF_TMPDIR="+t.TempDir())
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go tool pprof %v: %v\n%s", tt.args, err, out)
		}
		for _, w := range tt.want {
			if !strings.Contains(string(out), w) {
				t.Errorf("go tool pprof %v: output lacks %q:\n%s", tt.args, w, out)
			}
		}
	}
}

func TestFolded(t *testing.T) {
	res := chainResult(t)
	var buf bytes.Buffer
	if err := res.WriteFolded(&buf); err != nil {
		t.Fatal(err)
	}
	want := "libsystem_kernel.dylib+0x1000 1\n" +
		"start;vsum;recurse;recurse;recurse;big_frame;dispatch;via_pointer;with_alloca;inline_host;step_to_deepest;deepest 6\n"
	if got := buf.String(); got != want {
		t.Errorf("folded:\n%s\nwant:\n%s", got, want)
	}
}

func compileSchema(t *testing.T, path string) *jsonschema.Schema {
	t.Helper()
	c := jsonschema.NewCompiler()
	s, err := c.Compile(path)
	if err != nil {
		t.Fatalf("compile %s: %v", path, err)
	}
	return s
}

func TestSpeedscopeMatchesItsSchema(t *testing.T) {
	res := chainResult(t)
	var buf bytes.Buffer
	if err := res.WriteSpeedscope(&buf, "stacks"); err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	schema := compileSchema(t, "testdata/speedscope-file-format-schema.json")
	if err := schema.Validate(doc); err != nil {
		t.Errorf("speedscope output does not match speedscope's schema: %v", err)
	}
	var f speedscopeFile
	if err := json.Unmarshal(buf.Bytes(), &f); err != nil {
		t.Fatal(err)
	}
	prof := f.Profiles[0]
	if len(prof.Samples) != 2 || prof.EndValue != 7 {
		t.Fatalf("samples %v, end %d; want 2 samples weighing 7", prof.Samples, prof.EndValue)
	}
	for i, s := range prof.Samples {
		if len(s) == 12 {
			if root, leaf := f.Shared.Frames[s[0]].Name, f.Shared.Frames[s[11]].Name; root != "start" || leaf != "deepest" || prof.Weights[i] != 6 {
				t.Errorf("sample %d: root %q leaf %q weight %d; want start, deepest, 6", i, root, leaf, prof.Weights[i])
			}
		}
	}
	// The schema is one that can fail: a sample without weights does not
	// pass it.
	bad, _ := jsonschema.UnmarshalJSON(strings.NewReader(`{"$schema":"https://www.speedscope.app/file-format-schema.json","shared":{"frames":[]},"profiles":[{"type":"sampled","name":"x","unit":"none","startValue":0,"endValue":1,"samples":[[0]]}]}`))
	if schema.Validate(bad) == nil {
		t.Errorf("a profile without weights validated")
	}
}

func TestGroupsJSONAndSummary(t *testing.T) {
	res := chainResult(t)
	groups := res.Groups(GroupOptions{})
	var buf bytes.Buffer
	if err := res.WriteGroupsJSON(&buf, groups); err != nil {
		t.Fatal(err)
	}
	var doc GroupsDocument
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Records != 4 || doc.UniqueStacks != 2 || len(doc.Groups) != 2 || doc.Groups[0].Weight != 6 || doc.Groups[0].Fingerprint[0] != "deepest" {
		t.Errorf("groups document: %s", buf.String())
	}
	buf.Reset()
	if err := res.WriteSummary(&buf, groups, 10); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"4 stacks, 2 unique, 2 groups", "#1 " + groups[0].ID, "weight 6 (85.7%)", "    deepest\n    step_to_deepest\n    inline_host\n"} {
		if !strings.Contains(buf.String(), w) {
			t.Errorf("summary lacks %q:\n%s", w, buf.String())
		}
	}
}

// A profile large enough to be compressed on several cores is one gzip
// stream to its readers, byte for byte.
func TestWriteGzipParallelIsOneStream(t *testing.T) {
	data := make([]byte, 3*minGzipPiece+12345)
	for i := range data {
		data[i] = byte(i * 7 / 5)
	}
	for _, procs := range []int{1, 2, 4} {
		old := runtime.GOMAXPROCS(procs)
		var buf bytes.Buffer
		err := writeGzipParallel(&buf, data)
		runtime.GOMAXPROCS(old)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(&buf)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(zr)
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("GOMAXPROCS %d: read back %d bytes, %v; want the %d written", procs, len(got), err, len(data))
		}
	}
}

// WriteProfile writes the same bytes whatever the number of cores, and
// they decompress to encodeProfile's: the pieces are made and compressed
// apart, and depend on the profile only.
func TestWriteProfileSameOnAnyCores(t *testing.T) {
	syms := fixtureSymbols(t)
	defer func(n int) { samplesPerPiece = n }(samplesPerPiece)
	samplesPerPiece = 200
	agg := New()
	l := &Loader{Aggregator: agg, OnError: func(name string, err error) { t.Errorf("%s: %v", name, err) }}
	if err := l.Read(context.Background(), "stream", bytes.NewReader(randomStream(rand.New(rand.NewPCG(3, 4)), 10000))); err != nil {
		t.Fatal(err)
	}
	res, err := agg.Symbolicate(context.Background(), syms)
	if err != nil {
		t.Fatal(err)
	}
	want := encodeProfile(res.Profile())
	var first []byte
	for _, procs := range []int{1, 2, 3} {
		old := runtime.GOMAXPROCS(procs)
		var buf bytes.Buffer
		err := res.WriteProfile(&buf)
		runtime.GOMAXPROCS(old)
		if err != nil {
			t.Fatal(err)
		}
		if first == nil {
			first = buf.Bytes()
		} else if !bytes.Equal(buf.Bytes(), first) {
			t.Errorf("GOMAXPROCS %d: WriteProfile wrote %d bytes that differ from the %d written on one core", procs, buf.Len(), len(first))
		}
		zr, err := gzip.NewReader(&buf)
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(zr)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("GOMAXPROCS %d: WriteProfile decompressed to %d bytes (%v), want encodeProfile's %d", procs, len(got), err, len(want))
		}
	}
	if n := len(profilePieces(res.Profile())); n < 4 {
		t.Errorf("the profile was written in %d pieces: the test wants several", n)
	}
}
