package walker

import (
	"fmt"
	"math/rand"
	"reflect"
	"sync"
	"testing"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/unwind"
)

// inspectCorpus returns functions to inspect for one architecture: the
// prologue and epilogue shapes of the tests above, each followed by words
// drawn from rng (code the decoder half understands), and words drawn
// alone.
func inspectCorpus(rng *rand.Rand, arch *archregs.Arch) [][]byte {
	shapes := map[*archregs.Arch][][]byte{
		archregs.ARM64: {wordCode(0xd10103ff, 0xa9024ff4, 0xa9037bfd, 0x9100c3fd, 0x94000000, 0xa9437bfd, 0xa9424ff4, 0x910103ff, 0xd65f03c0),
			wordCode(0x34000100, 0xa9bf7bfd, 0x910003fd, 0x94000000, 0xa8c17bfd, 0xd65f03c0)},
		archregs.X86_64: {{0x55, 0x41, 0x56, 0x53, 0x48, 0x83, 0xec, 0x10, 0xe8, 0, 0, 0, 0, 0x48, 0x83, 0xc4, 0x10, 0x5b, 0x41, 0x5e, 0x5d, 0xc3},
			{0x85, 0xff, 0x74, 0x0a, 0x53, 0xe8, 0, 0, 0, 0, 0x5b, 0xc3, 0x90, 0x90, 0x31, 0xc0, 0xc3}},
		archregs.I386: {{0x55, 0x89, 0xe5, 0x57, 0x56, 0x83, 0xec, 0x10, 0xe8, 0, 0, 0, 0, 0x58, 0xe8, 0, 0, 0, 0, 0x83, 0xc4, 0x10, 0x5e, 0x5f, 0x5d, 0xc3}},
		archregs.ARMV7: {wordCode(0xe92d40f0, 0xe28d700c, 0xe92d0d00, 0xed2d8b04, 0xe24dd010, 0xebfffffe, 0xe247d028, 0xecbd8b04, 0xe8bd0d00, 0xe8bd80f0),
			halfCode(0xb5f0, 0xaf03, 0xe92d, 0x0d00, 0xb084, 0xf7ff, 0xfffe, 0xb004, 0xe8bd, 0x0d00, 0xbdf0)},
	}
	random := func(n int) []byte {
		b := make([]byte, n)
		rng.Read(b)
		return b
	}
	var out [][]byte
	for _, shape := range shapes[arch] {
		out = append(out, shape)
		for range 8 {
			out = append(out, append(append([]byte(nil), shape...), random(64+rng.Intn(192))...))
		}
	}
	for range 8 {
		out = append(out, random(256))
	}
	return out
}

// TestInspectCacheSameAnswers asks the code inspection for every offset
// of many functions, in a random order and from several goroutines at
// once, through one InspectCache: every answer (a miss decoded, or a hit
// kept) must be the row decoding without a cache gives.
func TestInspectCacheSameAnswers(t *testing.T) {
	rng := rand.New(rand.NewSource(28))
	for _, arch := range []*archregs.Arch{archregs.ARM64, archregs.X86_64, archregs.I386, archregs.ARMV7} {
		for _, thumb := range []bool{false, arch.ThumbBit != 0} {
			if thumb && arch.ThumbBit == 0 {
				continue
			}
			for fi, code := range inspectCorpus(rng, arch) {
				var cache InspectCache
				want := make([]*unwind.Row, len(code)+8)
				for off := range want {
					if row := inspectWith(arch, code, uint64(off), thumb, nil); row != nil {
						want[off] = cloneRow(row)
					}
				}
				var wg sync.WaitGroup
				errs := make(chan string, 4*len(want))
				for g := range 4 {
					order := rand.New(rand.NewSource(int64(g))).Perm(len(want))
					wg.Add(1)
					go func() {
						defer wg.Done()
						for pass := 0; pass < 2; pass++ {
							for _, off := range order {
								got := inspectWith(arch, code, uint64(off), thumb, &cache)
								if (got == nil) != (want[off] == nil) || got != nil && !reflect.DeepEqual(cloneRow(got), want[off]) {
									errs <- fmt.Sprintf("%s thumb=%v function %d +%#x: cached %v, uncached %v", arch.Name, thumb, fi, off, got, want[off])
								}
							}
						}
					}()
				}
				wg.Wait()
				close(errs)
				for e := range errs {
					t.Error(e)
				}
				hits, misses := cache.Stats()
				if misses > uint64(4*len(want)) || hits < uint64(4*len(want)) {
					t.Errorf("%s function %d: %d hits, %d misses over %d offsets asked 8 times: the cache keeps no answer", arch.Name, fi, hits, misses, len(want))
				}
			}
		}
	}
}

// TestInspectCacheBounded fills a cache past maxInspectAnswers: it is
// emptied and refilled, never larger, and still answers right.
func TestInspectCacheBounded(t *testing.T) {
	var cache InspectCache
	code := []byte{0x53, 0x48, 0x83, 0xec, 0x20, 0xc3}
	st := inspectState{spKnown: true, spOff: 8}
	for i := range maxInspectAnswers + 10 {
		cache.put(inspectKey{arch: archregs.X86_64, start: uint64(i) * 0x100}, uint64(i)*0x100+1, &st, true)
		if cache.answers > maxInspectAnswers {
			t.Fatalf("%d answers kept, want at most %d", cache.answers, maxInspectAnswers)
		}
	}
	if cache.answers != 10 {
		t.Errorf("%d answers after the refill, want 10", cache.answers)
	}
	want := cloneRow(inspectWith(archregs.X86_64, code, 1, false, nil))
	if got := inspectWith(archregs.X86_64, code, 1, false, &cache); !reflect.DeepEqual(cloneRow(got), want) {
		t.Errorf("row after the refill %v, want %v", got, want)
	}
}

func cloneRow(r *unwind.Row) *unwind.Row {
	c := *r
	c.Regs = append(c.Regs[:0:0], r.Regs...)
	return &c
}
