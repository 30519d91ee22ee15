package symstore

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/uuid"
)

// fixtureUUID returns the UUID of a fixture binary's (only) slice.
func fixtureUUID(t testing.TB, name string) uuid.UUID {
	t.Helper()
	f, err := image.Open(filepath.Join("..", "fixtures", "bin", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	return f.Images[0].UUID
}

func fixtureSymbols(t *testing.T) *Symbols {
	t.Helper()
	syms := NewSymbols()
	if err := syms.AddDir(context.Background(), filepath.Join("..", "fixtures", "bin")); err != nil {
		t.Fatal(err)
	}
	return syms
}

// openFiles returns how many files the entry's references keep open.
func openFiles(e *Entry) int {
	e.refs.mu.Lock()
	defer e.refs.mu.Unlock()
	return len(e.refs.files)
}

// TestSymbolsByUUIDAndClose indexes the fixture binaries, finds one by its
// UUID, and checks that Close forgets the loaded entry and closes its
// files once released, while the index still answers afterwards.
func TestSymbolsByUUIDAndClose(t *testing.T) {
	want := fixtureUUID(t, "chain-x86_64-O1")
	syms := fixtureSymbols(t)
	for round := 0; round < 2; round++ {
		e, err := syms.Lookup(want)
		if err != nil || e == nil {
			t.Fatalf("round %d: Lookup(%s) = %v, %v; want the fixture", round, want, e, err)
		}
		if e.Image().UUID != want {
			t.Errorf("round %d: Lookup(%s) gave an image with UUID %s", round, want, e.Image().UUID)
		}
		if n := openFiles(e); n != 2 {
			t.Errorf("round %d: entry keeps %d files open, want 2 (binary and dSYM)", round, n)
		}
		if err := e.Release(); err != nil {
			t.Fatalf("Release: %v", err)
		}
		if err := syms.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if len(syms.loads) != 0 {
			t.Errorf("after Close: %d entries loaded; want none", len(syms.loads))
		}
		if n := openFiles(e); n != 0 {
			t.Errorf("after Release and Close: %d files open; want none", n)
		}
	}
	if e, err := syms.Lookup(uuid.UUID{1}); e != nil || !errors.Is(err, ErrNotFound) || !errors.Is(err, ErrNoSymbols) {
		t.Errorf("Lookup(unknown UUID) = %v, %v; want nil, ErrNoSymbols", e, err)
	}
}

// TestCloseKeepsHeldEntries closes a Symbols while two holders of an entry
// still hold its files: the entry keeps answering from DWARF and code, and
// the files are closed when the last holder lets go.
func TestCloseKeepsHeldEntries(t *testing.T) {
	u := fixtureUUID(t, "dwarf-x86_64-O1")
	syms := fixtureSymbols(t)
	e, err := syms.Lookup(u)
	if err != nil || e == nil {
		t.Fatalf("Lookup(%s) = %v, %v", u, e, err)
	}
	second, err := syms.Lookup(u)
	if err != nil || second != e {
		t.Fatalf("second Lookup(%s) = %p, %v; want the same entry %p", u, second, err, e)
	}
	if err := syms.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	// The DWARF sections are read only now, after Close.
	if len(e.Debug()) == 0 || len(e.DebugErrors()) != 0 {
		t.Fatalf("after Close: Debug() = %d indexes, DebugErrors() = %v; want the dSYM's DWARF read", len(e.Debug()), e.DebugErrors())
	}
	text, ok := e.Image().TextSegment()
	if !ok {
		t.Fatal("no __TEXT")
	}
	lo, _, ok := e.Debug()[0].Bounds()
	if !ok {
		t.Fatal("the dSYM's DWARF has no line rows")
	}
	if code, ok, err := e.Code(text.Name, lo); !ok || err != nil || len(code) == 0 {
		t.Errorf("after Close: Code(%s, %#x) = %d bytes, %v, %v; want the code", text.Name, lo, len(code), ok, err)
	}
	if frames := e.Resolve(Frame{Address: lo, LookupAddress: lo}, lo, ResolveOptions{}); frames[len(frames)-1].File == "" {
		t.Errorf("after Close: Resolve(%#x) = %+v; want a source file from DWARF", lo, frames)
	}
	if n := openFiles(e); n != 2 {
		t.Errorf("after Close with holders: %d files open, want 2", n)
	}
	if err := e.Release(); err != nil {
		t.Fatal(err)
	}
	if n := openFiles(e); n != 2 {
		t.Errorf("after one of two holders released: %d files open, want 2", n)
	}
	if err := second.Release(); err != nil {
		t.Fatal(err)
	}
	if n := openFiles(e); n != 0 {
		t.Errorf("after the last holder released: %d files open, want 0", n)
	}
}

// TestLookupLoadsPerUUID blocks the load of one UUID in the test hook and
// checks that a lookup of another UUID answers meanwhile, and that a
// second lookup of the blocked UUID waits for the same load instead of
// starting its own.
func TestLookupLoadsPerUUID(t *testing.T) {
	a, b := fixtureUUID(t, "chain-x86_64-O1"), fixtureUUID(t, "chain-arm64-O1")
	syms := fixtureSymbols(t)
	defer syms.Close()

	entered, release := make(chan struct{}), make(chan struct{})
	var mu sync.Mutex
	loads := map[string]int{}
	testHookLoad = func(key string) {
		mu.Lock()
		loads[key]++
		mu.Unlock()
		if key == b.String() {
			close(entered)
			<-release
		}
	}
	defer func() { testHookLoad = nil }()

	type result struct {
		e   *Entry
		err error
	}
	lookupB := func() chan result {
		c := make(chan result, 1)
		go func() {
			e, err := syms.Lookup(b)
			c <- result{e, err}
		}()
		return c
	}
	first := lookupB()
	<-entered // B's load is now blocked in the hook

	doneA := make(chan result, 1)
	go func() {
		e, err := syms.Lookup(a)
		doneA <- result{e, err}
	}()
	select {
	case r := <-doneA:
		if r.e == nil || r.err != nil || r.e.UUID != a {
			t.Errorf("Lookup(A) while B loads = %v, %v; want A's entry", r.e, r.err)
		}
		r.e.Release()
	case <-time.After(time.Minute):
		// Only a lock held across B's load gets here; the bound keeps the
		// test from hanging.
		t.Fatal("Lookup(A) did not return while B's load was blocked")
	}

	second := lookupB()
	close(release)
	r1, r2 := <-first, <-second
	if r1.e == nil || r1.e != r2.e || r1.e.UUID != b {
		t.Errorf("concurrent Lookup(B) = %p and %p; want one shared entry for B", r1.e, r2.e)
	}
	r1.e.Release()
	r2.e.Release()
	mu.Lock()
	defer mu.Unlock()
	if loads[b.String()] != 1 || loads[a.String()] != 1 {
		t.Errorf("loads = %v; want one load each of A and B", loads)
	}
}

// TestLazyWarnings checks that DWARF an entry could not use is reported
// once Debug has run, and not before.
func TestLazyWarnings(t *testing.T) {
	path := filepath.Join("..", "fixtures", "bin", "chain-arm64-O1")
	f, err := image.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	e, err := NewEntry(f.Images[0])
	if err != nil {
		t.Fatal(err)
	}
	if got := e.LazyWarnings(); len(got) != 0 {
		t.Fatalf("LazyWarnings() = %q before any problem, want none", got)
	}
	e.debugOnce.Do(func() {
		e.debugErrors = append(e.debugErrors, errors.New("chain-arm64-O1: DWARF: bad abbreviation"))
		e.debugDone.Store(true)
	})
	got := e.LazyWarnings()
	if len(got) != 1 || got[0] != "chain-arm64-O1: DWARF: bad abbreviation" {
		t.Errorf("LazyWarnings() = %q, want the one DWARF error", got)
	}
}
