package debuginfo

import (
	"debug/macho"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stackimage/stackimage/demangle"
)

// leafInputs are the DWARF files the leaf and cursor tests read: the
// inline fixture and the corpus's crash.dSYM (skipped without the corpus).
var leafInputs = []struct {
	name string
	path func(t *testing.T) string
	cpu  macho.Cpu
}{
	{"inl-dwarf4", func(*testing.T) string { return "testdata/fixtures/inl-dwarf4.dwarf" }, macho.CpuArm64},
	{"symbolic-crash", func(t *testing.T) string { return corpusFile(t, benchDSYM) }, macho.CpuAmd64},
}

// TestLookupLeaf checks that LookupLeaf and Link give Lookup's answer at
// every boundary, one byte either side, of a fixture with inlined calls
// and of the corpus's C++ crash.dSYM (skipped without the corpus): the
// frames rebuilt by following Outer, each outer frame placed at the call
// site of the one inside it and the innermost at LookupLeaf's position,
// equal Lookup's frames; with demangle false,
// exactly the frames Lookup names by demangling have no Function, and
// demangle.Demangle(LinkageName) is their name.
func TestLookupLeaf(t *testing.T) {
	for _, tc := range leafInputs {
		t.Run(tc.name, func(t *testing.T) {
			ix, err := New(dwarfSections(t, tc.path(t), tc.cpu))
			if err != nil {
				t.Fatal(err)
			}
			inlined, demangled := 0, 0
			for _, b := range ix.Boundaries() {
				for _, addr := range []uint64{b - 1, b, b + 1} {
					want, wantErr := ix.Lookup(addr)
					leaf, file, line, col, ok := ix.LookupLeaf(addr)
					if ok != (wantErr == nil) {
						t.Fatalf("LookupLeaf(%#x) ok = %v, Lookup's error %v", addr, ok, wantErr)
					}
					if !ok {
						continue
					}
					var got, mangled []Frame
					for l := leaf; l != (Leaf{}); {
						link, ok := ix.Link(l, true)
						bare, ok2 := ix.Link(l, false)
						if !ok || !ok2 {
							t.Fatalf("Link(%+v) of %#x: not ok", l, addr)
						}
						got, mangled = append(got, link.Frame), append(mangled, bare.Frame)
						if link.Outer != bare.Outer {
							t.Fatalf("Link(%+v) of %#x: Outer %+v with demangle, %+v without", l, addr, link.Outer, bare.Outer)
						}
						l = link.Outer
					}
					if leaf == (Leaf{}) {
						got = []Frame{{}}
					}
					// A link's position is its call site: the position of
					// the frame outside it.
					for i := len(got) - 1; i > 0; i-- {
						got[i].File, got[i].Line, got[i].Column = got[i-1].File, got[i-1].Line, got[i-1].Column
					}
					got[0].File, got[0].Line, got[0].Column = file, line, col
					if diff := cmp.Diff(want, got); diff != "" {
						t.Fatalf("at %#x (-Lookup +LookupLeaf and Link):\n%s", addr, diff)
					}
					inlined += len(want) - 1
					for i, f := range mangled {
						name := f.Function
						if name == "" && f.LinkageName != "" {
							name, _ = demangle.Demangle(f.LinkageName)
							demangled++
						}
						if name != want[i].Function {
							t.Fatalf("at %#x frame %d: Link(demangle false) gives %q (linkage %q), Lookup %q", addr, i, f.Function, f.LinkageName, want[i].Function)
						}
					}
				}
			}
			if inlined == 0 {
				t.Error("no inlined frame met: the test checks no chain")
			}
			if tc.name == "symbolic-crash" && demangled == 0 {
				t.Error("no frame named by demangling met")
			}
			if _, ok := ix.Link(Leaf{}, true); ok {
				t.Error("Link(Leaf{}) ok, want not ok")
			}
		})
	}
}

// TestCursor checks that a Cursor answers as Index.LookupLeaf does, for
// addresses in increasing order (every boundary, one byte either side,
// several in one row, where it steps from the row before) and in a
// shuffled order (where it searches), on the inline fixture and the
// corpus's crash.dSYM (skipped without the corpus).
func TestCursor(t *testing.T) {
	for _, tc := range leafInputs {
		t.Run(tc.name, func(t *testing.T) {
			ix, err := New(dwarfSections(t, tc.path(t), tc.cpu))
			if err != nil {
				t.Fatal(err)
			}
			var addrs []uint64
			for _, b := range ix.Boundaries() {
				addrs = append(addrs, b-1, b, b+1, b+2)
			}
			shuffled := slices.Clone(addrs)
			rand.New(rand.NewPCG(1, 2)).Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
			for _, order := range [][]uint64{addrs, shuffled} {
				c := ix.NewCursor()
				for _, a := range order {
					type answer struct {
						Leaf      Leaf
						File      string
						Line, Col int
						OK        bool
					}
					var want, got answer
					want.Leaf, want.File, want.Line, want.Col, want.OK = ix.LookupLeaf(a)
					got.Leaf, got.File, got.Line, got.Col, got.OK = c.LookupLeaf(a)
					if want != got {
						t.Fatalf("Cursor.LookupLeaf(%#x) = %+v, Index.LookupLeaf %+v", a, got, want)
					}
				}
			}
		})
	}
}
