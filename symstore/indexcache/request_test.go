package indexcache

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stackimage/stackimage/dump"
	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/uuid"
)

// TestFind: a request's images are looked up once each; one a source
// has is found with its Mach-O files when the dump is walked (and
// without for a report with no stack memory), one none has is missing
// (symstore.ErrNoSymbols through OpenSymbols), and an image without a
// UUID is not looked up.
func TestFind(t *testing.T) {
	mem, u := chainInMemory(t)
	c, err := New(Config{Dir: t.TempDir(), MaxBytes: 1 << 30, MissTTL: time.Minute, FailedTTL: time.Minute, MaxFetches: 2,
		Sources: []*Origin{{Name: "memory", Local: mem}}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	missing := uuid.UUID{9, 9, 9}
	images := []dump.Image{{Name: "chain", UUID: u}, {Name: "gone", UUID: missing}, {Name: "none"}, {Name: "chain again", UUID: u}}
	ctx := context.Background()
	for _, tt := range []struct {
		name  string
		d     *dump.Dump
		machO int
	}{
		{"a dump, walked", &dump.Dump{Format: dump.FormatMinidump, Images: images}, 2},
		{"a report without stack memory", &dump.Dump{Format: dump.FormatCrash, Images: images}, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if Walked(tt.d) != (tt.machO > 0) {
				t.Fatalf("Walked = %v, want %v", Walked(tt.d), tt.machO > 0)
			}
			req := c.Find(ctx, []*dump.Dump{tt.d}, nil, 4)
			defer req.Close()
			f := req.Found(u)
			if f == nil || f.Index == nil || f.Status != StatusFound || len(f.MachO) != tt.machO {
				t.Fatalf("Found(%s) = %+v; want found with %d Mach-O files", u, f, tt.machO)
			}
			if got := req.Found(missing); got == nil || got.Status != StatusMissing {
				t.Errorf("Found(%s) = %+v, want missing", missing, got)
			}
			if req.Found(uuid.UUID{}) != nil {
				t.Error("an image without a UUID was looked up")
			}
			files, err := req.OpenSymbols(ctx, symstore.Want{UUID: u})
			if err != nil || len(files) != 1+tt.machO {
				t.Fatalf("OpenSymbols(%s) = %d files, %v; want the index and %d", u, len(files), err, tt.machO)
			}
			for _, sf := range files {
				sf.Closer.Close()
			}
			if _, err := req.OpenSymbols(ctx, symstore.Want{UUID: missing}); !errors.Is(err, symstore.ErrNoSymbols) {
				t.Errorf("OpenSymbols(missing) = %v, want symstore.ErrNoSymbols", err)
			}
			if e := req.Entry(u); (e != nil) != (tt.machO == 0) {
				t.Errorf("Entry(%s) = %v; want the cache's entry only when the index alone was found", u, e)
			}
		})
	}
}
