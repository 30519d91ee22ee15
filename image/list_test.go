package image

import (
	"math/rand"
	randv2 "math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stackimage/stackimage/internal/addrspan"
)

// exeImage is a synthetic arm64 executable: __PAGEZERO, __TEXT (r-x) with
// two sections, __DATA (rw-) and __LINKEDIT, at the usual addresses.
func exeImage() *Image {
	im := &Image{
		Name: "App",
		Type: TypeExecute,
		Segments: []Segment{
			{Name: "__PAGEZERO", Addr: 0, Size: 0x100000000},
			{Name: "__TEXT", Addr: 0x100000000, Size: 0x8000, FileSize: 0x8000, MaxProt: 5, Prot: 5},
			{Name: "__DATA", Addr: 0x100008000, Size: 0x4000, Offset: 0x8000, FileSize: 0x4000, MaxProt: 3, Prot: 3},
			{Name: "__EMPTY", Addr: 0x10000c000, Size: 0},
			{Name: "__LINKEDIT", Addr: 0x10000c000, Size: 0x4000, Offset: 0xc000, FileSize: 0x1000, MaxProt: 1, Prot: 1},
		},
		Sections: []Section{
			{Index: 1, Segment: "__TEXT", Name: "__text", Addr: 0x100001000, Size: 0x5000},
			{Index: 2, Segment: "__TEXT", Name: "__stubs", Addr: 0x100006000, Size: 0x100},
			{Index: 3, Segment: "__DATA", Name: "__data", Addr: 0x100008000, Size: 0x200},
		},
	}
	var spans []addrspan.Span
	for i, s := range im.Sections {
		spans = append(spans, addrspan.Span{Start: s.Addr, End: s.Addr + s.Size, Prio: s.Addr, Order: i, Ref: i})
	}
	im.sections = addrspan.Flatten(spans)
	return im
}

