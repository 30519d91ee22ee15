package indexcache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	notfound "github.com/stackimage/stackimage/lookup"
	"github.com/stackimage/stackimage/symstore/remote"
	"github.com/stackimage/stackimage/uuid"
)

// An index in the shared cache has a record beside it (_index/<uuid>.
// inputs.json) of what it was built from: the source, each file's key,
// size and tag (ETag or modification time), the kinds the source lacked,
// the index's own SHA-256, and whether it is complete. A reader checks
// the record before it uses the shared Index: an index without one, one
// whose bytes differ from the record (truncated or flipped in the
// bucket), one whose inputs have changed or whose source now holds a
// kind it lacked, is built again from the sources and replaces the
// shared copy. Only complete indexes are shared (cache.go).

// indexRecord is what one index was built from.
type indexRecord struct {
	Source   string        `json:"source"`
	Complete bool          `json:"complete"`
	SHA256   string        `json:"sha256"`
	Inputs   []recordInput `json:"inputs"`
	// Absent are the kinds the source did not have.
	Absent []string `json:"absent,omitempty"`
}

// recordInput is one symbol file an index was built from.
type recordInput struct {
	Kind string `json:"kind"`
	Key  string `json:"key"`
	Size int64  `json:"size"`
	Tag  string `json:"tag,omitempty"`
}

// maxRecordBytes bounds a record read from the store.
const maxRecordBytes = 64 << 10

// RecordKey is the key of a UUID's record, beside its index in the
// shared store.
func RecordKey(u uuid.UUID) string { return "_index/" + u.Hex() + ".inputs.json" }

// newRecord is the record of an index built from files of one source.
// A scanned directory's files are not recorded: they are the instance's
// own, not the store's.
func newRecord(s *Origin, files []*remote.File, fileKinds []remote.Kind) *indexRecord {
	rec := &indexRecord{Source: s.Name, Complete: true}
	if s.Local != nil {
		return rec
	}
	for i, f := range files {
		rec.Inputs = append(rec.Inputs, recordInput{Kind: fileKinds[i].String(), Key: f.Key, Size: f.Size, Tag: f.Tag})
	}
	for _, k := range remote.Kinds {
		if !slices.Contains(fileKinds, k) {
			rec.Absent = append(rec.Absent, k.String())
		}
	}
	return rec
}

// errStaleShared says the shared index may not be used: it is built
// again and replaces the shared copy.
var errStaleShared = errors.New("stale shared index")

func staleShared(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errStaleShared, fmt.Sprintf(format, args...))
}

// readRecord reads a UUID's record from the shared cache.
func (c *Cache) readRecord(ctx context.Context, u uuid.UUID) (*indexRecord, error) {
	r, _, err := c.shared.Store().Get(ctx, RecordKey(u))
	if errors.Is(err, notfound.ErrNotFound) {
		return nil, staleShared("no record of its inputs")
	}
	if err != nil {
		return nil, err
	}
	defer r.Close()
	data, err := io.ReadAll(io.LimitReader(r, maxRecordBytes))
	if err != nil {
		return nil, err
	}
	var rec indexRecord
	if err := json.Unmarshal(data, &rec); err != nil {
		return nil, staleShared("record: %v", err)
	}
	if !rec.Complete {
		return nil, staleShared("built from part of its files")
	}
	return &rec, nil
}

// checkInputs reports whether the source an index was built from still
// holds the same files, and no kind it lacked then.
func (c *Cache) checkInputs(ctx context.Context, u uuid.UUID, name string, rec *indexRecord) error {
	var src *Origin
	for _, s := range c.sources {
		if s.Name == rec.Source {
			src = s
		}
	}
	if src == nil || src.Remote == nil {
		return nil // a source no longer configured, or a scanned directory
	}
	for _, in := range rec.Inputs {
		size, tag, err := src.Remote.Store().Stat(ctx, in.Key)
		switch {
		case errors.Is(err, notfound.ErrNotFound):
			return staleShared("%s is gone", src.Remote.Store().Describe(in.Key))
		case err != nil:
			return err
		case size >= 0 && size != in.Size || tag != in.Tag: // a HEAD may not give the size
			return staleShared("%s has changed (%d bytes, tag %q; was %d, %q)", src.Remote.Store().Describe(in.Key), size, tag, in.Size, in.Tag)
		}
	}
	for _, k := range remote.Kinds {
		if !slices.Contains(rec.Absent, k.String()) {
			continue
		}
		for _, key := range src.Remote.Keys(u, k, name) {
			if _, _, err := src.Remote.Store().Stat(ctx, key); err == nil {
				return staleShared("%s has appeared since", src.Remote.Store().Describe(key))
			}
		}
	}
	return nil
}

// putRecord writes an index's record beside it in the shared cache.
func (c *Cache) putRecord(ctx context.Context, u uuid.UUID, path string, rec *indexRecord) error {
	sum, err := fileSHA256(path)
	if err != nil {
		return err
	}
	r := *rec
	r.SHA256 = sum
	data, err := json.Marshal(&r)
	if err != nil {
		return err
	}
	return c.shared.Store().Put(ctx, RecordKey(u), bytes.NewReader(data), int64(len(data)), false)
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
