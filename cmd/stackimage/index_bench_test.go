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
	"github.com/stackimage/stackimage/internal/testcorpus"
	"github.com/stackimage/stackimage/symindex"
)

// indexBenchInput returns the Mach-O the index benchmarks read:
// STACKIMAGE_BENCH_BIN when set (the big dSYM's DWARF file of
// bench/bigdsym, say), else the darwin cmd/go build testcorpus makes.
func indexBenchInput(b *testing.B) string {
	if bin := os.Getenv("STACKIMAGE_BENCH_BIN"); bin != "" {
		return bin
	}
	bin, err := testcorpus.GoDarwinBinary()
	if err != nil {
		b.Skipf("no darwin cmd/go build: %v", err)
	}
	return bin
}

// BenchmarkIndexBuild times the index command on one input in process:
// with -cpuprofile, the profile of a build (docs/symindex.md).
func BenchmarkIndexBuild(b *testing.B) {
	bin := indexBenchInput(b)
	for b.Loop() {
		if status := run([]string{"index", "--symbols", bin, "--out", b.TempDir()}, nil, io.Discard, io.Discard); status != 0 {
			b.Fatalf("index: status %d", status)
		}
	}
}

// BenchmarkIndexAtos times atos -i on the input's index in process,
// 100,000 random addresses of __TEXT,__text on stdin, printing linkage
// names (--no-demangle, as GSYM does) and demangled ones, and one
// address given as an argument (a first answer): the whole command,
// opening the index included, as bench/gsym runs it.
func BenchmarkIndexAtos(b *testing.B) {
	bin := indexBenchInput(b)
	store := b.TempDir()
	if status := run([]string{"index", "--symbols", bin, "--out", store}, nil, io.Discard, io.Discard); status != 0 {
		b.Fatalf("index: status %d", status)
	}
	files, _ := filepath.Glob(filepath.Join(store, "*", "*"+symindex.Extension))
	if len(files) != 1 {
		b.Fatalf("index wrote %d files, want 1", len(files))
	}
	f, err := image.Open(bin)
	if err != nil {
		b.Fatal(err)
	}
	text, ok := f.Images[0].Section("__TEXT", "__text")
	f.Close()
	if !ok {
		b.Fatalf("%s: no __TEXT,__text", bin)
	}
	var in bytes.Buffer
	rng := rand.New(rand.NewPCG(1, 2))
	for range 100_000 {
		fmt.Fprintf(&in, "%#x\n", text.Addr+rng.Uint64N(text.Size))
	}
	first := string(bytes.TrimSpace(bytes.SplitN(in.Bytes(), []byte("\n"), 2)[0]))
	for _, bc := range []struct {
		name string
		args []string
	}{
		{"mangled", []string{"atos", "-i", "--no-demangle", "-o", files[0]}},
		{"demangled", []string{"atos", "-i", "-o", files[0]}},
		// One address: opening the index and a first answer.
		{"first", []string{"atos", "-i", "-o", files[0], first}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if status := run(bc.args, bytes.NewReader(in.Bytes()), io.Discard, io.Discard); status != 0 {
					b.Fatalf("atos: status %d", status)
				}
			}
		})
	}
}