func TestListLookup(t *testing.T) {
	app := &Loaded{Name: "App", LoadAddress: 0x104cc8000, Image: exeImage()}
	// Known by range only, as crash reports give them.
	libA := &Loaded{Name: "libA", LoadAddress: 0x180000000, Size: 0x10000}
	// Overlaps libA's upper half: from 0x180008000 on, libB wins (higher
	// load address).
	libB := &Loaded{Name: "libB", LoadAddress: 0x180008000, Size: 0x10000}
	// No size, no image: reaches to the next image.
	libC := &Loaded{Name: "libC", LoadAddress: 0x190000000}
	// Last, open-ended: capped at MaxOpenRange.
	libD := &Loaded{Name: "libD", LoadAddress: 0x200000000}
	// Loaded below its preferred address: the slide wraps around.
	low := &Loaded{Name: "Low", LoadAddress: 0x4000, Image: exeImage()}
	l := NewList([]*Loaded{libD, libB, app, libC, nil, libA, low})

	var names []string
	for _, im := range l.Images() {
		names = append(names, im.Name)
	}
	if diff := cmp.Diff([]string{"Low", "App", "libA", "libB", "libC", "libD"}, names); diff != "" {
		t.Errorf("Images() order (-want +got):\n%s", diff)
	}

	type result struct {
		Image, Segment, Section string
		Unslid, Offset          uint64
	}
	tests := []struct {
		name string
		addr uint64
		want *result // nil: not found
	}{
		{"zero", 0, nil},
		{"below __TEXT of App is __PAGEZERO's slid range", 0x104cc8000 - 1, nil},
		{"App mach header", 0x104cc8000, &result{"App", "__TEXT", "", 0x100000000, 0}},
		{"App __text", 0x104cc9010, &result{"App", "__TEXT", "__text", 0x100001010, 0x1010}},
		{"App __stubs last byte", 0x104cce0ff, &result{"App", "__TEXT", "__stubs", 0x1000060ff, 0x60ff}},
		{"App __TEXT after __stubs", 0x104cce100, &result{"App", "__TEXT", "", 0x100006100, 0x6100}},
		{"App __data", 0x104cd0010, &result{"App", "__DATA", "__data", 0x100008010, 0x8010}},
		{"App __DATA last byte", 0x104cd3fff, &result{"App", "__DATA", "", 0x10000bfff, 0xbfff}},
		{"App __LINKEDIT last byte", 0x104cd7fff, &result{"App", "__LINKEDIT", "", 0x10000ffff, 0xffff}},
		{"past App", 0x104cd8000, nil},
		{"libA start", 0x180000000, &result{"libA", "", "", 0, 0}},
		{"libA below the overlap", 0x180007fff, &result{"libA", "", "", 0x7fff, 0x7fff}},
		{"overlap goes to libB", 0x180008000, &result{"libB", "", "", 0, 0}},
		{"libA's end is inside libB", 0x18000ffff, &result{"libB", "", "", 0x7fff, 0x7fff}},
		{"libB end", 0x180018000, nil},
		{"libC start", 0x190000000, &result{"libC", "", "", 0, 0}},
		{"libC reaches the next image", 0x1ffffffff, &result{"libC", "", "", 0x6fffffff, 0x6fffffff}},
		{"libD", 0x200000000, &result{"libD", "", "", 0, 0}},
		{"libD last byte of MaxOpenRange", 0x200000000 + MaxOpenRange - 1, &result{"libD", "", "", MaxOpenRange - 1, MaxOpenRange - 1}},
		{"past libD's cap", 0x200000000 + MaxOpenRange, nil},
		{"Low __text", 0x5010, &result{"Low", "__TEXT", "__text", 0x100001010, 0x1010}},
		{"top of the address space", ^uint64(0), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			loc, err := l.Lookup(tt.addr)
			ok := err == nil
			var got *result
			if ok {
				got = &result{Image: loc.Loaded.Name, Unslid: loc.Unslid, Offset: loc.Offset}
				if loc.Segment != nil {
					got.Segment = loc.Segment.Name
				}
				if loc.Section != nil {
					got.Section = loc.Section.Name
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Lookup(%#x) (-want +got):\n%s", tt.addr, diff)
			}
		})
	}

	// Segment and Section point into the image, not at copies.
	loc, _ := l.Lookup(0x104cc9010)
	if loc.Segment != &app.Image.Segments[1] || loc.Section != &app.Image.Sections[0] {
		t.Errorf("Lookup(0x104cc9010) Segment/Section do not point into App's image")
	}
}

func TestListIsCode(t *testing.T) {
	l := NewList([]*Loaded{
		{Name: "App", LoadAddress: 0x104cc8000, Image: exeImage()},
		{Name: "libA", LoadAddress: 0x180000000, Size: 0x10000},
	})
	tests := []struct {
		name string
		addr uint64
		want bool
	}{
		{"__TEXT", 0x104cc9010, true},
		{"__DATA", 0x104cd0010, false},
		{"__LINKEDIT", 0x104cd5000, false},
		{"image without segments", 0x180001000, true},
		{"no image", 0x170000000, false},
		{"slid __PAGEZERO", 0x4cc8000, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := l.IsCode(tt.addr); got != tt.want {
				t.Errorf("IsCode(%#x) = %v, want %v", tt.addr, got, tt.want)
			}
		})
	}
}

func TestListSameLoadAddress(t *testing.T) {
	first := &Loaded{Name: "first", LoadAddress: 0x1000, Size: 0x100}
	second := &Loaded{Name: "second", LoadAddress: 0x1000, Size: 0x200}
	l := NewList([]*Loaded{first, second})
	for _, tt := range []struct {
		addr uint64
		want string
	}{{0x1000, "first"}, {0x10ff, "first"}, {0x1100, "second"}, {0x11ff, "second"}} {
		loc, err := l.Lookup(tt.addr)
		ok := err == nil
		if !ok || loc.Loaded.Name != tt.want {
			t.Errorf("Lookup(%#x) = %v, %v, want %q", tt.addr, loc.Loaded, ok, tt.want)
		}
	}
}

func TestListEmpty(t *testing.T) {
	l := NewList(nil)
	if _, err := l.Lookup(0x1000); err == nil {
		t.Errorf("Lookup in an empty list found something")
	}
	if l.IsCode(0x1000) {
		t.Errorf("IsCode in an empty list = true")
	}
}

