package symtab

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// repoRoot returns the module root: the nearest directory above the
// package's that holds go.mod.
func repoRoot(tb testing.TB) string {
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Fatal("no go.mod above the package directory")
		}
		dir = parent
	}
}

// corpusDir returns ../shared/corpus next to the repository, the real
// Mach-O files nobody on the team built, or skips the test when a fresh
// clone does not have it.
func corpusDir(tb testing.TB) string {
	dir := filepath.Join(repoRoot(tb), "..", "shared", "corpus")
	if _, err := os.Stat(filepath.Join(dir, "MANIFEST.md")); err != nil {
		tb.Skipf("corpus of real Mach-O files not found at %s (it sits next to the repository on development machines)", dir)
	}
	return dir
}

var goBinary struct {
	once sync.Once
	path string
	err  error
}

// goDarwinBinary returns a GOOS=darwin GOARCH=arm64 build of cmd/go (about
// 20k symbols), built once per toolchain version into the user's cache
// directory: builds with one toolchain are reproducible, so the file, and
// its UUID, stay the same.
func goDarwinBinary(tb testing.TB) string {
	goBinary.once.Do(func() {
		goBinary.path, goBinary.err = buildGoDarwin()
	})
	if goBinary.err != nil {
		tb.Fatalf("building the GOOS=darwin cmd/go binary: %v", goBinary.err)
	}
	return goBinary.path
}

func buildGoDarwin() (string, error) {
	version, err := exec.Command("go", "env", "GOVERSION").Output()
	if err != nil {
		return "", err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	dir := filepath.Join(cache, "stackimage-symtab")
	path := filepath.Join(dir, "go-darwin-arm64-"+strings.TrimSpace(string(version)))
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	tmp := path + ".tmp"
	cmd := exec.Command("go", "build", "-o", tmp, "cmd/go")
	cmd.Env = append(os.Environ(), "GOOS=darwin", "GOARCH=arm64", "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("%v\n%s", err, out)
	}
	return path, os.Rename(tmp, path)
}
