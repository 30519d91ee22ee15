package minidump

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/internal/testcorpus"
	"github.com/stackimage/stackimage/internal/testtool"
)

// FuzzParse parses arbitrary bytes as a minidump. It must never panic,
// must allocate no more than allocBudget of the input's size, and every
// region and register it returns must be usable. Seeds are round-trip
// dumps of the four architectures and, when the corpus is present, its
// real dumps (read at test time, never committed).
func FuzzParse(f *testing.F) {
	for _, arch := range []*archregs.Arch{archregs.X86_64, archregs.I386, archregs.ARMV7, archregs.ARM64} {
		for _, mem64 := range []bool{false, true} {
			f.Add(writeDump(f, testInput(f, arch, mem64)))
		}
	}
	if dir, err := testcorpus.Find(); err == nil {
		paths, _ := filepath.Glob(filepath.Join(dir, "minidump", "*.dmp"))
		for _, p := range paths {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var d *Dump
		if n := testtool.HeapAllocated(func() { d, _ = Parse(bytes.NewReader(b), int64(len(b))) }, allocBudget(len(b))); n > allocBudget(len(b)) {
			t.Fatalf("Parse allocated %d bytes for %d bytes of input, budget %d", n, len(b), allocBudget(len(b)))
		}
		if d == nil {
			return
		}
		p := make([]byte, 64)
		for _, r := range d.Memory.Regions() {
			n := min(r.Size, uint64(len(p)))
			if got, err := d.Memory.ReadMemory(p[:n], r.Addr); err != nil || got != int(n) {
				t.Fatalf("ReadMemory(%d bytes at region %#x) = %d, %v", n, r.Addr, got, err)
			}
		}
		for _, th := range d.Threads {
			if r := th.Registers(); r != nil {
				r.Values()
			}
		}
		for _, e := range d.Errors {
			_ = e.Error()
		}
	})
}
