package archregs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestThumbRule(t *testing.T) {
	tests := []struct {
		name      string
		arch      *Arch
		addr      uint64
		cpsr      uint64
		thumb     bool // Thumb(addr)
		state     bool // ThumbState(cpsr)
		withThumb uint64
	}{
		{"armv7 Thumb return address", ARMV7, 0x1001, 0x30, true, true, 0x1001},
		{"armv7 ARM return address", ARMV7, 0x1000, 0x10, false, false, 0x1001},
		{"arm64 odd value", ARM64, 0x1001, 0x20, false, false, 0x1000},
		{"x86_64 odd return address", X86_64, 0x1001, 0x20, false, false, 0x1000},
		{"i386", I386, 0x1001, 0x20, false, false, 0x1000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.arch.Thumb(tt.addr); got != tt.thumb {
				t.Errorf("Thumb(%#x) = %v, want %v", tt.addr, got, tt.thumb)
			}
			if got := tt.arch.ThumbState(tt.cpsr); got != tt.state {
				t.Errorf("ThumbState(%#x) = %v, want %v", tt.cpsr, got, tt.state)
			}
			addr := tt.addr &^ 1
			if got := tt.arch.WithThumb(addr, true); got != tt.withThumb {
				t.Errorf("WithThumb(%#x, true) = %#x, want %#x", addr, got, tt.withThumb)
			}
			if got := tt.arch.WithThumb(addr, false); got != addr {
				t.Errorf("WithThumb(%#x, false) = %#x, want it unchanged", addr, got)
			}
		})
	}
}

// TestExceptionFormats checks each exception state layout against its
// header's COUNT: the fields end inside the struct, do not overlap, and
// Decode reads back what Encode wrote, truncated to the field widths.
func TestExceptionFormats(t *testing.T) {
	for _, a := range All {
		f := a.Exception
		if f == nil {
			t.Errorf("%s has no exception state flavor", a.Name)
			continue
		}
		used := make([]bool, 4*f.Count)
		for _, fld := range []StateField{f.Exception, f.Syndrome, f.FaultAddress} {
			if fld.Size != 2 && fld.Size != 4 && fld.Size != 8 || fld.Off < 0 || fld.Off+fld.Size > len(used) {
				t.Errorf("%s %s: field %+v does not fit %d bytes", a.Name, f.Name, fld, len(used))
				continue
			}
			for i := fld.Off; i < fld.Off+fld.Size; i++ {
				if used[i] {
					t.Errorf("%s %s: field %+v overlaps another", a.Name, f.Name, fld)
				}
				used[i] = true
			}
		}
		if f.FaultAddress.Size != a.PtrSize {
			t.Errorf("%s %s: fault address is %d bytes, pointers %d", a.Name, f.Name, f.FaultAddress.Size, a.PtrSize)
		}
		d := f.Encode(0x1234_0005, 0x92000046, 0xdead_beef_cafe_f00d)
		if len(d) != 4*int(f.Count) {
			t.Fatalf("%s Encode: %d bytes, want %d", f.Name, len(d), 4*f.Count)
		}
		exc, syn, far, err := f.Decode(d)
		if err != nil {
			t.Fatal(err)
		}
		mask := func(v uint64, size int) uint64 { return v & (1<<(8*uint(size)) - 1) }
		if size := f.Exception.Size; uint64(exc) != mask(0x1234_0005, size) {
			t.Errorf("%s: exception %#x after a round trip", f.Name, exc)
		}
		if syn != 0x92000046 {
			t.Errorf("%s: syndrome %#x after a round trip", f.Name, syn)
		}
		if want := uint64(0xdead_beef_cafe_f00d); f.FaultAddress.Size == 4 && far != want&0xffffffff || f.FaultAddress.Size == 8 && far != want {
			t.Errorf("%s: fault address %#x after a round trip", f.Name, far)
		}
		if _, _, _, err := f.Decode(d[1:]); err == nil {
			t.Errorf("%s: Decode of %d bytes succeeded", f.Name, len(d)-1)
		}
	}
}

// TestMinidumpValues checks that every architecture a minidump can hold
// has a CPU and a context flag, and that the first architecture of All
// with a CPU is the one a reader picks (arm64 before arm64e).
func TestMinidumpValues(t *testing.T) {
	first := map[uint16]*Arch{}
	for _, a := range All {
		if a.MinidumpContext == 0 {
			t.Errorf("%s: no minidump context flag", a.Name)
			continue
		}
		if _, ok := first[a.MinidumpCPU]; !ok {
			first[a.MinidumpCPU] = a
		}
	}
	if got := first[ARM64E.MinidumpCPU]; got != ARM64 {
		t.Errorf("minidump CPU %d reads as %v, want arm64", ARM64E.MinidumpCPU, got)
	}
	if len(first) != 4 {
		t.Errorf("%d distinct minidump CPUs, want 4", len(first))
	}
}

