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
	"sync/atomic"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/debuginfo"
	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/symindex"
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
	// indexes holds the paths of symindex files by UUID (symindex.go).
	indexes map[image.UUID][]string
	// open holds the files behind loaded entries: their tables are read
	// lazily, so the files stay open until Close.
	open []*image.File
	// Skipped lists what AddDir and AddFile left out, with the reason, so
	// that a user can see why a UUID was not found: files that looked like
	// Mach-O but could not be read, unreadable slices of fat files, and,
	// below a directory, special files, broken links, link loops and
	// unreadable directories.
	Skipped []string
	// warnings lists what the files opened by Lookup could not give.
	warnings []string
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

	// stored answers Symbol and Source when the entry comes from an index
	// file (symindex.go).
	stored *symindex.Index

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

	// symbolWarnings says which parts of the images' symbol tables were
	// damaged and left out.
	symbolWarnings []string
	debugDone      atomic.Bool // Debug has run: debug and DebugErrors are final
}

// NewSymbols returns an empty index.
func NewSymbols() *Symbols {
	return &Symbols{byUUID: map[image.UUID][]string{}, loaded: map[image.UUID]*Entry{},
		noUUID: map[string][]string{}, loadedNoUUID: map[string]*Entry{}}
}

// AddDir indexes every Mach-O file and dSYM bundle below dir by UUID; dir
// may also name one file. Paths in dumps are never trusted: only the UUID
// decides which file is used.
//
// Symbolic links are followed, to directories and to files, each directory
// and file indexed once however many links lead to it (by its path with
// links resolved), so that a link loop ends. What is left out below dir (a
// loop, a broken link, a FIFO or device, an unreadable directory or file)
// is listed in Skipped with the reason. dir itself must be a directory or a
// regular file: anything else is refused before it is opened.
func (s *Symbols) AddDir(dir string) error {
	info, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("symbols: %w", err)
	}
	switch {
	case info.Mode().IsRegular():
		return s.AddFile(dir)
	case !info.IsDir():
		return fmt.Errorf("symbols: %s: not a regular file or directory (%s)", dir, image.FileKind(info.Mode()))
	}
	// Each directory and file is keyed by its path with links resolved:
	// EvalSymlinks for the root and for what a link leads to, the parent's
	// resolved path and the name otherwise (no system call per file).
	type place struct{ path, real string }
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return fmt.Errorf("symbols: %w", err)
	}
	seen := map[string]string{} // resolved path → the path it was first found at
	stack := []place{{dir, root}}
	for len(stack) > 0 {
		d := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if !s.firstVisit(seen, d.path, d.real, "directory") {
			continue
		}
		entries, err := os.ReadDir(d.path)
		if err != nil {
			// An unreadable directory should not hide the rest of the
			// tree; the entries read before the error are kept.
			s.skip(d.path, err)
		}
		// Pushed in reverse, popped in name order.
		for i := len(entries) - 1; i >= 0; i-- {
			p := place{filepath.Join(d.path, entries[i].Name()), filepath.Join(d.real, entries[i].Name())}
			mode := entries[i].Type()
			if mode&fs.ModeSymlink != 0 {
				info, err := os.Stat(p.path)
				if err != nil {
					s.skip(p.path, fmt.Errorf("broken symbolic link: %w", err))
					continue
				}
				if p.real, err = filepath.EvalSymlinks(p.path); err != nil {
					s.skip(p.path, err)
					continue
				}
				mode = info.Mode().Type()
			}
			switch {
			case mode.IsDir():
				stack = append(stack, p)
			case mode.IsRegular():
				if !s.firstVisit(seen, p.path, p.real, "file") {
					continue
				}
				if err := s.AddFile(p.path); err != nil {
					s.skip(p.path, err)
				}
			default:
				s.skip(p.path, fmt.Errorf("not a regular file (%s)", image.FileKind(mode)))
			}
		}
	}
	return nil
}

// firstVisit reports whether a path, whose resolved form is real, is met
// for the first time; a second meeting is listed in Skipped.
func (s *Symbols) firstVisit(seen map[string]string, path, real, kind string) bool {
	if first, ok := seen[real]; ok {
		s.skip(path, fmt.Errorf("%s already indexed as %s (a symbolic link loop, or two links to one place)", kind, first))
		return false
	}
	seen[real] = path
	return true
}

func (s *Symbols) skip(path string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.Skipped = append(s.Skipped, fmt.Sprintf("%s: %v", path, err))
}

