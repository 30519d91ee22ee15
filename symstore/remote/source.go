package remote

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/stackimage/stackimage/lookup"
	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/symstore/objstore"
	"github.com/stackimage/stackimage/uuid"
)

// Config configures a Source.
type Config struct {
	// Name names the source in messages.
	Name string
	// Store holds the files; Layout says where.
	Store  objstore.Store
	Layout Layout
	// MaxDownload bounds one file fetched (0: DefaultMaxDownload);
	// DownloadTimeout one fetch (0: DefaultDownloadTimeout).
	MaxDownload     int64
	DownloadTimeout time.Duration
	// TempDir receives downloads ("" for the system's temporary
	// directory).
	TempDir string
	// Downloaded, when set, is called with each file's bytes once it is
	// downloaded; Failed with each fetch that failed (not a file the
	// store lacks): for a service's metrics.
	Downloaded func(bytes int64)
	Failed     func()
}

// Defaults of a Config's limits.
const (
	DefaultMaxDownload     = 4 << 30
	DefaultDownloadTimeout = 5 * time.Minute
)

// Source is a store read through a layout. It is a symstore.Source; Open
// gives one kind of file, as the derived-index cache asks.
type Source struct {
	cfg Config
}

// New makes a Source.
func New(cfg Config) *Source {
	if cfg.MaxDownload <= 0 {
		cfg.MaxDownload = DefaultMaxDownload
	}
	if cfg.DownloadTimeout <= 0 {
		cfg.DownloadTimeout = DefaultDownloadTimeout
	}
	return &Source{cfg: cfg}
}

// Name is the source's name.
func (s *Source) Name() string { return s.cfg.Name }

// Store is the store the source reads.
func (s *Source) Store() objstore.Store { return s.cfg.Store }

// MaxDownload bounds a file fetched from the source; DownloadTimeout a
// fetch.
func (s *Source) MaxDownload() int64 { return s.cfg.MaxDownload }

// DownloadTimeout bounds a fetch from the source.
func (s *Source) DownloadTimeout() time.Duration { return s.cfg.DownloadTimeout }

// Keys are the keys at which the layout keeps the file of a kind for the
// UUID, most likely first (see LayoutPaths).
func (s *Source) Keys(id uuid.UUID, kind Kind, name string) []string {
	return LayoutPaths(s.cfg.Layout, id, kind, name)
}

// File is a symbol file opened from a source: a local file, readable at
// any offset, of known size. Close releases it, and deletes a download.
type File struct {
	*os.File
	Size int64
	// Location says where the file was found: a path, a URL.
	Location string
	// Key and Tag are the file's key in its store and its tag there
	// (objstore.Store.Stat), from the answer that gave the file.
	Key, Tag string
	temp     bool
}

// Close closes the file and removes it when it was a download.
func (f *File) Close() error {
	err := f.File.Close()
	if f.temp {
		os.Remove(f.File.Name())
	}
	return err
}

// Downloaded reports whether the file is a download, which Close deletes,
// rather than the store's own file read in place.
func (f *File) Downloaded() bool { return f.temp }

// Keep moves a download to path, where Close leaves it; it fails for a
// file read in place.
func (f *File) Keep(path string) error {
	if !f.temp {
		return fmt.Errorf("%s: not a download", f.Location)
	}
	if err := os.Rename(f.File.Name(), path); err != nil {
		return err
	}
	f.temp = false
	return nil
}

// Open returns the file of one kind for the UUID: a directory's file in
// place, any other downloaded, within the source's size and time limits.
// name is the image's file name when known, for layouts that need it. A
// file the store lacks is lookup.ErrNotFound.
func (s *Source) Open(ctx context.Context, id uuid.UUID, kind Kind, name string) (*File, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.DownloadTimeout)
	defer cancel()
	for _, key := range s.Keys(id, kind, name) {
		f, err := s.openKey(ctx, key, kind)
		if errors.Is(err, lookup.ErrNotFound) {
			continue
		}
		if err != nil {
			if s.cfg.Failed != nil {
				s.cfg.Failed()
			}
			return nil, fmt.Errorf("source %s: %s: %w", s.cfg.Name, s.cfg.Store.Describe(key), err)
		}
		f.Key = key
		return f, nil
	}
	return nil, fmt.Errorf("source %s: %s of %s: %w", s.cfg.Name, kind, id, lookup.ErrNotFound)
}

