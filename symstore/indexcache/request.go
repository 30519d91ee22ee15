package indexcache

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/internal/parallel"
	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/symstore/remote"
	"github.com/stackimage/stackimage/uuid"
)

// Request is what one request sees of the cache's symbols: for each UUID
// of its dumps' images, the index (names, lines, inlined functions) and
// the executable and debug file when a source has them (the unwind
// tables and code the walker reads), found before the walk and held
// until Close. It is the symstore.Source of the request's Symbols.
type Request struct {
	cache *Cache
	found map[uuid.UUID]*Found
}

// Found is what was found for one UUID of a request.
type Found struct {
	Lookup
	// MachO are the executable and debug file, for the walker.
	MachO []string
}

// ErrNotStarted is the error of a lookup the request's deadline came
// before.
var ErrNotStarted = errors.New("not looked up before the request's deadline")

// FetchShare is the part of a request's time left that its symbol
// lookups may take, in tenths: the walk of what was found keeps the rest.
const FetchShare = 9

// Find finds the index and Mach-O files of every image of the dumps
// from the sources only (nil: every source), at most maxFetches at a
// time. Lookups not done when nine tenths of ctx's time are gone say
// StatusTimeout, and the dumps are symbolicated without them.
func (c *Cache) Find(ctx context.Context, dumps []*dump.Dump, only []*Origin, maxFetches int) *Request {
	req := &Request{cache: c, found: map[uuid.UUID]*Found{}}
	walks := slices.ContainsFunc(dumps, Walked)
	type image struct {
		id    uuid.UUID
		name  string
		found *Found
	}
	var images []image
	for _, d := range dumps {
		for _, im := range d.Images {
			if im.UUID.IsZero() || req.found[im.UUID] != nil {
				continue
			}
			f := &Found{Lookup: Lookup{Status: StatusTimeout, Err: ErrNotStarted}}
			req.found[im.UUID] = f
			images = append(images, image{im.UUID, remote.SafeName(im.Name), f})
		}
	}
	// An index in memory is taken here, without a goroutine: nearly
	// every image of a warm service's request; the rest are looked up
	// maxFetches at a time.
	cold := images[:0]
	for _, im := range images {
		if l, ok := c.GetHot(im.id); ok {
			im.found.Lookup = l
			if !walks {
				continue
			}
			if paths, known := c.machOKnown(l.Index); known {
				im.found.MachO = paths
				continue
			}
			c.Release(l.Index)
			im.found.Lookup = Lookup{Status: StatusTimeout, Err: ErrNotStarted}
		}
		cold = append(cold, im)
	}
	if len(cold) == 0 {
		return req
	}
	if dl, ok := ctx.Deadline(); ok {
		// The fetches' share of the time left (a timer, taken only when
		// something is fetched).
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, time.Now().Add(time.Until(dl)*FetchShare/10))
		defer cancel()
	}
	parallel.ForEach(ctx, len(cold), maxFetches, func(i int) {
		im := cold[i]
		im.found.Lookup = c.Get(ctx, im.id, im.name, only)
		if im.found.Index != nil && walks {
			im.found.MachO = c.MachOFiles(ctx, im.found.Index, im.name, only)
		}
	})
	return req
}

// Walked reports whether symbolizing d walks a stack, reading unwind
// tables and code: a dump's threads are walked, a report's only when it
// holds stack memory. A report without (most .crash and .ips files)
// needs names alone, and its images' binaries and dSYMs, which can be
// large, are not fetched for it.
func Walked(d *dump.Dump) bool {
	if !d.Format.IsReport() || d.Memory != nil {
		return true
	}
	return slices.ContainsFunc(d.Threads, func(th dump.Thread) bool { return th.Stack != nil })
}

// Found is what was found for the UUID, nil when it was not looked up.
func (r *Request) Found(id uuid.UUID) *Found { return r.found[id] }

// Close lets go of the indexes found.
func (r *Request) Close() {
	for _, f := range r.found {
		r.cache.Release(f.Index)
	}
}

// Entry is the entry of a UUID whose index alone was found, as the cache
// holds it open: its tables are built once for every request, not again
// for each (its files opened, its names read) through OpenSymbols. One
// found with its Mach-O files, for a walk, is left to OpenSymbols, which
// gives the index and the files together. It is symbolize.Symbolizer's
// Entries.
func (r *Request) Entry(id uuid.UUID) *symstore.Entry {
	f := r.found[id]
	if f == nil || f.Index == nil || len(f.MachO) > 0 {
		return nil
	}
	e, err := f.Index.Symbols.Lookup(id)
	if err != nil {
		return nil
	}
	return e
}

// OpenSymbols implements symstore.Source: the UUID's index file, then
// its executable and debug file. A UUID no source has is
// symstore.ErrNoSymbols (the image is listed as missing); one whose lookup
// failed or timed out is an error the answer's warnings carry.
func (r *Request) OpenSymbols(_ context.Context, want symstore.Want) ([]symstore.SymbolFile, error) {
	id := want.UUID
	f := r.found[id]
	switch {
	case f == nil || f.Index == nil && f.Status == StatusMissing:
		return nil, fmt.Errorf("%w %s in the service's sources", symstore.ErrNoSymbols, id)
	case f.Index == nil && f.Status == StatusTimeout:
		return nil, fmt.Errorf("not found before the request's deadline (%s)", StatusTimeout)
	case f.Index == nil:
		return nil, fmt.Errorf("%s: %v", f.Status, f.Err)
	}
	index, err := openSymbolFile(f.Index.Path)
	if err != nil {
		return nil, err
	}
	files := []symstore.SymbolFile{index}
	for _, p := range f.MachO {
		// A source's file gone since it was found costs the walk its
		// tables, not the frames their names.
		if sf, err := openSymbolFile(p); err == nil {
			files = append(files, sf)
		}
	}
	return files, nil
}

// openSymbolFile opens a file on disk as a symstore.SymbolFile.
func openSymbolFile(path string) (symstore.SymbolFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return symstore.SymbolFile{}, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return symstore.SymbolFile{}, err
	}
	return symstore.SymbolFile{Name: path, ReaderAt: f, Size: st.Size(), Closer: f}, nil
}
