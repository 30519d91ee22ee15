//go:build unix

package symstore

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stackimage/stackimage/internal/hostile"
	"github.com/stackimage/stackimage/uuid"
)

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// TestSymbolsFollowLinks indexes through symbolic links: a --symbols path
// that is a link to a directory, and links inside a tree to directories
// and files elsewhere. A link loop, a broken link and a FIFO are skipped
// and reported with the reason.
func TestSymbolsFollowLinks(t *testing.T) {
	root := t.TempDir()
	machO := func(b byte) []byte {
		return hostile.MachO{UUID: uuid.UUID{b}, Symbols: []hostile.Symbol{{Name: "_f", Addr: hostile.CodeAddr}}}.Bytes()
	}
	writeFile(t, filepath.Join(root, "real", "App1"), machO(1))
	writeFile(t, filepath.Join(root, "elsewhere", "dir", "App2"), machO(2))
	writeFile(t, filepath.Join(root, "elsewhere", "App3"), machO(3))
	tree := filepath.Join(root, "tree")
	if err := os.Mkdir(tree, 0o755); err != nil {
		t.Fatal(err)
	}
	symlink(t, filepath.Join(root, "real"), filepath.Join(root, "link-to-real"))
	symlink(t, filepath.Join(root, "elsewhere", "dir"), filepath.Join(tree, "dir-link"))
	symlink(t, filepath.Join(root, "elsewhere", "App3"), filepath.Join(tree, "file-link"))
	symlink(t, tree, filepath.Join(tree, "loop"))
	symlink(t, filepath.Join(root, "nowhere"), filepath.Join(tree, "broken"))
	if err := syscall.Mkfifo(filepath.Join(tree, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}

	syms := NewSymbols()
	defer syms.Close()
	for _, dir := range []string{filepath.Join(root, "link-to-real"), tree} {
		if err := syms.AddDir(context.Background(), dir); err != nil {
			t.Fatalf("AddDir(%s): %v", dir, err)
		}
	}
	for b := byte(1); b <= 3; b++ {
		if e, err := syms.Lookup(uuid.UUID{b}); e == nil || err != nil {
			t.Errorf("Lookup(App%d) = %v, %v; want the file found through a link", b, e, err)
		}
	}
	skipped := strings.Join(syms.Skipped, "\n")
	for _, want := range []string{
		filepath.Join(tree, "loop") + ": directory already indexed as " + tree,
		filepath.Join(tree, "broken") + ": broken symbolic link",
		filepath.Join(tree, "fifo") + ": not a regular file (FIFO)",
	} {
		if !strings.Contains(skipped, want) {
			t.Errorf("Skipped = %q; want it to say %q", skipped, want)
		}
	}
}

// TestAddDirRefusesSpecialFiles names a FIFO as the symbols path: it must
// be refused without being opened, which would block.
func TestAddDirRefusesSpecialFiles(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	err := NewSymbols().AddDir(context.Background(), fifo)
	if err == nil || !strings.Contains(err.Error(), "not a regular file or directory (FIFO)") {
		t.Errorf("AddDir(FIFO) = %v; want it refused as not a regular file or directory", err)
	}
}
