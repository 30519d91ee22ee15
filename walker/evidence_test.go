package walker

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stackimage/stackimage/archregs"
)

// The scenarios of scan_test.go's program where its code cannot be read:
// a walk with a dSYM or a Breakpad file alone, whose symbols know the
// program's functions (those of scanFunctions, up to scanEnd), and a
// system library at evLib without code bytes or symbols.
const (
	evLib      = 0x8000 // system libraries' code, 0x1000 bytes each, in the test code region
	evLibRA    = evLib + 0x123
	evLibRA2   = evLib + 0x1345 // in the second library
	evLibRA3   = evLib + 0x2567 // in the third
	evLibRA1b  = evLib + 0x567  // another return address into the first
	evConstant = scanEnd + 0x40 // a __TEXT constant: in the program's image, in no function
	evSymbols  = 0x1000         // the program's image, whose symbols list its functions
)

// symbolsOnly knows the functions of scanFunctions, below scanEnd, and
// says the program's image lists its functions; the library lists none.
type symbolsOnly struct{ ta testArch }

func (s symbolsOnly) FunctionStart(addr uint64) (uint64, bool) {
	if addr >= s.ta.pc(scanEnd) {
		return 0, false
	}
	return scanFunctions(s.ta).FunctionStart(addr)
}

func (s symbolsOnly) KnowsFunctions(addr uint64) bool {
	return addr >= s.ta.code && addr < s.ta.pc(evSymbols)
}

// SameImage: the program's image below evLib, then a library every
// 0x1000 bytes.
func (s symbolsOnly) SameImage(a, b uint64) bool {
	image := func(addr uint64) uint64 {
		if addr < s.ta.pc(evLib) {
			return 0
		}
		return (addr-s.ta.pc(evLib))/0x1000 + 1
	}
	return image(a) == image(b)
}

// evidenceNames names frames as scanNames does, the library "lib", with
// each frame's trust.
func evidenceNames(ta testArch, frames []Frame) []string {
	out := scanNames(ta, frames)
	for i, f := range frames {
		if f.LookupAddress >= ta.pc(evLib) && f.LookupAddress < ta.pc(evLib+0x3000) {
			out[i] = "lib/" + f.FoundBy.String()
		}
		out[i] += "/" + f.Trust.String()
	}
	return out
}

