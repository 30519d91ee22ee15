package debuginfo

import (
	"debug/macho"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stackimage/stackimage/demangle"
)

// TestLazyVariants: however a unit is found (debug_aranges, or the unit
// DIE's own ranges when aranges are absent or not sane), however often
// the cache drops it, and whether type descriptions are skipped or walked,
// every probe address answers as the default index does (which TestGolden
// checks against llvm-symbolizer), and the warnings are the same.
func TestLazyVariants(t *testing.T) {
	for _, ds := range dsyms {
		t.Run(ds.name, func(t *testing.T) {
			path := ds.path
			if !strings.HasPrefix(path, "testdata/") {
				path = corpusFile(t, ds.path)
			}
			secs := normalize(dwarfSections(t, path, ds.cpu))
			addrs := probeAddrs(t, secs)
			ref, err := New(secs)
			if err != nil {
				t.Fatal(err)
			}
			want := make(map[uint64][]goldenFrame)
			for _, a := range addrs {
				want[a] = toGolden(ref, a)
			}
			parseAll(ref)
			wantWarn := ref.Warnings()

			with := func(name string, b []byte) map[string][]byte {
				c := make(map[string][]byte, len(secs))
				for k, v := range secs {
					c[k] = v
				}
				if b == nil {
					delete(c, name)
				} else {
					c[name] = b
				}
				return c
			}
			variants := []struct {
				name      string
				secs      map[string][]byte
				budget    int64
				walkTypes bool
			}{
				{"no aranges", with("debug_aranges", nil), cacheBudget, false},
				{"one unit cached at a time", secs, 1, false},
				{"types walked", secs, cacheBudget, true},
			}
			if ar := secs["debug_aranges"]; len(ar) > 6 {
				bad := slices.Clone(ar)
				bad[4] = 3 // version 3: not sane, so every unit DIE is read
				variants = append(variants, struct {
					name      string
					secs      map[string][]byte
					budget    int64
					walkTypes bool
				}{"aranges version 3", with("debug_aranges", bad), cacheBudget, false})
			}
			for _, v := range variants {
				t.Run(v.name, func(t *testing.T) {
					ix, err := New(v.secs)
					if err != nil {
						t.Fatal(err)
					}
					ix.cache.budget = v.budget
					ix.walkTypes = v.walkTypes
					for _, a := range addrs {
						if diff := cmp.Diff(want[a], toGolden(ix, a)); diff != "" {
							t.Errorf("Lookup(%#x) differs (-default +%s):\n%s", a, v.name, diff)
						}
					}
					if v.budget == 1 {
						if st := ix.Stats(); st.Parsed != 1 {
							t.Errorf("Stats().Parsed = %d with a one-byte budget, want 1", st.Parsed)
						}
					}
					parseAll(ix)
					if diff := cmp.Diff(wantWarn, ix.Warnings()); diff != "" {
						t.Errorf("Warnings() differ (-default +%s):\n%s", v.name, diff)
					}
				})
			}
		})
	}
}

// TestLookupParsesOneUnit: a lookup parses the unit holding the address
// and no other.
func TestLookupParsesOneUnit(t *testing.T) {
	secs := dwarfSections(t, corpusFile(t, benchDSYM), macho.CpuAmd64)
	ix, err := New(secs)
	if err != nil {
		t.Fatal(err)
	}
	if st := ix.Stats(); st.Units != 16 || st.Parsed != 0 {
		t.Fatalf("after New, Stats() = %+v, want 16 units, none parsed", st)
	}
	lo, _, _ := ix.Bounds()
	if _, err := ix.Lookup(lo); err != nil {
		t.Fatalf("Lookup(%#x) found nothing", lo)
	}
	if st := ix.Stats(); st.Parsed != 1 || st.Functions == 0 || st.Rows == 0 {
		t.Errorf("after one lookup, Stats() = %+v, want one unit parsed with functions and rows", st)
	}
}

// TestConcurrentLookups: lookups from several goroutines, with a cache so
// small that units are parsed and dropped all the time, answer as one
// goroutine does (run with -race).
func TestConcurrentLookups(t *testing.T) {
	units := make([]synthUnit, 20)
	var addrs []uint64
	for i := range units {
		units[i] = synthUnit{name: fmt.Sprintf("u%d.c", i), fn: fmt.Sprintf("f%d", i), lo: uint64(0x1000 * (i + 1)), size: 0x10, line: i + 1}
		addrs = append(addrs, units[i].lo, units[i].lo+8)
	}
	secs := buildSynth(units).sections()
	ref, err := New(secs)
	if err != nil {
		t.Fatal(err)
	}
	want := make([][]Frame, len(addrs))
	for i, a := range addrs {
		want[i], _ = ref.Lookup(a)
	}
	ix, err := New(secs)
	if err != nil {
		t.Fatal(err)
	}
	ix.cache.budget = 1
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range 50 {
				i := (g*7 + k) % len(addrs)
				if got, _ := ix.Lookup(addrs[i]); !cmp.Equal(want[i], got) {
					t.Errorf("goroutine %d: Lookup(%#x) = %v, want %v", g, addrs[i], got, want[i])
				}
				ix.Warnings()
				ix.Stats()
			}
		}()
	}
	wg.Wait()
}

// TestConcurrentDemangling: goroutines looking up the same C++ functions
// at once in a fresh index (so they race to demangle each name first)
// answer as one goroutine does (run with -race).
func TestConcurrentDemangling(t *testing.T) {
	secs := dwarfSections(t, corpusFile(t, benchDSYM), macho.CpuAmd64)
	addrs := probeAddrs(t, secs)
	ref, err := New(secs)
	if err != nil {
		t.Fatal(err)
	}
	want := make([][]Frame, len(addrs))
	mangled := 0
	for i, a := range addrs {
		want[i], _ = ref.Lookup(a)
		for _, f := range want[i] {
			if f.Lang == demangle.LangCPP && f.Function != f.LinkageName {
				mangled++
			}
		}
	}
	if mangled == 0 {
		t.Fatal("no demangled C++ frames among the probe addresses")
	}
	ix, err := New(secs)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i, a := range addrs {
				if got, _ := ix.Lookup(a); !cmp.Equal(want[i], got) {
					t.Errorf("goroutine %d: Lookup(%#x) = %v, want %v", g, a, got, want[i])
					return
				}
			}
		}()
	}
	wg.Wait()
}
