package symstore

import (
	"context"
	"errors"
	"testing"
)

// TestAddStopsWhenContextEnds: AddDir and AddFile read nothing once their
// context has ended, and say so with its error.
func TestAddStopsWhenContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	syms := NewSymbols()
	defer syms.Close()
	if err := syms.AddDir(ctx, "../fixtures/bin"); !errors.Is(err, context.Canceled) {
		t.Errorf("AddDir with an ended context: %v, want context.Canceled", err)
	}
	if err := syms.AddFile(ctx, "../fixtures/bin/chain-arm64-O1"); !errors.Is(err, context.Canceled) {
		t.Errorf("AddFile with an ended context: %v, want context.Canceled", err)
	}
	if ids := syms.UUIDs(); len(ids) != 0 {
		t.Errorf("indexed %d UUIDs after the context ended", len(ids))
	}
	// The same calls with a live context index the fixtures.
	if err := syms.AddDir(context.Background(), "../fixtures/bin"); err != nil || len(syms.UUIDs()) == 0 {
		t.Errorf("AddDir: %v, %d UUIDs", err, len(syms.UUIDs()))
	}
}
