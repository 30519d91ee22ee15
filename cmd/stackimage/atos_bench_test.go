package main

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stackimage/stackimage/image"
)

// BenchmarkAtosStdin measures the atos command's whole job on a darwin
// build of cmd/go (the symtab benchmarks build and cache it): open, index
// and answer 100k addresses read from stdin.
func BenchmarkAtosStdin(b *testing.B) {
	cache, err := os.UserCacheDir()
	if err != nil {
		b.Skip(err)
	}
	matches, _ := filepath.Glob(filepath.Join(cache, "stackimage-symtab", "go-darwin-arm64-*"))
	if len(matches) == 0 {
		b.Skip("no darwin cmd/go build cached; run the symtab benchmarks first")
	}
	bin := matches[0]
	f, err := image.Open(bin)
	if err != nil {
		b.Fatal(err)
	}
	text, _ := f.Images[0].SectionFor(0)
	for _, s := range f.Images[0].Sections {
		if s.Name == "__text" {
			text = s
		}
	}
	var in bytes.Buffer
	rng := rand.New(rand.NewPCG(1, 2))
	for range 100_000 {
		fmt.Fprintf(&in, "%#x\n", text.Addr+rng.Uint64N(text.Size))
	}
	b.ResetTimer()
	for b.Loop() {
		if status := run([]string{"atos", "--no-debug-info", "-o", bin}, bytes.NewReader(in.Bytes()), io.Discard, io.Discard); status != 0 {
			b.Fatalf("status %d", status)
		}
	}
}
