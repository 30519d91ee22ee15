package aggregate_test

import (
	"context"
	"fmt"
	"log"
	"strings"

	"github.com/stackimage/stackimage/aggregate"
	"github.com/stackimage/stackimage/symstore"
)

// Count stacks of the stream format, symbolicate each unique address
// once against a directory of binaries and dSYMs, and print the groups.
func Example() {
	stream := `{"image_set":"p","images":[{"uuid":"4C4C444C-5555-3144-A117-3E15AF6B6CFF","load_address":"0x10000c000","name":"chain-arm64-O1","main":true}],"frames":["0x10000c5dc","0x10000c5bc","0x10000c578"],"app_version":"1.0"}
{"image_set":"p","frames":["0x10000c5dc","0x10000c5bc","0x10000c578"],"app_version":"1.1"}
{"image_set":"p","frames":["0x10000c4e0","0x10000c4c0"],"weight":5}
`
	loader := &aggregate.Loader{Aggregator: aggregate.New()}
	if err := loader.Read(context.Background(), "stream", strings.NewReader(stream)); err != nil {
		log.Fatal(err)
	}
	syms := symstore.NewSymbols()
	defer syms.Close()
	if err := syms.AddDir(context.Background(), "../fixtures/bin"); err != nil {
		log.Fatal(err)
	}
	res, err := loader.Aggregator.Symbolicate(context.Background(), syms)
	if err != nil {
		log.Fatal(err)
	}
	for _, g := range res.Groups(aggregate.GroupOptions{}) {
		fmt.Printf("weight %d, %d stacks: %s\n", g.Weight, g.Count, strings.Join(g.Fingerprint, " ← "))
	}
	// Output:
	// weight 5, 1 stacks: via_pointer ← dispatch
	// weight 2, 2 stacks: deepest ← step_to_deepest ← inline_host
}
