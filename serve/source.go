package serve

import (
	"context"
	"errors"
	"fmt"
	"github.com/stackimage/stackimage/symstore/objstore"
	"io"
	"os"
	"path/filepath"
	"strings"

	notfound "github.com/stackimage/stackimage/lookup"
	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/uuid"
)

// A Source finds symbol files by UUID. Open returns the file of one kind
// for the UUID as an opened local file with its size (a remote file is
// downloaded first, within the source's size and time limits), or an error
// wrapping lookup.ErrNotFound. name is the image's file name when known,
// for layouts that need it.
type Source interface {
	Name() string
	Open(ctx context.Context, id uuid.UUID, kind FileKind, name string) (*SymbolFile, error)
}

// SymbolFile is a symbol file opened from a source: readable at any
// offset, of known size. Close releases it (and deletes a download).
type SymbolFile struct {
	*os.File
	Size int64
	// Location says where the file was found, for module candidates.
	Location string
	temp     bool
	// key and tag are the file's key in its store and its tag there
	// (objstore.Store.Stat), from the answer that gave the file: what an
	// index records of its inputs.
	key, tag string
}

// Close closes the file and removes it when it was a download.
func (f *SymbolFile) Close() error {
	err := f.File.Close()
	if f.temp {
		os.Remove(f.File.Name())
	}
	return err
}

// source is one configured source: an object store read through a
// layout, or a directory scanned at start (layout "scan"), whose files are
// found by symstore.Symbols rather than by path.
type source struct {
	cfg     SourceConfig
	store   objstore.Store    // nil for a scanned directory
	scanned *symstore.Symbols // a scanned directory's index
	tmpDir  string
	metrics *metrics
}

// newSource opens a configured source. maxConns bounds its connections
// to a remote store (limits.max_fetches): lookups beyond it wait.
func newSource(ctx context.Context, cfg SourceConfig, tmpDir string, m *metrics, maxConns int) (*source, error) {
	s := &source{cfg: cfg, tmpDir: tmpDir, metrics: m}
	switch cfg.Type {
	case "filesystem":
		if cfg.Layout.Type == "scan" {
			s.scanned = symstore.NewSymbols()
			if err := s.scanned.AddDir(ctx, cfg.Path); err != nil {
				return nil, fmt.Errorf("source %s: %w", cfg.Name, err)
			}
			return s, nil
		}
		if err := os.MkdirAll(cfg.Path, 0o755); err != nil {
			return nil, fmt.Errorf("source %s: %w", cfg.Name, err)
		}
		s.store = objstore.Dir{Root: cfg.Path}
	case "http":
		h, err := objstore.NewHTTP(objstore.HTTPConfig{URL: cfg.URL, Headers: cfg.Headers, MaxConns: maxConns})
		if err != nil {
			return nil, fmt.Errorf("source %s: %w", cfg.Name, err)
		}
		s.store = h
	case "s3":
		b, err := objstore.NewS3(objstore.S3Config{Endpoint: cfg.Endpoint, Bucket: cfg.Bucket, Prefix: cfg.Prefix,
			Region: cfg.Region, AccessKey: cfg.AccessKey, SecretKey: cfg.SecretKey, Secure: cfg.Secure, MaxConns: maxConns})
		if err != nil {
			return nil, fmt.Errorf("source %s: %w", cfg.Name, err)
		}
		s.store = b
	}
	return s, nil
}

func (s *source) Name() string { return s.cfg.Name }

// Open implements Source for sources with a layout; a scanned directory
// answers through entry instead.
func (s *source) Open(ctx context.Context, id uuid.UUID, kind FileKind, name string) (*SymbolFile, error) {
	if s.store == nil {
		return nil, fmt.Errorf("source %s: %w", s.cfg.Name, notfound.ErrNotFound)
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.DownloadTimeout)
	defer cancel()
	for _, key := range layoutPaths(s.cfg.Layout, id, kind, name) {
		f, err := s.openKey(ctx, key, kind, name)
		if errors.Is(err, notfound.ErrNotFound) {
			continue
		}
		if err != nil {
			s.metrics.sourceErrors.WithLabelValues(s.cfg.Name).Inc()
			return nil, fmt.Errorf("source %s: %s: %w", s.cfg.Name, s.store.Describe(key), err)
		}
		f.key = key
		return f, nil
	}
	return nil, fmt.Errorf("source %s: %s of %s: %w", s.cfg.Name, kind, id, notfound.ErrNotFound)
}

// openKey opens one key: a directory's file in place, anything else
// downloaded into a temporary file of the cache.
func (s *source) openKey(ctx context.Context, key string, kind FileKind, name string) (*SymbolFile, error) {
	if d, ok := s.store.(objstore.Dir); ok {
		f, st, err := d.Open(key)
		if err != nil {
			return nil, err
		}
		sf := &SymbolFile{File: f, Size: st.Size(), Location: f.Name(), tag: objstore.FileTag(st)}
		if kind == KindBreakpad && !strings.HasSuffix(f.Name(), ".sym") {
			// The symbol loader tells a .sym file by its extension: give
			// it one through a link in the cache.
			return linkSym(sf, s.tmpDir)
		}
		return sf, nil
	}
	r, size, err := s.store.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	tag := objstore.TagOf(r)
	if size > int64(s.cfg.MaxDownload) {
		return nil, fmt.Errorf("%d bytes, above the download limit of %d", size, s.cfg.MaxDownload)
	}
	// The symbol loader tells a .sym file by its extension.
	pattern := "fetch-*"
	if kind == KindBreakpad {
		pattern += ".sym"
	}
	f, err := os.CreateTemp(s.tmpDir, pattern)
	if err != nil {
		return nil, err
	}
	n, err := objstore.CopyAtMost(ctx, f, r, int64(s.cfg.MaxDownload))
	if err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	s.metrics.downloads.WithLabelValues(s.cfg.Name).Inc()
	s.metrics.downloadBytes.WithLabelValues(s.cfg.Name).Add(float64(n))
	return &SymbolFile{File: f, Size: n, Location: s.store.Describe(key), temp: true, tag: tag}, nil
}

// put writes a file into the source's store at the layout's first path
// for the kind.
func (s *source) put(ctx context.Context, id uuid.UUID, kind FileKind, name string, r io.Reader, size int64) (string, error) {
	if s.store == nil {
		return "", fmt.Errorf("source %s cannot be written", s.cfg.Name)
	}
	keys := layoutPaths(s.cfg.Layout, id, kind, name)
	if len(keys) == 0 {
		return "", fmt.Errorf("source %s: layout %s has no place for a %s file", s.cfg.Name, s.cfg.Layout.Type, kind)
	}
	return s.store.Describe(keys[0]), s.store.Put(ctx, keys[0], r, size, false)
}

// linkSym reopens a Breakpad file through a symbolic link named *.sym in
// dir; closing the SymbolFile removes the link.
func linkSym(sf *SymbolFile, dir string) (*SymbolFile, error) {
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
	return &SymbolFile{File: f, Size: sf.Size, Location: sf.Location, temp: true}, nil
}
