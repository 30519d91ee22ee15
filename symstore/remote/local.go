package remote

import (
	"context"
	"fmt"
	"os"

	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/lookup"
	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/uuid"
)

// OpenLocal returns the file of one kind for the UUID from any
// symstore.Source whose files are on disk (a scanned directory: found
// through its UUID → file map, never by a path a caller names): a dSYM's
// DWARF file for KindDebug, any other Mach-O file for KindCode, read in
// place. One it lacks (or holds only in memory, as a zip member) is
// lookup.ErrNotFound.
func OpenLocal(ctx context.Context, src symstore.Source, id uuid.UUID, kind Kind) (*File, error) {
	files, err := src.OpenSymbols(ctx, symstore.Want{UUID: id})
	if err != nil {
		return nil, fmt.Errorf("%s of %s: %w", kind, id, lookup.ErrNotFound)
	}
	var found *File
	for _, sf := range files {
		f, ok := sf.ReaderAt.(*os.File)
		if found == nil && ok && holds(f, id, kind) {
			found = &File{File: f, Size: sf.Size, Location: f.Name()}
			continue // kept open: the caller closes it
		}
		if sf.Closer != nil {
			sf.Closer.Close()
		}
	}
	if found == nil {
		return nil, fmt.Errorf("%s of %s: %w", kind, id, lookup.ErrNotFound)
	}
	return found, nil
}

// holds reports whether f is a Mach-O file of the kind with the UUID.
func holds(f *os.File, id uuid.UUID, kind Kind) bool {
	mf, err := image.NewFile(f, f.Name())
	if err != nil {
		return false
	}
	for _, im := range mf.Images {
		if im.UUID == id && (im.Type == image.TypeDSYM) == (kind == KindDebug) {
			return true
		}
	}
	return false
}
