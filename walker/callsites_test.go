package walker

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// symbolsWithCallSites is symbolsOnly whose DWARF lists every call of the
// program's functions: the return addresses in returns.
type symbolsWithCallSites struct {
	symbolsOnly
	returns []uint64
}

func (s symbolsWithCallSites) CallReturn(addr uint64) (known, isReturn bool) {
	if !s.KnowsFunctions(addr) {
		return false, false
	}
	return true, slices.Contains(s.returns, addr)
}

// TestScanWithoutCodeCallSites walks scan_test.go's program with symbols
// only, a word inside C below C's return address: an address past C's
// first instruction, which symbols alone take for a return address into
// C. With the DWARF's call sites it is refused, being no call's return,
// and the call sites' returns are taken, trusted as scan_symbols.
func TestScanWithoutCodeCallSites(t *testing.T) {
	for _, ta := range scanArchs {
		t.Run(ta.arch.Name, func(t *testing.T) {
			raC, raB, raA := scanRA(ta, scanCallD), scanRA(ta, scanCallC), scanRA(ta, scanCallB)
			inC := ta.pc(scanOffC + 0x10)
			mem, sp, outer := scanStack(t, ta, []uint64{inC}, raC, raB, raA, ta.pc(evLibRA), ta.pc(evLibRA))
			vals := map[string]uint64{"pc": ta.pc(scanBodyD + 4), "sp": sp, "fp": outer}
			if ta.hasLR() {
				vals["lr"] = 0
			}
			walk := func(s SymbolCoverage) Result {
				return Walk(ta.regs(t, vals), mem, Options{Code: ta.codeRanges(), Functions: symbolsOnly{ta}, Symbols: s,
					Instructions: &memory{base: 0, data: nil}, StackLow: ta.stack, StackHigh: ta.stack + 0x1000})
			}

			// Symbols alone take the word inside C.
			before := walk(symbolsOnly{ta})
			if len(before.Frames) < 2 || before.Frames[1].ReturnAddress != inC {
				t.Fatalf("symbols alone: frame 1 returns to %#x, want the word inside C %#x (the case call sites settle)",
					frameRA(before, 1), inC)
			}

			res := walk(symbolsWithCallSites{symbolsOnly{ta}, []uint64{raC, raB, raA}})
			want := []string{"D/context/context", "C/scan/scan_symbols", "B/scan/scan_symbols", "A/scan/scan_symbols", "lib/scan/scan"}
			if diff := cmp.Diff(want, evidenceNames(ta, res.Frames)); diff != "" {
				t.Errorf("frames (-want +got):\n%s", diff)
			}
			if got := frameRA(res, 1); got != raC {
				t.Errorf("frame 1 returns to %#x, want C's call site return %#x", got, raC)
			}
		})
	}
}

func frameRA(res Result, i int) uint64 {
	if i >= len(res.Frames) {
		return 0
	}
	return res.Frames[i].ReturnAddress
}

// symbolsWithCallTargets is symbolsWithCallSites whose call sites also say
// what each call calls (calls, by return address: the callee's start) and
// what each function tail-calls (tails, by start).
type symbolsWithCallTargets struct {
	symbolsWithCallSites
	calls map[uint64]uint64
	tails map[uint64][]uint64
}

func (s symbolsWithCallTargets) CallReaches(ret, entry uint64) (known, reaches bool) {
	callee, ok := s.calls[ret]
	if !ok {
		return false, false
	}
	for seen := 0; seen < 8; seen++ {
		if callee == entry {
			return true, true
		}
		next := s.tails[callee]
		if len(next) == 0 {
			return true, false
		}
		callee = next[0]
	}
	return false, false
}

