// Package testcorpus finds the inputs the tests and benchmarks share: the
// real-world corpus of Apple-built files beside the repository
// (../shared/corpus, which developers and CI have and a user's clone does
// not), and a GOOS=darwin build of a large Go program.
package testcorpus

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// RepoRoot returns the module root: the nearest directory above the working
// directory (a package's, under go test) that holds go.mod.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// Find returns the corpus directory, ../shared/corpus beside the
// repository root.
func Find() (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, "..", "shared", "corpus")
	if _, err := os.Stat(filepath.Join(dir, "MANIFEST.md")); err != nil {
		return "", fmt.Errorf("real-world corpus not found at %s (only developers and CI have it)", dir)
	}
	return dir, nil
}

// Dir returns the corpus directory, skipping the test when it is absent.
func Dir(tb testing.TB) string {
	tb.Helper()
	dir, err := Find()
	if err != nil {
		tb.Skip(err)
	}
	return dir
}

// File returns the path of a corpus file given relative to the corpus,
// skipping the test when the corpus is absent and failing it when the
// corpus lacks the file.
func File(tb testing.TB, rel string) string {
	tb.Helper()
	path := filepath.Join(Dir(tb), filepath.FromSlash(rel))
	if _, err := os.Stat(path); err != nil {
		tb.Fatalf("corpus file: %v", err)
	}
	return path
}

var goDarwin struct {
	once sync.Once
	path string
	err  error
}

// GoDarwinBinary returns a GOOS=darwin GOARCH=arm64 build of cmd/go (about
// 20k symbols, a real large Mach-O), built once per Go version into the
// user's cache directory. Builds with one toolchain are reproducible, so
// the file and its UUID stay the same.
func GoDarwinBinary() (string, error) {
	goDarwin.once.Do(func() { goDarwin.path, goDarwin.err = buildGoDarwin() })
	return goDarwin.path, goDarwin.err
}

// CachedGoDarwinBinary returns the path GoDarwinBinary builds to, and
// whether the build is already there.
func CachedGoDarwinBinary() (string, bool) {
	path, err := goDarwinPath()
	if err != nil {
		return "", false
	}
	_, err = os.Stat(path)
	return path, err == nil
}

func goDarwinPath() (string, error) {
	version, err := exec.Command("go", "env", "GOVERSION").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOVERSION: %v", err)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	return filepath.Join(cache, "stackimage-symtab", "go-darwin-arm64-"+strings.TrimSpace(string(version))), nil
}

func buildGoDarwin() (string, error) {
	path, err := goDarwinPath()
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	// Build beside the target and rename, so that a concurrent test
	// process never sees half a file.
	tmp, err := os.CreateTemp(filepath.Dir(path), "go-darwin-*.tmp")
	if err != nil {
		return "", err
	}
	tmp.Close()
	defer os.Remove(tmp.Name())
	cmd := exec.Command("go", "build", "-o", tmp.Name(), "cmd/go")
	cmd.Env = append(os.Environ(), "GOOS=darwin", "GOARCH=arm64", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building GOOS=darwin cmd/go: %v\n%s", err, out)
	}
	return path, os.Rename(tmp.Name(), path)
}
