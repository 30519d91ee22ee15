package aggregate

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stackimage/stackimage/uuid"
)

// Frames in an image without symbols keep their image and offset in
// every output, each a frame of its own: two stacks through UIKitCore at
// different offsets stay two stacks in the folded stacks, two functions
// in the profile and speedscope, and the representative names the
// offsets; a caller is named by the return address the input gave, not
// the byte before it that was looked up. The group fingerprint still
// names the image alone, so that another OS build groups with it.
func TestUnknownFramesKeepImageAndOffset(t *testing.T) {
	uikit := Image{UUID: uuid.UUID{0x0f, 0x6a}, LoadAddress: 0x180000000, Name: "UIKitCore"}
	agg := New()
	agg.Add(&Record{Images: []Image{uikit}, Frames: []uint64{0x18004d2a0, 0x180001000}, Weight: 3})
	agg.Add(&Record{Images: []Image{uikit}, Frames: []uint64{0x18004d2b4, 0x180001000}, Weight: 5})
	res, err := agg.Symbolicate(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var folded bytes.Buffer
	if err := res.WriteFolded(&folded); err != nil {
		t.Fatal(err)
	}
	if got, want := folded.String(), "UIKitCore+0x1000;UIKitCore+0x4d2a0 3\nUIKitCore+0x1000;UIKitCore+0x4d2b4 5\n"; got != want {
		t.Errorf("folded:\n%s\nwant:\n%s", got, want)
	}
	p := res.Profile()
	var names []string
	for _, f := range p.Function {
		names = append(names, f.Name)
	}
	slices.Sort(names)
	if want := []string{"UIKitCore+0x1000", "UIKitCore+0x4d2a0", "UIKitCore+0x4d2b4"}; !slices.Equal(names, want) {
		t.Errorf("profile functions %q, want %q", names, want)
	}
	if len(p.Location) != 3 {
		t.Errorf("profile has %d locations, want 3", len(p.Location))
	}
	var speedscope bytes.Buffer
	if err := res.WriteSpeedscope(&speedscope, "t"); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if !strings.Contains(speedscope.String(), `"`+n+`"`) {
			t.Errorf("speedscope lacks the frame %q", n)
		}
	}
	groups := res.Groups(GroupOptions{})
	if len(groups) != 1 || !slices.Equal(groups[0].Fingerprint, []string{"UIKitCore!???"}) || groups[0].Weight != 8 {
		t.Fatalf("groups = %+v, want one of weight 8, fingerprint [UIKitCore!???]", groups)
	}
	rep := groups[0].Representative
	if len(rep) != 2 || rep[0].Function != "UIKitCore+0x4d2b4" || rep[1].Function != "UIKitCore+0x1000" {
		t.Errorf("representative %+v, want UIKitCore+0x4d2b4 called from UIKitCore+0x1000", rep)
	}
}
