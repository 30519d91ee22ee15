package breakpadsym

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// memory is a sparse little-endian memory for tests: the word at each
// address.
type memory map[uint64]uint64

func (m memory) read(addr uint64, size int) (uint64, error) {
	v, ok := m[addr]
	if !ok {
		return 0, fmt.Errorf("no memory at %#x", addr)
	}
	if size == 4 {
		v &= 0xffffffff
	}
	return v, nil
}

func TestCFIRules(t *testing.T) {
	f := mustParse(t, sampleText())
	tests := []struct {
		addr uint64
		want []CFIRule
	}{
		{0x1000, []CFIRule{{".cfa", "$rsp 8 +"}, {".ra", ".cfa -8 + ^"}}},
		{0x1001, []CFIRule{{".cfa", "$rsp 16 +"}, {".ra", ".cfa -8 + ^"}, {"rbp", ".cfa -16 + ^"}}},
		{0x1003, []CFIRule{{".cfa", "$rsp 16 +"}, {".ra", ".cfa -8 + ^"}, {"rbp", ".cfa -16 + ^"}}},
		{0x1004, []CFIRule{{".cfa", "$rbp 16 +"}, {".ra", ".cfa -8 + ^"}, {"rbp", ".cfa -16 + ^"}}},
		{0x103f, []CFIRule{{".cfa", "$rbp 16 +"}, {".ra", ".cfa -8 + ^"}, {"rbp", ".cfa -16 + ^"}}},
	}
	for _, tt := range tests {
		got, ok := f.CFIRules(tt.addr)
		if !ok {
			t.Errorf("CFIRules(%#x): none", tt.addr)
			continue
		}
		want := &CFIRules{Address: tt.addr, Start: 0x1000, Size: 0x40, Rules: tt.want}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("CFIRules(%#x) (-want +got):\n%s", tt.addr, diff)
		}
	}
	for _, addr := range []uint64{0, 0xfff, 0x1040} {
		if got, ok := f.CFIRules(addr); ok {
			t.Errorf("CFIRules(%#x) = %+v, want none", addr, got)
		}
	}
}

func TestEvalX86_64(t *testing.T) {
	f := mustParse(t, sampleText())
	// The callee pushed %rbp (0xaaaa) below the return address 0x5555.
	mem := memory{0x7000: 0xaaaa, 0x7008: 0x5555}
	tests := []struct {
		name string
		addr uint64
		regs map[string]uint64
		want map[string]uint64
	}{
		{"entry", 0x1000, map[string]uint64{"rsp": 0x7008, "rbp": 0x1234},
			map[string]uint64{".cfa": 0x7010, ".ra": 0x5555}},
		{"after push", 0x1001, map[string]uint64{"rsp": 0x7000, "rbp": 0x1234},
			map[string]uint64{".cfa": 0x7010, ".ra": 0x5555, "rbp": 0xaaaa}},
		{"frame pointer set", 0x1010, map[string]uint64{"rsp": 0x6000, "rbp": 0x7000},
			map[string]uint64{".cfa": 0x7010, ".ra": 0x5555, "rbp": 0xaaaa}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rules, ok := f.CFIRules(tt.addr)
			if !ok {
				t.Fatalf("CFIRules(%#x): none", tt.addr)
			}
			got, err := rules.Eval(MapRegisters(tt.regs), mem.read, 8)
			if err != nil {
				t.Fatalf("Eval at %#x: %v", tt.addr, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Eval at %#x (-want +got):\n%s", tt.addr, diff)
			}
		})
	}
}

