package atos_test

import (
	"fmt"
	"log"
	"os"
	"strings"

	"github.com/stackimage/stackimage/atos"
)

// Open a dSYM and answer addresses as atos prints them: one at a time
// into a buffer, or a batch read from a stream.
func Example() {
	a, err := atos.Open("../fixtures/bin/chain-arm64-O1.dSYM", atos.Options{Inlines: true})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	fmt.Print(string(a.AppendAnswer(nil, 0x1000002f0)))
	if err := a.Answer(os.Stdout, strings.NewReader("0x100000384 zzz\n")); err != nil {
		log.Fatal(err)
	}
	// Output:
	// start (in chain-arm64-O1) (chain.c:178)
	// recurse (in chain-arm64-O1) (chain.c:149)
	// zzz
}
