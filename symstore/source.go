package symstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/breakpadsym"
	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/internal/pathbase"
	"github.com/stackimage/stackimage/symindex"
	"github.com/stackimage/stackimage/uuid"
)

// A Source supplies symbol files by UUID, wherever they live: a directory
// (Symbols itself is one), an object store, an HTTP symbol server, memory.
// Symbols.AddSource makes Lookup consult it for UUIDs no file added by
// AddDir or AddFile has.
type Source interface {
	// OpenSymbols returns the symbol files for want.UUID: Mach-O binaries
	// or dSYM DWARF files, thin or fat, each holding a slice with the
	// UUID, Breakpad .sym files whose MODULE line has it, or an index
	// file (Entry.WriteIndex) of the UUID. An index names the frames;
	// Mach-O files given with it add what an index lacks, the unwind
	// tables and code bytes the walker reads, so a source that keeps
	// indexes returns the binary beside one. want.Arch and want.Name
	// are hints a source may ignore (the UUID decides). No files and an
	// error wrapping ErrNoSymbols mean the source has none; any other
	// error is reported as a warning and the next source is asked. ctx
	// bounds the work (a download, say).
	OpenSymbols(ctx context.Context, want Want) ([]SymbolFile, error)
}

// Want is what a Source is asked for: the files of one image.
type Want struct {
	// UUID is the image's UUID, which the files must have.
	UUID uuid.UUID
	// Arch, when not nil, is the architecture wanted.
	Arch *archregs.Arch
	// Name, when not "", is the image's file name, reduced to its base
	// name ("libfoo.dylib", not a path on the device): a store whose
	// paths hold the debug file's name (a Breakpad symbol server's
	// <name>/<ID>/<name>.sym) needs it to find the file. It comes from
	// a dump or a request, so a source builds no path from it without
	// checking it first.
	Name string
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

// SourceFunc makes a function of the UUID and architecture a Source, for
// a source that has no use for the image's name.
type SourceFunc func(ctx context.Context, id uuid.UUID, arch *archregs.Arch) ([]SymbolFile, error)

// OpenSymbols calls f with want's UUID and architecture.
func (f SourceFunc) OpenSymbols(ctx context.Context, want Want) ([]SymbolFile, error) {
	return f(ctx, want.UUID, want.Arch)
}

// MemorySource is a Source of symbol files held in memory, by UUID: for
// tests, and for a service that fetched them itself. Add files with Add;
// it is safe for concurrent use.
type MemorySource struct {
	mu    sync.Mutex
	files map[uuid.UUID][]memoryFile
}

type memoryFile struct {
	name string
	data []byte
}

// Add adds a symbol file (a Mach-O binary or dSYM DWARF file, or a
// Breakpad .sym file) under every UUID it has, and returns those UUIDs.
func (m *MemorySource) Add(name string, data []byte) ([]uuid.UUID, error) {
	if len(data) == 0 {
		return nil, fmt.Errorf("%s: empty symbol file", name)
	}
	ids, err := symbolFileUUIDs(name, data)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.files == nil {
		m.files = map[uuid.UUID][]memoryFile{}
	}
	for _, u := range ids {
		m.files[u] = append(m.files[u], memoryFile{name, data})
	}
	return ids, nil
}

// symbolFileUUIDs returns the UUIDs of a Mach-O file's slices, or of a
// Breakpad file's MODULE line.
func symbolFileUUIDs(name string, data []byte) ([]uuid.UUID, error) {
	if isBreakpadData(data) {
		u, err := breakpadUUID(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return []uuid.UUID{u}, nil
	}
	f, err := image.NewFile(bytes.NewReader(data), name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var ids []uuid.UUID
	for _, im := range f.Images {
		if !im.UUID.IsZero() {
			ids = append(ids, im.UUID)
		}
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("%s: no slice with a UUID", name)
	}
	return ids, nil
}

// isBreakpadData reports whether a file's first bytes are a Breakpad
// MODULE record.
func isBreakpadData(head []byte) bool { return bytes.HasPrefix(head, []byte("MODULE ")) }

// breakpadUUID reads a Breakpad file's MODULE line and returns the Mach-O
// UUID its debug id holds.
func breakpadUUID(r io.Reader) (uuid.UUID, error) {
	m, err := breakpadsym.ReadModuleLine(r)
	if err != nil {
		return uuid.UUID{}, fmt.Errorf("not a Breakpad symbol file: %w", err)
	}
	u, age, err := breakpadsym.ParseDebugID(m.DebugID)
	switch {
	case err != nil:
		return uuid.UUID{}, fmt.Errorf("Breakpad MODULE line: %w", err)
	case age != 0:
		return uuid.UUID{}, fmt.Errorf("Breakpad debug id %s has age %d: not a Mach-O UUID", m.DebugID, age)
	}
	return uuid.UUID(u), nil
}

// OpenSymbols returns the files added with the UUID.
func (m *MemorySource) OpenSymbols(ctx context.Context, want Want) ([]SymbolFile, error) {
	id := want.UUID
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

// OpenSymbols makes the index a Source: it returns the files AddDir and
// AddFile found with the UUID (Mach-O files on disk, zip archives'
// members, the files inside bundles, binaries first; then Breakpad .sym
// files, of a symbol store's layout too). Index files are not returned:
// only Lookup reads them.
func (s *Symbols) OpenSymbols(ctx context.Context, want Want) ([]SymbolFile, error) {
	id := want.UUID
	s.mu.Lock()
	paths := append([]string(nil), s.byUUID[id]...)
	members := s.side.membersOf(paths)
	symPaths := append([]string(nil), s.side.symFiles[id]...)
	s.mu.Unlock()
	var out []SymbolFile
	var errs []error
	for _, path := range append(sortBinariesFirst(paths), symPaths...) {
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

// lookupSources is lookup for a UUID only the sources may have, asking
// them under ctx for the image named name ("" when unknown). The caller
// holds s.mu, which lookupSources releases.
func (s *Symbols) lookupSources(ctx context.Context, u uuid.UUID, name string) (*Entry, []error) {
	sources := append([]Source(nil), s.sources...)
	ld := s.loads[u]
	var stale *load
	if ld != nil && name != "" && ld.name == "" && ld.missed.Load() && len(ld.needName) > 0 {
		// Asked without the name, some sources could not look (a
		// Breakpad symbol server's <name>/<ID>/<name>.sym): ask those
		// with it. The others had nothing already.
		sources = ld.needName
		stale, ld = ld, nil
		delete(s.loads, u)
	}
	if ld == nil {
		ld = newLoad()
		ld.name = name
		s.loads[u] = ld
	}
	ld.refs.acquire()
	s.mu.Unlock()
	if stale != nil {
		stale.refs.release()
	}
	ld.once.Do(func() {
		var images []*image.Image
		var sym *breakpadsym.File
		var symName string
		var stored *symindex.Index
		var warnings []string
		for _, src := range sources {
			if ctx.Err() != nil {
				// Cancelled: nothing is remembered of this UUID, so that
				// the next lookup asks the sources again.
				break
			}
			files, err := src.OpenSymbols(ctx, Want{UUID: u, Name: ld.name})
			if ld.name == "" && errors.Is(err, ErrNeedName) {
				ld.needName = append(ld.needName, src)
			}
			if err != nil && !errors.Is(err, ErrNoSymbols) {
				ld.errs = append(ld.errs, &SymbolFileError{UUID: u, Err: err})
				warnings = append(warnings, fmt.Sprintf("symbols for %s: %v", u, err))
			}
			for _, sf := range files {
				if sf.Closer != nil {
					ld.refs.add(sf.Closer)
				}
				head := readHead(sf, len(symindex.Magic))
				if string(head) == symindex.Magic {
					if stored == nil {
						ix, err := openSourceIndex(sf, u)
						if err != nil {
							ld.errs = append(ld.errs, &SymbolFileError{Path: sf.Name, UUID: u, Err: err})
							warnings = append(warnings, fmt.Sprintf("symbols for %s: index file skipped: %v", u, err))
							continue
						}
						ld.refs.add(ix)
						stored = ix
					}
					continue
				}
				if isBreakpadData(head) {
					if sym == nil {
						f, err := readBreakpad(sf)
						if err != nil {
							ld.errs = append(ld.errs, &SymbolFileError{Path: sf.Name, UUID: u, Err: err})
							warnings = append(warnings, fmt.Sprintf("symbols for %s: %v", u, err))
							continue
						}
						sym, symName = f, sf.Name
					}
					continue
				}
				im, err := imageOf(sf, u)
				if err != nil {
					ld.errs = append(ld.errs, &SymbolFileError{Path: sf.Name, UUID: u, Err: err})
					warnings = append(warnings, fmt.Sprintf("symbols for %s: %v", u, err))
					continue
				}
				images = append(images, im)
			}
			if len(images) > 0 || sym != nil || stored != nil {
				break
			}
		}
		s.finishLoad(ld, images, warnings)
		if stored != nil {
			// The index answers names and lines; the images, if any,
			// only what it lacks.
			if ld.entry == nil {
				ld.entry = entryFromIndex(stored)
				ld.entry.refs = ld.refs
			} else {
				ld.entry.stored = stored
			}
		}
		if sym != nil {
			if ld.entry == nil {
				ld.entry = &Entry{UUID: u, refs: ld.refs}
			}
			ld.entry.sym.setParsed(symName, sym)
		}
		ld.missed.Store(ld.entry == nil)
	})
	if ld.entry == nil {
		if ctx.Err() != nil {
			// Forget the load a cancel cut short, dropping the index's
			// hold on it, unless a later one replaced it already.
			s.mu.Lock()
			stale := s.loads[u] == ld
			if stale {
				delete(s.loads, u)
			}
			s.mu.Unlock()
			if stale {
				ld.refs.release()
			}
		}
		ld.refs.release()
		if name != "" && ld.name == "" && len(ld.needName) > 0 && ctx.Err() == nil {
			// This lookup joined one that was in flight without the
			// name, and some sources could not look without it: ask
			// them with it now. The load just ended is nameless and
			// missed, so lookupSources replaces it (or joins a named
			// one another lookup began): this retries once.
			s.mu.Lock()
			return s.lookupSources(ctx, u, name) // releases s.mu
		}
		return nil, ld.errs
	}
	return ld.entry, nil
}

// imageOf reads the slice with the UUID from a source's file.
func imageOf(sf SymbolFile, u uuid.UUID) (*image.Image, error) {
	if sf.ReaderAt == nil || sf.Size <= 0 {
		return nil, fmt.Errorf("%s: empty symbol file", sf.Name)
	}
	f, err := image.NewFile(io.NewSectionReader(sf.ReaderAt, 0, sf.Size), sf.Name)
	if err != nil {
		return nil, err
	}
	return f.ByUUID(u)
}

// maxSourceIndexFile bounds an index file a source gives other than as an
// *os.File, which is read into memory; a file on disk is mapped.
const maxSourceIndexFile = 2 << 30

// openSourceIndex opens an index file a source gave, for the UUID u: one
// on disk (an *os.File) is mapped by its name, any other read whole.
func openSourceIndex(sf SymbolFile, u uuid.UUID) (*symindex.Index, error) {
	if f, ok := sf.ReaderAt.(*os.File); ok {
		return symindex.OpenUUID(f.Name(), u)
	}
	if sf.Size > maxSourceIndexFile {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d an index file read into memory may have", sf.Name, sf.Size, int64(maxSourceIndexFile))
	}
	data := make([]byte, sf.Size)
	if n, err := sf.ReaderAt.ReadAt(data, 0); int64(n) != sf.Size {
		return nil, fmt.Errorf("%s: %w", sf.Name, err)
	}
	ix, err := symindex.Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", sf.Name, err)
	}
	if ix.UUID() != u {
		return nil, fmt.Errorf("%s: %w: file is for %s, want %s", sf.Name, symindex.ErrUUID, ix.UUID(), u)
	}
	return ix, nil
}

// readHead returns a file's first n bytes, or fewer.
func readHead(sf SymbolFile, n int) []byte {
	if sf.ReaderAt == nil {
		return nil
	}
	head := make([]byte, min(int64(n), max(sf.Size, 0)))
	k, _ := sf.ReaderAt.ReadAt(head, 0)
	return head[:k]
}

// maxSourceSymFile bounds a Breakpad file read from a source: it is
// parsed from memory. The largest real ones (a browser's) are a few
// hundred MB.
const maxSourceSymFile = 2 << 30

// readBreakpad reads and parses a Breakpad file a source gave.
func readBreakpad(sf SymbolFile) (*breakpadsym.File, error) {
	if sf.Size > maxSourceSymFile {
		return nil, fmt.Errorf("%s: %d bytes, more than the %d a Breakpad file may have", sf.Name, sf.Size, int64(maxSourceSymFile))
	}
	data := make([]byte, sf.Size)
	if n, err := sf.ReaderAt.ReadAt(data, 0); int64(n) != sf.Size {
		return nil, fmt.Errorf("%s: %w", sf.Name, err)
	}
	return breakpadsym.Parse(data)
}

// setParsed gives the source a .sym file parsed already: breakpad
// answers from it without reading a path.
func (b *breakpadSource) setParsed(name string, f *breakpadsym.File) {
	b.paths = []string{name}
	b.once.Do(func() { b.file = f })
	b.done.Store(true)
}

// LookupContext is Lookup with a context: the sources (AddSource) are
// asked under ctx, and a ctx done before the lookup returns its error.
// Files on disk are opened as Lookup opens them, and a miss is
// lookup.ErrNotFound as Lookup's is. A lookup a cancel cut short is not
// remembered: the next asks the sources again.
func (s *Symbols) LookupContext(ctx context.Context, u uuid.UUID) (*Entry, error) {
	return s.LookupImage(ctx, u, "")
}

// LookupImage is LookupContext for an image whose file name or path is
// known: the sources are told its base name (Want.Name), which a store
// keeping files under the debug file's name needs (a Breakpad symbol
// server's <name>/<ID>/<name>.sym). The files on disk are found by UUID
// alone, as by Lookup. After a miss asked without the name, the sources
// that could not look without it (ErrNeedName) are asked again with it,
// also by a lookup with the name that joined the nameless one while it
// was in flight; a UUID is otherwise asked of a source once, whatever
// the name.
func (s *Symbols) LookupImage(ctx context.Context, u uuid.UUID, name string) (*Entry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if name != "" {
		name = pathbase.Base(name)
	}
	e, errs := s.lookupContext(ctx, u, name)
	if e == nil {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return nil, notFound(u.String(), errs)
	}
	return e, nil
}
