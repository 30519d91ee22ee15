package symbolize

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/image"
)

// A Source supplies symbol files by UUID, wherever they live: a directory
// (Symbols itself is one), an object store, an HTTP symbol server, memory.
// Symbols.AddSource makes Lookup consult it for UUIDs no file added by
// AddDir or AddFile has.
type Source interface {
	// OpenSymbols returns the symbol files for the UUID: Mach-O binaries
	// or dSYM DWARF files, thin or fat, each holding a slice with the
	// UUID. arch, when not nil, is the architecture wanted; a source may
	// ignore it (the UUID decides). No files and an error wrapping
	// ErrNoSymbols mean the source has none; any other error is reported
	// as a warning and the next source is asked. ctx bounds the work
	// (a download, say).
	OpenSymbols(ctx context.Context, id image.UUID, arch *archregs.Arch) ([]SymbolFile, error)
}

// SymbolFile is one symbol file a Source supplies, read through an
// io.ReaderAt of Size bytes.
type SymbolFile struct {
	// Name names the file in messages: a path, a URL, a key.
	Name     string
	ReaderAt io.ReaderAt
	Size     int64
	// Closer, when set, is closed once no entry made from the file is
	// held any more (see Entry.Release and Symbols.Close).
	Closer io.Closer
}

// SourceFunc makes a function a Source.
type SourceFunc func(ctx context.Context, id image.UUID, arch *archregs.Arch) ([]SymbolFile, error)

// OpenSymbols calls f.
func (f SourceFunc) OpenSymbols(ctx context.Context, id image.UUID, arch *archregs.Arch) ([]SymbolFile, error) {
	return f(ctx, id, arch)
}

// MemorySource is a Source of symbol files held in memory, by UUID: for
// tests, and for a service that fetched them itself. Add files with Add;
// it is safe for concurrent use.
type MemorySource struct {
	mu    sync.Mutex
	files map[image.UUID][]memoryFile
}

type memoryFile struct {
	name string
	data []byte
}

// Add adds a symbol file (a Mach-O binary or dSYM DWARF file) under every
// UUID its slices have, and returns those UUIDs.
func (m *MemorySource) Add(name string, data []byte) ([]image.UUID, error) {
	if len(data) == 0 {
		return nil, fmt.Errorf("%s: empty symbol file", name)
	}
	f, err := image.NewFile(bytes.NewReader(data), name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.files == nil {
		m.files = map[image.UUID][]memoryFile{}
	}
	var ids []image.UUID
	for _, im := range f.Images {
		if im.UUID.IsZero() {
			continue
		}
		m.files[im.UUID] = append(m.files[im.UUID], memoryFile{name, data})
		ids = append(ids, im.UUID)
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("%s: no slice with a UUID", name)
	}
	return ids, nil
}

// OpenSymbols returns the files added with the UUID.
func (m *MemorySource) OpenSymbols(ctx context.Context, id image.UUID, _ *archregs.Arch) ([]SymbolFile, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []SymbolFile
	for _, f := range m.files[id] {
		out = append(out, SymbolFile{Name: f.name, ReaderAt: bytes.NewReader(f.data), Size: int64(len(f.data))})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w %s in memory", ErrNoSymbols, id)
	}
	return out, nil
}

// OpenSymbols makes the index a Source: it returns the Mach-O files
// AddDir and AddFile found with the UUID (files on disk, zip archives'
// members, the files inside bundles), binaries first. Breakpad .sym
// files and index files are not returned: only Lookup reads them.
func (s *Symbols) OpenSymbols(ctx context.Context, id image.UUID, _ *archregs.Arch) ([]SymbolFile, error) {
	s.mu.Lock()
	paths := append([]string(nil), s.byUUID[id]...)
	members := s.side.membersOf(paths)
	s.mu.Unlock()
	var out []SymbolFile
	var errs []error
	for _, path := range sortBinariesFirst(paths) {
		if err := ctx.Err(); err != nil {
			closeSymbolFiles(out)
			return nil, err
		}
		sf, err := openSourceFile(path, members)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, sf)
	}
	if len(out) == 0 {
		return nil, errors.Join(append([]error{fmt.Errorf("%w %s", ErrNoSymbols, id)}, errs...)...)
	}
	return out, nil
}

