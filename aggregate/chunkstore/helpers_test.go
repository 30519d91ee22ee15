package chunkstore

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stackimage/stackimage/aggregate"
	"github.com/stackimage/stackimage/lookup"
	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/uuid"
)

// memStore is a Store in memory, shared by the Chunks built on it as a
// bucket is by instances.
type memStore struct {
	mu      sync.Mutex
	objects map[string][]byte
}

func newMemStore() *memStore { return &memStore{objects: map[string][]byte{}} }

func (m *memStore) Get(_ context.Context, key string) (io.ReadCloser, int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	data, ok := m.objects[key]
	if !ok {
		return nil, 0, fmt.Errorf("%s: %w", key, lookup.ErrNotFound)
	}
	return io.NopCloser(bytes.NewReader(data)), int64(len(data)), nil
}

func (m *memStore) Put(_ context.Context, key string, r io.Reader, _ int64, onlyIfAbsent bool) error {
	data, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.objects[key]; ok && onlyIfAbsent {
		return fmt.Errorf("%s: already exists", key)
	}
	m.objects[key] = data
	return nil
}

func (m *memStore) Stat(_ context.Context, key string) (int64, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	data, ok := m.objects[key]
	if !ok {
		return 0, "", fmt.Errorf("%s: %w", key, lookup.ErrNotFound)
	}
	return int64(len(data)), "", nil
}

func (m *memStore) List(_ context.Context, prefix string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var keys []string
	for key := range m.objects {
		if strings.HasPrefix(key, prefix) {
			keys = append(keys, key)
		}
	}
	slices.Sort(keys)
	return keys, nil
}

func (m *memStore) Remove(_ context.Context, key string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.objects, key)
	return nil
}

// newChunks builds Chunks on store, closed when the test ends, with the
// given partial step (0 for the default).
func newChunks(t testing.TB, store Store, partialStep int) *Chunks {
	c := New(store, Config{PartialStep: partialStep})
	t.Cleanup(func() { c.Close() })
	return c
}

// chunkOf counts the stream records in data into a chunk.
func chunkOf(t testing.TB, data []byte) *aggregate.Chunk {
	t.Helper()
	agg := aggregate.New()
	rd, err := aggregate.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	for {
		rec, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		agg.Add(rec)
	}
	return agg.Chunk()
}

// exampleChunk is docs/aggregate.md's stream example: three stacks
// (weights 1, 3 and 1), labelled api=UserDefaults twice.
func exampleChunk(t testing.TB) *aggregate.Chunk {
	t.Helper()
	doc, err := os.ReadFile("../../docs/aggregate.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(doc), "```ndjson\n")
	block, _, _ := strings.Cut(rest, "```")
	return chunkOf(t, []byte(block))
}

// writeAt writes the example chunk as if accepted at when, so that it
// lies under that hour.
func writeAt(t testing.TB, c *Chunks, when time.Time) string {
	t.Helper()
	saved := c.cfg.Now
	c.cfg.Now = func() time.Time { return when }
	defer func() { c.cfg.Now = saved }()
	key, err := c.Write(context.Background(), exampleChunk(t))
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// manyStacks writes n stream records of 30 frames, drawn from unique
// distinct stacks, as one upload of one process.
func manyStacks(n, unique int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, 1))
	stacks := make([][]uint64, unique)
	urng := rand.New(rand.NewPCG(7, 7)) // the same unique stacks in every upload
	for i := range stacks {
		st := make([]uint64, 30)
		for k := range st {
			st[k] = 0x100000000 + 0x320 + uint64(urng.IntN(0x2c0))&^3
		}
		stacks[i] = st
	}
	var buf bytes.Buffer
	for i := range n {
		if i == 0 {
			buf.WriteString(`{"image_set":"p","images":[{"uuid":"4C4C444C-5555-3144-A117-3E15AF6B6CFF","load_address":4294967296,"name":"Chain"}],`)
		} else {
			buf.WriteString(`{"image_set":"p",`)
		}
		buf.WriteString(`"frames":[`)
		for k, a := range stacks[rng.IntN(unique)] {
			if k > 0 {
				buf.WriteByte(',')
			}
			fmt.Fprintf(&buf, "%d", a)
		}
		fmt.Fprintf(&buf, `],"thread":"main","timestamp":"2026-11-26T01:%02d:00Z","app_version":"2.%d","labels":{"api":"api%d"}}`+"\n",
			i%60, i%3, i%5)
	}
	return buf.Bytes()
}

// counts merges the chunks under the query and returns their records
// and the samples' total weight.
func counts(t testing.TB, c *Chunks, q Query) (records, weight int64) {
	t.Helper()
	agg, err := c.Merge(context.Background(), &q)
	if err != nil {
		t.Fatalf("Merge(%+v): %v", q, err)
	}
	for _, w := range agg.Chunk().SampleWeights {
		weight += w
	}
	return agg.Records(), weight
}

// noSymbols knows no image: frames stay addresses.
type noSymbols struct{}

func (noSymbols) LookupContext(context.Context, uuid.UUID) (*symstore.Entry, error) {
	return nil, nil
}

// answer is what a query answers, every stack shown: the folded stacks
// and the groups.
func answer(t testing.TB, c *Chunks, q Query, group aggregate.GroupOptions) string {
	t.Helper()
	agg, err := c.Merge(context.Background(), &q)
	if err != nil {
		t.Fatalf("Merge(%+v): %v", q, err)
	}
	res, err := agg.Symbolicate(context.Background(), noSymbols{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	res.WriteFolded(&out)
	res.WriteGroupsJSON(&out, res.Groups(group))
	return out.String()
}

func chunkKeys(t testing.TB, store Store) []string {
	t.Helper()
	keys, err := store.List(context.Background(), chunkPrefix)
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

func countSuffix(keys []string, suffix string) (n int) {
	for _, k := range keys {
		if strings.HasSuffix(k, suffix) {
			n++
		}
	}
	return n
}