// TestEvalARM64 uses the register names dump_syms writes for arm64 Mach-O
// (no "$"): a leaf at entry, then a frame record (stp x29, x30, [sp, #-16]!;
// mov x29, sp).
func TestEvalARM64(t *testing.T) {
	f := mustParse(t, "MODULE mac arm64 0123456789ABCDEF0123456789ABCDEF0 m\n"+
		"STACK CFI INIT 100 40 .cfa: sp 0 + .ra: x30\n"+
		"STACK CFI 104 .cfa: sp 16 + x29: .cfa -16 + ^ .ra: .cfa -8 + ^\n"+
		"STACK CFI 108 .cfa: x29 16 +\n")
	mem := memory{0x8000: 0x9000, 0x8008: 0x4444}
	tests := []struct {
		name string
		addr uint64
		regs map[string]uint64
		want map[string]uint64
	}{
		{"entry: return address in x30", 0x100, map[string]uint64{"sp": 0x8010, "x29": 0x9000, "x30": 0x4444},
			map[string]uint64{".cfa": 0x8010, ".ra": 0x4444}},
		{"after stp", 0x104, map[string]uint64{"sp": 0x8000, "x29": 0x1, "x30": 0x4444},
			map[string]uint64{".cfa": 0x8010, ".ra": 0x4444, "x29": 0x9000}},
		{"after mov x29", 0x13c, map[string]uint64{"sp": 0x7000, "x29": 0x8000, "x30": 0x2},
			map[string]uint64{".cfa": 0x8010, ".ra": 0x4444, "x29": 0x9000}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rules, ok := f.CFIRules(tt.addr)
			if !ok {
				t.Fatalf("CFIRules(%#x): none", tt.addr)
			}
			got, err := rules.Eval(MapRegisters(tt.regs), mem.read, 8)
			if err != nil {
				t.Fatalf("Eval at %#x: %v", tt.addr, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Eval at %#x (-want +got):\n%s", tt.addr, diff)
			}
		})
	}
}

func TestEvalErrors(t *testing.T) {
	regs := MapRegisters(map[string]uint64{"rsp": 0x7000})
	mem := memory{0x7000: 0x10}
	tests := []struct {
		name    string
		rules   []CFIRule
		ptrSize int
		wantReg string // the register the *EvalError names
		want    map[string]uint64
	}{
		{"no .ra", []CFIRule{{".cfa", "$rsp 8 +"}}, 8, ".ra", nil},
		{"no .cfa", []CFIRule{{".ra", "$rsp ^"}}, 8, ".cfa", nil},
		{".cfa uses .cfa", []CFIRule{{".cfa", ".cfa 8 +"}, {".ra", "1"}}, 8, ".cfa", nil},
		{".ra is .undef", []CFIRule{{".cfa", "$rsp"}, {".ra", ".undef"}}, 8, ".ra", nil},
		{".ra unreadable", []CFIRule{{".cfa", "$rsp"}, {".ra", ".cfa 8 + ^"}}, 8, ".ra", nil},
		{"bad pointer size", []CFIRule{{".cfa", "$rsp"}, {".ra", "1"}}, 3, ".cfa", nil},
		{"failing register dropped", []CFIRule{{".cfa", "$rsp"}, {".ra", ".cfa ^"}, {"rbx", "$nope"}, {"rbp", ".undef"}, {"r12", "$rsp 1 +"}}, 8, "",
			map[string]uint64{".cfa": 0x7000, ".ra": 0x10, "r12": 0x7001}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &CFIRules{Rules: tt.rules}
			got, err := r.Eval(regs, mem.read, tt.ptrSize)
			if tt.wantReg == "" {
				if err != nil {
					t.Fatalf("Eval: %v", err)
				}
				if diff := cmp.Diff(tt.want, got); diff != "" {
					t.Errorf("Eval (-want +got):\n%s", diff)
				}
				return
			}
			var ee *EvalError
			if !errors.As(err, &ee) || ee.Register != tt.wantReg {
				t.Errorf("Eval = %v, %v; want an *EvalError for %s", got, err, tt.wantReg)
			}
		})
	}
}

