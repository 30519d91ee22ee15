package debuginfo

import (
	"debug/macho"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestAppendLookup checks that AppendLookup appends Lookup's frames after
// what dst holds, and returns dst unchanged where Lookup finds nothing, at
// every boundary of a fixture with inlined calls.
func TestAppendLookup(t *testing.T) {
	ix, err := New(dwarfSections(t, "testdata/fixtures/inl-dwarf4.dwarf", macho.CpuArm64))
	if err != nil {
		t.Fatal(err)
	}
	prefix := []Frame{{Function: "caller's own"}}
	var buf []Frame
	found := 0
	for _, addr := range ix.Boundaries() {
		for _, a := range []uint64{addr - 1, addr} {
			want, wantErr := ix.Lookup(a)
			got, err := ix.AppendLookup(append(buf[:0], prefix...), a)
			if err != wantErr {
				t.Fatalf("AppendLookup(%#x) error %v, Lookup's %v", a, err, wantErr)
			}
			if diff := cmp.Diff(append(slices.Clone(prefix), want...), got); diff != "" {
				t.Fatalf("AppendLookup(%#x) mismatch (-Lookup +AppendLookup):\n%s", a, diff)
			}
			if err == nil {
				found++
			}
			buf = got
		}
	}
	if found == 0 {
		t.Fatal("no address found: the test compares nothing")
	}
}
