package symstore

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/lookup"
	"github.com/stackimage/stackimage/uuid"
)

// askLog records what sources were asked, in order.
type askLog struct {
	mu    sync.Mutex
	asked []string
}

func (l *askLog) add(s string) {
	l.mu.Lock()
	l.asked = append(l.asked, s)
	l.mu.Unlock()
}

func (l *askLog) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	a := l.asked
	l.asked = nil
	return a
}

// namedSource has a Breakpad file for each UUID in syms, found only by
// the image's name (as a Breakpad symbol server's paths hold it): asked
// without a name, it says it needs one.
type namedSource struct {
	syms map[uuid.UUID]string // UUID → image name
	log  *askLog
}

func (s *namedSource) OpenSymbols(_ context.Context, want Want) ([]SymbolFile, error) {
	s.log.add(fmt.Sprintf("named %s %q", want.UUID, want.Name))
	if want.Name == "" {
		return nil, fmt.Errorf("%s: %w", want.UUID, ErrNeedName)
	}
	name, ok := s.syms[want.UUID]
	if !ok || want.Name != name {
		return nil, fmt.Errorf("%w %s named %q", ErrNoSymbols, want.UUID, want.Name)
	}
	data := "MODULE mac arm64 " + strings.ToUpper(want.UUID.Hex()) + "0 " + name + "\nFUNC 1000 10 0 f\n"
	return []SymbolFile{{Name: name + ".sym", ReaderAt: strings.NewReader(data), Size: int64(len(data))}}, nil
}

// TestLookupImageTellsSourcesTheName: LookupImage tells the sources the
// image's base name. After a miss asked without it, only the sources
// that said they needed it are asked again; a hit, and a miss asked with
// a name, are remembered.
func TestLookupImageTellsSourcesTheName(t *testing.T) {
	a, c := uuid.UUID{0xa}, uuid.UUID{0xc}
	log := &askLog{}
	syms := NewSymbols()
	defer syms.Close()
	syms.AddSource(&namedSource{syms: map[uuid.UUID]string{a: "libA.dylib"}, log: log})
	syms.AddSource(SourceFunc(func(_ context.Context, u uuid.UUID, _ *archregs.Arch) ([]SymbolFile, error) {
		log.add("plain " + u.String())
		return nil, ErrNoSymbols
	}))
	ctx := context.Background()

	steps := []struct {
		name   string
		lookup func() (*Entry, error)
		found  bool
		asked  []string
	}{
		{"without a name: a miss", func() (*Entry, error) { return syms.LookupContext(ctx, a) }, false,
			[]string{"named " + a.String() + ` ""`, "plain " + a.String()}},
		{"with the path's base name: the named source again, found", func() (*Entry, error) { return syms.LookupImage(ctx, a, "/usr/lib/libA.dylib") }, true,
			[]string{"named " + a.String() + ` "libA.dylib"`}},
		{"found once, not asked again", func() (*Entry, error) { return syms.LookupImage(ctx, a, "libA.dylib") }, true, nil},
		{"nor without a name", func() (*Entry, error) { return syms.LookupContext(ctx, a) }, true, nil},
		{"a UUID no source has, with a name", func() (*Entry, error) { return syms.LookupImage(ctx, c, `C:\bin\libC.dylib`) }, false,
			[]string{"named " + c.String() + ` "libC.dylib"`, "plain " + c.String()}},
		{"under another name: remembered", func() (*Entry, error) { return syms.LookupImage(ctx, c, "other.dylib") }, false, nil},
		{"without a name: remembered", func() (*Entry, error) { return syms.LookupContext(ctx, c) }, false, nil},
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
		if diff := cmp.Diff(st.asked, log.take()); diff != "" {
			t.Errorf("%s: the sources were asked (-want +got):\n%s", st.name, diff)
		}
	}
}

// gatedSource is a namedSource whose asks without a name wait until
// release is closed, after telling asked: a lookup with the name can
// join the nameless one while it is in flight.
type gatedSource struct {
	namedSource
	asked, release chan struct{}
}

func (s *gatedSource) OpenSymbols(ctx context.Context, want Want) ([]SymbolFile, error) {
	if want.Name == "" {
		close(s.asked)
		<-s.release
	}
	return s.namedSource.OpenSymbols(ctx, want)
}

// TestLookupImageJoiningANamelessLoad: a lookup with the image's name
// that arrives while one without it is asking the sources does not take
// that lookup's miss: the source that needed the name is asked with it,
// and the named lookup finds the file.
func TestLookupImageJoiningANamelessLoad(t *testing.T) {
	a := uuid.UUID{0xa}
	log := &askLog{}
	src := &gatedSource{namedSource{syms: map[uuid.UUID]string{a: "libA.dylib"}, log: log}, make(chan struct{}), make(chan struct{})}
	syms := NewSymbols()
	defer syms.Close()
	syms.AddSource(src)
	ctx := context.Background()

	nameless := make(chan error, 1)
	go func() {
		e, err := syms.LookupContext(ctx, a)
		if e != nil {
			e.Release()
		}
		nameless <- err
	}()
	<-src.asked // the nameless load is in flight
	named := make(chan *Entry, 1)
	namedErr := make(chan error, 1)
	go func() {
		e, err := syms.LookupImage(ctx, a, "libA.dylib")
		named <- e
		namedErr <- err
	}()
	// The named lookup joins the load before the nameless ask ends.
	for syms.lookupsWaiting(a) < 2 {
		runtime.Gosched()
	}
	close(src.release)
	if err := <-nameless; !errors.Is(err, lookup.ErrNotFound) {
		t.Errorf("the lookup without a name: %v; want lookup.ErrNotFound", err)
	}
	e, err := <-named, <-namedErr
	if err != nil || e == nil || len(e.BreakpadFiles()) != 1 {
		t.Fatalf("the lookup with the name, joined to the nameless one: %v, %v; want the .sym file", e, err)
	}
	e.Release()
	want := []string{"named " + a.String() + ` ""`, "named " + a.String() + ` "libA.dylib"`}
	if diff := cmp.Diff(want, log.take()); diff != "" {
		t.Errorf("the source was asked (-want +got):\n%s", diff)
	}
}

// lookupsWaiting is how many lookups hold the load of u now (its refs,
// less the index's own hold).
func (s *Symbols) lookupsWaiting(u uuid.UUID) int {
	s.mu.Lock()
	ld := s.loads[u]
	s.mu.Unlock()
	if ld == nil {
		return 0
	}
	ld.refs.mu.Lock()
	defer ld.refs.mu.Unlock()
	return ld.refs.n - 1
}
