// Package symbolize ties the toolkit together: it finds symbol files by
// UUID, walks captured threads and turns their addresses into names.
package symbolize

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/debuginfo"
	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/symtab"
)

// Mach-O and fat magic numbers in both byte orders, as the first four bytes of
// a file hold them. Checking them first keeps directory indexing cheap: most
// files in a symbols tree are not Mach-O.
var machoMagics = [][]byte{
	{0xfe, 0xed, 0xfa, 0xce}, {0xce, 0xfa, 0xed, 0xfe}, // MH_MAGIC
	{0xfe, 0xed, 0xfa, 0xcf}, {0xcf, 0xfa, 0xed, 0xfe}, // MH_MAGIC_64
	{0xca, 0xfe, 0xba, 0xbe}, {0xca, 0xfe, 0xba, 0xbf}, // FAT_MAGIC, FAT_MAGIC_64
}

// Symbols finds symbol files by UUID and keeps the opened ones. It is safe
// for concurrent use.
type Symbols struct {
	mu     sync.Mutex
	byUUID map[image.UUID][]string // paths of files holding a slice with the UUID
	loaded map[image.UUID]*Entry
	// noUUID indexes files with a slice that has no LC_UUID (object files,
	// old toolchains) by base name: for those the name is all there is.
	noUUID       map[string][]string
	loadedNoUUID map[string]*Entry
	// open holds the files behind loaded entries: their tables are read
	// lazily, so the files stay open until Close.
	open []*image.File
	// Skipped lists files that looked like Mach-O but could not be read,
	// with the reason, so that a user can see why a UUID was not found.
	Skipped []string
}

// Entry is everything known about one UUID: the images found for it and
// their indexed symbols.
type Entry struct {
	UUID image.UUID
	// Images holds one image per file found with the UUID, binaries before
	// dSYMs, in path order.
	Images []*image.Image
	Tables []*symtab.Table

	// NoDebugInfo makes the entry answer from symbol tables alone.
	NoDebugInfo bool

	namesMu   sync.Mutex
	demangled map[string]string // raw symbol table name → readable

	code   codeCache    // pages of the images' code, for the walker
	unwind unwindTables // the images' unwind tables, for the walker

	debugOnce  sync.Once
	debug      []*debuginfo.Index
	debugNames []string // the file each index was built from
	// DebugErrors says why an image's DWARF could not be used; its symbol
	// table still answers.
	DebugErrors []error
}

// NewSymbols returns an empty index.
func NewSymbols() *Symbols {
	return &Symbols{byUUID: map[image.UUID][]string{}, loaded: map[image.UUID]*Entry{},
		noUUID: map[string][]string{}, loadedNoUUID: map[string]*Entry{}}
}

// AddDir indexes every Mach-O file and dSYM bundle below dir by UUID. Paths
// in dumps are never trusted: only the UUID decides which file is used.
func (s *Symbols) AddDir(dir string) error {
	info, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("symbols: %w", err)
	}
	if !info.IsDir() {
		return s.AddFile(dir)
	}
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			// An unreadable subdirectory should not hide the rest of the tree.
			s.skip(path, err)
			return nil
		}
		if d.Type().IsRegular() {
			if err := s.AddFile(path); err != nil {
				s.skip(path, err)
			}
		}
		return nil
	})
}

func (s *Symbols) skip(path string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Skipped = append(s.Skipped, fmt.Sprintf("%s: %v", path, err))
}

// AddFile indexes one Mach-O file (thin or fat) by the UUIDs of its slices.
// A file that is not Mach-O is ignored.
func (s *Symbols) AddFile(path string) error {
	ok, err := looksLikeMachO(path)
	if err != nil || !ok {
		return err
	}
	f, err := image.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, im := range f.Images {
		if im.UUID.IsZero() {
			base := filepath.Base(path)
			if !contains(s.noUUID[base], path) {
				s.noUUID[base] = append(s.noUUID[base], path)
			}
			continue
		}
		paths := s.byUUID[im.UUID]
		if !contains(paths, path) {
			s.byUUID[im.UUID] = append(paths, path)
			delete(s.loaded, im.UUID) // a new file for the UUID: reload lazily
		}
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func looksLikeMachO(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	var magic [4]byte
	if _, err := io.ReadFull(f, magic[:]); err != nil {
		return false, nil // shorter than a header: not Mach-O
	}
	for _, m := range machoMagics {
		if bytes.Equal(magic[:], m) {
			return true, nil
		}
	}
	return false, nil
}

// Close closes the files opened for lookups and forgets what was loaded;
// the index itself stays, and later lookups open files again.
func (s *Symbols) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for _, f := range s.open {
		if err := f.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	s.open = nil
	s.loaded = map[image.UUID]*Entry{}
	s.loadedNoUUID = map[string]*Entry{}
	return errors.Join(errs...)
}

// UUIDs returns the indexed UUIDs, sorted.
func (s *Symbols) UUIDs() []image.UUID {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []image.UUID
	for u := range s.byUUID {
		out = append(out, u)
	}
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i][:], out[j][:]) < 0 })
	return out
}

