package snapshot

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stackimage/stackimage/archregs"
)

// fullRegisters returns registers of arch with every register known and a
// distinct value that fits its field.
func fullRegisters(t testing.TB, arch *archregs.Arch) *archregs.Registers {
	r := archregs.NewRegisters(arch)
	for i, n := range arch.RegNames {
		mustSet(t, r, n, uint64(0x1000+i*8))
	}
	return r
}

func testSnapshot(t testing.TB, arch *archregs.Arch) *Snapshot {
	t.Helper()
	partial := archregs.NewRegisters(arch)
	mustSet(t, partial, arch.PC, 0x2000)
	mustSet(t, partial, arch.FP, 0x7000)
	mem, err := NewRegions([]Region{
		{Address: 0x7000, Data: stackBytes(64, 3)},
		{Address: 0x7040, Data: stackBytes(32, 9)},
	})
	if err != nil {
		t.Fatal(err)
	}
	return &Snapshot{
		Arch: arch,
		Images: []Image{
			{Name: "/App", UUID: mustUUID(t, appUUID), LoadAddress: 0x1000, Size: 0x4000},
			{Name: "/usr/lib/dyld", UUID: mustUUID(t, libUUID), LoadAddress: 0x40000},
		},
		Threads: []Thread{
			{ID: 1, Name: "main", Crashed: true, Registers: fullRegisters(t, arch), StackLow: 0x6000, StackHigh: 0x8000},
			{ID: 1 << 60, Registers: partial},
		},
		Memory: mem,
	}
}

func TestMarshalRoundTrip(t *testing.T) {
	for _, arch := range archregs.All {
		t.Run(arch.Name, func(t *testing.T) {
			s := testSnapshot(t, arch)
			data, err := Marshal(s)
			if err != nil {
				t.Fatalf("Marshal: %v", err)
			}
			back, err := Parse(data)
			if err != nil {
				t.Fatalf("Parse(Marshal()): %v\n%s", err, data)
			}
			if diff := cmp.Diff(view(s), view(back)); diff != "" {
				t.Errorf("Parse(Marshal()) mismatch (-want +got):\n%s", diff)
			}
			if back.Arch != arch {
				t.Errorf("Parse(Marshal()).Arch = %v, want %v", back.Arch, arch)
			}
			// The full register set is written as the native thread state,
			// the partial one as registers.
			var doc struct {
				Threads []struct {
					ThreadState *struct{ Flavor uint32 } `json:"thread_state"`
					Registers   map[string]string        `json:"registers"`
				} `json:"threads"`
			}
			if err := json.Unmarshal(data, &doc); err != nil {
				t.Fatal(err)
			}
			if ts := doc.Threads[0].ThreadState; ts == nil || ts.Flavor != archregs.NativeFlavor(arch) {
				t.Errorf("threads[0].thread_state = %+v, want flavor %d", ts, archregs.NativeFlavor(arch))
			}
			want := map[string]string{arch.PC: "0x2000", arch.FP: "0x7000"}
			if diff := cmp.Diff(want, doc.Threads[1].Registers); diff != "" {
				t.Errorf("threads[1].registers mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// A parsed document written again parses to the same snapshot, and the
// output spells values as the format does.
func TestMarshalParsed(t *testing.T) {
	s, err := Parse(encodeDoc(t, validDoc(t)))
	if err != nil {
		t.Fatal(err)
	}
	data, err := Marshal(s)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	back, err := Parse(data)
	if err != nil {
		t.Fatalf("Parse(Marshal()): %v", err)
	}
	if diff := cmp.Diff(view(s), view(back)); diff != "" {
		t.Errorf("Parse(Marshal(Parse())) mismatch (-want +got):\n%s", diff)
	}
	for _, want := range []string{
		`"format": "stackimage.snapshot/v1"`,
		`"uuid": "05FE065E-0633-362E-A0D5-607511E5F35D"`,
		`"load_address": "0x1a0000000"`,
		`"size": "0x8000"`,
		`"flavor": 6`,
		`"low": "0x16fd00000"`,
		`"address": "0x16fdfe000"`,
	} {
		if !strings.Contains(string(data), want) {
			t.Errorf("Marshal() output lacks %s", want)
		}
	}
}

func TestMarshalErrors(t *testing.T) {
	tests := []struct {
		name   string
		edit   func(s *Snapshot)
		errHas string
	}{
		{"no arch", func(s *Snapshot) { s.Arch = nil }, "snapshot: Marshal: no architecture"},
		{"no registers", func(s *Snapshot) { s.Threads[1].Registers = nil }, "snapshot: Marshal: threads[1]: no registers"},
		{"registers of another arch", func(s *Snapshot) { s.Threads[0].Registers = fullRegisters(t, archregs.X86_64) },
			"snapshot: Marshal: threads[0]: registers are x86_64, the snapshot arm64"},
		{"no threads", func(s *Snapshot) { s.Threads = nil }, "does not validate: snapshot: threads: missing or empty"},
		{"image without a name", func(s *Snapshot) { s.Images[0].Name = "" }, "does not validate: snapshot: images[0].name: missing"},
		{"no pc", func(s *Snapshot) {
			r := archregs.NewRegisters(archregs.ARM64)
			mustSet(t, r, "sp", 0x10)
			s.Threads[1].Registers = r
		}, "does not validate: snapshot: threads[1].registers: no pc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := testSnapshot(t, archregs.ARM64)
			tt.edit(s)
			data, err := Marshal(s)
			if err == nil || !strings.Contains(err.Error(), tt.errHas) {
				t.Fatalf("Marshal() = %d bytes, %v; want error containing %q", len(data), err, tt.errHas)
			}
		})
	}
}

// A snapshot without memory writes an empty array, not null.
func TestMarshalNoMemory(t *testing.T) {
	s := testSnapshot(t, archregs.X86_64)
	s.Memory = nil
	data, err := Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"memory": []`) {
		t.Errorf("Marshal() without memory lacks \"memory\": []:\n%s", data)
	}
}
