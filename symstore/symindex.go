package symstore

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/symindex"
	"github.com/stackimage/stackimage/uuid"
)

// Persisted symbol indexes (package symindex): AddDir and AddFile record
// index files by the UUID in their header, Lookup answers a UUID from its
// index file before any Mach-O file, and an entry made from an index
// answers Symbol and Source from it alone, without opening the binary or
// its DWARF. A damaged or mismatched index file is a warning, and the
// Mach-O files with the UUID are used instead.

// WriteIndex writes the entry's symbols, DWARF answers and segments as a
// symindex file for its first image. It builds the DWARF indexes when
// they were not built yet.
func (e *Entry) WriteIndex(w io.Writer) error {
	if e == nil {
		return errors.New("symstore: WriteIndex: nil entry")
	}
	if w == nil {
		return errors.New("symstore: WriteIndex: nil writer")
	}
	if e.stored != nil {
		return fmt.Errorf("symbols for %s: already an index", e.UUID)
	}
	im := e.Image()
	if im == nil {
		// An entry known only from a Breakpad .sym file, or a zero Entry.
		return fmt.Errorf("symbols for %s: no Mach-O image to index (an index is made from a binary or dSYM)", e.UUID)
	}
	in := symindex.Input{UUID: im.UUID, CPUType: im.CPUType, CPUSubtype: im.CPUSubtype,
		FileType: uint32(im.Type), Name: im.Name, Symbols: e.Tables, Debug: e.Debug()}
	for _, s := range im.Segments {
		in.Segments = append(in.Segments, symindex.Segment{Name: s.Name, Addr: s.Addr, Size: s.Size, Prot: s.Prot})
	}
	return symindex.Write(w, in)
}

// HasDebugInfo reports whether the entry can answer file:line and inlined
// frames (from DWARF or from an index file holding them).
func (e *Entry) HasDebugInfo() bool {
	if e.stored != nil {
		return !e.NoDebugInfo && e.stored.HasDebugInfo()
	}
	return len(e.Debug()) > 0
}

// NewIndexEntry opens an index file written by WriteIndex (or the
// stackimage index command) as an entry, for callers that name the file
// themselves, as atos -o does.
func NewIndexEntry(path string) (*Entry, error) {
	ix, err := symindex.Open(path)
	if err != nil {
		return nil, err
	}
	return entryFromIndex(ix), nil
}

// IsIndexFile reports whether the file at path is a regular file that
// starts with the symindex magic. Anything but a regular file (a FIFO
// would block the open) is refused before it is opened.
func IsIndexFile(path string) bool {
	if image.CheckRegular(path) != nil {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	var magic [len(symindex.Magic)]byte
	_, err = io.ReadFull(f, magic[:])
	return err == nil && string(magic[:]) == symindex.Magic
}

// entryFromIndex makes an entry whose image is known by its segments
// alone: enough to place addresses, no file bytes (so no code reads and no
// unwind tables).
func entryFromIndex(ix *symindex.Index) *Entry {
	cpu, sub := ix.CPU()
	arch, _ := archregs.ByCPU(cpu, sub)
	im := &image.Image{Name: ix.Name(), UUID: ix.UUID(), Arch: arch, CPUType: cpu, CPUSubtype: sub, Type: image.FileType(ix.FileType())}
	for _, s := range ix.Segments() {
		// FileSize 0: the index holds no file bytes, and TextSegment
		// then finds __TEXT by name, as in a dSYM.
		im.Segments = append(im.Segments, image.Segment{Name: s.Name, Addr: s.Addr, Size: s.Size, Prot: s.Prot, MaxProt: s.Prot})
	}
	return &Entry{UUID: ix.UUID(), Images: []*image.Image{im}, stored: ix}
}

// addIndexFile records path when it is an index file and reports whether
// it was one. The header is read and checked here; the rest of the file
// when it is first needed.
func (s *Symbols) addIndexFile(path string) bool {
	if !IsIndexFile(path) {
		return false
	}
	ix, err := symindex.Open(path)
	if err != nil {
		s.skip(path, err)
		return true
	}
	u := ix.UUID()
	ix.Close()
	s.mu.Lock()
	if s.indexes == nil {
		s.indexes = map[uuid.UUID][]string{}
	}
	var stale *load
	if !contains(s.indexes[u], path) {
		s.indexes[u] = append(s.indexes[u], path)
		sort.Strings(s.indexes[u])
		stale = s.forgetLoad(u)
	}
	s.mu.Unlock()
	if stale != nil {
		stale.refs.release()
	}
	return true
}

// entryFromIndexFiles returns an entry for u from the first of paths that
// is a usable index file, or nil. The index is closed with refs' last
// reference. It runs in u's load, without the lock.
func (s *Symbols) entryFromIndexFiles(u uuid.UUID, paths []string, refs *fileRefs) *Entry {
	for _, path := range paths {
		ix, err := symindex.OpenUUID(path, u)
		if err != nil {
			s.addWarnings(fmt.Sprintf("symbols for %s: index file skipped: %v", u, err))
			continue
		}
		refs.add(ix)
		e := entryFromIndex(ix)
		e.refs = refs
		return e
	}
	return nil
}
