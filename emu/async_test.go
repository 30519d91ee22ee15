//go:build unicorn

package emu

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stackimage/stackimage/archregs"
)

// asyncContextRegister is the register a Swift async function receives its
// context in.
var asyncContextRegister = map[string]string{"arm64": "x22", "x86_64": "r14"}

// TestAsyncChain checks the ground truth of the async fixtures, without the
// walker: at the entry of the stop function, the context register holds the
// innermost async context; following its parent pointers (offset 0) and
// naming the resume pointers (offset 8) gives the manifest's async_chain.
// And the program builds what an async-chain walker starts from: following
// the frame records from FP, the records whose saved FP carries bit 60
// (extended frame records: level2's, then level1's) keep at FP-8 a context
// of that chain, outer records holding outer contexts.
func TestAsyncChain(t *testing.T) {
	man, dir := readManifest(t)
	checked := 0
	for _, out := range man.Outputs {
		var chain []string
		var stopName string
		for _, p := range man.Programs {
			if p.Name == out.Program {
				chain, stopName = p.AsyncChain, p.Stop
			}
		}
		if len(chain) == 0 {
			continue
		}
		arch, err := archregs.ByName(out.Arch)
		if err != nil {
			t.Fatal(err)
		}
		for _, slide := range slidesFor(arch)[:2] {
			checked++
			t.Run(fmt.Sprintf("%s/slide=%#x", filepath.Base(out.Path), slide), func(t *testing.T) {
				m, err := New(arch)
				if err != nil {
					t.Fatal(err)
				}
				defer m.Close()
				l, err := m.LoadFile(filepath.Join(dir, out.Path), slide)
				if err != nil {
					t.Fatal(err)
				}
				entry, err := SymbolAddress(l.Image, "start")
				if err != nil {
					t.Fatal(err)
				}
				stop, err := SymbolAddress(l.Image, stopName)
				if err != nil {
					t.Fatal(err)
				}
				if err := m.SetEntry(entry + l.Slide); err != nil {
					t.Fatal(err)
				}
				stop += l.Slide
				reason, err := m.Run(RunOptions{StopAt: func(pc uint64) bool { return pc == stop }})
				if err != nil || reason != StopAtPC {
					t.Fatalf("run to %s: %v, %v", stopName, reason, err)
				}
				n := newNamer(t, m)
				regs, err := m.Registers()
				if err != nil {
					t.Fatal(err)
				}
				ctx, ok := regs.Get(asyncContextRegister[out.Arch])
				if !ok {
					t.Fatalf("no register %s", asyncContextRegister[out.Arch])
				}
				var contexts []uint64
				var names []string
				for c := ctx; c != 0 && len(contexts) <= len(chain); c = readPtr(t, m, c) {
					contexts = append(contexts, c)
					names = append(names, n.name(readPtr(t, m, c+8)))
				}
				if diff := cmp.Diff(chain, names); diff != "" {
					t.Errorf("async-context chain from %s = %#x (-manifest +memory):\n%s", asyncContextRegister[out.Arch], ctx, diff)
				}

				// The extended frame records, found from FP.
				fp, _ := regs.FP()
				last := -1
				extended := 0
				for fp != 0 && extended <= len(chain) {
					saved := readPtr(t, m, fp)
					if saved&asyncFrameFlag != 0 {
						extended++
						c := readPtr(t, m, fp-8)
						i := indexOf(contexts, c)
						if i < 0 || i <= last {
							t.Errorf("extended record at %#x keeps context %#x at FP-8, want one of %#x after index %d", fp, c, contexts, last)
						}
						last = i
					}
					fp = saved &^ asyncFrameFlag
				}
				if extended != 2 {
					t.Errorf("%d extended frame records on the stack, want 2 (level2 and level1)", extended)
				}
			})
		}
	}
	if checked == 0 {
		t.Fatal("no fixture has an async_chain")
	}
}

func readPtr(t *testing.T, m *Machine, addr uint64) uint64 {
	t.Helper()
	var b [8]byte
	if n, err := m.ReadMemory(b[:], addr); n != 8 {
		t.Fatalf("reading a pointer at %#x: %v", addr, err)
	}
	return binary.LittleEndian.Uint64(b[:])
}

func indexOf(list []uint64, v uint64) int {
	for i, x := range list {
		if x == v {
			return i
		}
	}
	return -1
}