func TestPostfix(t *testing.T) {
	regs := MapRegisters(map[string]uint64{"rsp": 0x7000, "sp": 0x100, "esp": 0xfffffff0})
	mem := memory{0x7000: 0x1122334455667788, 0x6ff8: 0x42}
	tests := []struct {
		expr    string
		ptrSize int
		want    uint64
		undef   bool
		wantErr string // substring of the error
	}{
		{expr: "1 2 +", want: 3},
		{expr: "10 3 -", want: 7},
		{expr: "6 7 *", want: 42},
		{expr: "7 2 /", want: 3},
		{expr: "7 2 %", want: 1},
		{expr: "0x1237 16 @", want: 0x1230},
		{expr: "$rsp -8 +", want: 0x6ff8},
		{expr: "$rsp -8 + ^", want: 0x42},
		{expr: "sp 16 +", want: 0x110},
		{expr: "$rsp ^", want: 0x1122334455667788},
		{expr: "$rsp ^", ptrSize: 4, want: 0x55667788},
		{expr: "-1", ptrSize: 4, want: 0xffffffff},
		{expr: "$esp 0x20 +", ptrSize: 4, want: 0x10},
		{expr: "0 1 -", want: ^uint64(0)},
		{expr: "$T0 5 = $T0 1 +", want: 6},
		{expr: "$T0 $rsp = $T0 $T0 8 - = $T0 ^", want: 0x42},
		{expr: "  1   2   +  ", want: 3},
		{expr: ".undef", undef: true},
		{expr: "1 0 /", wantErr: "division by zero"},
		{expr: "1 0 %", wantErr: "division by zero"},
		{expr: "1 0 @", wantErr: "alignment to 0"},
		{expr: "+", wantErr: "more operands"},
		{expr: "^", wantErr: "more operands"},
		{expr: "=", wantErr: "more operands"},
		{expr: "1 =", wantErr: "name on its left"},
		{expr: "1 2 =", wantErr: "name on its left"},
		{expr: "1 2", wantErr: "leaves 2 values"},
		{expr: "", wantErr: "leaves 0 values"},
		{expr: "$T0 1 =", wantErr: "leaves 0 values"},
		{expr: "$nope", wantErr: `register "nope" unknown`},
		{expr: "$", wantErr: "bad token"},
		{expr: "12z", wantErr: "bad number"},
		{expr: "0xzz", wantErr: "bad number"},
		{expr: "99999999999999999999", wantErr: "bad number"},
		{expr: ".cfa", wantErr: ".cfa used before"},
		{expr: "8 ^", wantErr: "reading 8 bytes at 0x8"},
		{expr: strings.Repeat("1 ", maxStack+1), wantErr: "stack deeper"},
		{expr: strings.Repeat("1 ", maxExprLen), wantErr: "longer than"},
		{expr: varAssignments(maxVariables + 1), wantErr: "more than 16 variables"},
		{expr: varAssignments(maxVariables) + " $v0", want: 0},
	}
	for _, tt := range tests {
		if tt.ptrSize == 0 {
			tt.ptrSize = 8
		}
		ev := evaluator{regs: regs, readMem: mem.read, ptrSize: tt.ptrSize}
		got, undef, err := ev.eval(tt.expr)
		name := tt.expr
		if len(name) > 40 {
			name = name[:40] + "..."
		}
		switch {
		case tt.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("eval(%q) = %#x, %v, %v; want error containing %q", name, got, undef, err, tt.wantErr)
			}
		case err != nil || got != tt.want || undef != tt.undef:
			t.Errorf("eval(%q) = %#x, %v, %v; want %#x, %v", name, got, undef, err, tt.want, tt.undef)
		}
	}
}

// varAssignments assigns n distinct variables.
func varAssignments(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "$v%d %d = ", i, i)
	}
	return strings.TrimSpace(b.String())
}

func TestRuleSplitting(t *testing.T) {
	tests := []struct {
		rules   string
		want    []CFIRule
		wantErr bool
	}{
		{rules: ".cfa: $rsp 8 + .ra: .cfa -8 + ^", want: []CFIRule{{".cfa", "$rsp 8 +"}, {".ra", ".cfa -8 + ^"}}},
		{rules: ".cfa: sp 0 + .ra: x30", want: []CFIRule{{".cfa", "sp 0 +"}, {".ra", "x30"}}},
		{rules: "$r0: $r0", want: []CFIRule{{"r0", "$r0"}}},
		{rules: ".cfa:  $rsp  8  +   .ra: 1", want: []CFIRule{{".cfa", "$rsp  8  +"}, {".ra", "1"}}},
		{rules: "", wantErr: true},
		{rules: "$rsp 8 +", wantErr: true},
		{rules: ".cfa: .ra: 1", wantErr: true},
		{rules: ".cfa:", wantErr: true},
		{rules: ": 1", wantErr: true},
	}
	for _, tt := range tests {
		var got []CFIRule
		msg := forEachRule(tt.rules, func(reg, expr string) { got = append(got, CFIRule{reg, expr}) })
		if (msg != "") != tt.wantErr {
			t.Errorf("forEachRule(%q) message %q, want error %v", tt.rules, msg, tt.wantErr)
			continue
		}
		if !tt.wantErr {
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("forEachRule(%q) (-want +got):\n%s", tt.rules, diff)
			}
		}
	}
}

