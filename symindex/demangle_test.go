package symindex_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/stackimage/stackimage/demangle"
	"github.com/stackimage/stackimage/internal/testcorpus"
	"github.com/stackimage/stackimage/symstore"
)

// TestDemangle checks, on a C++ dSYM of the corpus, that the index
// stores the demangled name of every C++ function its frames name, and
// that Index.Demangle answers as demangle.Demangle does for those names,
// for the symbol table's spelling of them ("__Z...") and for names the
// file does not hold.
func TestDemangle(t *testing.T) {
	corpus := testcorpus.Dir(t)
	file := dsymFile(filepath.Join(corpus, "symbolic/symbolic-testutils/fixtures/macos/crash.dSYM"))
	if file == "" {
		t.Fatal("crash.dSYM: no DWARF file")
	}
	for _, images := range openImages(t, file) {
		e, _ := symstore.NewEntry(images...)
		ix, _ := roundTrip(t, e)
		check := func(name string) {
			t.Helper()
			want, wantLang := demangle.Demangle(name)
			if got, lang := ix.Demangle(name); got != want || lang != wantLang {
				t.Errorf("Demangle(%q) = %q, %s; want %q, %s", name, got, lang, want, wantLang)
			}
		}
		stored := map[string]bool{}
		for _, d := range e.Debug() {
			for _, a := range d.Boundaries() {
				frames, _ := ix.Source(a)
				for _, f := range frames {
					if f.LinkageName == "" || f.Lang != demangle.LangCPP || stored[f.LinkageName] {
						continue
					}
					got, ok := ix.StoredDemangled(f.LinkageName)
					if !ok || got != f.Function {
						t.Errorf("stored name of %q = %q, %v; want %q", f.LinkageName, got, ok, f.Function)
					}
					stored[f.LinkageName] = true
					check(f.LinkageName)
					check("_" + f.LinkageName)
				}
				if sym, ok := ix.Symbol(a); ok && sym.RawName != "" {
					check(sym.RawName)
				}
			}
		}
		t.Logf("%d C++ functions stored", len(stored))
		if len(stored) < 10 {
			t.Errorf("%d C++ functions named by the frames, want at least 10", len(stored))
		}
		for _, name := range []string{"_ZN3not6stored4hereEv", "__ZN3not6stored4hereEv", "main", "", "_Z"} {
			if _, ok := ix.StoredDemangled(name); ok {
				t.Errorf("StoredDemangled(%q) found a name the file does not hold", name)
			}
			check(name)
		}
	}
}

// TestSourceMangled checks that SourceMangled answers as Source does with
// each demangled function name replaced by its linkage name.
func TestSourceMangled(t *testing.T) {
	corpus := testcorpus.Dir(t)
	file := dsymFile(filepath.Join(corpus, "symbolic/symbolic-testutils/fixtures/macos/crash.dSYM"))
	for _, images := range openImages(t, file) {
		e, _ := symstore.NewEntry(images...)
		ix, _ := roundTrip(t, e)
		replaced := 0
		for _, d := range e.Debug() {
			for _, a := range d.Boundaries() {
				want, wantOK := ix.Source(a)
				for i, f := range want {
					if f.LinkageName != "" && f.Function == mustDemangle(f.LinkageName) && f.Function != f.LinkageName {
						want[i].Function = f.LinkageName
						replaced++
					}
				}
				got, ok := ix.SourceMangled(a)
				if ok != wantOK || !slices.Equal(got, want) {
					t.Fatalf("SourceMangled(%#x) = %+v, %v; want %+v, %v", a, got, ok, want, wantOK)
				}
			}
		}
		if replaced == 0 {
			t.Errorf("no demangled name in the frames: the test compares nothing")
		}
	}
}

func mustDemangle(name string) string {
	s, _ := demangle.Demangle(name)
	return s
}