// AddFile indexes one Mach-O file (thin or fat) by the UUIDs of its slices.
// A file that is not Mach-O is ignored; a path that is not a regular file
// (a FIFO, a device) is an error, found without opening it. Slices of a
// fat file that cannot be read are listed in Skipped.
func (s *Symbols) AddFile(path string) error {
	if err := image.CheckRegular(path); err != nil {
		return fmt.Errorf("symbols: %w", err)
	}
	if s.addIndexFile(path) {
		return nil
	}
	ok, err := looksLikeMachO(path)
	if err != nil || !ok {
		return err
	}
	f, err := image.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	for _, err := range f.SliceErrors {
		s.skip(path, err)
	}
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
// first time. It returns nil when no file has the UUID, or none of them can
// be read. A damaged file never makes an error: it costs the parts that are
// damaged, or the file, and Warnings says which.
func (s *Symbols) Lookup(u image.UUID) (*Entry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.loaded[u]; ok {
		return e, nil
	}
	if e := s.lookupIndex(u); e != nil {
		s.loaded[u] = e
		return e, nil
	}
	paths := s.byUUID[u]
	if len(paths) == 0 {
		return nil, nil
	}
	var images []*image.Image
	for _, path := range sortBinariesFirst(paths) {
		f, err := image.Open(path)
		if err != nil {
			s.warnings = append(s.warnings, fmt.Sprintf("symbols for %s: %v", u, err))
			continue
		}
		s.open = append(s.open, f)
		im, err := f.ByUUID(u)
		if err != nil {
			s.warnings = append(s.warnings, fmt.Sprintf("symbols for %s: %v", u, err))
			continue
		}
		images = append(images, im)
	}
	if len(images) == 0 {
		return nil, nil
	}
	e, _ := NewEntry(images...)
	s.warnings = append(s.warnings, e.symbolWarnings...)
	s.loaded[u] = e
	return e, nil
}

// Warnings returns what the symbol files opened so far could not give:
// files that could not be opened when they were needed, and damaged parts
// of symbol tables, which were left out. It is safe for concurrent use.
func (s *Symbols) Warnings() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.warnings...)
}

// LookupNoUUID returns the entry for an image that has no UUID, found by
// its file's base name and architecture; nil when no such file was
// indexed or none can be read. Only images without a UUID are matched this
// way: a name is a weaker key, and an image with a UUID must match it
// exactly. As with Lookup, damage is a warning, never an error.
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
			s.warnings = append(s.warnings, fmt.Sprintf("symbols for %s: %v", base, err))
			continue
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
	e, _ := NewEntry(images...)
	s.warnings = append(s.warnings, e.symbolWarnings...)
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
// given to atos; they need not carry a UUID. A damaged symbol table costs
// its damaged parts, which Warnings lists; the error is always nil, and
// stays for compatibility.
func NewEntry(images ...*image.Image) (*Entry, error) {
	e := &Entry{}
	for _, im := range images {
		t, err := symtab.New(im)
		if err != nil {
			// Only a table too large to index fails: answer without it.
			e.symbolWarnings = append(e.symbolWarnings, fmt.Sprintf("%s: symbols left out: %v", im.Name, err))
			t, _ = symtab.NewFromParts(image.RawSymtab{}, nil, nil, nil)
		}
		for _, w := range t.Warnings() {
			e.symbolWarnings = append(e.symbolWarnings, fmt.Sprintf("%s: %v", im.Name, w))
		}
		e.UUID = im.UUID
		e.Images = append(e.Images, im)
		e.Tables = append(e.Tables, t)
	}
	return e, nil
}

// Warnings returns what the entry's files could not give: damaged parts of
// their symbol tables, which were left out, and, once Debug has run, DWARF
// that could not be used or was read only in part.
func (e *Entry) Warnings() []string {
	out := append([]string(nil), e.symbolWarnings...)
	if !e.debugDone.Load() {
		return out
	}
	for _, err := range e.DebugErrors {
		out = append(out, err.Error())
	}
	for i, ix := range e.debug {
		for _, w := range ix.Warnings() {
			out = append(out, fmt.Sprintf("%s: DWARF: %s", e.debugNames[i], w))
		}
	}
	return out
}

// Image returns the image to take segment layout from: the first file's.
func (e *Entry) Image() *image.Image { return e.Images[0] }

// Symbol returns the best answer among the entry's tables for an unslid
// address: a name from a symbol table beats one from the export trie, which
// beats a bare function start; among equals the closest symbol wins.
func (e *Entry) Symbol(addr uint64) (symtab.Symbol, bool) {
	if e.stored != nil {
		return e.stored.Symbol(addr)
	}
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
			secs, err := im.DWARFSections()
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
		e.debugDone.Store(true)
	})
	return e.debug
}

// Source returns the source-level frames at an unslid address, innermost
// first, from the first of the entry's DWARF indexes that knows it.
func (e *Entry) Source(addr uint64) []debuginfo.Frame {
	if e.stored != nil {
		if e.NoDebugInfo {
			return nil
		}
		frames, _ := e.stored.Source(addr)
		return frames
	}
	for _, ix := range e.Debug() {
		if frames, ok := ix.Lookup(addr); ok {
			return frames
		}
	}
	return nil
}