// TestScanWithoutCodeCallTargets walks scan_test.go's program with symbols
// only, below C's return address a stale one of E's call of X: a listed
// call's return inside a known function, which symbols and call sites
// alone take for D's caller. With the call sites' targets it is refused
// (E's call enters X, which cannot reach D), and C is found; a return
// into U, whose call enters T, which tail-calls D, is taken; and R's
// calls of itself are R's callers.
func TestScanWithoutCodeCallTargets(t *testing.T) {
	for _, ta := range scanArchs {
		t.Run(ta.arch.Name, func(t *testing.T) {
			raC, raB, raA := scanRA(ta, scanCallD), scanRA(ta, scanCallC), scanRA(ta, scanCallB)
			raX, raT, raR := scanRA(ta, scanCallX), scanRA(ta, scanCallT), scanRA(ta, scanCallR)
			sites := symbolsWithCallSites{symbolsOnly{ta}, []uint64{raC, raB, raA, raX, raT, raR}}
			targets := symbolsWithCallTargets{sites,
				map[uint64]uint64{raC: ta.pc(scanOffD), raB: ta.pc(scanOffC), raA: ta.pc(scanOffB), raX: ta.pc(scanOffX), raT: ta.pc(scanOffT), raR: ta.pc(scanOffR)},
				map[uint64][]uint64{ta.pc(scanOffT): {ta.pc(scanOffD)}}}
			walkAt := func(s SymbolCoverage, pc uint64, junk []uint64, ras ...uint64) Result {
				mem, sp, outer := scanStack(t, ta, junk, ras...)
				vals := map[string]uint64{"pc": pc, "sp": sp, "fp": outer}
				if ta.hasLR() {
					vals["lr"] = 0
				}
				return Walk(ta.regs(t, vals), mem, Options{Code: ta.codeRanges(), Functions: symbolsOnly{ta}, Symbols: s,
					Instructions: &memory{base: 0, data: nil}, StackLow: ta.stack, StackHigh: ta.stack + 0x1000})
			}
			walk := func(s SymbolCoverage, junk uint64) Result {
				return walkAt(s, ta.pc(scanBodyD+4), []uint64{junk}, raC, raB, raA, ta.pc(evLibRA), ta.pc(evLibRA))
			}

			// Call sites alone take the stale word: it is a listed return.
			if before := walk(sites, raX); frameRA(before, 1) != raX {
				t.Fatalf("call sites alone: frame 1 returns to %#x, want the stale word %#x (the case call targets settle)",
					frameRA(before, 1), raX)
			}
			res := walk(targets, raX)
			want := []string{"D/context/context", "C/scan/scan_symbols", "B/scan/scan_symbols", "A/scan/scan_symbols", "lib/scan/scan"}
			if diff := cmp.Diff(want, evidenceNames(ta, res.Frames)); diff != "" {
				t.Errorf("stale return of a call of X: frames (-want +got):\n%s", diff)
			}

			// A call of T, which tail-calls D, can have entered D.
			if res := walk(targets, raT); frameRA(res, 1) != raT {
				t.Errorf("a call of T, which tail-calls D: frame 1 returns to %#x, want %#x", frameRA(res, 1), raT)
			}

			// R calls itself: a word after R's call of R is a caller of a
			// frame in R where the call sites say what the call calls,
			// and a stale word of R's own otherwise.
			inR := ta.pc(scanOffR + 0x30)
			recursion := []uint64{raR, raR, ta.pc(evLibRA), ta.pc(evLibRA)}
			if diff := cmp.Diff([]string{"R/context/context", "lib/scan/scan"}, evidenceNames(ta, walkAt(sites, inR, nil, recursion...).Frames)); diff != "" {
				t.Errorf("recursion, call sites alone: frames (-want +got):\n%s", diff)
			}
			want = []string{"R/context/context", "R/scan/scan_symbols", "R/scan/scan_symbols", "lib/scan/scan"}
			if diff := cmp.Diff(want, evidenceNames(ta, walkAt(targets, inR, nil, recursion...).Frames)); diff != "" {
				t.Errorf("recursion, with call targets: frames (-want +got):\n%s", diff)
			}
		})
	}
}

// symbolsWithLocals is symbolsWithCallSites whose DWARF places the
// variables of the functions in localsEnd (by start) that many bytes
// above SP, the frame base (walker.FrameLocals).
type symbolsWithLocals struct {
	symbolsWithCallSites
	localsEnd map[uint64]int64
}

func (s symbolsWithLocals) FrameLocals(pc uint64) (reg int, end int64, known bool) {
	start, ok := s.FunctionStart(pc)
	if !ok || s.localsEnd[start] == 0 {
		return 0, 0, false
	}
	return int(s.ta.arch.DWARFSP), s.localsEnd[start], true
}

// TestScanWithoutCodeFrameLocals walks scan_test.go's program with symbols
// and call sites only, a stale return into U (a listed call's return, of
// a call whose target the symbols do not say) just above C's return
// address: in C's frame, where the call sites alone take it for C's
// caller. Where the DWARF places a variable of C two words above C's SP,
// the word lies among C's locals and is skipped, and B is found; frame 0
// (D) is left alone, its SP perhaps not yet the one its variables are
// placed from.
func TestScanWithoutCodeFrameLocals(t *testing.T) {
	for _, ta := range scanArchs {
		t.Run(ta.arch.Name, func(t *testing.T) {
			raC, raB, raA, raT := scanRA(ta, scanCallD), scanRA(ta, scanCallC), scanRA(ta, scanCallB), scanRA(ta, scanCallT)
			s := newStack(t, ta.stack, ta.ptr)
			s.Skip(scanFrameBytes - ta.ptr).Ptr(raC)
			s.Ptr(raT).Skip(scanFrameBytes - 2*ta.ptr).Ptr(raB)
			s.Skip(scanFrameBytes - ta.ptr).Ptr(raA)
			s.Skip(scanFrameBytes - ta.ptr).Ptr(ta.pc(evLibRA))
			s.Skip(scanFrameBytes - ta.ptr).Ptr(ta.pc(evLibRA))
			var rec label
			s.Mark(&rec).Ptr(0).Ptr(0).Skip(64)
			mem := s.Memory()
			vals := map[string]uint64{"pc": ta.pc(scanBodyD + 4), "sp": ta.stack, "fp": rec.addr}
			if ta.hasLR() {
				vals["lr"] = 0
			}
			walk := func(s SymbolCoverage) Result {
				return Walk(ta.regs(t, vals), mem, Options{Code: ta.codeRanges(), Functions: symbolsOnly{ta}, Symbols: s,
					Instructions: &memory{base: 0, data: nil}, StackLow: ta.stack, StackHigh: ta.stack + 0x1000})
			}
			sites := symbolsWithCallSites{symbolsOnly{ta}, []uint64{raC, raB, raA, raT}}
			if before := walk(sites); frameRA(before, 2) != raT {
				t.Fatalf("call sites alone: frame 2 returns to %#x, want the stale word %#x (the case frame locals settle)",
					frameRA(before, 2), raT)
			}
			// D's variables reach past the stale word too: frame 0's scan
			// ignores them.
			locals := symbolsWithLocals{sites, map[uint64]int64{
				ta.pc(scanOffC): int64(2 * ta.ptr),
				ta.pc(scanOffD): int64(scanFrameBytes + 2*ta.ptr),
			}}
			res := walk(locals)
			want := []string{"D/context/context", "C/scan/scan_symbols", "B/scan/scan_symbols", "A/scan/scan_symbols", "lib/scan/scan"}
			if diff := cmp.Diff(want, evidenceNames(ta, res.Frames)); diff != "" {
				t.Errorf("frames (-want +got):\n%s", diff)
			}
		})
	}
}
