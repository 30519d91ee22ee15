package symbolize

import (
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/uuid"
	"github.com/stackimage/stackimage/walker"
)

// syntheticSym describes a module "app" with three functions that call
// each other (outer → middle → inner), a function inlined into inner, and
// STACK CFI for each: inner has pushed rbp, middle keeps its frame in rbp,
// and outer marks the end of the stack.
const syntheticSym = `MODULE mac x86_64 00112233445566778899AABBCCDDEEFF0 app
FILE 0 /src/app.c
FILE 1 /src/inline.h
INLINE_ORIGIN 0 inlined_fn
FUNC 1000 40 0 inner
INLINE 0 12 0 0 1008 10
1000 8 10 0
1008 10 3 1
1018 28 14 0
FUNC 1100 80 0 middle
1100 80 20 0
FUNC 1200 40 0 outer
1200 40 30 0
PUBLIC 1300 0 exported_thing
STACK CFI INIT 1000 40 .cfa: $rsp 8 + .ra: .cfa -8 + ^
STACK CFI 1001 .cfa: $rsp 16 + $rbp: .cfa -16 + ^
STACK CFI INIT 1100 80 .cfa: $rsp 8 + .ra: .cfa -8 + ^
STACK CFI 1104 .cfa: $rbp 16 + $rbp: .cfa -16 + ^
STACK CFI INIT 1200 40 .cfa: $rsp 8 + .ra: .undef
`

var syntheticUUID = uuid.UUID{0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff}

const syntheticBase = 0x10000000 // where the synthetic module is loaded

// writeSymStore lays the synthetic file out as a symbol store does
// (NAME/DEBUGID/NAME.sym), beside files that are not symbol files.
func writeSymStore(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"app/00112233445566778899AABBCCDDEEFF0/app.sym": syntheticSym,
		"notes.txt":   "MODULE mac x86_64 00112233445566778899AABBCCDDEEFF0 app\n", // not a .sym name
		"broken.sym":  "this is not a symbol file\n",
		"windows.sym": "MODULE windows x86_64 00112233445566778899AABBCCDDEEFF1 app.pdb\n",
	}
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func syntheticProcess(t *testing.T) (*symstore.Symbols, *Process) {
	t.Helper()
	dir := writeSymStore(t)
	s := symstore.NewSymbols()
	if err := s.AddDir(context.Background(), dir); err != nil {
		t.Fatalf("AddDir: %v", err)
	}
	if got := s.UUIDs(); !cmp.Equal(got, []uuid.UUID{syntheticUUID}) {
		t.Errorf("UUIDs() = %v, want only %v", got, syntheticUUID)
	}
	skipped := strings.Join(s.Skipped, "\n")
	for _, want := range []string{"broken.sym: not a Breakpad symbol file", "windows.sym: Breakpad debug id"} {
		if !strings.Contains(skipped, want) {
			t.Errorf("Skipped lacks %q:\n%s", want, skipped)
		}
	}
	loaded := []*image.Loaded{{Name: "/Applications/App/app", UUID: syntheticUUID, LoadAddress: syntheticBase, Size: 0x2000}}
	p, err := (&Symbolizer{Symbols: s}).NewProcess(archregs.X86_64, loaded)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close(); s.Close() })
	if len(p.Missing) != 0 {
		t.Errorf("Missing = %v, want the module found by its .sym file", p.Missing)
	}
	return s, p
}

// bpFrame is what a test compares of a frame.
type bpFrame struct {
	Symbol   string
	Offset   uint64
	Source   symstore.SymbolSource
	Location string
	Inlined  bool
}

func bpFrames(frames []symstore.Frame) []bpFrame {
	var out []bpFrame
	for _, f := range frames {
		out = append(out, bpFrame{f.Symbol, f.SymbolOffset, f.SymbolSource, f.SourceLocation(), f.Inlined})
	}
	return out
}

func TestBreakpadNames(t *testing.T) {
	s, p := syntheticProcess(t)
	tests := []struct {
		name string
		addr uint64 // module-relative
		want []bpFrame
	}{
		{"inlined", 0x100c, []bpFrame{
			{"inlined_fn", 0, symstore.SourceBreakpad, "inline.h:3", true},
			{"inner", 0xc, symstore.SourceBreakpad, "app.c:12", false},
		}},
		{"FUNC line", 0x1020, []bpFrame{{"inner", 0x20, symstore.SourceBreakpad, "app.c:14", false}}},
		{"second FUNC", 0x1100, []bpFrame{{"middle", 0, symstore.SourceBreakpad, "app.c:20", false}}},
		{"PUBLIC", 0x1310, []bpFrame{{"exported_thing", 0x10, symstore.SourceBreakpad, "", false}}},
		{"Mach-O header", 0x10, []bpFrame{{"", 0, symstore.SourceNone, "", false}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr := syntheticBase + tt.addr
			frames := p.Frames(0, addr, addr, 0)
			if diff := cmp.Diff(tt.want, bpFrames(frames)); diff != "" {
				t.Errorf("Frames(%#x) mismatch (-want +got):\n%s", addr, diff)
			}
			for _, f := range frames {
				if f.Image != "app" || f.ImageLoadAddress != syntheticBase {
					t.Errorf("Frames(%#x): image %q at %#x, want app at %#x", addr, f.Image, f.ImageLoadAddress, syntheticBase)
				}
			}
		})
	}
	// Symbols.Resolve takes the module-relative address for a UUID known
	// only from a .sym file.
	resolved, err := s.Resolve(syntheticUUID, nil, 0x100c)
	if err != nil {
		t.Fatalf("Resolve(%#x): %v", 0x100c, err)
	}
	if diff := cmp.Diff([]bpFrame{
		{"inlined_fn", 0, symstore.SourceBreakpad, "inline.h:3", true},
		{"inner", 0xc, symstore.SourceBreakpad, "app.c:12", false},
	}, bpFrames(resolved)); diff != "" {
		t.Errorf("Resolve(%#x) mismatch (-want +got):\n%s", 0x100c, diff)
	}
	if start, ok := p.FunctionStart(syntheticBase + 0x1150); !ok || start != syntheticBase+0x1100 {
		t.Errorf("FunctionStart(%#x) = %#x, %v; want %#x", syntheticBase+0x1150, start, ok, syntheticBase+0x1100)
	}
}

