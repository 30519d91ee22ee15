package symindex_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stackimage/stackimage/internal/testcorpus"
	"github.com/stackimage/stackimage/symindex"
	"github.com/stackimage/stackimage/symstore"
)

// TestSweep checks, on the darwin cmd/go build's index (36 chunks), that
// lookups stop checking chunks once every chunk is known good, and that
// a damaged chunk is still reported by the lookup that reads it, never
// before, while lookups elsewhere answer as the intact file does.
func TestSweep(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: indexes the darwin cmd/go build")
	}
	bin, err := testcorpus.GoDarwinBinary()
	if err != nil {
		t.Skipf("no darwin cmd/go build: %v", err)
	}
	for _, images := range openImages(t, bin) {
		e, _ := symstore.NewEntry(images...)
		good, data := roundTrip(t, e)
		text, ok := images[0].Section("__TEXT", "__text")
		if !ok {
			t.Fatal("no __TEXT,__text")
		}
		rng := rand.New(rand.NewPCG(3, 4))
		addrs := make([]uint64, 2000)
		for i := range addrs {
			addrs[i] = text.Addr + rng.Uint64N(text.Size)
		}
		if good.AllGood() {
			t.Fatal("AllGood before any lookup, want the chunks unchecked")
		}
		for _, a := range addrs {
			good.Lookup(a)
		}
		if !good.AllGood() || good.Err() != nil {
			t.Fatalf("after %d lookups: AllGood %v, Err %v; want every chunk checked good", len(addrs), good.AllGood(), good.Err())
		}

		n, base := good.Chunks()
		if n < 8 {
			t.Fatalf("%d chunks, want a file of several", n)
		}
		for _, c := range []int{1, n / 3, n / 2, n - 2} {
			t.Run(fmt.Sprintf("chunk%d", c), func(t *testing.T) {
				bad := bytes.Clone(data)
				bad[base+uint64(c)<<16+100] ^= 0x55
				ix, err := symindex.Parse(bad)
				if err != nil {
					t.Skipf("Parse = %v: the chunk is read at open", err)
				}
				want := fmt.Sprintf("chunk %d ", c)
				for _, a := range addrs {
					got, _ := ix.Lookup(a)
					if err := ix.Err(); err != nil {
						if !strings.Contains(err.Error(), want) {
							t.Fatalf("Lookup(%#x): Err = %v, want the damaged %s", a, err, want)
						}
						continue
					}
					w, _ := good.Lookup(a)
					if diff := cmp.Diff(w, got); diff != "" {
						t.Fatalf("Lookup(%#x) before the damage was met (-intact +damaged):\n%s", a, diff)
					}
				}
				if ix.AllGood() {
					t.Errorf("AllGood with chunk %d damaged", c)
				}
				if err := ix.Verify(); err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("Verify = %v, want the damaged %s", err, want)
				}
			})
		}
	}
}
