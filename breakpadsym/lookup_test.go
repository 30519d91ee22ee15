package breakpadsym

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestLookup(t *testing.T) {
	f := mustParse(t, sampleText())
	main := func(frames ...Frame) Symbol {
		return Symbol{Name: "main", Address: 0x1000, Size: 0x40, Frames: frames}
	}
	outer := func(file string, line uint32) Frame {
		return Frame{Function: "inlined_outer", File: file, Line: line, Inlined: true}
	}
	inner := func(line uint32) Frame {
		return Frame{Function: "inlined_inner", File: "inline.h", Line: line, Inlined: true}
	}
	mainAt := func(line uint32) Frame { return Frame{Function: "main", File: "main.c", Line: line} }
	tests := []struct {
		name string
		addr uint64
		want Symbol
		ok   bool
	}{
		{"before everything", 0xfff, Symbol{}, false},
		{"FUNC start", 0x1000, main(mainAt(9)), true},
		{"depth 0 inline", 0x1008, main(outer("main.c", 11), mainAt(10)), true},
		{"depth 1 inline, first range", 0x1012, main(inner(3), outer("inline.h", 5), mainAt(10)), true},
		{"depth 1 inline, between ranges", 0x1018, main(outer("inline.h", 4), mainAt(10)), true},
		{"depth 1 inline, second range", 0x1023, main(inner(7), outer("inline.h", 5), mainAt(10)), true},
		{"depth 0 inline, last byte", 0x1027, main(outer("inline.h", 7), mainAt(10)), true},
		{"after inlines", 0x1028, main(mainAt(12)), true},
		{"FUNC last byte", 0x103f, main(mainAt(12)), true},
		{"FUNC with m flag", 0x1055, Symbol{Name: "folded(int, int)", Address: 0x1040, Size: 0x20,
			Frames: []Frame{{Function: "folded(int, int)", File: "other file.c", Line: 21}}}, true},
		// 0x1060..0x2000: past the last FUNC, and the PUBLIC at 0x1000
		// stops at the FUNC after it.
		{"gap after FUNC", 0x1060, Symbol{}, false},
		{"PUBLIC", 0x2000, Symbol{Name: "public_sym", Address: 0x2000, Public: true, Frames: []Frame{{Function: "public_sym"}}}, true},
		{"past PUBLIC", 0x9999, Symbol{Name: "public_sym", Address: 0x2000, Public: true, Frames: []Frame{{Function: "public_sym"}}}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := f.Lookup(tt.addr)
			ok := err == nil
			if ok != tt.ok {
				t.Fatalf("Lookup(%#x) ok = %v, want %v (%+v)", tt.addr, ok, tt.ok, got)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Lookup(%#x) (-want +got):\n%s", tt.addr, diff)
			}
		})
	}
}

// TestLookupPublicBeforeFunc: a PUBLIC covers the addresses up to the
// next FUNC; the FUNC's own range wins over a PUBLIC at its start.
func TestLookupPublicBeforeFunc(t *testing.T) {
	f := mustParse(t, "MODULE mac arm64 0123456789ABCDEF0123456789ABCDEF0 m\n"+
		"PUBLIC 100 0 stub\n"+
		"PUBLIC 200 0 _f\n"+
		"FUNC 200 10 0 f\n")
	for _, tt := range []struct {
		addr uint64
		want string
		ok   bool
	}{{0x100, "stub", true}, {0x1ff, "stub", true}, {0x200, "f", true}, {0x20f, "f", true}, {0x210, "_f", true}} {
		got, err := f.Lookup(tt.addr)
		ok := err == nil
		if ok != tt.ok || got.Name != tt.want {
			t.Errorf("Lookup(%#x) = %q, %v, want %q, %v", tt.addr, got.Name, ok, tt.want, tt.ok)
		}
	}
}

func TestFunctionStart(t *testing.T) {
	f := mustParse(t, sampleText())
	for _, tt := range []struct {
		addr, want uint64
		ok         bool
	}{{0xfff, 0, false}, {0x1000, 0x1000, true}, {0x1023, 0x1000, true}, {0x105f, 0x1040, true}, {0x1060, 0, false}, {0x2345, 0x2000, true}} {
		got, ok := f.FunctionStart(tt.addr)
		if got != tt.want || ok != tt.ok {
			t.Errorf("FunctionStart(%#x) = %#x, %v, want %#x, %v", tt.addr, got, ok, tt.want, tt.ok)
		}
	}
}

// TestLookupMachHeader: the header symbol at offset 0 that dump_syms
// lists for Mach-O images names no code.
func TestLookupMachHeader(t *testing.T) {
	f := mustParse(t, "MODULE mac arm64 0123456789ABCDEF0123456789ABCDEF0 m\n"+
		"PUBLIC 0 0 _mh_execute_header\n"+
		"FUNC d98 24 0 f\n"+
		"PUBLIC c000 0 invalid_mem\n")
	for _, tt := range []struct {
		addr uint64
		want string
		ok   bool
	}{{0, "", false}, {0xd97, "", false}, {0xd98, "f", true}, {0xc004, "invalid_mem", true}} {
		got, err := f.Lookup(tt.addr)
		ok := err == nil
		if ok != tt.ok || got.Name != tt.want {
			t.Errorf("Lookup(%#x) = %q, %v, want %q, %v", tt.addr, got.Name, ok, tt.want, tt.ok)
		}
	}
}

// TestLookupUnknownIDs: line and INLINE records may name FILE and
// INLINE_ORIGIN records that do not exist; the frame is kept with an
// empty name.
func TestLookupUnknownIDs(t *testing.T) {
	f := mustParse(t, "MODULE mac arm64 0123456789ABCDEF0123456789ABCDEF0 m\n"+
		"FUNC 100 10 0 f\n"+
		"INLINE 0 7 9 9 100 8\n"+
		"100 10 3 9\n")
	got, _ := f.Lookup(0x104)
	want := []Frame{{Line: 3, Inlined: true}, {Function: "f", Line: 7}}
	if diff := cmp.Diff(want, got.Frames); diff != "" {
		t.Errorf("Lookup(0x104).Frames (-want +got):\n%s", diff)
	}
}

// TestConcurrentUse: lookups and CFI evaluation from many goroutines at
// once (run with -race).
func TestConcurrentUse(t *testing.T) {
	f := mustParse(t, sampleText())
	want, _ := f.Lookup(0x1012)
	mem := memory{0x7000: 0xaaaa, 0x7008: 0x5555}
	done := make(chan error)
	for g := range 8 {
		go func() {
			for i := range 200 {
				got, _ := f.Lookup(0x1012)
				if !cmp.Equal(want, got) {
					done <- fmt.Errorf("goroutine %d: Lookup(0x1012) = %+v, want %+v", g, got, want)
					return
				}
				rules, _ := f.CFIRules(0x1000 + uint64(i%0x40))
				if _, err := rules.Eval(MapRegisters(map[string]uint64{"rsp": 0x7000, "rbp": 0x7000}), mem.read, 8); err != nil {
					done <- err
					return
				}
			}
			done <- nil
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}
