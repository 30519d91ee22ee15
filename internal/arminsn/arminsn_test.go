package arminsn

import "testing"

func TestARM64PairSP(t *testing.T) {
	tests := []struct {
		name string
		insn uint32
		want ARM64Pair
		ok   bool
	}{
		{"stp x29, x30, [sp, #-16]!", 0xa9bf7bfd, ARM64Pair{Rt: 29, Rt2: 30, Off: -16, Mode: PairPreIndex}, true},
		{"stp x20, x19, [sp, #16]", 0xa9014ff4, ARM64Pair{Rt: 20, Rt2: 19, Off: 16, Mode: PairOffset}, true},
		{"ldp x29, x30, [sp], #16", 0xa8c17bfd, ARM64Pair{Rt: 29, Rt2: 30, Load: true, Off: 16, Mode: PairPostIndex}, true},
		{"stp d8, d9, [sp, #-16]!", 0x6dbf27e8, ARM64Pair{Rt: 8, Rt2: 9, SIMD: true, Off: -16, Mode: PairPreIndex}, true},
		{"stp x29, x30, [x0, #16]", 0xa901781d, ARM64Pair{}, false}, // base x0, not SP
		{"stp w0, w1, [sp]", 0x290007e0, ARM64Pair{}, false},        // 32-bit registers
		{"add x29, sp, #16", 0x910043fd, ARM64Pair{}, false},
	}
	for _, tt := range tests {
		got, ok := ARM64PairSP(tt.insn)
		if ok != tt.ok || got != tt.want {
			t.Errorf("ARM64PairSP(%#08x) (%s) = %+v, %v, want %+v, %v", tt.insn, tt.name, got, ok, tt.want, tt.ok)
		}
	}
}

func TestARM64Shapes(t *testing.T) {
	tests := []struct {
		name string
		insn uint32
		is   func(uint32) bool
		want bool
	}{
		{"pacibsp is a hint", 0xd503237f, ARM64IsHint, true},
		{"nop is a hint", 0xd503201f, ARM64IsHint, true},
		{"ret is no hint", ARM64Ret, ARM64IsHint, false},
		{"sub sp, sp, #32", 0xd10083ff, ARM64IsSubSP, true},
		{"sub x0, sp, #32", 0xd10083e0, ARM64IsSubSP, false},
		{"add sp, sp, #32", 0x910083ff, ARM64IsAddSP, true},
		{"add x29, sp, #16", 0x910043fd, ARM64IsAddFPSP, true},
		{"mov x29, sp", 0x910003fd, ARM64IsAddFPSP, true},
		{"str x19, [sp, #-16]!", 0xf81f0ff3, ARM64IsStrPreSP, true},
		{"str x19, [x0, #-16]!", 0xf81f0c13, ARM64IsStrPreSP, false},
		{"str x19, [sp, #8]", 0xf90007f3, ARM64IsStrSP, true},
		{"bl", 0x94000010, ARM64IsBL, true},
		{"b", 0x17fffffe, ARM64IsB, true},
		{"b is no bl", 0x17fffffe, ARM64IsBL, false},
	}
	for _, tt := range tests {
		if got := tt.is(tt.insn); got != tt.want {
			t.Errorf("%s: %#08x = %v, want %v", tt.name, tt.insn, got, tt.want)
		}
	}
	if got := ARM64Imm26(0x17fffffe); got != -8 {
		t.Errorf("ARM64Imm26(b .-8) = %d, want -8", got)
	}
	if got := ARM64AddSubImm(0xd14007ff); got != 4096 { // sub sp, sp, #1, lsl #12
		t.Errorf("ARM64AddSubImm(sub sp, sp, #1, lsl #12) = %d, want 4096", got)
	}
	if got := ARM64StrPreImm(0xf81f0ff3); got != -16 {
		t.Errorf("ARM64StrPreImm(str x19, [sp, #-16]!) = %d, want -16", got)
	}
}

func TestThumbBranchImm(t *testing.T) {
	tests := []struct {
		name     string
		hw1, hw2 uint32
		want     int64
	}{
		{"bl +4", 0xf000, 0xf802, 4},
		{"bl -4", 0xf7ff, 0xfffe, -4},
		{"b.w +0x1000", 0xf001, 0xb800, 0x1000},
	}
	for _, tt := range tests {
		if got := ThumbBranchImm(tt.hw1, tt.hw2); got != tt.want {
			t.Errorf("ThumbBranchImm(%#04x, %#04x) (%s) = %d, want %d", tt.hw1, tt.hw2, tt.name, got, tt.want)
		}
	}
}

func TestSignExtend(t *testing.T) {
	if got := SignExtend(0x3ffffff, 26); got != -1 {
		t.Errorf("SignExtend(0x3ffffff, 26) = %d, want -1", got)
	}
	if got := SignExtend(0x1ffffff, 26); got != 0x1ffffff {
		t.Errorf("SignExtend(0x1ffffff, 26) = %d, want %d", got, 0x1ffffff)
	}
}
