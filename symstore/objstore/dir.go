package objstore

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Dir is a directory read and written by relative key.
type Dir struct {
	// Root is the directory.
	Root string
}

// Path is the file at key, or an error for a key ValidKey refuses.
func (d Dir) Path(key string) (string, error) {
	if !ValidKey(key) {
		return "", badKey(key)
	}
	return filepath.Join(d.Root, filepath.FromSlash(key)), nil
}

// Get opens the file at key.
func (d Dir) Get(_ context.Context, key string) (io.ReadCloser, int64, error) {
	f, st, err := d.Open(key)
	if err != nil {
		return nil, 0, err
	}
	return taggedBody{f, FileTag(st)}, st.Size(), nil
}

// Open opens the regular file at key in place, with its information;
// lookup.ErrNotFound when there is none.
func (d Dir) Open(key string) (*os.File, os.FileInfo, error) {
	p, err := d.Path(key)
	if err != nil {
		return nil, nil, err
	}
	f, err := os.Open(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, errNotFound
	}
	if err != nil {
		return nil, nil, err
	}
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() {
		f.Close()
		return nil, nil, errNotFound
	}
	return f, st, nil
}

// Put writes the file at key through a temporary file, so that no reader
// sees half of it.
func (d Dir) Put(_ context.Context, key string, r io.Reader, _ int64, onlyIfAbsent bool) error {
	p, err := d.Path(key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(p), ".upload-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := io.Copy(tmp, r); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if onlyIfAbsent {
		// A hard link fails when the name exists: the first writer wins
		// without a window in which a reader sees half a file.
		if err := os.Link(tmp.Name(), p); err != nil {
			if errors.Is(err, os.ErrExist) {
				return ErrExists
			}
			return err
		}
		return nil
	}
	return os.Rename(tmp.Name(), p)
}

// Stat returns the file's size and modification time.
func (d Dir) Stat(_ context.Context, key string) (int64, string, error) {
	p, err := d.Path(key)
	if err != nil {
		return 0, "", err
	}
	st, err := os.Stat(p)
	if errors.Is(err, os.ErrNotExist) || err == nil && !st.Mode().IsRegular() {
		return 0, "", errNotFound
	}
	if err != nil {
		return 0, "", err
	}
	return st.Size(), FileTag(st), nil
}

// FileTag is a file's tag: its modification time.
func FileTag(st os.FileInfo) string { return strconv.FormatInt(st.ModTime().UnixNano(), 36) }

// Describe is the file's path.
func (d Dir) Describe(key string) string { return filepath.Join(d.Root, filepath.FromSlash(key)) }

// List walks the directory under prefix, leaving out Put's temporary
// files.
func (d Dir) List(_ context.Context, prefix string) ([]string, error) {
	dir, err := d.Path(strings.TrimSuffix(prefix, "/"))
	if err != nil {
		return nil, err
	}
	var keys []string
	err = filepath.WalkDir(dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil
			}
			return err
		}
		if !e.Type().IsRegular() || strings.HasPrefix(e.Name(), ".") {
			return nil // directories, and Put's temporary files
		}
		rel, err := filepath.Rel(d.Root, p)
		if err != nil {
			return err
		}
		keys = append(keys, filepath.ToSlash(rel))
		return nil
	})
	sort.Strings(keys)
	return keys, err
}

// Remove deletes the file at key.
func (d Dir) Remove(_ context.Context, key string) error {
	p, err := d.Path(key)
	if err != nil {
		return err
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	return nil
}
