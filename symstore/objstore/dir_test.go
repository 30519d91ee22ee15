package objstore

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/stackimage/stackimage/lookup"
)

// TestFirstWriteWins: a second write of a key asked to be the first is
// refused and leaves the first one's bytes.
func TestFirstWriteWins(t *testing.T) {
	d := Dir{Root: t.TempDir()}
	ctx := context.Background()
	if err := d.Put(ctx, "_index/a.symindex", bytes.NewReader([]byte("first")), 5, true); err != nil {
		t.Fatal(err)
	}
	if err := d.Put(ctx, "_index/a.symindex", bytes.NewReader([]byte("second")), 6, true); !errors.Is(err, ErrExists) {
		t.Errorf("second write: %v, want ErrExists", err)
	}
	r, _, err := d.Get(ctx, "_index/a.symindex")
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var buf bytes.Buffer
	buf.ReadFrom(r)
	if buf.String() != "first" {
		t.Errorf("the key holds %q, want the first write", buf.String())
	}
	if TagOf(r) == "" {
		t.Errorf("Get gave no tag")
	}
	for _, bad := range []string{"../x", "/etc/passwd", "a//b", "a/./b", `a\b`, ""} {
		if err := d.Put(ctx, bad, bytes.NewReader(nil), 0, false); err == nil {
			t.Errorf("Put(%q) accepted", bad)
		}
	}
}

// TestMissingKeyIsNotFound: every store's miss is lookup.ErrNotFound.
func TestMissingKeyIsNotFound(t *testing.T) {
	d := Dir{Root: t.TempDir()}
	ctx := context.Background()
	if _, _, err := d.Get(ctx, "no/such/key"); !errors.Is(err, lookup.ErrNotFound) {
		t.Errorf("Get: %v, want lookup.ErrNotFound", err)
	}
	if _, _, err := d.Stat(ctx, "no/such/key"); !errors.Is(err, lookup.ErrNotFound) {
		t.Errorf("Stat: %v, want lookup.ErrNotFound", err)
	}
	if err := d.Remove(ctx, "no/such/key"); err != nil {
		t.Errorf("Remove of an absent key: %v", err)
	}
}