func TestScanWithoutCode(t *testing.T) {
	for _, ta := range scanArchs {
		opts := func() Options {
			s := symbolsOnly{ta}
			return Options{Code: ta.codeRanges(), Functions: s, Symbols: s,
				Instructions: &memory{base: 0, data: nil}, // no code bytes: a dSYM or a .sym alone
				StackLow:     ta.stack, StackHigh: ta.stack + 0x1000}
		}
		regs := func(sp, fp uint64) *archregs.Registers {
			vals := map[string]uint64{"pc": ta.pc(scanBodyD + 4), "sp": sp, "fp": fp}
			if ta.hasLR() {
				vals["lr"] = 0
			}
			return ta.regs(t, vals)
		}
		raC, raB, raA := scanRA(ta, scanCallD), scanRA(ta, scanCallC), scanRA(ta, scanCallB)
		// Junk below D's return address: a function pointer (X's first
		// instruction), a __TEXT constant, a stale return address into D
		// itself (of a call D made).
		junk := []uint64{ta.pc(scanOffX), ta.pc(evConstant), ta.pc(scanBodyD + 8)}
		want := []string{"D/context/context", "C/scan/scan_symbols", "B/scan/scan_symbols", "A/scan/scan_symbols", "lib/scan/scan"}

		for _, fpCase := range []string{"FP at the outermost record", "FP zero"} {
			t.Run(ta.arch.Name+"/"+fpCase, func(t *testing.T) {
				// Above A's return address, the library's (its start,
				// say) and a stale second copy of it.
				mem, sp, outer := scanStack(t, ta, junk, raC, raB, raA, ta.pc(evLibRA), ta.pc(evLibRA))
				fp := outer
				if fpCase == "FP zero" {
					fp = 0
				}
				res := Walk(regs(sp, fp), mem, opts())
				if diff := cmp.Diff(want, evidenceNames(ta, res.Frames)); diff != "" {
					t.Errorf("frames (-want +got):\n%s", diff)
				}
				if !strings.Contains(res.StopDetail, "tried: unwind rule, function's code, caller scan, frame record, stack scan") {
					t.Errorf("stop %v %q does not name the strategies tried", res.Stop, res.StopDetail)
				}
			})
		}
		t.Run(ta.arch.Name+"/a frame's own record wins over its locals", func(t *testing.T) {
			// Code with frame pointers, symbols only: D's own record holds
			// C's return address; a stale word in D's locals is in B. The
			// record is taken, the locals are not scanned.
			var rec, outer label
			s := newStack(t, ta.stack, ta.ptr)
			s.Skip(2 * ta.ptr).Ptr(raB).Skip(ta.ptr)
			s.Mark(&rec).PtrTo(&outer).Ptr(raC)
			s.Skip(4 * ta.ptr).Mark(&outer).Ptr(0).Ptr(raB).Ptr(0).Ptr(0)
			res := Walk(regs(ta.stack, rec.addr), s.Memory(), opts())
			want := []string{"D/context/context", "C/frame pointer/frame_pointer", "B/frame pointer/frame_pointer"}
			if diff := cmp.Diff(want, evidenceNames(ta, res.Frames)); diff != "" {
				t.Errorf("frames (-want +got):\n%s", diff)
			}
		})
		t.Run(ta.arch.Name+"/a recursive function's own record wins over its locals", func(t *testing.T) {
			// R with frame pointers, symbols only, called by itself: its
			// record's return address is in R, which would be a stale
			// word for a scan, but is a record's: the record is taken,
			// not C's word in R's locals.
			var rec, outer label
			s := newStack(t, ta.stack, ta.ptr)
			s.Skip(2 * ta.ptr).Ptr(raC).Skip(ta.ptr)
			s.Mark(&rec).PtrTo(&outer).Ptr(scanRA(ta, scanCallR))
			s.Skip(4 * ta.ptr).Mark(&outer).Ptr(0).Ptr(raB).Ptr(0).Ptr(0)
			vals := map[string]uint64{"pc": ta.pc(scanOffR + 0x30), "sp": ta.stack, "fp": rec.addr}
			if ta.hasLR() {
				vals["lr"] = 0
			}
			res := Walk(ta.regs(t, vals), s.Memory(), opts())
			want := []string{"R/context/context", "R/frame pointer/frame_pointer", "B/frame pointer/frame_pointer"}
			if diff := cmp.Diff(want, evidenceNames(ta, res.Frames)); diff != "" {
				t.Errorf("frames (-want +got):\n%s", diff)
			}
		})
		t.Run(ta.arch.Name+"/a run of words only the code range checks", func(t *testing.T) {
			// Return addresses into three libraries in a row: at most
			// maxRangeRun are taken.
			mem, sp, outer := scanStack(t, ta, nil, raC, ta.pc(evLibRA), ta.pc(evLibRA2), ta.pc(evLibRA3))
			res := Walk(regs(sp, outer), mem, opts())
			want := []string{"D/context/context", "C/scan/scan_symbols", "lib/scan/scan", "lib/scan/scan"}
			if diff := cmp.Diff(want, evidenceNames(ta, res.Frames)); diff != "" {
				t.Errorf("frames (-want +got):\n%s", diff)
			}
		})
		t.Run(ta.arch.Name+"/a word only the code range checks, in the frame's own image", func(t *testing.T) {
			// Two return addresses into the first library: nothing tells
			// its functions apart, so the second may as well be a stale
			// return address of the first's own function.
			mem, sp, outer := scanStack(t, ta, nil, raC, ta.pc(evLibRA), ta.pc(evLibRA1b))
			res := Walk(regs(sp, outer), mem, opts())
			want := []string{"D/context/context", "C/scan/scan_symbols", "lib/scan/scan"}
			if diff := cmp.Diff(want, evidenceNames(ta, res.Frames)); diff != "" {
				t.Errorf("frames (-want +got):\n%s", diff)
			}
		})
		t.Run(ta.arch.Name+"/a word of a known function is preferred to a range-only one", func(t *testing.T) {
			// A library word below C's return address: C's is taken.
			mem, sp, outer := scanStack(t, ta, []uint64{ta.pc(evLibRA)}, raC)
			res := Walk(regs(sp, outer), mem, opts())
			got := evidenceNames(ta, res.Frames)
			if len(got) < 2 || got[1] != "C/scan/scan_symbols" {
				t.Errorf("frames %q, want C found by its symbols as frame 1", got)
			}
		})
	}
}

// An end of the frame-record chain at a function that keeps no frame
// record is evidence, not a verdict: the stack scan is tried, checked as
// the caller scan checks, so that the stale words above the outermost
// frame are not taken. At a function that keeps one, the walk ends there.
func TestChainEndInCodeWithoutRecords(t *testing.T) {
	for _, ta := range scanArchs {
		// FP 0, and the one return address on the stack is E's, after a
		// call of X: a stale word, since nothing calls D there.
		mem, sp, _ := scanStack(t, ta, nil, scanRA(ta, scanCallX))
		regs := ta.regs(t, map[string]uint64{"pc": ta.pc(scanBodyD + 4), "sp": sp, "fp": 0})
		for _, tt := range []struct {
			name      string
			keeps     bool
			symbols   bool
			wantTried string
		}{
			{"no record, by the prologue", false, true, "(tried: unwind rule, function's code, caller scan, frame record, stack scan)"},
			{"a record, by the prologue", true, true, "(tried: unwind rule, function's code, caller scan, frame record)"},
			{"nothing to ask: the chain is trusted", false, false, "(tried: unwind rule, function's code, caller scan, frame record)"},
		} {
			t.Run(ta.arch.Name+"/"+tt.name, func(t *testing.T) {
				c := scanCode(ta)
				if tt.keeps {
					if ta.isARM64() {
						c.put(scanOffD+4, le32(0x910003fd)) // mov x29, sp
					} else {
						c.put(scanOffD, []byte{0x55, 0x48, 0x89, 0xe5}) // push rbp; mov rbp, rsp
					}
				}
				opts := Options{Code: ta.codeRanges(), Functions: scanFunctions(ta), Instructions: c.Memory(),
					StackLow: ta.stack, StackHigh: ta.stack + 0x1000}
				if tt.symbols {
					opts.Symbols = symbolsOnly{ta}
				}
				res := Walk(regs, mem, opts)
				if diff := cmp.Diff([]string{"D/context"}, scanNames(ta, res.Frames)); diff != "" {
					t.Errorf("frames (-want +got):\n%s", diff)
				}
				if res.Stop != StopFramePointerZero || !strings.HasSuffix(res.StopDetail, tt.wantTried) {
					t.Errorf("stop %v %q, want fp_zero ending %q", res.Stop, res.StopDetail, tt.wantTried)
				}
			})
		}
	}
}

