package archregs

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestTypedErrors checks that unknown architectures, unknown flavors and
// thread states of the wrong size come back as typed errors.
func TestTypedErrors(t *testing.T) {
	_, err := ByName("ppc")
	var ae *UnknownArchError
	if !errors.As(err, &ae) || ae.Name != "ppc" {
		t.Errorf("ByName(ppc) error = %v; want *UnknownArchError{ppc}", err)
	}
	_, err = ByCPU(18, 0) // CPU_TYPE_POWERPC
	var ce *UnknownCPUError
	if !errors.As(err, &ce) || ce.CPUType != 18 {
		t.Errorf("ByCPU(18, 0) error = %v; want *UnknownCPUError", err)
	}
	_, err = Decode(ARM64, 99, nil)
	var fe *FlavorError
	if !errors.As(err, &fe) || fe.Arch != ARM64 || fe.Flavor != 99 {
		t.Errorf("Decode(arm64, 99) error = %v; want *FlavorError", err)
	}

	tests := []struct {
		name   string
		arch   *Arch
		flavor uint32
		size   int
		want   []int
	}{
		{"arm64 native", ARM64, FlavorARMThreadState64, 12, []int{4 * countARMThreadState64}},
		{"x86_64 unified, short header", X86_64, FlavorX86ThreadState, 4, []int{4 * countX86ThreadState}},
		{"i386 unified, whole or compact", I386, FlavorX86ThreadState, 4,
			[]int{4 * countX86ThreadState, 4 * (countStateHeader + countX86ThreadState32)}},
		{"i386 native", I386, FlavorX86ThreadState32, 100, []int{4 * countX86ThreadState32}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode(tt.arch, tt.flavor, make([]byte, tt.size))
			var se *StateSizeError
			if !errors.As(err, &se) {
				t.Fatalf("Decode(%d bytes) error = %v; want *StateSizeError", tt.size, err)
			}
			if se.Arch != tt.arch || se.Flavor != tt.flavor || se.Size != tt.size {
				t.Errorf("StateSizeError = %+v; want %s flavor %d size %d", se, tt.arch, tt.flavor, tt.size)
			}
			if diff := cmp.Diff(tt.want, se.Want); diff != "" {
				t.Errorf("StateSizeError.Want mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
