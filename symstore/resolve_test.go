package symstore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/uuid"
)

// TestResolveErrors checks the errors of Resolve: an unknown UUID, and a
// UUID asked for with another architecture.
func TestResolveErrors(t *testing.T) {
	syms := fixtureSymbols(t)
	defer syms.Close()
	if frames, err := syms.Resolve(uuid.UUID{1}, nil, 0x1000); !errors.Is(err, ErrNoSymbols) {
		t.Errorf("Resolve(unknown UUID) = %v, %v; want ErrNoSymbols", frames, err)
	}
	u := fixtureUUID(t, "chain-arm64-O1")
	frames, err := syms.Resolve(u, archregs.X86_64, 0x100000000)
	var fe *SymbolFileError
	if !errors.As(err, &fe) || fe.UUID != u || fe.Path == "" {
		t.Errorf("Resolve(arm64 UUID, x86_64) = %v, %v; want a *SymbolFileError naming the file", frames, err)
	}
}

// TestAddFileErrors checks that AddFile's errors name the file and can be
// found with errors.As.
func TestAddFileErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad")
	// Mach-O magic, then nothing a header needs.
	if err := os.WriteFile(bad, []byte{0xcf, 0xfa, 0xed, 0xfe, 0, 0}, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(dir, "absent"), bad} {
		err := NewSymbols().AddFile(context.Background(), path)
		var fe *SymbolFileError
		if !errors.As(err, &fe) || fe.Path != path {
			t.Errorf("AddFile(%s) error = %v; want a *SymbolFileError naming it", path, err)
		} else if !strings.Contains(err.Error(), path) {
			t.Errorf("AddFile(%s) error = %q; want the path in the message", path, err)
		}
	}
}
