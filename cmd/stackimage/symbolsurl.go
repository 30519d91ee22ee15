package main

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/symstore/objstore"
	"github.com/stackimage/stackimage/symstore/remote"
)

// symbolServers are the --symbols-url flags: symbol servers read over
// HTTP, their files found by UUID at the paths of one of symbolicator's
// layouts, as the service's http sources are.
type symbolServers struct {
	urls   stringList
	layout *string
}

func addSymbolServerFlags(fs *flagSet) *symbolServers {
	s := &symbolServers{}
	fs.Var(&s.urls, "symbols-url", "a symbol server (http:// or https://) whose binaries, dSYMs and .sym files are fetched by UUID; repeatable")
	s.layout = fs.String("symbols-layout", "unified", "the layout of the --symbols-url servers: "+strings.Join(remote.Layouts, ", "))
	return s
}

// addTo makes syms ask the servers, in order, for the UUIDs its files lack.
// Downloads go to a temporary directory that done removes.
func (s *symbolServers) addTo(syms *symstore.Symbols) (done func(), err error) {
	if len(s.urls) == 0 {
		return func() {}, nil
	}
	if !slices.Contains(remote.Layouts, *s.layout) {
		return nil, fmt.Errorf("%w: --symbols-layout %q: want one of %s", errUsage, *s.layout, strings.Join(remote.Layouts, ", "))
	}
	tmp, err := os.MkdirTemp("", "stackimage-symbols-")
	if err != nil {
		return nil, err
	}
	done = func() { os.RemoveAll(tmp) }
	for _, u := range s.urls {
		if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			done()
			return nil, fmt.Errorf("%w: --symbols-url %q: want an http:// or https:// URL", errUsage, u)
		}
		store, err := objstore.NewHTTP(objstore.HTTPConfig{URL: u})
		if err != nil {
			done()
			return nil, fmt.Errorf("--symbols-url %s: %w", u, err)
		}
		syms.AddSource(remote.New(remote.Config{Name: u, Store: store, Layout: remote.Layout{Type: *s.layout}, TempDir: tmp}))
	}
	return done, nil
}
