package breakpadsym

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stackimage/stackimage/internal/testcorpus"
)

// FuzzParse checks that no input makes Parse, Lookup, CFIRules or Eval
// panic, and that what Parse keeps is bounded by the input's size.
func FuzzParse(f *testing.F) {
	f.Add([]byte(sampleText()))
	for _, line := range []string{
		"FUNC ffffffffffffffff 1 0 x\n",
		"INLINE 1 2 3 4 10 10 20 10\n",
		"STACK CFI INIT 0 ffffffffffffffff .cfa: $rsp $rsp = .ra: .cfa ^ ^ ^\n",
		"STACK CFI 1 .cfa: 1 0 / .ra: 1 0 @\n",
		"PUBLIC m 0 0 \n1 1 1 1\n",
	} {
		f.Add([]byte(sampleText() + line))
	}
	if dir, err := testcorpus.Find(); err == nil {
		for _, rel := range []string{"minidump/sentry_example.sym", "symbolic/symbolic-testutils/fixtures/macos/crash.inlines.sym"} {
			if data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(rel))); err == nil {
				f.Add(data)
			}
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, _ := Parse(data)
		s := file.Stats()
		// Every kept record, line record and INLINE range takes at least
		// two bytes of input ("0 " and a separator).
		kept := s.Files + s.InlineOrigins + s.Funcs + s.Lines + s.Inlines + s.Publics + s.CFIInits + s.CFIDeltas
		if 2*kept > len(data)+2 {
			t.Fatalf("%d records kept from %d bytes", kept, len(data))
		}
		if len(file.Warnings) > maxWarnings+2 {
			t.Fatalf("%d warnings kept", len(file.Warnings))
		}
		mem := func(addr uint64, size int) (uint64, error) {
			if addr%3 == 0 {
				return 0, errors.New("unreadable")
			}
			return addr * 7, nil
		}
		regs := func(name string) (uint64, bool) { return uint64(len(name)) << 12, len(name)%2 == 0 }
		probes := []uint64{0, 1, 0x1000, 0x1012, 1<<64 - 1}
		for _, fn := range file.funcs {
			probes = append(probes, fn.Address, fn.Address+fn.Size/2, fn.Address+fn.Size)
		}
		for _, c := range file.cfi {
			probes = append(probes, c.address, c.address+c.size-1)
			for _, d := range c.deltas {
				probes = append(probes, d.address)
			}
		}
		if len(probes) > 200 {
			probes = probes[:200]
		}
		for _, addr := range probes {
			if sym, err := file.Lookup(addr); err == nil && len(sym.Frames) == 0 {
				t.Fatalf("Lookup(%#x) found %q with no frames", addr, sym.Name)
			}
			if rules, ok := file.CFIRules(addr); ok {
				rules.Eval(regs, mem, 8)
				rules.Eval(regs, mem, 4)
			}
		}
		ReadModuleLine(bytes.NewReader(data))
	})
}
