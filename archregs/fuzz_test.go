package archregs

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzDecode decodes arbitrary bytes as every flavor of every architecture:
// it must never panic, and whatever decodes must encode and decode back to
// the same registers.
func FuzzDecode(f *testing.F) {
	for ai, arch := range All {
		r := NewRegisters(arch)
		for i, n := range arch.RegNames {
			v := uint64(0x1000 + 8*i)
			if err := r.Set(n, v); err != nil {
				f.Fatal(err)
			}
		}
		flavors := []uint32{NativeFlavor(arch)}
		if s, _ := statesOf(arch); s.unified != nil {
			flavors = append(flavors, s.unified.flavor)
		}
		for _, fl := range flavors {
			data, err := r.Encode(fl)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(uint8(ai), fl, data)
		}
	}
	f.Fuzz(func(t *testing.T, archIndex uint8, flavor uint32, data []byte) {
		arch := All[int(archIndex)%len(All)]
		r, err := Decode(arch, flavor, data)
		if err != nil {
			return
		}
		enc, err := r.Encode(flavor)
		if err != nil {
			t.Fatalf("Encode(%d) of decoded state: %v", flavor, err)
		}
		back, err := Decode(arch, flavor, enc)
		if err != nil {
			t.Fatalf("Decode(Encode()): %v", err)
		}
		if diff := cmp.Diff(r.Values(), back.Values()); diff != "" {
			t.Errorf("Decode(Encode(Decode(data))) mismatch (-want +got):\n%s", diff)
		}
	})
}
