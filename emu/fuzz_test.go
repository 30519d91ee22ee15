//go:build unicorn

package emu

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/walker"
)

// FuzzScanLoadCommands feeds the loader's load-command scan arbitrary
// files: it must return facts or an error, never panic or read out of
// bounds, and the relocation check must accept or refuse what it returns.
func FuzzScanLoadCommands(f *testing.F) {
	dir := filepath.Join(repoRoot(f), "fixtures", "bin")
	entries, err := os.ReadDir(dir)
	if err != nil {
		f.Fatalf("fixtures: %v", err)
	}
	for _, e := range entries {
		if e.IsDir() {
			continue // a dSYM bundle
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte{0xce, 0xfa, 0xed, 0xfe})
	f.Fuzz(func(t *testing.T, data []byte) {
		f, err := image.NewFile(bytes.NewReader(data), "fuzz")
		if err != nil || f.Fat {
			return
		}
		facts, err := scanLoadCommands(f.Images[0], data)
		if err != nil {
			return
		}
		if len(facts.relocs) > maxRelocsPerFile {
			t.Fatalf("scan kept %d relocations, more than the bound %d", len(facts.relocs), maxRelocsPerFile)
		}
		_ = checkObjectRelocs(facts)
	})
}

// BenchmarkSweepStep measures what a sweep pays per instruction: reading
// the registers, walking the live machine's stack and taking the shadow
// chain, over a whole run of chain-arm64-O2.
// "bare" runs with no per-step work, for the emulator's own cost.
func BenchmarkSweepStep(b *testing.B) {
	path := filepath.Join(repoRoot(b), "fixtures", "bin", "chain-arm64-O2")
	b.Run("bare", func(b *testing.B) { benchRun(b, path, false) })
	b.Run("walk", func(b *testing.B) { benchRun(b, path, true) })
}

func benchRun(b *testing.B, path string, walk bool) {
	steps := 0
	for i := 0; i < b.N; i++ {
		m, err := New(archregs.ARM64)
		if err != nil {
			b.Fatal(err)
		}
		l, err := m.LoadFile(path, 0)
		if err != nil {
			b.Fatal(err)
		}
		entry, err := SymbolAddress(l.Image, "start")
		if err != nil {
			b.Fatal(err)
		}
		if err := m.SetEntry(entry); err != nil {
			b.Fatal(err)
		}
		opts := walker.Options{StackLow: m.StackLow, StackHigh: m.StackHigh}
		onStep := func(pc uint64) error {
			regs, err := m.Registers()
			if err != nil {
				return err
			}
			walker.Walk(regs, m, opts)
			_ = m.Shadow.Chain(pc)
			return nil
		}
		if !walk {
			onStep = nil
		}
		_, err = m.Run(RunOptions{OnStep: onStep})
		if err != nil {
			b.Fatal(err)
		}
		steps += m.Steps()
		m.Close()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(steps), "ns/insn")
}
