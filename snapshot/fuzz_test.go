package snapshot

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/internal/hostile"
)

// FuzzParse feeds Parse arbitrary documents, seeded with valid snapshots of
// every architecture: it must never panic, and whatever it accepts must
// write back (Marshal) and parse again to the same snapshot. Parsing must
// keep the allocation budget of internal/hostile.
func FuzzParse(f *testing.F) {
	// Seeds stay small (a few hundred bytes of memory at most): the fuzzer
	// minimizes every new input byte by byte.
	doc := validDoc(f)
	elem(doc, "memory", 0)["data"] = b64(stackBytes(16, 7))
	elem(doc, "memory", 1)["data"] = b64(stackBytes(16, 1))
	f.Add(encodeDoc(f, doc))
	for _, arch := range archregs.All {
		data, err := Marshal(testSnapshot(f, arch))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"format": "stackimage.snapshot/v1", "arch": "i386",
		"threads": [{"id": 7, "registers": {"pc": "0x1f62", "fp": "0xbffff000"}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var s *Snapshot
		var err error
		hostile.Budget(t, int64(len(data)), func() { s, err = Parse(data) })
		if err != nil {
			return
		}
		out, err := Marshal(s)
		if err != nil {
			t.Fatalf("Marshal of a parsed snapshot: %v", err)
		}
		back, err := Parse(out)
		if err != nil {
			t.Fatalf("Parse(Marshal(Parse(data))): %v", err)
		}
		if diff := cmp.Diff(view(s), view(back)); diff != "" {
			t.Errorf("Parse(Marshal(Parse(data))) mismatch (-want +got):\n%s", diff)
		}
	})
}