// openSourceFile opens an indexed path as a SymbolFile: a file on disk in
// place, a zip member inflated into memory.
func openSourceFile(path string, members map[string]zipMember) (SymbolFile, error) {
	if m, ok := members[path]; ok {
		data, err := readZipMember(m)
		if err != nil {
			return SymbolFile{}, fmt.Errorf("%s: %w", path, err)
		}
		return SymbolFile{Name: path, ReaderAt: bytes.NewReader(data), Size: int64(len(data))}, nil
	}
	if err := image.CheckRegular(path); err != nil {
		return SymbolFile{}, err
	}
	f, err := os.Open(path)
	if err != nil {
		return SymbolFile{}, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return SymbolFile{}, err
	}
	return SymbolFile{Name: path, ReaderAt: f, Size: st.Size(), Closer: f}, nil
}

func closeSymbolFiles(files []SymbolFile) {
	for _, f := range files {
		if f.Closer != nil {
			f.Closer.Close()
		}
	}
}

// AddSource adds a source of symbol files. Lookup asks the sources, in
// the order they were added, for a UUID that no file added by AddDir or
// AddFile has; the first with files for it answers, and what it gave is
// kept like any other entry. A UUID no source has is remembered too, and
// not asked for again until a file with it is added. UUIDs lists only
// files added by AddDir and AddFile.
func (s *Symbols) AddSource(src Source) {
	if f, ok := src.(SourceFunc); src == nil || ok && f == nil {
		return // nothing to ask
	}
	s.mu.Lock()
	s.sources = append(s.sources, src)
	s.mu.Unlock()
}

// lookupSources is lookup for a UUID only the sources may have. The
// caller holds s.mu, which lookupSources releases.
func (s *Symbols) lookupSources(u image.UUID) (*Entry, []error) {
	sources := append([]Source(nil), s.sources...)
	ld := s.loads[u]
	if ld == nil {
		ld = newLoad()
		s.loads[u] = ld
	}
	ld.refs.acquire()
	s.mu.Unlock()
	ld.once.Do(func() {
		var images []*image.Image
		var warnings []string
		for _, src := range sources {
			files, err := src.OpenSymbols(context.Background(), u, nil)
			if err != nil && !errors.Is(err, ErrNoSymbols) {
				ld.errs = append(ld.errs, &SymbolFileError{UUID: u, Err: err})
				warnings = append(warnings, fmt.Sprintf("symbols for %s: %v", u, err))
			}
			for _, sf := range files {
				if sf.Closer != nil {
					ld.refs.add(sf.Closer)
				}
				im, err := imageOf(sf, u)
				if err != nil {
					ld.errs = append(ld.errs, &SymbolFileError{Path: sf.Name, UUID: u, Err: err})
					warnings = append(warnings, fmt.Sprintf("symbols for %s: %v", u, err))
					continue
				}
				images = append(images, im)
			}
			if len(images) > 0 {
				break
			}
		}
		s.finishLoad(ld, images, warnings)
	})
	if ld.entry == nil {
		ld.refs.release()
		return nil, ld.errs
	}
	return ld.entry, nil
}

// imageOf reads the slice with the UUID from a source's file.
func imageOf(sf SymbolFile, u image.UUID) (*image.Image, error) {
	if sf.ReaderAt == nil || sf.Size <= 0 {
		return nil, fmt.Errorf("%s: empty symbol file", sf.Name)
	}
	f, err := image.NewFile(io.NewSectionReader(sf.ReaderAt, 0, sf.Size), sf.Name)
	if err != nil {
		return nil, err
	}
	return f.ByUUID(u)
}