// Lookup returns the entry for the UUID, opening and indexing its files the
// first time. It returns nil when no file has the UUID.
func (s *Symbols) Lookup(u image.UUID) (*Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.loaded[u]; ok {
		return e, nil
	}
	paths := s.byUUID[u]
	if len(paths) == 0 {
		return nil, nil
	}
	e := &Entry{UUID: u}
	var errs []error
	for _, path := range sortBinariesFirst(paths) {
		f, err := image.Open(path)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		s.open = append(s.open, f)
		im, err := f.ByUUID(u)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		t, err := symtab.New(im)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", path, err))
			continue
		}
		e.Images = append(e.Images, im)
		e.Tables = append(e.Tables, t)
	}
	if len(e.Images) == 0 {
		return nil, fmt.Errorf("symbols for %s: %w", u, errors.Join(errs...))
	}
	s.loaded[u] = e
	return e, nil
}

// LookupNoUUID returns the entry for an image that has no UUID, found by
// its file's base name and architecture; nil when no such file was
// indexed. Only images without a UUID are matched this way: a name is a
// weaker key, and an image with a UUID must match it exactly.
func (s *Symbols) LookupNoUUID(name string, arch *archregs.Arch) (*Entry, error) {
	base := path.Base(strings.ReplaceAll(name, "\\", "/"))
	key := base
	if arch != nil {
		key += "\x00" + arch.Name
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.loadedNoUUID[key]; ok {
		return e, nil
	}
	var images []*image.Image
	for _, p := range s.noUUID[base] {
		f, err := image.Open(p)
		if err != nil {
			return nil, err
		}
		s.open = append(s.open, f)
		for _, im := range f.Images {
			if im.UUID.IsZero() && (arch == nil || im.Arch == arch) {
				images = append(images, im)
			}
		}
	}
	if len(images) == 0 {
		return nil, nil
	}
	e, err := NewEntry(images...)
	if err != nil {
		return nil, err
	}
	s.loadedNoUUID[key] = e
	return e, nil
}

// sortBinariesFirst orders paths so that binaries come before dSYM
// companions: a binary knows its function starts and exports, and the dSYM
// fills in what the binary's stripped symbol table lacks.
func sortBinariesFirst(paths []string) []string {
	out := append([]string(nil), paths...)
	sort.SliceStable(out, func(i, j int) bool {
		di, dj := isDSYMPath(out[i]), isDSYMPath(out[j])
		if di != dj {
			return !di
		}
		return out[i] < out[j]
	})
	return out
}

func isDSYMPath(p string) bool {
	return strings.Contains(p, ".dSYM"+string(filepath.Separator)) || strings.Contains(p, ".dSYM/")
}

// NewEntry indexes images the caller opened itself, such as the one file
// given to atos; they need not carry a UUID.
func NewEntry(images ...*image.Image) (*Entry, error) {
	e := &Entry{}
	for _, im := range images {
		t, err := symtab.New(im)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", im.Name, err)
		}
		e.UUID = im.UUID
		e.Images = append(e.Images, im)
		e.Tables = append(e.Tables, t)
	}
	return e, nil
}

// Image returns the image to take segment layout from: the first file's.
func (e *Entry) Image() *image.Image { return e.Images[0] }

// Symbol returns the best answer among the entry's tables for an unslid
// address: a name from a symbol table beats one from the export trie, which
// beats a bare function start; among equals the closest symbol wins.
func (e *Entry) Symbol(addr uint64) (symtab.Symbol, bool) {
	var best symtab.Symbol
	found := false
	for _, t := range e.Tables {
		sym, ok := t.Lookup(addr)
		if !ok {
			continue
		}
		if !found || better(sym, best) {
			best, found = sym, true
		}
	}
	return best, found
}

func better(a, b symtab.Symbol) bool {
	if a.Source != b.Source {
		return a.Source < b.Source // SourceSymtab < SourceExports < SourceFunctionStarts
	}
	return a.Addr > b.Addr
}

// Debug returns the DWARF indexes of the entry's images that have DWARF,
// building them on first use: most lookups of a dump touch few images.
func (e *Entry) Debug() []*debuginfo.Index {
	if e.NoDebugInfo {
		return nil
	}
	e.debugOnce.Do(func() {
		for _, im := range e.Images {
			secs, err := im.DWARFSectionsNamed(debuginfo.SectionNames...)
			if err != nil {
				e.DebugErrors = append(e.DebugErrors, fmt.Errorf("%s: %w", im.Name, err))
				continue
			}
			if len(secs) == 0 {
				continue
			}
			ix, err := debuginfo.New(secs)
			if err != nil {
				e.DebugErrors = append(e.DebugErrors, fmt.Errorf("%s: DWARF: %w", im.Name, err))
				continue
			}
			e.debug = append(e.debug, ix)
			e.debugNames = append(e.debugNames, im.Name)
		}
	})
	return e.debug
}

// Source returns the source-level frames at an unslid address, innermost
// first, from the first of the entry's DWARF indexes that knows it.
func (e *Entry) Source(addr uint64) []debuginfo.Frame {
	for _, ix := range e.Debug() {
		if frames, ok := ix.Lookup(addr); ok {
			return frames
		}
	}
	return nil
}
