package symstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/debuginfo"
	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/internal/pathbase"
	"github.com/stackimage/stackimage/lookup"
	"github.com/stackimage/stackimage/symindex"
	"github.com/stackimage/stackimage/symtab"
	"github.com/stackimage/stackimage/uuid"
)

// Symbols finds symbol files by UUID and keeps the opened ones.
//
// A Symbols is safe for concurrent use, and meant to be shared: a service
// makes one, indexes its symbol directories, and symbolicates many dumps
// at once against it. Each UUID's files are opened and indexed once, by the
// first Lookup that needs them; a Lookup of another UUID meanwhile answers
// at once, and a Lookup of the same UUID waits for that one load and
// shares its entry.
//
// Entries are reference-counted (see Close and Entry.Release): closing a
// Symbols never breaks an entry a caller still holds.
type Symbols struct {
	mu     sync.Mutex
	byUUID map[uuid.UUID][]string // paths of files holding a slice with the UUID
	// noUUID indexes files with a slice that has no LC_UUID (object files,
	// old toolchains) by base name: for those the name is all there is.
	noUUID map[string][]string
	// indexes holds the paths of symindex files by UUID (symindex.go).
	indexes map[uuid.UUID][]string
	// loads holds the entries loaded or being loaded, by UUID and, for
	// images without one, by base name and architecture (noUUIDKey).
	loads       map[uuid.UUID]*load
	loadsNoUUID map[string]*load
	// Skipped lists what AddDir and AddFile left out, with the reason, so
	// that a user can see why a UUID was not found: files that looked like
	// Mach-O but could not be read, unreadable slices of fat files, and,
	// below a directory, special files, broken links, link loops and
	// unreadable directories. AddDir and AddFile append to it: read it
	// once they have returned, not while another goroutine adds files.
	Skipped []string
	// warnings lists what the files opened by Lookup could not give.
	warnings []string
	side     sideFiles // zip archives' members and .bcsymbolmap files (zip.go, bcsymbolmap.go)
	// sources are asked for UUIDs no indexed file has (source.go).
	sources []Source
}

// load is one key's entry, loaded once by the first Lookup that needs it.
// refs counts its holders: the index while the load is in loads, and each
// Lookup until its caller releases the entry. The files it opened are
// closed when the count reaches zero.
type load struct {
	once  sync.Once
	entry *Entry  // nil when no file could be read
	errs  []error // *SymbolFileError for each file that could not be read
	refs  *fileRefs
	// name is the image name the sources were asked with (Want.Name).
	// needName are the sources that could not look without it
	// (ErrNeedName), written before missed is set, once the sources had
	// nothing: a lookup with the name asks those again.
	name     string
	needName []Source
	missed   atomic.Bool
}

func newLoad() *load { return &load{refs: &fileRefs{n: 1}} }

// fileRefs counts the holders of an entry and owns the files behind it.
type fileRefs struct {
	mu    sync.Mutex
	n     int
	files []io.Closer // image files, index files
}

func (r *fileRefs) acquire() {
	r.mu.Lock()
	r.n++
	r.mu.Unlock()
}

// add makes f one of the files closed with the last reference.
func (r *fileRefs) add(f io.Closer) {
	r.mu.Lock()
	r.files = append(r.files, f)
	r.mu.Unlock()
}

