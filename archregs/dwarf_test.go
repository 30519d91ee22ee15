package archregs

import (
	"testing"

	"github.com/stackimage/stackimage/unwind"
)

// TestDWARFTables checks each architecture's DWARF facts against its
// register names, so a typo in one table cannot go unnoticed.
func TestDWARFTables(t *testing.T) {
	for _, a := range All {
		t.Run(a.Name, func(t *testing.T) {
			for i, n := range a.DWARF {
				if n != "" && a.regIndex(n) < 0 {
					t.Errorf("DWARF[%d] = %q, not a register of %s", i, n, a.Name)
				}
			}
			roles := []struct {
				name string
				num  unwind.Reg
				reg  string
			}{{"PC", a.DWARFPC, a.PC}, {"SP", a.DWARFSP, a.SP}, {"FP", a.DWARFFP, a.FP}}
			if a.LR != "" {
				roles = append(roles, struct {
					name string
					num  unwind.Reg
					reg  string
				}{"RA", a.DWARFRA, a.LR})
			} else if a.DWARFRA != a.DWARFPC {
				t.Errorf("DWARFRA = %d, want the PC's number %d on an architecture without LR", a.DWARFRA, a.DWARFPC)
			}
			for _, r := range roles {
				if int(r.num) >= len(a.DWARF) || a.DWARF[r.num] != r.reg {
					t.Errorf("DWARF%s = %d, which is not %q", r.name, r.num, r.reg)
				}
				if got, ok := a.DWARFNumber(r.reg); !ok || got != r.num {
					t.Errorf("DWARFNumber(%q) = %d, %v; want %d", r.reg, got, ok, r.num)
				}
			}
			for _, c := range a.CalleeSaved {
				if int(c) >= len(a.DWARF) || a.DWARF[c] == "" {
					t.Errorf("callee-saved register %d has no name", c)
				}
			}
			for i, c := range a.CompactRegs[min(1, len(a.CompactRegs)):] {
				if int(c) >= len(a.DWARF) || a.DWARF[c] == "" {
					t.Errorf("compact register %d maps to %d, which has no name", i+1, c)
				}
			}
		})
	}
}

func TestCallSite(t *testing.T) {
	tests := []struct {
		arch *Arch
		ra   uint64
		want uint64
	}{
		{ARM64, 0x1000, 0xffc},
		{ARMV7, 0x1001, 0xffe}, // Thumb bit cleared first
		{X86_64, 0x1000, 0xfff},
		{I386, 0x1000, 0xfff},
	}
	for _, tt := range tests {
		if got := tt.arch.CallSite(tt.ra); got != tt.want {
			t.Errorf("%s.CallSite(%#x) = %#x, want %#x", tt.arch.Name, tt.ra, got, tt.want)
		}
	}
}

func TestByCPUType(t *testing.T) {
	if a, ok := ByCPUType(CPUTypeARM); !ok || a != ARMV7 {
		t.Errorf("ByCPUType(ARM) = %v, %v; want armv7", a, ok)
	}
	if a, ok := ByCPUType(CPUTypeARM64); !ok || a != ARM64 {
		t.Errorf("ByCPUType(ARM64) = %v, %v; want arm64", a, ok)
	}
	if _, ok := ByCPUType(18); ok {
		t.Error("ByCPUType(POWERPC) found an architecture")
	}
}
