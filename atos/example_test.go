package atos_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"strings"
	"sync"

	"github.com/stackimage/stackimage/atos"
	"github.com/stackimage/stackimage/symstore"
)

// Open a dSYM and answer addresses as atos prints them: one at a time
// into a buffer, or a batch read from a stream.
func Example() {
	ctx := context.Background()
	a, err := atos.Open(ctx, "../fixtures/bin/chain-arm64-O1.dSYM", atos.Options{Inlines: true})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()
	fmt.Print(string(a.AppendAnswer(nil, 0x1000002f0)))
	if err := a.Answer(ctx, os.Stdout, strings.NewReader("0x100000384 zzz\n")); err != nil {
		log.Fatal(err)
	}
	// Output:
	// start (in chain-arm64-O1) (chain.c:178)
	// recurse (in chain-arm64-O1) (chain.c:149)
	// zzz
}

// An Answerer is not safe for concurrent use: it keeps state from one
// answer to the next (how many it gave, the source file it last
// printed). Goroutines answering at once each take their own; here all
// of them over one symstore.Symbols, which is safe for concurrent use and
// reads the file once, each holding its own reference to the entry
// (atos.New; Close releases it).
func Example_concurrent() {
	ctx := context.Background()
	syms := symstore.NewSymbols()
	defer syms.Close()
	if err := syms.AddDir(ctx, "../fixtures/bin/chain-arm64-O1.dSYM"); err != nil {
		log.Fatal(err)
	}
	id := syms.UUIDs()[0]
	addrs := []uint64{0x1000002f0, 0x100000384}
	answers := make([]string, len(addrs))
	var wg sync.WaitGroup
	for i, addr := range addrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			entry, err := syms.LookupContext(ctx, id)
			if err != nil {
				log.Fatal(err)
			}
			a := atos.New(entry, entry.Image(), "chain-arm64-O1", atos.Options{Inlines: true})
			defer a.Close()
			answers[i] = string(a.AppendAnswer(nil, addr))
		}()
	}
	wg.Wait()
	fmt.Print(strings.Join(answers, ""))
	// Output:
	// start (in chain-arm64-O1) (chain.c:178)
	// recurse (in chain-arm64-O1) (chain.c:149)
}