// sliceMemory is memory at base holding the bytes of b.
type sliceMemory struct {
	base uint64
	b    []byte
}

func (m sliceMemory) ReadMemory(p []byte, addr uint64) (int, error) {
	if addr < m.base || addr-m.base >= uint64(len(m.b)) {
		return 0, errors.New("unmapped")
	}
	n := copy(p, m.b[addr-m.base:])
	if n < len(p) {
		return n, errors.New("short")
	}
	return n, nil
}

func TestMemoryFunc(t *testing.T) {
	read := MemoryFunc(sliceMemory{0x1000, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}})
	tests := []struct {
		addr    uint64
		size    int
		want    uint64
		wantErr bool
	}{
		{0x1000, 8, 0x0807060504030201, false},
		{0x1002, 4, 0x06050403, false},
		{0x1006, 4, 0x0a090807, false},
		{0x1006, 8, 0, true}, // runs off the end
		{0xfff, 4, 0, true},
		{0x1000, 2, 0, true},
	}
	for _, tt := range tests {
		got, err := read(tt.addr, tt.size)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("read(%#x, %d) = %#x, %v; want %#x, error %v", tt.addr, tt.size, got, err, tt.want, tt.wantErr)
		}
	}
	// No error but a short count is still a failure.
	short := MemoryFunc(shortMemory{})
	if _, err := short(0, 8); err == nil {
		t.Error("read from a memory that returns 3 bytes and no error: no error")
	}
}

type shortMemory struct{}

func (shortMemory) ReadMemory(p []byte, addr uint64) (int, error) { return 3, nil }

// TestCFIRulesBounded: a STACK CFI INIT followed by records naming a new
// register each must not make building the rule set quadratic.
func TestCFIRulesBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString("MODULE mac arm64 0123456789ABCDEF0123456789ABCDEF0 m\nSTACK CFI INIT 0 100000 .cfa: sp .ra: x30\n")
	for i := 1; i < 20000; i++ {
		fmt.Fprintf(&b, "STACK CFI %x r%d: %d\n", i, i, i)
	}
	b.WriteString("STACK CFI 4e20 .cfa: sp 16 +\n")
	f := mustParse(t, b.String())
	r, ok := f.CFIRules(0xffff)
	if !ok {
		t.Fatal("CFIRules(0xffff): none")
	}
	if len(r.Rules) != maxRegisters+2 {
		t.Errorf("%d rules, want %d", len(r.Rules), maxRegisters+2)
	}
	if expr, _ := r.Rule(".cfa"); expr != "sp 16 +" {
		t.Errorf(".cfa rule = %q, want the last one, sp 16 +", expr)
	}
}

func TestEvalExpr(t *testing.T) {
	regs := MapRegisters(map[string]uint64{"rsp": 0x1000, "rbp": 0x2000})
	mem := func(addr uint64, size int) (uint64, error) {
		if addr == 0x2008 && size == 8 {
			return 0xabc, nil
		}
		return 0, fmt.Errorf("no memory at %#x", addr)
	}
	tests := []struct {
		name     string
		expr     string
		cfa      uint64
		haveCFA  bool
		want     uint64
		wantUndf bool
		wantErr  bool
	}{
		{"register plus", "$rsp 16 +", 0, false, 0x1010, false, false},
		{"read", "$rbp 8 + ^", 0, false, 0xabc, false, false},
		{"cfa", ".cfa -8 +", 0x3000, true, 0x2ff8, false, false},
		{"cfa unknown", ".cfa -8 +", 0, false, 0, false, true},
		{"undef", ".undef", 0, false, 0, true, false},
		{"unreadable", "$rsp ^", 0, false, 0, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, undef, err := EvalExpr(tt.expr, ExprEnv{Regs: regs, ReadMem: mem, PtrSize: 8, CFA: tt.cfa, HasCFA: tt.haveCFA})
			if (err != nil) != tt.wantErr || undef != tt.wantUndf || err == nil && v != tt.want {
				t.Errorf("EvalExpr(%q) = %#x, %v, %v; want %#x, undef %v, error %v", tt.expr, v, undef, err, tt.want, tt.wantUndf, tt.wantErr)
			}
		})
	}
	if _, _, err := EvalExpr("1", ExprEnv{Regs: regs, ReadMem: mem, PtrSize: 2}); err == nil {
		t.Errorf("EvalExpr with pointer size 2: no error")
	}
}
