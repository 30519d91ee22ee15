package aggregate

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// A chunk written and read back merges to the same groups as the
// records themselves; two chunks add up; a filter keeps only its samples.
func TestChunkRoundTripAndMerge(t *testing.T) {
	id := fixtureUUID(t, "../fixtures/bin/chain-arm64-O1")
	direct := New()
	for i, api := range []string{"UserDefaults", "UserDefaults", "UIDevice.name"} {
		rec := chainRecord(id, 0x100000000+uint64(i)<<24)
		rec.Labels = map[string]string{"api": api}
		rec.AppVersion = "2." + string(rune('0'+i))
		rec.Timestamp = time.Date(2026, 11, 26, i, 0, 0, 0, time.UTC)
		direct.Add(rec)
	}
	var buf bytes.Buffer
	if err := EncodeChunk(&buf, direct.Chunk()); err != nil {
		t.Fatal(err)
	}
	c, err := DecodeChunk(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if !c.First.Equal(time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)) || !c.Last.Equal(time.Date(2026, 11, 26, 2, 0, 0, 0, time.UTC)) {
		t.Errorf("chunk spans %v–%v", c.First, c.Last)
	}
	syms := fixtureSymbols(t)
	groupsOf := func(a *Aggregator) []*Group {
		res, err := a.Symbolicate(context.Background(), syms)
		if err != nil {
			t.Fatal(err)
		}
		return res.Groups(GroupOptions{})
	}
	merged := New()
	if err := merged.Merge(c, nil); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(groupsOf(direct), groupsOf(merged)); diff != "" {
		t.Errorf("merged chunk groups differ (-direct +merged):\n%s", diff)
	}
	if err := merged.Merge(c, nil); err != nil {
		t.Fatal(err)
	}
	if g := groupsOf(merged); len(g) != 1 || g[0].Count != 6 || merged.Records() != 6 {
		t.Errorf("two chunks: %d records, groups %+v; want 6 in one group", merged.Records(), g)
	}
	filtered := New()
	filtered.Merge(c, func(a *Attributes, _ *ChunkSample) bool {
		return len(a.Labels) == 1 && a.Labels[0].Value == "UIDevice.name"
	})
	if filtered.Records() != 1 {
		t.Errorf("filtered merge kept %d records, want 1", filtered.Records())
	}

	bad := *c
	bad.SampleStacks = append([]int32(nil), c.SampleStacks...)
	bad.SampleStacks[0] = 99
	if err := New().Merge(&bad, nil); err == nil {
		t.Errorf("a chunk with a sample of stack 99 merged")
	}
	long := *c
	long.StackLens = append([]uint32(nil), c.StackLens...)
	long.StackLens[0] = 1 << 31
	if err := New().Merge(&long, nil); err == nil {
		t.Errorf("a chunk whose stack runs past its frames merged")
	}
	if _, err := DecodeChunk(bytes.NewReader(buf.Bytes()[:buf.Len()/2])); err == nil {
		t.Errorf("half a chunk decoded")
	}
}

// A chunk read from a store that holds anything is an error or merges
// without a panic.
func FuzzDecodeChunk(f *testing.F) {
	agg := New()
	agg.Add(&Record{Images: []Image{{Name: "A", LoadAddress: 0x1000}}, Frames: []uint64{0x1010, 0x1020},
		Labels: map[string]string{"k": "v"}, Timestamp: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)})
	var buf bytes.Buffer
	if err := EncodeChunk(&buf, agg.Chunk()); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := DecodeChunk(bytes.NewReader(data))
		if err != nil {
			return
		}
		merged := New()
		if err := merged.Merge(c, nil); err != nil {
			t.Fatalf("a chunk DecodeChunk accepted does not merge: %v", err)
		}
		res, err := merged.Symbolicate(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		res.Groups(GroupOptions{})
	})
}

// A chunk larger than a reader takes is not written: it would replace
// chunks that can be read with one that cannot.
func TestEncodeChunkRefusesWhatCannotBeRead(t *testing.T) {
	a := New()
	a.Add(chainRecord(fixtureUUID(t, "../fixtures/bin/chain-arm64-O1"), 0x100000000))
	c := a.Chunk()
	var buf bytes.Buffer
	if err := encodeChunk(&buf, c, 1<<20); err != nil {
		t.Fatalf("within the limit: %v", err)
	}
	size := int64(len(buf.Bytes()))
	buf.Reset()
	if err := encodeChunk(&buf, c, 64); err == nil || !strings.Contains(err.Error(), "more than") {
		t.Errorf("past a limit of 64 bytes (%d compressed): %v, want an error", size, err)
	}
}
