package aggregate

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/uuid"
)

// TestPlacementAsImageList checks that a record's frames land in the
// images image.List finds for the same addresses: an image nested in
// another (the outer one holds the addresses past the inner one), an
// image of unknown size (up to the next image, at most MaxOpenRange) and
// images loaded at one address (the first listed wins).
func TestPlacementAsImageList(t *testing.T) {
	images := []Image{
		{UUID: uuid.UUID{1}, Name: "outer", LoadAddress: 0x100000000, Size: 0x100000},
		{UUID: uuid.UUID{2}, Name: "inner", LoadAddress: 0x100010000, Size: 0x1000},
		{UUID: uuid.UUID{3}, Name: "open", LoadAddress: 0x200000000},
		{UUID: uuid.UUID{4}, Name: "twin-a", LoadAddress: 0x300000000, Size: 0x1000},
		{UUID: uuid.UUID{5}, Name: "twin-b", LoadAddress: 0x300000000, Size: 0x2000},
		{UUID: uuid.UUID{6}, Name: "last-open", LoadAddress: 0x400000000},
	}
	var loaded []*image.Loaded
	for _, im := range images {
		loaded = append(loaded, &image.Loaded{Name: im.Name, UUID: im.UUID, LoadAddress: uint64(im.LoadAddress), Size: uint64(im.Size)})
	}
	list := image.NewList(loaded)
	addrs := []uint64{0xfffffff, 0x100000010, 0x100010010, 0x100011010, 0x1000fffff, 0x100100000, 0x200000000, 0x2ffffffff,
		0x300000800, 0x300001800, 0x300002000, 0x400000000, 0x400000000 + image.MaxOpenRange - 1, 0x400000000 + image.MaxOpenRange}
	agg := New()
	agg.Add(&Record{Images: images, Frames: addrs})
	res, err := agg.Symbolicate(t.Context(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var got, want []string
	for k, addr := range addrs {
		loc := res.Locations[res.Stacks[0][k]]
		name := "none"
		if loc.Image >= 0 {
			name = res.Images[loc.Image].Name
			for _, im := range images {
				off := addr - uint64(im.LoadAddress)
				if k > 0 && off > 0 {
					off-- // a caller is looked up inside its call
				}
				if im.Name == name && loc.Offset != off {
					t.Errorf("frame %#x: offset %#x in %s, want %#x", addr, loc.Offset, name, off)
				}
			}
		}
		got = append(got, name)
		w := "none"
		if l, err := list.Lookup(addr); err == nil {
			w = l.Loaded.Name
		}
		want = append(want, w)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("frames' images (-image.List +aggregate):\n%s", diff)
	}
}
