package image_test

import (
	"fmt"
	"log"

	"github.com/stackimage/stackimage/image"
)

// Open a Mach-O file (thin or fat; a .app, .dSYM or .framework bundle
// opens the file inside) and list each slice's segments.
func Example() {
	f, err := image.Open("../fixtures/bin/chain-arm64-O1")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	for _, im := range f.Images {
		fmt.Println(im.ArchName(), im.UUID)
		for _, s := range im.Segments {
			fmt.Printf("  %-12s %#x-%#x\n", s.Name, s.Addr, s.Addr+s.Size)
		}
	}
	// Output:
	// arm64 4C4C444C-5555-3144-A117-3E15AF6B6CFF
	//   __PAGEZERO   0x0-0x100000000
	//   __TEXT       0x100000000-0x100004000
	//   __LINKEDIT   0x100004000-0x100004490
}
