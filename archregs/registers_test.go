package archregs

import (
	"encoding/binary"
	"math/rand"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The COUNT values below are copied from the headers (x86_THREAD_STATE32_COUNT
// etc. are sizeof(struct)/sizeof(uint32_t)), not from the package constants,
// so that a wrong mirror or a wrong constant both fail.
func TestStateSizes(t *testing.T) {
	tests := []struct {
		name  string
		state any
		count int
	}{
		{"x86_THREAD_STATE32", x86ThreadState32{}, 16},
		{"x86_THREAD_STATE64", x86ThreadState64{}, 42},
		{"x86_THREAD_STATE", x86ThreadState{}, 44},
		{"ARM_THREAD_STATE", armThreadState{}, 17},
		{"ARM_THREAD_STATE64", armThreadState64{}, 68},
		{"ARM_UNIFIED_THREAD_STATE", armUnifiedThreadState{}, 70},
		{"x86_state_hdr_t", stateHeader{}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := binary.Size(tt.state); got != 4*tt.count {
				t.Errorf("binary.Size(%T) = %d, want %d (4 × count %d)", tt.state, got, 4*tt.count, tt.count)
			}
		})
	}
}

func TestFieldsMatchRegNames(t *testing.T) {
	for _, arch := range All {
		t.Run(arch.Name, func(t *testing.T) {
			s, err := statesOf(arch)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(s.native.newState().fields()); got != len(arch.RegNames) {
				t.Errorf("%s has %d fields, want %d (RegNames)", s.native.name, got, len(arch.RegNames))
			}
		})
	}
}

// regWidth returns the byte width of register i of arch in its native state:
// everything is pointer-sized except arm64's 32-bit cpsr.
func regWidth(arch *Arch, i int) int {
	if arch.RegNames[i] == "cpsr" {
		return 4
	}
	return arch.PtrSize
}

// rawState builds native-flavor bytes with register i set to vals[i], laid
// out as consecutive fields (plus arm64's trailing pad word).
func rawState(arch *Arch, vals []uint64) []byte {
	var b []byte
	for i, v := range vals {
		if regWidth(arch, i) == 8 {
			b = binary.LittleEndian.AppendUint64(b, v)
		} else {
			b = binary.LittleEndian.AppendUint32(b, uint32(v))
		}
	}
	if arch.CPUType == CPUTypeARM64 {
		b = binary.LittleEndian.AppendUint32(b, 0) // __pad
	}
	return b
}

// distinctValues returns a value per register of arch, each different and
// fitting its field.
func distinctValues(arch *Arch) []uint64 {
	vals := make([]uint64, len(arch.RegNames))
	for i := range vals {
		v := uint64(0x0101010101010101) * uint64(i+1)
		if regWidth(arch, i) == 4 {
			v &= 0xffffffff
		}
		vals[i] = v
	}
	return vals
}

func TestDecodeLayout(t *testing.T) {
	// Offsets of PC, SP and FP in each native struct, counted by hand from
	// the headers' field lists, to check the layout independently of
	// RegNames.
	tests := []struct {
		name           string
		arch           *Arch
		flavor         uint32
		size           int
		pc, sp, fp, lr int // byte offsets; lr -1 when the arch has none
	}{
		{"arm64", ARM64, 6, 272, 256, 248, 232, 240},
		{"arm64e", ARM64E, 6, 272, 256, 248, 232, 240},
		{"armv7", ARMV7, 1, 68, 60, 52, 28, 56},
		{"x86_64", X86_64, 4, 168, 128, 56, 48, -1},
		{"i386", I386, 1, 64, 40, 28, 24, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vals := distinctValues(tt.arch)
			data := rawState(tt.arch, vals)
			if len(data) != tt.size {
				t.Fatalf("test state is %d bytes, want %d", len(data), tt.size)
			}
			r, err := Decode(tt.arch, tt.flavor, data)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if r.Arch != tt.arch {
				t.Errorf("Decode().Arch = %v, want %v", r.Arch, tt.arch)
			}
			want := make(map[string]uint64)
			for i, n := range tt.arch.RegNames {
				want[n] = vals[i]
			}
			if diff := cmp.Diff(want, r.Values()); diff != "" {
				t.Errorf("Decode() values mismatch (-want +got):\n%s", diff)
			}
			read := func(off int) uint64 {
				if tt.arch.PtrSize == 8 {
					return binary.LittleEndian.Uint64(data[off:])
				}
				return uint64(binary.LittleEndian.Uint32(data[off:]))
			}
			check := func(role string, get func() (uint64, bool), off int) {
				got, ok := get()
				if off < 0 {
					if ok {
						t.Errorf("%s() = %#x, true; want unknown", role, got)
					}
					return
				}
				if want := read(off); !ok || got != want {
					t.Errorf("%s() = %#x, %v; want %#x (offset %d)", role, got, ok, want, off)
				}
			}
			check("PC", r.PC, tt.pc)
			check("SP", r.SP, tt.sp)
			check("FP", r.FP, tt.fp)
			check("LR", r.LR, tt.lr)
		})
	}
}