func TestCPUName(t *testing.T) {
	tests := []struct {
		cpu, sub uint32
		want     string
	}{
		{CPUTypeARM64, 0, "arm64"},
		{CPUTypeARM64, 0x80000002, "arm64e"},
		{CPUTypeARM, 11, "armv7s"},
		{CPUTypeX86_64, 8, "x86_64h"},
		{CPUTypeX86, 3, "i386"},
		{0x0200000c, 1, "arm64_32"},
		{18, 0, "ppc"},
		{CPUTypeARM64, 7, "cputype 0x100000c subtype 0x7"},
	}
	for _, tt := range tests {
		if got := CPUName(tt.cpu, tt.sub); got != tt.want {
			t.Errorf("CPUName(%#x, %#x) = %q, want %q", tt.cpu, tt.sub, got, tt.want)
		}
	}
}

func TestFlavorArches(t *testing.T) {
	tests := []struct {
		name string
		want []*Arch
	}{
		{"ARM_THREAD_STATE64", []*Arch{ARM64, ARM64E}},
		{"arm_thread_state", []*Arch{ARMV7}},
		{"ARM_THREAD_STATE32", []*Arch{ARMV7}},
		{"X86_THREAD_STATE64", []*Arch{X86_64}},
		{"x86_THREAD_STATE32", []*Arch{I386}},
		{"x86_THREAD_STATE", []*Arch{X86_64, I386}},
		{"PPC_THREAD_STATE", nil},
		{"", nil},
	}
	for _, tt := range tests {
		got := FlavorArches(tt.name)
		if len(got) != len(tt.want) {
			t.Errorf("FlavorArches(%q) = %v, want %v", tt.name, got, tt.want)
			continue
		}
		for i := range got {
			if got[i] != tt.want[i] {
				t.Errorf("FlavorArches(%q) = %v, want %v", tt.name, got, tt.want)
				break
			}
		}
	}
}

// TestArchCheckFindsSites runs the check of TestNoArchSwitchOutsideArchregs
// on a small module holding each kind of site, and a justified one.
func TestArchCheckFindsSites(t *testing.T) {
	root := t.TempDir()
	src := `package p

import "github.com/stackimage/stackimage/archregs"

func f(arch *archregs.Arch, name string) int {
	switch arch.CPUType {
	case 7:
	}
	switch arch {
	case archregs.ARM64, archregs.ARM64E:
	}
	switch name {
	case "arm64":
	}
	if arch == archregs.ARMV7 || archregs.CPUTypeX86 == arch.CPUType || arch.Name != "i386" {
		return 1
	}
	// archcheck: a justified site.
	if arch == archregs.I386 {
		return 2
	}
	return 0
}

var byArch = map[*archregs.Arch]int{}

var byCPU = map[uint32]int{archregs.CPUTypeARM: 1}
`
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "p"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "p", "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	// Test files are not checked.
	if err := os.WriteFile(filepath.Join(root, "p", "p_test.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	sites, justified := findArchSites(t, root)
	want := []string{
		"p/p.go:12: switch on architecture",
		"p/p.go:15: identity check on architecture", // three on the line: one site
		"p/p.go:25: table keyed by architecture",
		"p/p.go:27: table keyed by architecture",
		"p/p.go:6: switch on architecture",
		"p/p.go:9: switch on architecture",
	}
	if strings.Join(sites, "\n") != strings.Join(want, "\n") {
		t.Errorf("sites:\n%s\nwant:\n%s", strings.Join(sites, "\n"), strings.Join(want, "\n"))
	}
	if len(justified) != 1 || justified[0] != "p/p.go:19: identity check on architecture" {
		t.Errorf("justified = %q, want the site at line 19", justified)
	}
}

func TestAddressMask(t *testing.T) {
	cases := []struct{ top, want uint64 }{
		{0, DefaultPACMask},
		{1, 0},
		{2, 1},
		{0x1_0000_0000, 0xffff_ffff},
		{0x1_0000_0001, 0x1_ffff_ffff},
		{1 << 63, 1<<63 - 1},
		{1<<63 + 1, ^uint64(0)},
	}
	for _, c := range cases {
		if got := AddressMask(c.top); got != c.want {
			t.Errorf("AddressMask(%#x) = %#x, want %#x", c.top, got, c.want)
		}
	}
}
