package symstore_test

import (
	"context"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/uuid"
)

// Look addresses up in a dSYM from many goroutines at once: a Symbols is
// safe for concurrent use, and loads each UUID's files once.
func ExampleSymbols_Resolve() {
	syms := symstore.NewSymbols()
	defer syms.Close()
	if err := syms.AddDir(context.Background(), "../fixtures/bin/chain-arm64-O1.dSYM"); err != nil {
		log.Fatal(err)
	}
	u, err := uuid.Parse("4C4C444C-5555-3144-A117-3E15AF6B6CFF")
	if err != nil {
		log.Fatal(err)
	}
	// Unslid addresses, as in the binary; callers' return addresses are
	// looked up one instruction back (walker.CallerLookupAddress).
	addrs := []uint64{0x1000005dc, 0x1000005b8, 0x100000574, 0x1000004dc}
	answers := make([]string, len(addrs))
	var wg sync.WaitGroup
	for i, addr := range addrs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			frames, err := syms.Resolve(u, nil, addr)
			if err != nil {
				answers[i] = err.Error()
				return
			}
			// Inlined functions first, then the function holding addr.
			var names []string
			for _, f := range frames {
				names = append(names, fmt.Sprintf("%s (%s)", f.Symbol, f.SourceLocation()))
			}
			answers[i] = strings.Join(names, " in ")
		}()
	}
	wg.Wait()
	for i, a := range answers {
		fmt.Printf("%#x: %s\n", addrs[i], a)
	}
	// Output:
	// 0x1000005dc: deepest (chain.c:65)
	// 0x1000005b8: step_to_deepest (chain.c:72) in inline_host (chain.c:76)
	// 0x100000574: with_alloca (chain.c:94)
	// 0x1000004dc: via_pointer (chain.c:107)
}

// Build an index of a binary's symbols and debug information once, then
// answer from it: an index file opens in microseconds, however big the
// dSYM it was made from.
func ExampleEntry_WriteIndex() {
	f, err := image.Open("../fixtures/bin/chain-arm64-O1.dSYM")
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	e, err := symstore.NewEntry(f.Images[0])
	if err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "symindex")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "arm64.symindex")
	out, err := os.Create(path)
	if err != nil {
		log.Fatal(err)
	}
	if err := e.WriteIndex(out); err != nil {
		log.Fatal(err)
	}
	if err := out.Close(); err != nil {
		log.Fatal(err)
	}

	idx, err := symstore.NewIndexEntry(path)
	if err != nil {
		log.Fatal(err)
	}
	const addr = 0x1000005dc
	for _, fr := range idx.Resolve(symstore.Frame{Address: addr, LookupAddress: addr}, addr, symstore.ResolveOptions{}) {
		fmt.Println(fr.Symbol, fr.SourceLocation())
	}
	// Output:
	// deepest chain.c:65
}