func TestTrustText(t *testing.T) {
	for tr := TrustNone; tr <= TrustScan; tr++ {
		text, _ := tr.MarshalText()
		var back Trust
		if err := back.UnmarshalText(text); err != nil || back != tr {
			t.Errorf("Trust %d: %q read back as %v, %v", tr, text, back, err)
		}
	}
	if err := new(Trust).UnmarshalText([]byte("certain")); err == nil {
		t.Error(`UnmarshalText("certain"): no error`)
	}
}

// Every strategy's frames have a trust.
func TestTrustOfEveryFoundBy(t *testing.T) {
	for f := FoundBy(0); !strings.HasPrefix(f.String(), "FoundBy("); f++ {
		if trustOf(f) == TrustNone {
			t.Errorf("trustOf(%v) = none: give the strategy's frames a trust", f)
		}
	}
}

// TestLinkRegisterWithoutCodeOrSymbols: frame 0 in a library with neither
// code bytes nor symbols, its record at FP holding evLibRA2 (the second
// library). A link register in the same library near PC, before or after
// it, may be a stale return address of frame 0's own call as well as a
// frameless leaf's caller: it is set aside (Result.AmbiguousLR) and the
// record gives the caller, whether or not the record of a returned call
// lies below SP. Further from PC, or in another library however near,
// no stale LR lies: it is kept.
func TestLinkRegisterWithoutCodeOrSymbols(t *testing.T) {
	for _, ta := range testArchs {
		if !ta.hasLR() {
			continue
		}
		s := symbolsOnly{ta}
		opts := Options{Code: ta.codeRanges(), Functions: s, Symbols: s,
			Instructions: &memory{base: 0, data: nil},
			StackLow:     ta.stack - 0x100, StackHigh: ta.stack + 0x1000}
		pc := ta.pc(evLib + 0x800)
		next := ta.pc(evLib + 0x1000 + ta.callSize) // the second library's second instruction
		near, far := 0x10*ta.callSize, 0x100*ta.callSize
		kept := []string{"lib/context/context", "lib/link register/code", "lib/frame pointer/frame_pointer"}
		setAside := []string{"lib/context/context", "lib/frame pointer/frame_pointer"}
		for _, tc := range []struct {
			name   string
			pc, lr uint64
			record bool // the record (FP, LR) of a returned call just below SP
			want   []string
		}{
			{"LR at PC", pc, pc, false, setAside},
			{"LR an instruction before PC", pc, pc - ta.callSize, false, setAside},
			{"LR further before PC", pc, pc - near, false, setAside},
			{"LR further before PC, its record below SP", pc, pc - near, true, setAside},
			{"LR after PC", pc, pc + near, false, setAside},
			{"LR far before PC", pc, pc - far, false, kept},
			{"LR far after PC", pc, pc + far, false, kept},
			{"LR in the library before, just before PC", next, next - 2*ta.callSize, false, kept},
		} {
			t.Run(ta.arch.Name+"/"+tc.name, func(t *testing.T) {
				rec := ta.stack + uint64(2*ta.ptr)
				st := newStack(t, ta.stack-0x100, ta.ptr)
				var deadFP, deadLR uint64
				if tc.record {
					deadFP, deadLR = rec, tc.lr
				}
				st.Skip(0x100 - 2*ta.ptr).Ptr(deadFP).Ptr(deadLR)
				st.Skip(2 * ta.ptr).Ptr(0).Ptr(ta.pc(evLibRA2)).Skip(8 * ta.ptr)
				regs := ta.regs(t, map[string]uint64{"pc": tc.pc, "sp": ta.stack, "fp": rec, "lr": tc.lr})
				res := Walk(regs, st.Memory(), opts)
				if diff := cmp.Diff(tc.want, evidenceNames(ta, res.Frames)); diff != "" {
					t.Errorf("frames (-want +got):\n%s", diff)
				}
				wantAside := uint64(0)
				if len(tc.want) == len(setAside) {
					wantAside = tc.lr
				}
				if res.AmbiguousLR != wantAside {
					t.Errorf("AmbiguousLR = %#x, want %#x", res.AmbiguousLR, wantAside)
				}
			})
		}
	}
}
