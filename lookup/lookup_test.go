package lookup

import (
	"errors"
	"fmt"
	"testing"
)

func TestNotFound(t *testing.T) {
	own := NotFound("pkg: no entry covers the address")
	wrapped := fmt.Errorf("resolving %#x: %w", 0x1000, own)
	for _, err := range []error{ErrNotFound, own, wrapped, fmt.Errorf("x: %w", ErrNotFound)} {
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("errors.Is(%q, ErrNotFound) = false", err)
		}
	}
	if !errors.Is(wrapped, own) {
		t.Errorf("errors.Is(%q, its own sentinel) = false", wrapped)
	}
	if errors.Is(ErrNotFound, own) || errors.Is(errors.New("not found"), ErrNotFound) {
		t.Error("ErrNotFound matches a package's sentinel, or an unrelated error with the same text")
	}
	if own.Error() != "pkg: no entry covers the address" {
		t.Errorf("Error() = %q", own.Error())
	}
}