// wordMemory is a little-endian stack of 64-bit words from base.
type wordMemory struct {
	base  uint64
	words map[uint64]uint64 // address → value
	size  uint64
}

func (m *wordMemory) ReadMemory(p []byte, addr uint64) (int, error) {
	n := 0
	for n < len(p) {
		a := addr + uint64(n)
		if a < m.base || a >= m.base+m.size {
			return n, fmt.Errorf("no memory at %#x", a)
		}
		var w [8]byte
		binary.LittleEndian.PutUint64(w[:], m.words[a&^7])
		p[n] = w[a&7]
		n++
	}
	return n, nil
}

// TestBreakpadCFIWalk walks three frames by STACK CFI alone: the module
// has no Mach-O file, so there are no other unwind tables, no code to
// decode and no frame records the walk is told of.
func TestBreakpadCFIWalk(t *testing.T) {
	_, p := syntheticProcess(t)
	const sp0 = 0x70000000
	mem := &wordMemory{base: sp0, size: 0x100, words: map[uint64]uint64{
		// inner's frame: the pushed rbp, then the return address into middle.
		sp0 + 0x00: sp0 + 0x40,
		sp0 + 0x08: syntheticBase + 0x1120,
		// middle's frame, at its rbp: the caller's rbp and the return
		// address into outer.
		sp0 + 0x40: sp0 + 0x80,
		sp0 + 0x48: syntheticBase + 0x1230,
	}}
	regs := archregs.NewRegisters(archregs.X86_64)
	for name, v := range map[string]uint64{"rip": syntheticBase + 0x100c, "rsp": sp0, "rbp": 0xdead0000} {
		if err := regs.Set(name, v); err != nil {
			t.Fatal(err)
		}
	}
	frames, res := p.Walk(regs, mem, walker.Options{})
	type got struct {
		Symbol  string
		Address uint64
		FoundBy string
	}
	var gotFrames []got
	for _, f := range frames {
		if !f.Inlined {
			gotFrames = append(gotFrames, got{f.Symbol, f.Address, f.FoundBy.String()})
		}
	}
	want := []got{
		{"inner", syntheticBase + 0x100c, "context"},
		{"middle", syntheticBase + 0x1120, "cfi"},
		{"outer", syntheticBase + 0x1230, "cfi"},
	}
	if diff := cmp.Diff(want, gotFrames); diff != "" {
		t.Errorf("walk mismatch (-want +got):\n%s\nstop: %s %s", diff, res.Stop, res.StopDetail)
	}
	if res.Stop != walker.StopUnwindEnd {
		t.Errorf("walk stopped with %q (%s), want %q: outer's .ra is .undef", res.Stop, res.StopDetail, walker.StopUnwindEnd)
	}
	// Frame 2's rbp is what middle saved, found by frame 1's rule.
	if len(res.Frames) == 3 {
		if rbp, ok := res.Frames[2].Regs.Get(archregs.X86_64.DWARFFP); !ok || rbp != sp0+0x80 {
			t.Errorf("frame 2 rbp = %#x, %v; want %#x", rbp, ok, sp0+0x80)
		}
	}
}

// TestBreakpadConcurrentLoad: lookups of one .sym-only UUID from many
// goroutines share one load and one parse (run with -race).
func TestBreakpadConcurrentLoad(t *testing.T) {
	s := symstore.NewSymbols()
	defer s.Close()
	if err := s.AddDir(context.Background(), writeSymStore(t)); err != nil {
		t.Fatal(err)
	}
	const n = 8
	names := make([]string, n)
	done := make(chan int)
	for i := range n {
		go func() {
			defer func() { done <- i }()
			frames, err := s.Resolve(syntheticUUID, nil, 0x1150)
			if err == nil {
				names[i] = frames[len(frames)-1].Symbol
			}
		}()
	}
	for range n {
		<-done
	}
	for i, name := range names {
		if name != "middle" {
			t.Errorf("goroutine %d: Resolve(%#x) named %q, want middle", i, 0x1150, name)
		}
	}
}