func TestDecodeUnified(t *testing.T) {
	hdr := func(flavor, count uint32) []byte {
		return binary.LittleEndian.AppendUint32(binary.LittleEndian.AppendUint32(nil, flavor), count)
	}
	pad := func(b []byte, n int) []byte { return append(b, make([]byte, n-len(b))...) }
	x64 := distinctValues(X86_64)
	x32 := distinctValues(I386)
	a64 := distinctValues(ARM64)
	tests := []struct {
		name   string
		arch   *Arch
		data   []byte
		want   []uint64
		errHas string
	}{
		{"x86_64 whole", X86_64, append(hdr(4, 42), rawState(X86_64, x64)...), x64, ""},
		{"i386 whole", I386, pad(append(hdr(1, 16), rawState(I386, x32)...), 176), x32, ""},
		{"i386 header and state", I386, append(hdr(1, 16), rawState(I386, x32)...), x32, ""},
		{"arm64 unified", ARM64, append(hdr(6, 68), rawState(ARM64, a64)...), a64, ""},
		{"arm64e unified", ARM64E, append(hdr(6, 68), rawState(ARM64, a64)...), a64, ""},
		{"x86_64 header names 32-bit", X86_64, pad(append(hdr(1, 16), rawState(I386, x32)...), 176), nil,
			"header names flavor 1 count 16, want flavor 4 (x86_THREAD_STATE64) count 42"},
		{"i386 header names 64-bit", I386, append(hdr(4, 42), rawState(X86_64, x64)...), nil,
			"header names flavor 4 count 42, want flavor 1 (x86_THREAD_STATE32) count 16"},
		{"header count wrong", X86_64, append(hdr(4, 40), rawState(X86_64, x64)...), nil, "header names flavor 4 count 40"},
		{"arm64 header names 32-bit", ARM64, pad(hdr(9, 17), 280), nil, "header names flavor 9 count 17"},
		{"short header", X86_64, []byte{4, 0, 0}, nil, "x86_THREAD_STATE (flavor 7): 3 bytes of data, want 176 (count 44)"},
		{"i386 truncated", I386, append(hdr(1, 16), rawState(I386, x32)[:60]...), nil,
			"68 bytes of data, want 176 (count 44) or 72 (header and x86_THREAD_STATE32)"},
		{"x86_64 long", X86_64, append(append(hdr(4, 42), rawState(X86_64, x64)...), 0, 0, 0, 0), nil,
			"180 bytes of data, want 176 (count 44)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			flavor := uint32(7)
			if tt.arch.CPUType == CPUTypeARM64 {
				flavor = 1
			}
			r, err := Decode(tt.arch, flavor, tt.data)
			if tt.errHas != "" {
				if err == nil || !strings.Contains(err.Error(), tt.errHas) {
					t.Fatalf("Decode() error = %v, want one containing %q", err, tt.errHas)
				}
				return
			}
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			want := make(map[string]uint64)
			for i, n := range tt.arch.RegNames {
				want[n] = tt.want[i]
			}
			if diff := cmp.Diff(want, r.Values()); diff != "" {
				t.Errorf("Decode() values mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct {
		name   string
		arch   *Arch
		flavor uint32
		size   int
		errHas string
	}{
		{"arm64 short", ARM64, 6, 271, "arm64 ARM_THREAD_STATE64 (flavor 6): 271 bytes of data, want 272 (count 68)"},
		{"arm64 long", ARM64, 6, 276, "276 bytes of data, want 272"},
		{"arm64 empty", ARM64, 6, 0, "0 bytes of data, want 272"},
		{"arm64 x86 flavor", ARM64, 4, 168, "arm64 has no thread state flavor 4 (want 6 (ARM_THREAD_STATE64) or 1 (ARM_UNIFIED_THREAD_STATE))"},
		{"armv7 arm64 flavor", ARMV7, 6, 272, "armv7 has no thread state flavor 6 (want 1 (ARM_THREAD_STATE))"},
		{"armv7 short", ARMV7, 1, 64, "armv7 ARM_THREAD_STATE (flavor 1): 64 bytes of data, want 68 (count 17)"},
		{"x86_64 flavor 1", X86_64, 1, 64, "x86_64 has no thread state flavor 1"},
		{"i386 64-bit flavor", I386, 4, 168, "i386 has no thread state flavor 4"},
		{"i386 long", I386, 1, 68, "i386 x86_THREAD_STATE32 (flavor 1): 68 bytes of data, want 64 (count 16)"},
		{"nil arch", nil, 6, 272, "no architecture given"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := Decode(tt.arch, tt.flavor, make([]byte, tt.size))
			if err == nil || !strings.Contains(err.Error(), tt.errHas) {
				t.Fatalf("Decode() = %v, %v; want error containing %q", r, err, tt.errHas)
			}
		})
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	tests := []struct {
		name   string
		arch   *Arch
		flavor uint32
		size   int
	}{
		{"arm64 ARM_THREAD_STATE64", ARM64, 6, 272},
		{"arm64 ARM_UNIFIED_THREAD_STATE", ARM64, 1, 280},
		{"arm64e ARM_THREAD_STATE64", ARM64E, 6, 272},
		{"armv7 ARM_THREAD_STATE", ARMV7, 1, 68},
		{"x86_64 x86_THREAD_STATE64", X86_64, 4, 168},
		{"x86_64 x86_THREAD_STATE", X86_64, 7, 176},
		{"i386 x86_THREAD_STATE32", I386, 1, 64},
		{"i386 x86_THREAD_STATE", I386, 7, 176},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewRegisters(tt.arch)
			for i, n := range tt.arch.RegNames {
				v := rng.Uint64()
				if regWidth(tt.arch, i) == 4 {
					v &= 0xffffffff
				}
				if err := r.Set(n, v); err != nil {
					t.Fatal(err)
				}
			}
			data, err := r.Encode(tt.flavor)
			if err != nil {
				t.Fatalf("Encode(%d): %v", tt.flavor, err)
			}
			if len(data) != tt.size {
				t.Errorf("Encode(%d) wrote %d bytes, want %d", tt.flavor, len(data), tt.size)
			}
			back, err := Decode(tt.arch, tt.flavor, data)
			if err != nil {
				t.Fatalf("Decode(Encode()): %v", err)
			}
			if diff := cmp.Diff(r.Values(), back.Values()); diff != "" {
				t.Errorf("Decode(Encode()) mismatch (-want +got):\n%s", diff)
			}
			// Decoding then encoding the native flavor reproduces the bytes.
			if tt.flavor != NativeFlavor(tt.arch) {
				return
			}
			raw := rawState(tt.arch, distinctValues(tt.arch))
			d, err := Decode(tt.arch, tt.flavor, raw)
			if err != nil {
				t.Fatal(err)
			}
			again, err := d.Encode(tt.flavor)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(raw, again); diff != "" {
				t.Errorf("Encode(Decode(raw)) mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestEncodeUnknownAreZero(t *testing.T) {
	r := NewRegisters(ARM64)
	if err := r.Set("pc", 0x100003f6a); err != nil {
		t.Fatal(err)
	}
	data, err := r.Encode(FlavorARMThreadState64)
	if err != nil {
		t.Fatal(err)
	}
	want := make([]byte, 272)
	binary.LittleEndian.PutUint64(want[256:], 0x100003f6a)
	if diff := cmp.Diff(want, data); diff != "" {
		t.Errorf("Encode() mismatch (-want +got):\n%s", diff)
	}
}

func TestEncodeErrors(t *testing.T) {
	tests := []struct {
		name   string
		arch   *Arch
		reg    string
		val    uint64
		flavor uint32
		errHas string
	}{
		{"armv7 pc too wide", ARMV7, "pc", 1 << 32, 1, "armv7 ARM_THREAD_STATE: register pc = 0x100000000 does not fit in 32 bits"},
		{"i386 esp too wide", I386, "esp", 1 << 40, 7, "register esp = 0x10000000000 does not fit in 32 bits"},
		{"arm64 cpsr too wide", ARM64, "cpsr", 1 << 32, 6, "register cpsr = 0x100000000 does not fit in 32 bits"},
		{"arm64 wrong flavor", ARM64, "pc", 1, 4, "arm64 has no thread state flavor 4"},
		{"x86_64 wrong flavor", X86_64, "rip", 1, 6, "x86_64 has no thread state flavor 6"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewRegisters(tt.arch)
			if err := r.Set(tt.reg, tt.val); err != nil {
				t.Fatal(err)
			}
			data, err := r.Encode(tt.flavor)
			if err == nil || !strings.Contains(err.Error(), tt.errHas) {
				t.Fatalf("Encode(%d) = %d bytes, %v; want error containing %q", tt.flavor, len(data), err, tt.errHas)
			}
		})
	}
}

func TestNativeFlavor(t *testing.T) {
	tests := []struct {
		arch *Arch
		want uint32
		name string
	}{
		{ARM64, 6, "ARM_THREAD_STATE64"},
		{ARM64E, 6, "ARM_THREAD_STATE64"},
		{ARMV7, 1, "ARM_THREAD_STATE"},
		{X86_64, 4, "x86_THREAD_STATE64"},
		{I386, 1, "x86_THREAD_STATE32"},
	}
	for _, tt := range tests {
		t.Run(tt.arch.Name, func(t *testing.T) {
			got := NativeFlavor(tt.arch)
			if got != tt.want {
				t.Errorf("NativeFlavor(%s) = %d, want %d", tt.arch, got, tt.want)
			}
			if name := FlavorName(tt.arch, got); name != tt.name {
				t.Errorf("FlavorName(%s, %d) = %q, want %q", tt.arch, got, name, tt.name)
			}
		})
	}
	if got := NativeFlavor(nil); got != 0 {
		t.Errorf("NativeFlavor(nil) = %d, want 0", got)
	}
	if got := FlavorName(X86_64, 7); got != "x86_THREAD_STATE" {
		t.Errorf("FlavorName(x86_64, 7) = %q, want %q", got, "x86_THREAD_STATE")
	}
	if got := FlavorName(ARMV7, 6); got != "flavor 6" {
		t.Errorf("FlavorName(armv7, 6) = %q, want %q", got, "flavor 6")
	}
}

func TestRegisterName(t *testing.T) {
	tests := []struct {
		name   string
		arch   *Arch
		in     string
		want   string
		wantOK bool
	}{
		{"arm64 exact", ARM64, "x28", "x28", true},
		{"arm64 x29", ARM64, "x29", "fp", true},
		{"arm64 x30", ARM64, "X30", "lr", true},
		{"arm64e pc", ARM64E, "PC", "pc", true},
		{"armv7 fp is r7", ARMV7, "fp", "r7", true},
		{"armv7 r13", ARMV7, "r13", "sp", true},
		{"armv7 r15", ARMV7, "r15", "pc", true},
		{"x86_64 pc", X86_64, "pc", "rip", true},
		{"x86_64 fp", X86_64, "fp", "rbp", true},
		{"x86_64 no lr", X86_64, "lr", "", false},
		{"x86_64 no x29", X86_64, "x29", "", false},
		{"i386 sp", I386, "sp", "esp", true},
		{"i386 rip", I386, "rip", "", false},
		{"arm64 unknown", ARM64, "x31", "", false},
		{"arm64 empty", ARM64, "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := tt.arch.RegisterName(tt.in)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("%s.RegisterName(%q) = %q, %v; want %q, %v", tt.arch, tt.in, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}