// release drops one reference and closes the files when it was the last.
// Releasing more often than acquiring does nothing more.
func (r *fileRefs) release() error {
	r.mu.Lock()
	if r.n == 0 {
		r.mu.Unlock()
		return nil
	}
	r.n--
	var files []io.Closer
	if r.n == 0 {
		files, r.files = r.files, nil
	}
	r.mu.Unlock()
	var errs []error
	for _, f := range files {
		if err := f.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// testHookLoad, when set by a test, is called at the start of each load
// with its key (a UUID's string, or a base name), before any file is
// opened and without any lock held.
var testHookLoad func(key string)

// SymbolFileError reports a symbol file that could not be used: Path is the
// file, UUID the one looked up (zero when none was). It is a plain value,
// safe to share once returned.
type SymbolFileError struct {
	Path string
	UUID uuid.UUID
	Err  error
}

func (e *SymbolFileError) Error() string {
	msg := e.Err.Error()
	if !strings.Contains(msg, e.Path) {
		// The cause does not name the file (os errors do): say which.
		msg = e.Path + ": " + msg
	}
	if !e.UUID.IsZero() {
		return fmt.Sprintf("symbols for %s: %s", e.UUID, msg)
	}
	return "symbols: " + msg
}

func (e *SymbolFileError) Unwrap() error { return e.Err }

// ErrNotFound is lookup.ErrNotFound, the one "not found" of every Lookup
// and Resolve: Symbols.Lookup, LookupNoUUID and Resolve wrap it when no
// readable file has the UUID (or name), and SymbolMap.Resolve returns it
// for a name the map does not reach.
var ErrNotFound = lookup.ErrNotFound

// ErrNoSymbols is wrapped by the error of Lookup and Resolve for a UUID no
// indexed file has. errors.Is counts it as ErrNotFound too.
var ErrNoSymbols = lookup.NotFound("symbols: no symbol file with the UUID")

// ErrNeedName is wrapped by the error of a Source that could not look
// for the files because it was not told the image's name (Want.Name): a
// store whose paths hold the name, as a Breakpad symbol server's do. It
// wraps ErrNoSymbols. Symbols asks such a source again when the image is
// looked up with its name (LookupImage), and only such a source.
var ErrNeedName = fmt.Errorf("%w: the image's name is needed to find them", ErrNoSymbols)

// notFound is the error of Lookup and Resolve when no entry could be made
// for key: ErrNoSymbols when no file has it; when files have it but none
// could be read, their *SymbolFileErrors, which errors.Is also counts as
// ErrNotFound.
func notFound(key string, errs []error) error {
	if len(errs) == 0 {
		return fmt.Errorf("%w %s", ErrNoSymbols, key)
	}
	return &unreadableError{errors.Join(errs...)}
}

// unreadableError is the files' errors, and a miss.
type unreadableError struct{ files error }

func (e *unreadableError) Error() string   { return e.files.Error() }
func (e *unreadableError) Unwrap() []error { return []error{e.files, ErrNotFound} }

// Entry is everything known about one UUID: the images found for it and
// their indexed symbols.
//
// An Entry is safe for concurrent use once it is handed out: its lookups
// only read what NewEntry built, and what it builds lazily (DWARF indexes,
// unwind tables, code pages, demangled names) is built once under its own
// synchronization. NoDebugInfo is the one field to set, and only before the
// entry is shared. An entry from Symbols.Lookup holds a reference to its
// files until Release.
type Entry struct {
	UUID uuid.UUID
	// Images holds one image per file found with the UUID, binaries before
	// dSYMs, in path order.
	Images []*image.Image
	Tables []*symtab.Table

	// NoDebugInfo makes the entry answer from symbol tables alone. Set it
	// before the entry is used or shared.
	NoDebugInfo bool
	// SymbolMap restores the names a bitcode build hid; nil for none.
	SymbolMap *SymbolMap

	// refs counts the holders of the files behind the entry; nil for an
	// entry made by NewEntry, whose files are its caller's.
	refs *fileRefs

	// stored answers Symbol and Source when the entry comes from an index
	// file (symindex.go).
	stored *symindex.Index

	namesMu   sync.Mutex
	demangled map[string]string // raw symbol table name → readable

	code   codeCache      // pages of the images' code, for the walker
	unwind unwindTables   // the images' unwind tables, for the walker
	sym    breakpadSource // a Breakpad .sym file with the UUID (breakpad.go)

	// debug, debugNames and debugErrors are written once, by Debug's
	// once-body, before debugDone is set; they are read only after
	// debugOnce.Do or a true debugDone.Load, which order the reads after
	// the writes.
	debugOnce   sync.Once
	debug       []*debuginfo.Index
	debugNames  []string // the file each index was built from
	debugErrors []error  // why an image's DWARF could not be used
	debugDone   atomic.Bool

	// symbolWarnings says which parts of the images' symbol tables were
	// damaged and left out.
	symbolWarnings []string
}

// NewSymbols returns an empty index.
func NewSymbols() *Symbols {
	return &Symbols{byUUID: map[uuid.UUID][]string{}, loads: map[uuid.UUID]*load{},
		noUUID: map[string][]string{}, loadsNoUUID: map[string]*load{}}
}

// AddDir indexes every Mach-O file, dSYM bundle and Breakpad .sym file
// below dir by UUID (a symbol store's NAME/DEBUGID/NAME.sym too); dir may
// also name one file. Paths in dumps are never trusted: only the UUID
// decides which file is used.
//
// Symbolic links are followed, to directories and to files, each directory
// and file indexed once however many links lead to it (by its path with
// links resolved), so that a link loop ends. What is left out below dir (a
// loop, a broken link, a FIFO or device, an unreadable directory or file)
// is listed in Skipped with the reason. dir itself must be a directory or a
// regular file: anything else is refused before it is opened.
//
// ctx bounds the walk: once it ends, AddDir stops and returns its error
// (wrapped); what was indexed until then stays.
func (s *Symbols) AddDir(ctx context.Context, dir string) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("symbols: %s: %w", dir, err)
	}
	info, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("symbols: %w", err)
	}
	switch {
	case info.Mode().IsRegular():
		return s.AddFile(ctx, dir)
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
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("symbols: %s: stopped at %s: %w", dir, d.path, err)
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
				if err := s.AddFile(ctx, p.path); err != nil {
					if ctx.Err() != nil {
						return fmt.Errorf("symbols: %s: stopped at %s: %w", dir, p.path, ctx.Err())
					}
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

// AddFile indexes one Mach-O file (thin or fat) by the UUIDs of its slices,
// and a Breakpad .sym file by the UUID of its MODULE line (breakpad.go).
// Any other file is ignored; a path that is not a regular file
// (a FIFO, a device) is an error, found without opening it. Slices of a
// fat file that cannot be read are listed in Skipped. Errors are
// *SymbolFileError.
//
// A file added for a UUID already loaded makes the next Lookup load it
// again, with the new file; entries already handed out stay as they were.
// A file is not opened once ctx has ended: the error is then ctx's.
func (s *Symbols) AddFile(ctx context.Context, path string) error {
	if err := ctx.Err(); err != nil {
		return &SymbolFileError{Path: path, Err: err}
	}
	if err := image.CheckRegular(path); err != nil {
		return &SymbolFileError{Path: path, Err: err}
	}
	if handled, err := s.addSideFile(path); handled {
		return err
	}
	if s.addIndexFile(path) {
		return nil
	}
	if isSymPath(path) {
		return s.addSymFile(path)
	}
	ok, err := looksLikeMachO(path)
	if err != nil {
		return &SymbolFileError{Path: path, Err: err}
	}
	if !ok {
		return nil
	}
	f, err := image.Open(path)
	if err != nil {
		return &SymbolFileError{Path: path, Err: err}
	}
	defer f.Close()
	for _, err := range f.SliceErrors {
		s.skip(path, err)
	}
	var stale []*load
	s.mu.Lock()
	for _, im := range f.Images {
		if im.UUID.IsZero() {
			base := filepath.Base(path)
			if !contains(s.noUUID[base], path) {
				s.noUUID[base] = append(s.noUUID[base], path)
				for key, ld := range s.loadsNoUUID {
					if name, _, _ := strings.Cut(key, "\x00"); name == base {
						stale = append(stale, ld)
						delete(s.loadsNoUUID, key)
					}
				}
			}
			continue
		}
		paths := s.byUUID[im.UUID]
		if !contains(paths, path) {
			s.byUUID[im.UUID] = append(paths, path)
			if ld, ok := s.loads[im.UUID]; ok {
				// A new file for the UUID: reload lazily.
				stale = append(stale, ld)
				delete(s.loads, im.UUID)
			}
		}
	}
	s.mu.Unlock()
	for _, ld := range stale {
		ld.refs.release()
	}
	return nil
}

// forgetLoad drops the load of u, if any, so the next lookup loads u again
// with the files added since; the caller holds the lock, and releases the
// returned load's reference (nil when there was none) after unlocking.
func (s *Symbols) forgetLoad(u uuid.UUID) *load {
	ld, ok := s.loads[u]
	if !ok {
		return nil
	}
	delete(s.loads, u)
	return ld
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
	// Checking the magic first keeps directory indexing cheap: most files
	// in a symbols tree are not Mach-O.
	return image.Sniff(magic[:]) != image.KindUnknown, nil
}

// Close drops the index's hold on the entries it loaded and forgets them;
// the index of paths stays, and later lookups open files again.
//
// Entries are reference-counted: the files behind an entry are closed
// when its last holder lets go, the index (here) or a caller of Lookup
// (Entry.Release, or symbolize.Process.Close for the entries of a
// process). So Close never breaks a lookup, walk or symbolication still
// running; their files are closed when they finish. Close is safe to call at any time, and more than
// once.
func (s *Symbols) Close() error {
	s.mu.Lock()
	var held []*load
	for _, ld := range s.loads {
		held = append(held, ld)
	}
	for _, ld := range s.loadsNoUUID {
		held = append(held, ld)
	}
	s.loads = map[uuid.UUID]*load{}
	s.loadsNoUUID = map[string]*load{}
	s.mu.Unlock()
	var errs []error
	for _, ld := range held {
		if err := ld.refs.release(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// UUIDs returns the indexed UUIDs, sorted.
func (s *Symbols) UUIDs() []uuid.UUID {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []uuid.UUID
	for u := range s.byUUID {
		out = append(out, u)
	}
	for u := range s.side.symFiles {
		if _, ok := s.byUUID[u]; !ok {
			out = append(out, u)
		}
	}
	sort.Slice(out, func(i, j int) bool { return bytes.Compare(out[i][:], out[j][:]) < 0 })
	return out
}

// Lookup returns the entry for the UUID, opening and indexing its files the
// first time. When no entry can be made it is nil, and errors.Is(err,
// ErrNotFound) holds: the error wraps ErrNoSymbols when no file has the
// UUID, and joins the *SymbolFileError of each file when files have it but
// none can be read. A damaged file that can be read never makes an error:
// it costs the parts that are damaged, and Warnings says which.
//
// The UUID's files are loaded without holding up lookups of other UUIDs;
// concurrent lookups of one UUID share one load. The entry holds a
// reference to its files: call its Release when done with it, after which
// Close (now or later) closes them.
func (s *Symbols) Lookup(u uuid.UUID) (*Entry, error) {
	e, errs := s.lookup(u)
	if e == nil {
		return nil, notFound(u.String(), errs)
	}
	return e, nil
}

// lookup is Lookup, also returning why no entry could be made.
func (s *Symbols) lookup(u uuid.UUID) (*Entry, []error) {
	return s.lookupContext(context.Background(), u, "")
}

// lookupContext is lookup with the context the sources are asked under
// and the image's base name they are told ("" when unknown).
func (s *Symbols) lookupContext(ctx context.Context, u uuid.UUID, name string) (*Entry, []error) {
	s.mu.Lock()
	paths := s.byUUID[u]
	indexPaths := append([]string(nil), s.indexes[u]...)
	symPaths := append([]string(nil), s.side.symFiles[u]...)
	if len(paths) == 0 && len(indexPaths) == 0 && len(symPaths) == 0 {
		if len(s.sources) > 0 {
			return s.lookupSources(ctx, u, name) // releases s.mu
		}
		s.mu.Unlock()
		return nil, nil
	}
	ld := s.loads[u]
	if ld == nil {
		ld = newLoad()
		s.loads[u] = ld
	}
	// Taken while the index still holds its own reference, so the files
	// cannot be closed in between.
	ld.refs.acquire()
	paths = append([]string(nil), paths...)
	// What the load needs of the side indexes (zip members, symbol maps),
	// read while the lock is held.
	members := s.side.membersOf(paths)
	mapPath, hasMap := s.side.symbolMaps[u]
	s.mu.Unlock()

	ld.once.Do(func() {
		if testHookLoad != nil {
			testHookLoad(u.String())
		}
		// An index file answers first; a damaged one is skipped and the
		// symbol files answer.
		if e := s.entryFromIndexFiles(u, indexPaths, ld.refs); e != nil {
			ld.entry = e
			return
		}
		var images []*image.Image
		var warnings []string
		for _, path := range sortBinariesFirst(paths) {
			f, err := openSymbolFile(path, members)
			if err == nil {
				ld.refs.add(f)
				var im *image.Image
				if im, err = f.ByUUID(u); err == nil {
					images = append(images, im)
					continue
				}
			}
			ld.errs = append(ld.errs, &SymbolFileError{Path: path, UUID: u, Err: err})
			warnings = append(warnings, fmt.Sprintf("symbols for %s: %v", u, err))
		}
		s.finishLoad(ld, images, warnings)
		if len(symPaths) > 0 {
			s.attachSymFiles(ld, u, symPaths)
		}
		if ld.entry != nil && hasMap {
			if m, err := readSymbolMap(mapPath); err != nil {
				s.addWarnings(fmt.Sprintf("symbols for %s: %v", u, err))
			} else {
				ld.entry.SymbolMap = m
			}
		}
	})
	if ld.entry == nil {
		ld.refs.release()
		return nil, ld.errs
	}
	return ld.entry, nil
}

// finishLoad makes the load's entry from the images read (none when no
// file could be read) and records the warnings.
func (s *Symbols) finishLoad(ld *load, images []*image.Image, warnings []string) {
	if len(images) > 0 {
		ld.entry, _ = NewEntry(images...)
		ld.entry.refs = ld.refs
		warnings = append(warnings, ld.entry.symbolWarnings...)
	}
	s.addWarnings(warnings...)
}

// addWarnings records warnings; it takes the lock.
func (s *Symbols) addWarnings(warnings ...string) {
	s.mu.Lock()
	s.warnings = append(s.warnings, warnings...)
	s.mu.Unlock()
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
// its file's base name and architecture. When no such file was indexed or
// none can be read, the entry is nil and the error is as Lookup's. Only images without a UUID are matched this
// way: a name is a weaker key, and an image with a UUID must match it
// exactly. As with Lookup, damage is a warning, never an error, loads run
// without holding up other lookups, and the entry must be released.
func (s *Symbols) LookupNoUUID(name string, arch *archregs.Arch) (*Entry, error) {
	base := pathbase.Base(name)
	key := base
	if arch != nil {
		key += "\x00" + arch.Name
	}
	s.mu.Lock()
	paths := s.noUUID[base]
	if len(paths) == 0 {
		s.mu.Unlock()
		return nil, notFound(base, nil)
	}
	ld := s.loadsNoUUID[key]
	if ld == nil {
		ld = newLoad()
		s.loadsNoUUID[key] = ld
	}
	ld.refs.acquire()
	paths = append([]string(nil), paths...)
	members := s.side.membersOf(paths)
	s.mu.Unlock()

	ld.once.Do(func() {
		if testHookLoad != nil {
			testHookLoad(base)
		}
		var images []*image.Image
		var warnings []string
		for _, p := range paths {
			f, err := openSymbolFile(p, members)
			if err != nil {
				ld.errs = append(ld.errs, &SymbolFileError{Path: p, Err: err})
				warnings = append(warnings, fmt.Sprintf("symbols for %s: %v", base, err))
				continue
			}
			ld.refs.add(f)
			for _, im := range f.Images {
				if im.UUID.IsZero() && (arch == nil || im.Arch == arch) {
					images = append(images, im)
				}
			}
		}
		s.finishLoad(ld, images, warnings)
	})
	if ld.entry == nil {
		ld.refs.release()
		return nil, notFound(base, ld.errs)
	}
	return ld.entry, nil
}

// Resolve names an address of the image with the UUID, in one call: addr
// is unslid (as in the binary, where atos -l would take the load address
// away; for a UUID known only from a Breakpad .sym file, relative to the
// module's base, as the file's addresses are), and is looked up as it is, so pass a caller's return address
// minus one instruction (walker.CallerLookupAddress). It returns the frame
// at addr preceded by the functions inlined there, innermost first, as
// symbolize.Process.Frames does; Address and LookupAddress are addr, and
// ImageLoadAddress is the image's unslid __TEXT address; FoundBy is left
// zero. arch, when not nil, must be the architecture of the UUID's slice.
//
// When no entry can be made the error is as Lookup's (ErrNotFound holds);
// it is a *SymbolFileError when the slice is of another architecture. An address the image's symbols do not cover gives
// one frame without a symbol, not an error. Resolve is safe for concurrent
// use, and holds the entry only for the call.
func (s *Symbols) Resolve(u uuid.UUID, arch *archregs.Arch, addr uint64) ([]Frame, error) {
	e, errs := s.lookup(u)
	if e == nil {
		return nil, notFound(u.String(), errs)
	}
	defer e.Release()
	im := e.Image()
	if im == nil {
		// Only a .sym file: its addresses are module-relative, and an
		// unslid address has no known __TEXT to count from.
		f := Frame{Address: addr, LookupAddress: addr, ImageOffset: addr}
		if bf := e.breakpad(); bf != nil {
			f.Image = bf.Module.Name
		}
		return e.Resolve(f, addr, ResolveOptions{}), nil
	}
	if arch != nil && im.Arch != arch {
		return nil, &SymbolFileError{Path: im.Name, UUID: u,
			Err: fmt.Errorf("the slice is %s, not %s", im.ArchName(), arch.Name)}
	}
	f := Frame{Address: addr, LookupAddress: addr, Image: filepath.Base(im.Name), ImagePath: im.Name}
	if text, ok := im.TextSegment(); ok && addr >= text.Addr {
		f.ImageLoadAddress, f.ImageOffset = text.Addr, addr-text.Addr
	}
	return e.Resolve(f, addr, ResolveOptions{}), nil
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
// its damaged parts, which Warnings lists. The error is for no image, or
// a nil one.
func NewEntry(images ...*image.Image) (*Entry, error) {
	if len(images) == 0 {
		return nil, errors.New("symstore: NewEntry: no image")
	}
	for i, im := range images {
		if im == nil {
			return nil, fmt.Errorf("symstore: NewEntry: image %d is nil", i)
		}
	}
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

// Release drops the caller's hold on an entry from Symbols.Lookup or
// LookupNoUUID; when the Symbols was closed and this was the last holder,
// the entry's files are closed, and the entry must not be used again.
// Each Lookup is released once; an entry made by NewEntry has nothing to
// release (its files are the caller's), and Release does nothing.
func (e *Entry) Release() error {
	if e == nil || e.refs == nil {
		return nil
	}
	return e.refs.release()
}

// Warnings returns what the entry's files could not give: damaged parts of
// their symbol tables, which were left out; once a walk has used them,
// unwind tables left out because the file ends before them; and, once
// Debug has run, DWARF that could not be used or was read only in part.
func (e *Entry) Warnings() []string {
	out := append(append([]string(nil), e.symbolWarnings...), e.unwindWarnings()...)
	return append(out, e.debugWarnings()...)
}

// LazyWarnings returns what the parts of the entry built on first use
// could not give: unwind tables left out because their file ends before
// them, once a walk has used them, and DWARF that could not be used or was
// read only in part, once Debug has run. It is Warnings without the symbol
// tables' damage, which Symbols reports when it loads the entry.
func (e *Entry) LazyWarnings() []string {
	return append(e.unwindWarnings(), e.debugWarnings()...)
}

// FunctionOffset returns how far the unslid address lies past the start of
// its function, from the symbol tables, else, for an entry with only a
// Breakpad .sym file, from its FUNC records at moduleOffset (the address's
// offset from the load address, as .sym addresses count). An address in a
// section that holds no instructions (a table in __TEXT,__const, whose
// symbol the symbol table lists as it lists functions) lies in no
// function.
func (e *Entry) FunctionOffset(unslid, moduleOffset uint64) (uint64, bool) {
	if e.inDataSection(unslid) {
		return 0, false
	}
	if sym, ok := e.Symbol(unslid); ok {
		return sym.Offset, true
	}
	if bf := e.breakpad(); bf != nil && len(e.Images) == 0 {
		if start, ok := bf.FunctionStart(moduleOffset); ok && start <= moduleOffset {
			return moduleOffset - start, true
		}
	}
	return 0, false
}

// inDataSection reports whether the entry's symbol tables, or the index
// made of them, place the unslid address in a section that holds no
// instructions: the same section ranges either way, so a walk with a
// dSYM and one with its index refuse the same words.
func (e *Entry) inDataSection(unslid uint64) bool {
	if e.stored != nil && e.stored.InDataSection(unslid) {
		return true
	}
	for _, t := range e.Tables {
		if t.InDataSection(unslid) {
			return true
		}
	}
	return false
}

// KnowsFunctions reports whether the entry's symbol files list the image's
// functions, for FunctionOffset to answer: a symbol table (a binary's or
// a dSYM's), an index file, or, without a Mach-O file, a Breakpad file's
// FUNC and PUBLIC records.
func (e *Entry) KnowsFunctions() bool {
	if e.stored != nil {
		return true
	}
	for _, t := range e.Tables {
		if t.Len() > 0 {
			return true
		}
	}
	return len(e.Images) == 0 && e.breakpad() != nil
}

// debugWarnings returns what the entry's DWARF could not give, once Debug
// has run; nil before, or while it runs in another goroutine.
func (e *Entry) debugWarnings() []string {
	if !e.debugDone.Load() {
		return nil
	}
	out := e.sym.warnings()
	for _, err := range e.debugErrors {
		out = append(out, err.Error())
	}
	for i, ix := range e.debug {
		for _, w := range ix.Warnings() {
			out = append(out, fmt.Sprintf("%s: DWARF: %s", e.debugNames[i], w))
		}
	}
	return out
}

// DebugErrors says why an image's DWARF could not be used (its symbol
// table still answers): one error per image, once Debug has run; nil
// before.
func (e *Entry) DebugErrors() []error {
	if !e.debugDone.Load() {
		return nil
	}
	return append([]error(nil), e.debugErrors...)
}

// Image returns the image to take segment layout from: the first file's;
// nil for an entry known only from a Breakpad .sym file.
func (e *Entry) Image() *image.Image {
	if len(e.Images) == 0 {
		return nil
	}
	return e.Images[0]
}

// SymbolNamesPrintable reports whether every name Symbol can answer is
// printable ASCII, so that text output can show them without escaping.
// It is conservative: false for an entry read from an index file or with
// a SymbolMap (whose names are not in its tables), and see
// symtab.Table.NamesPrintable. The first call reads the string tables.
func (e *Entry) SymbolNamesPrintable() bool {
	if e.stored != nil || e.SymbolMap != nil {
		return false
	}
	for _, t := range e.Tables {
		if !t.NamesPrintable() {
			return false
		}
	}
	return true
}

// Symbol returns the best answer among the entry's tables for an unslid
// address: a real name beats a bitcode-hidden one ("__hidden#12_") at the
// same address, a name from a symbol table beats one from the export trie,
// which beats a bare function start; among equals the closest symbol
// wins. Hidden names the entry's SymbolMap knows are restored.
func (e *Entry) Symbol(addr uint64) (symtab.Symbol, bool) {
	if e.stored != nil {
		return e.stored.Symbol(addr)
	}
	if len(e.Tables) == 1 && e.SymbolMap == nil {
		// Nearly every entry: one table and no hidden names. This is
		// atos's path for each address of a batch.
		sym, err := e.Tables[0].Lookup(addr)
		return sym, err == nil
	}
	var best symtab.Symbol
	found := false
	for _, t := range e.Tables {
		sym, err := t.Lookup(addr)
		if err != nil {
			continue
		}
		if !found || better(sym, best) {
			best, found = sym, true
		}
	}
	return e.unhide(best), found
}

// SymbolBatch answers addrs[k] as Symbol does, into syms[k] and found[k],
// for k below the shortest of the three lengths, which it returns. An
// entry of one symbol table, nearly every entry, answers through
// symtab.Table.LookupBatch, which overlaps the lookups' waits for memory:
// on a table of a million symbols it is about three times as fast as a
// Symbol call per address (docs/bench.md). A service symbolizing many
// addresses of one image at once, a profiler's samples say, should use it.
func (e *Entry) SymbolBatch(addrs []uint64, syms []symtab.Symbol, found []bool) int {
	if e.stored == nil && len(e.Tables) == 1 && e.SymbolMap == nil {
		return e.Tables[0].LookupBatch(addrs, syms, found)
	}
	n := min(len(addrs), len(syms), len(found))
	for k, addr := range addrs[:n] {
		syms[k], found[k] = e.Symbol(addr)
	}
	return n
}

func better(a, b symtab.Symbol) bool {
	ha, hb := isHiddenName(a.RawName), isHiddenName(b.RawName)
	if ha != hb && a.Addr == b.Addr && a.RawName != "" && b.RawName != "" {
		return hb // a real name over a bitcode-hidden one for one function
	}
	if a.Source != b.Source {
		return a.Source < b.Source // SourceSymtab < SourceExports < SourceFunctionStarts
	}
	return a.Addr > b.Addr
}

// Debug returns the DWARF indexes of the entry's images that have DWARF,
// building them on first use: most lookups of a dump touch few images.
// Concurrent first calls build them once; the others wait for it.
func (e *Entry) Debug() []*debuginfo.Index {
	if e.NoDebugInfo {
		return nil
	}
	e.debugOnce.Do(func() {
		for _, im := range e.Images {
			ix, found, err := debugIndex(im)
			if err != nil && !found {
				e.debugErrors = append(e.debugErrors, fmt.Errorf("%s: %w", im.Name, err))
				continue
			}
			if !found {
				continue
			}
			if err != nil {
				e.debugErrors = append(e.debugErrors, fmt.Errorf("%s: DWARF: %w", im.Name, err))
				continue
			}
			e.debug = append(e.debug, ix)
			e.debugNames = append(e.debugNames, im.Name)
		}
		e.debugDone.Store(true)
	})
	return e.debug
}

// CallReturn reports whether the unslid address addr is the return
// address of a call the entry's DWARF describes (debuginfo's CallReturn:
// a call site's DW_AT_call_return_pc), from the first of its DWARF indexes
// that knows. known is false where no DWARF of the entry has call sites
// for addr's function, and for an entry read from an index file, which
// keeps no call sites.
func (e *Entry) CallReturn(addr uint64) (known, isReturn bool) {
	if e.stored != nil {
		return false, false
	}
	for _, ix := range e.Debug() {
		if known, isReturn = ix.CallReturn(addr); known {
			return known, isReturn
		}
	}
	return false, false
}

// CallReaches reports whether the call returning to the unslid address
// ret can have entered the function whose unslid entry is entry, by what
// the entry's DWARF call sites say it calls (debuginfo's CallReaches),
// from the first of its DWARF indexes that knows. known is false where no
// DWARF of the entry says, and for an entry read from an index file.
func (e *Entry) CallReaches(ret, entry uint64) (known, reaches bool) {
	if e.stored != nil {
		return false, false
	}
	for _, ix := range e.Debug() {
		if known, reaches = ix.CallReaches(ret, entry); known {
			return known, reaches
		}
	}
	return false, false
}

// FrameLocals reports the frame base register of the function holding
// the unslid pc and how far above it the function's variables reach
// (debuginfo's FrameLocals), from the first DWARF index that knows.
func (e *Entry) FrameLocals(pc uint64) (reg int, end int64, known bool) {
	if e.stored != nil {
		return 0, 0, false
	}
	for _, ix := range e.Debug() {
		if reg, end, known = ix.FrameLocals(pc); known {
			return reg, end, known
		}
	}
	return 0, 0, false
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
		if frames, err := ix.Lookup(addr); err == nil {
			return frames
		}
	}
	return nil
}