func BenchmarkListLookup(b *testing.B) {
	var images []*Loaded
	for i := 0; i < 1000; i++ {
		images = append(images, &Loaded{LoadAddress: 0x180000000 + uint64(i)*0x100000, Image: exeImage()})
	}
	l := NewList(images)
	rng := rand.New(rand.NewSource(1))
	addrs := make([]uint64, 1024)
	for i := range addrs {
		addrs[i] = images[rng.Intn(len(images))].LoadAddress + uint64(rng.Intn(0xc000))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := l.Lookup(addrs[i%len(addrs)]); err != nil {
			b.Fatal("not found")
		}
	}
}

// TestLocateAgreesWithLookup: Locate gives Lookup's image and unslid
// address for every address, in images with segments and without.
func TestLocateAgreesWithLookup(t *testing.T) {
	f, err := Open("../fixtures/bin/chain-arm64-O1")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	im := f.Images[0]
	text, _ := im.TextSegment()
	l := NewList([]*Loaded{
		{Name: "/App", LoadAddress: 0x200000000, Image: im},
		{Name: "/Other", LoadAddress: 0x300000000, Size: 0x1000},
	})
	for _, addr := range []uint64{0x1ff000000, 0x200000000, 0x200000000 + text.Size/2, 0x200000000 + text.Size + 0x100000000, 0x300000000, 0x300000fff, 0x300001000} {
		loc, err := l.Lookup(addr)
		got, unslid, ok := l.Locate(addr)
		if ok != (err == nil) || ok && (got != loc.Loaded || unslid != loc.Unslid) {
			t.Errorf("%#x: Locate = %v, %#x, %v; Lookup = %+v, %v", addr, got, unslid, ok, loc, err)
		}
	}
}

// TestPlaceMatchesLookup: Place puts every address where Lookup does,
// and every address of the range it returns is placed alike, over images
// known by segments, by range only, overlapping and open-ended.
func TestPlaceMatchesLookup(t *testing.T) {
	l := NewList([]*Loaded{
		{Name: "App", LoadAddress: 0x104cc8000, Image: exeImage()},
		{Name: "libA", LoadAddress: 0x180000000, Size: 0x10000},
		{Name: "libB", LoadAddress: 0x180008000, Size: 0x10000},
		{Name: "libC", LoadAddress: 0x190000000},
		{Name: "Low", LoadAddress: 0x4000, Image: exeImage()},
	})
	rng := randv2.New(randv2.NewPCG(11, 12))
	var addrs []uint64
	for _, im := range l.Images() {
		for range 200 {
			addrs = append(addrs, im.LoadAddress-0x100+rng.Uint64N(0x40000))
		}
	}
	placed := 0
	for _, a := range addrs {
		p, ok := l.Place(a)
		loc, err := l.Lookup(a)
		if ok != (err == nil) {
			t.Fatalf("%#x: Place ok %v, Lookup error %v", a, ok, err)
		}
		if !ok {
			continue
		}
		placed++
		if p.Image != loc.Loaded || a-p.Slide != loc.Unslid || !p.Contains(a) {
			t.Fatalf("%#x: placed in %s unslid %#x (range %#x-%#x); Lookup says %s unslid %#x",
				a, p.Image.Name, a-p.Slide, p.Start, p.End, loc.Loaded.Name, loc.Unslid)
		}
		for _, b := range []uint64{p.Start, p.End - 1, p.Start + rng.Uint64N(p.End-p.Start)} {
			q, ok := l.Place(b)
			if !ok || q != p {
				t.Fatalf("%#x lies in %#x's range %#x-%#x but is placed %+v, %v", b, a, p.Start, p.End, q, ok)
			}
		}
	}
	if placed < len(addrs)/4 {
		t.Errorf("only %d of %d addresses placed: the test misses the images", placed, len(addrs))
	}
	if (&Placement{}).Contains(0) {
		t.Error("the zero Placement contains an address")
	}
}
