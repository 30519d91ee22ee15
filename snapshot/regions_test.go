package snapshot

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// testRegions are [0x1000, 0x1010) and [0x1010, 0x1020) (adjacent), then
// [0x2000, 0x2004) after a gap, given out of order.
func testRegions(t *testing.T) *Regions {
	t.Helper()
	r, err := NewRegions([]Region{
		{Address: 0x2000, Data: []byte{0xa0, 0xa1, 0xa2, 0xa3}},
		{Address: 0x1010, Data: stackBytes(16, 0x10)},
		{Address: 0x1000, Data: stackBytes(16, 0x00)},
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func TestNewRegionsSorts(t *testing.T) {
	var got []uint64
	for _, r := range testRegions(t).All() {
		got = append(got, r.Address)
	}
	if diff := cmp.Diff([]uint64{0x1000, 0x1010, 0x2000}, got); diff != "" {
		t.Errorf("All() addresses mismatch (-want +got):\n%s", diff)
	}
}

func TestReadMemory(t *testing.T) {
	r := testRegions(t)
	tests := []struct {
		name    string
		addr    uint64
		size    int
		want    []byte
		wantErr string // the error's text; "" for none
	}{
		{"inside", 0x1004, 4, []byte{4, 5, 6, 7}, ""},
		{"whole region", 0x2000, 4, []byte{0xa0, 0xa1, 0xa2, 0xa3}, ""},
		{"across adjacent regions", 0x100c, 8, []byte{0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13}, ""},
		{"both adjacent regions whole", 0x1000, 32, stackBytes(32, 0), ""},
		{"last byte", 0x2003, 1, []byte{0xa3}, ""},
		{"nothing", 0x5000, 0, []byte{}, ""},
		{"short at the end of a run", 0x101c, 8, []byte{0x1c, 0x1d, 0x1e, 0x1f},
			"snapshot: memory not captured at 0x1020"},
		{"short at the end", 0x2002, 4, []byte{0xa2, 0xa3}, "snapshot: memory not captured at 0x2004"},
		{"in the gap", 0x1800, 8, []byte{}, "snapshot: memory not captured at 0x1800"},
		{"before the first", 0xfff, 2, []byte{}, "snapshot: memory not captured at 0xfff"},
		{"after the last", 0x2004, 1, []byte{}, "snapshot: memory not captured at 0x2004"},
		{"wrapping", 0xffffffffffffffff, 2, []byte{},
			"snapshot: memory not captured at 0xffffffffffffffff"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := make([]byte, tt.size)
			n, err := r.ReadMemory(p, tt.addr)
			if diff := cmp.Diff(tt.want, p[:n]); diff != "" {
				t.Errorf("ReadMemory(%d bytes at %#x) read mismatch (-want +got):\n%s", tt.size, tt.addr, diff)
			}
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("ReadMemory(%d bytes at %#x) error = %v, want nil", tt.size, tt.addr, err)
			case tt.wantErr != "" && (err == nil || err.Error() != tt.wantErr):
				t.Errorf("ReadMemory(%d bytes at %#x) error = %v, want %q", tt.size, tt.addr, err, tt.wantErr)
			case tt.wantErr != "" && !errors.Is(err, ErrNotCaptured):
				t.Errorf("ReadMemory(%d bytes at %#x) error = %v, want one wrapping ErrNotCaptured", tt.size, tt.addr, err)
			}
		})
	}
}

func TestReadMemoryWrapsAround(t *testing.T) {
	r, err := NewRegions([]Region{{Address: 0xfffffffffffffff0, Data: make([]byte, 15)}})
	if err != nil {
		t.Fatal(err)
	}
	p := make([]byte, 32)
	n, err := r.ReadMemory(p, 0xfffffffffffffff0)
	if n != 15 || !errors.Is(err, ErrNotCaptured) {
		t.Errorf("ReadMemory(32 bytes at the top) = %d, %v; want 15, ErrNotCaptured", n, err)
	}
}

func TestReadMemoryNil(t *testing.T) {
	var r *Regions
	n, err := r.ReadMemory(make([]byte, 4), 0x1000)
	if n != 0 || !errors.Is(err, ErrNotCaptured) {
		t.Errorf("nil Regions: ReadMemory() = %d, %v; want 0, ErrNotCaptured", n, err)
	}
	if got := r.All(); got != nil {
		t.Errorf("nil Regions: All() = %v, want nil", got)
	}
}

func TestNewRegionsErrors(t *testing.T) {
	tests := []struct {
		name    string
		regions []Region
		errHas  string
	}{
		{"overlap", []Region{{0x1000, make([]byte, 16)}, {0x100f, make([]byte, 1)}},
			"regions[1]: [0x100f, 0x1010) overlaps regions[0] [0x1000, 0x1010)"},
		{"same address", []Region{{0x1000, make([]byte, 1)}, {0x1000, make([]byte, 1)}},
			"regions[1]: [0x1000, 0x1001) overlaps regions[0] [0x1000, 0x1001)"},
		{"contained", []Region{{0x1004, make([]byte, 2)}, {0x1000, make([]byte, 16)}},
			"regions[0]: [0x1004, 0x1006) overlaps regions[1] [0x1000, 0x1010)"},
		{"empty", []Region{{0x1000, nil}}, "regions[0]: empty region at 0x1000"},
		{"past the end", []Region{{0xfffffffffffffff0, make([]byte, 16)}},
			"regions[0]: 16 bytes at 0xfffffffffffffff0 run past the end of the address space"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewRegions(tt.regions)
			if err == nil || !strings.Contains(err.Error(), tt.errHas) {
				t.Fatalf("NewRegions() = %v, %v; want error containing %q", r, err, tt.errHas)
			}
		})
	}
}

func TestDecodedSize(t *testing.T) {
	for n := 1; n <= 9; n++ {
		s := b64(make([]byte, n))
		if got := decodedSize(s); got != n {
			t.Errorf("decodedSize(%q) = %d, want %d", s, got, n)
		}
	}
	// With line breaks (which the decoder skips) it may only overestimate.
	if got := decodedSize("AAAA\nAA=="); got < 4 {
		t.Errorf("decodedSize(%q) = %d, want at least 4", "AAAA\nAA==", got)
	}
}

// BenchmarkReadMemory reads pointer-sized words from a snapshot with many
// regions, as a stack walk does.
func BenchmarkReadMemory(b *testing.B) {
	regions := make([]Region, 4096)
	for i := range regions {
		regions[i] = Region{Address: 0x100000000 + uint64(i)*0x10000, Data: make([]byte, 0x4000)}
	}
	r, err := NewRegions(regions)
	if err != nil {
		b.Fatal(err)
	}
	var p [8]byte
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		addr := 0x100000000 + uint64(i%4096)*0x10000 + uint64(i%0x3ff8)
		if _, err := r.ReadMemory(p[:], addr); err != nil {
			b.Fatal(err)
		}
	}
}
