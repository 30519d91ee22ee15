package chunkstore_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/stackimage/stackimage/aggregate"
	"github.com/stackimage/stackimage/aggregate/chunkstore"
	"github.com/stackimage/stackimage/lookup"
)

// objects is a Store in memory; a program would hand its bucket.
type objects struct {
	mu sync.Mutex
	m  map[string][]byte
}

func (o *objects) Get(_ context.Context, key string) (io.ReadCloser, int64, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	data, ok := o.m[key]
	if !ok {
		return nil, 0, lookup.ErrNotFound
	}
	return io.NopCloser(bytes.NewReader(data)), int64(len(data)), nil
}

func (o *objects) Put(_ context.Context, key string, r io.Reader, _ int64, onlyIfAbsent bool) error {
	data, err := io.ReadAll(r)
	o.mu.Lock()
	defer o.mu.Unlock()
	if _, ok := o.m[key]; err == nil && ok && onlyIfAbsent {
		err = fmt.Errorf("%s exists", key)
	}
	if err == nil {
		o.m[key] = data
	}
	return err
}

func (o *objects) Stat(ctx context.Context, key string) (int64, string, error) {
	_, size, err := o.Get(ctx, key)
	return size, "", err
}

func (o *objects) List(_ context.Context, prefix string) ([]string, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var keys []string
	for k := range o.m {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys, nil
}

func (o *objects) Remove(_ context.Context, key string) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	delete(o.m, key)
	return nil
}

// Two uploads of stream records are kept in the store, then merged under
// a query of one label: what a service does for POST /v1/stacks and
// GET /v1/groups.
func Example() {
	ctx := context.Background()
	chunks := chunkstore.New(&objects{m: map[string][]byte{}}, chunkstore.Config{})
	defer chunks.Close()
	for _, api := range []string{"UserDefaults", "FileManager"} {
		rd, _ := aggregate.NewReader(strings.NewReader(`{"images":[{"uuid":"4c4c444c55553144a1173e15af6b6cff","load_address":"0x100000000","name":"App"}],"frames":["0x100000f00","0x100000e00"],"labels":{"api":"` + api + `"},"weight":3}`))
		agg := aggregate.New()
		for rec, err := rd.Next(); err == nil; rec, err = rd.Next() {
			agg.Add(rec)
		}
		if _, err := chunks.Write(ctx, agg.Chunk()); err != nil {
			fmt.Println(err)
		}
	}
	merged, err := chunks.Merge(ctx, &chunkstore.Query{Labels: []aggregate.Label{{Key: "api", Value: "UserDefaults"}}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(merged.Records(), "of the stored records have api=UserDefaults")
	// Output: 1 of the stored records have api=UserDefaults
}
