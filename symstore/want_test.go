package symstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stackimage/stackimage/lookup"
	"github.com/stackimage/stackimage/uuid"
)

// namedSource has a Breakpad file for each UUID in syms, found only by
// the image's name (as a Breakpad symbol server's paths hold it), and
// records the names it was asked with.
type namedSource struct {
	mu    sync.Mutex
	syms  map[uuid.UUID]string // UUID → image name
	asked []string
}

func (s *namedSource) OpenSymbols(_ context.Context, want Want) ([]SymbolFile, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked = append(s.asked, fmt.Sprintf("%s %q", want.UUID, want.Name))
	name, ok := s.syms[want.UUID]
	if !ok || want.Name != name {
		return nil, fmt.Errorf("%w %s named %q", ErrNoSymbols, want.UUID, want.Name)
	}
	data := "MODULE mac arm64 " + strings.ToUpper(want.UUID.Hex()) + "0 " + name + "\nFUNC 1000 10 0 f\n"
	return []SymbolFile{{Name: name + ".sym", ReaderAt: strings.NewReader(data), Size: int64(len(data))}}, nil
}

func (s *namedSource) takeAsked() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.asked
	s.asked = nil
	return a
}

// TestLookupImageTellsSourcesTheName: LookupImage tells the sources the
// image's base name; a miss asked without it, or under another name, is
// asked again with it, while a hit, or a miss under the same name, is
// remembered.
func TestLookupImageTellsSourcesTheName(t *testing.T) {
	a, b := uuid.UUID{0xa}, uuid.UUID{0xb}
	src := &namedSource{syms: map[uuid.UUID]string{a: "libA.dylib", b: "libB.dylib"}}
	syms := NewSymbols()
	defer syms.Close()
	syms.AddSource(src)
	ctx := context.Background()

	steps := []struct {
		name   string
		lookup func() (*Entry, error)
		found  bool
		asked  []string
	}{
		{"without a name: a miss", func() (*Entry, error) { return syms.LookupContext(ctx, a) }, false,
			[]string{a.String() + ` ""`}},
		{"with the path's base name: found", func() (*Entry, error) { return syms.LookupImage(ctx, a, "/usr/lib/libA.dylib") }, true,
			[]string{a.String() + ` "libA.dylib"`}},
		{"found once, not asked again", func() (*Entry, error) { return syms.LookupImage(ctx, a, "libA.dylib") }, true, nil},
		{"nor without a name", func() (*Entry, error) { return syms.LookupContext(ctx, a) }, true, nil},
		{"a wrong name: a miss", func() (*Entry, error) { return syms.LookupImage(ctx, b, `C:\bin\other.dylib`) }, false,
			[]string{b.String() + ` "other.dylib"`}},
		{"the same wrong name: remembered", func() (*Entry, error) { return syms.LookupImage(ctx, b, "other.dylib") }, false, nil},
		{"no name after a miss: remembered", func() (*Entry, error) { return syms.LookupContext(ctx, b) }, false, nil},
		{"the right name after a miss: asked", func() (*Entry, error) { return syms.LookupImage(ctx, b, "libB.dylib") }, true,
			[]string{b.String() + ` "libB.dylib"`}},
	}
	for _, st := range steps {
		e, err := st.lookup()
		if st.found {
			if err != nil || len(e.BreakpadFiles()) != 1 {
				t.Errorf("%s: entry %v, %v; want the .sym file", st.name, e, err)
			}
		} else if !errors.Is(err, lookup.ErrNotFound) {
			t.Errorf("%s: %v, %v; want lookup.ErrNotFound", st.name, e, err)
		}
		if e != nil {
			e.Release()
		}
		if diff := cmp.Diff(st.asked, src.takeAsked()); diff != "" {
			t.Errorf("%s: the source was asked (-want +got):\n%s", st.name, diff)
		}
	}
}