// openKey opens one key: a directory's file in place, anything else
// downloaded into a temporary file.
func (s *Source) openKey(ctx context.Context, key string, kind Kind) (*File, error) {
	if d, ok := s.cfg.Store.(objstore.Dir); ok {
		f, st, err := d.Open(key)
		if err != nil {
			return nil, err
		}
		sf := &File{File: f, Size: st.Size(), Location: f.Name(), Tag: objstore.FileTag(st)}
		if kind == KindBreakpad && !strings.HasSuffix(f.Name(), ".sym") {
			// The symbol loader tells a .sym file by its extension: give
			// it one through a link.
			return linkSym(sf, s.cfg.TempDir)
		}
		return sf, nil
	}
	r, size, err := s.cfg.Store.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if size > s.cfg.MaxDownload {
		return nil, fmt.Errorf("%d bytes, above the download limit of %d", size, s.cfg.MaxDownload)
	}
	// The symbol loader tells a .sym file by its extension.
	pattern := "fetch-*"
	if kind == KindBreakpad {
		pattern += ".sym"
	}
	f, err := os.CreateTemp(s.cfg.TempDir, pattern)
	if err != nil {
		return nil, err
	}
	n, err := objstore.CopyAtMost(ctx, f, r, s.cfg.MaxDownload)
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	if s.cfg.Downloaded != nil {
		s.cfg.Downloaded(n)
	}
	return &File{File: f, Size: n, Location: s.cfg.Store.Describe(key), temp: true, Tag: objstore.TagOf(r)}, nil
}

// Write writes a file into the store at the layout's first key for the
// kind, and says where it went.
func (s *Source) Write(ctx context.Context, id uuid.UUID, kind Kind, name string, r io.Reader, size int64) (string, error) {
	keys := s.Keys(id, kind, name)
	if len(keys) == 0 {
		return "", fmt.Errorf("source %s: layout %s has no place for a %s file", s.cfg.Name, s.cfg.Layout.Type, kind)
	}
	return s.cfg.Store.Describe(keys[0]), s.cfg.Store.Put(ctx, keys[0], r, size, false)
}

// OpenSymbols implements symstore.Source: the UUID's files of every kind
// the layout has a place for, dSYM first. want.Name, the image's file
// name, is what the Breakpad layout (<name>/<ID>/<name>.sym) and the
// ssqp layout's binaries are found by; without it those layouts have no
// place to look, and a miss is symstore.ErrNeedName. The name is
// reduced to a safe base name (SafeName) before it goes into a path. A
// fetch that failed is an error only when no file was found.
func (s *Source) OpenSymbols(ctx context.Context, want symstore.Want) ([]symstore.SymbolFile, error) {
	id := want.UUID
	var out []symstore.SymbolFile
	var errs []error
	for _, kind := range Kinds {
		f, err := s.Open(ctx, id, kind, want.Name)
		if errors.Is(err, lookup.ErrNotFound) {
			continue
		}
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, symstore.SymbolFile{Name: f.Location, ReaderAt: f.File, Size: f.Size, Closer: f})
	}
	if len(out) == 0 {
		if len(errs) > 0 {
			return nil, errors.Join(errs...)
		}
		switch {
		case want.Name == "" && s.needsName():
			return nil, fmt.Errorf("%s in source %s (its %s layout finds some files only by the image's name, and none was given): %w", id, s.cfg.Name, s.cfg.Layout.Type, symstore.ErrNeedName)
		case want.Name != "" && SafeName(want.Name) == "" && s.needsName():
			return nil, fmt.Errorf("%w %s in source %s: the image's name %q is not one a path may hold", symstore.ErrNoSymbols, id, s.cfg.Name, want.Name)
		}
		return nil, fmt.Errorf("%w %s in source %s", symstore.ErrNoSymbols, id, s.cfg.Name)
	}
	return out, nil
}

// needsName reports whether the layout has a kind of file it finds only
// by the image's name.
func (s *Source) needsName() bool {
	var u uuid.UUID
	for _, kind := range Kinds {
		if len(s.Keys(u, kind, "")) == 0 && len(s.Keys(u, kind, "name")) > 0 {
			return true
		}
	}
	return false
}

// linkSym reopens a Breakpad file through a symbolic link named *.sym in
// dir; closing the File removes the link.
func linkSym(sf *File, dir string) (*File, error) {
	defer sf.File.Close()
	tmp, err := os.CreateTemp(dir, "link-*.sym")
	if err != nil {
		return nil, err
	}
	name := tmp.Name()
	tmp.Close()
	os.Remove(name)
	abs, err := filepath.Abs(sf.File.Name())
	if err != nil {
		return nil, err
	}
	if err := os.Symlink(abs, name); err != nil {
		return nil, err
	}
	f, err := os.Open(name)
	if err != nil {
		os.Remove(name)
		return nil, err
	}
	return &File{File: f, Size: sf.Size, Location: sf.Location, Key: sf.Key, Tag: sf.Tag, temp: true}, nil
}

var _ symstore.Source = (*Source)(nil)
