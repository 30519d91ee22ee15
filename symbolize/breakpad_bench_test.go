package symbolize

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stackimage/stackimage/breakpadsym"
	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/uuid"
)

// The pair BenchmarkBreakpadResolve / BenchmarkLLVMSymbolizerDSYM times the
// same question answered two ways: the functions, files and lines (inline
// chains included) at every FUNC start + 2 (of FUNCs longer than
// 2 bytes) of the corpus's crash.sym, from
// the .sym file through Symbols, and from the dSYM it was made from by
// llvm-symbolizer. atos takes only Mach-O files, so the .sym side is the
// library path in this process (index the directory, parse on first
// lookup, Resolve each address), and llvm-symbolizer runs as a process per
// iteration, reading the addresses on stdin; the ratio of the two
// per-iteration times includes llvm-symbolizer's process start.
//
//	go test -run='^$' -bench='BreakpadResolve|LLVMSymbolizerDSYM' -benchtime=20x ./symbolize/

const crashTextVMAddr = 0x100000000 // __TEXT's vmaddr in the crash dSYM

type crashSymFixture struct {
	symPath, dsym string
	uuid          uuid.UUID
	rel           []uint64 // module-relative: every FUNC start + 2
}

func loadCrashSym(b *testing.B) crashSymFixture {
	b.Helper()
	dir := filepath.Join(corpusDir(b), "symbolic", "symbolic-testutils", "fixtures", "macos")
	fx := crashSymFixture{symPath: filepath.Join(dir, "crash.sym"),
		dsym: filepath.Join(dir, "crash.dSYM", "Contents", "Resources", "DWARF", "crash")}
	data, err := os.ReadFile(fx.symPath)
	if err != nil {
		b.Fatal(err)
	}
	f, err := breakpadsym.Parse(data)
	if err != nil {
		b.Fatal(err)
	}
	fx.uuid = f.Module.UUID()
	for _, fn := range f.Funcs() {
		// A FUNC of 2 bytes or less has no start + 2.
		if sym, err := f.Lookup(fn.Address + 2); err == nil && sym.Address == fn.Address {
			fx.rel = append(fx.rel, fn.Address+2)
		}
	}
	return fx
}

func BenchmarkBreakpadResolve(b *testing.B) {
	fx := loadCrashSym(b)
	dir := b.TempDir()
	if err := os.Symlink(fx.symPath, filepath.Join(dir, "crash.sym")); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		s := symstore.NewSymbols()
		if err := s.AddDir(context.Background(), dir); err != nil {
			b.Fatal(err)
		}
		for _, addr := range fx.rel {
			frames, err := s.Resolve(fx.uuid, nil, addr)
			if err != nil || frames[len(frames)-1].SymbolSource != symstore.SourceBreakpad {
				b.Fatalf("Resolve(%#x) = %v, %v; want a name from crash.sym", addr, frames, err)
			}
		}
		s.Close()
	}
	b.ReportMetric(float64(len(fx.rel)), "addrs/op")
}

func BenchmarkLLVMSymbolizerDSYM(b *testing.B) {
	fx := loadCrashSym(b)
	llvm, err := exec.LookPath("llvm-symbolizer")
	if err != nil {
		b.Skip("llvm-symbolizer is not installed: nothing to compare with")
	}
	var in bytes.Buffer
	for _, addr := range fx.rel {
		fmt.Fprintf(&in, "%#x\n", crashTextVMAddr+addr)
	}
	var out []byte
	b.ResetTimer()
	for range b.N {
		cmd := exec.Command(llvm, "--obj="+fx.dsym, "--inlines")
		cmd.Stdin = bytes.NewReader(in.Bytes())
		if out, err = cmd.Output(); err != nil {
			b.Fatalf("%s: %v", cmd, err)
		}
	}
	b.StopTimer()
	// The outermost function at each address, by llvm-symbolizer (the last
	// of each address's frames) and by the .sym: where they differ, the
	// .sym says "<name omitted>" (dump_syms leaves out names it cannot
	// write) or spells a name otherwise.
	s := symstore.NewSymbols()
	defer s.Close()
	if err := s.AddFile(context.Background(), fx.symPath); err != nil {
		b.Fatal(err)
	}
	same := 0
	blocks := strings.Split(strings.TrimSpace(string(out)), "\n\n")
	for i, block := range blocks {
		if i >= len(fx.rel) {
			break
		}
		lines := bufio.NewScanner(strings.NewReader(block))
		var last string
		for n := 0; lines.Scan(); n++ {
			if n%2 == 0 {
				last = lines.Text()
			}
		}
		frames, err := s.Resolve(fx.uuid, nil, fx.rel[i])
		if err == nil && frames[len(frames)-1].Symbol == last {
			same++
		}
	}
	b.ReportMetric(float64(len(fx.rel)), "addrs/op")
	b.ReportMetric(float64(same)/float64(len(fx.rel)), "same-function")
}

// BenchmarkLLVMSymbolizerDSYMStart is llvm-symbolizer on the dSYM with one
// address: its process start and loading, to set against
// BenchmarkLLVMSymbolizerDSYM's time for all the addresses.
func BenchmarkLLVMSymbolizerDSYMStart(b *testing.B) {
	fx := loadCrashSym(b)
	llvm, err := exec.LookPath("llvm-symbolizer")
	if err != nil {
		b.Skip("llvm-symbolizer is not installed: nothing to compare with")
	}
	in := fmt.Sprintf("%#x\n", crashTextVMAddr+fx.rel[0])
	for range b.N {
		cmd := exec.Command(llvm, "--obj="+fx.dsym, "--inlines")
		cmd.Stdin = strings.NewReader(in)
		if _, err := cmd.Output(); err != nil {
			b.Fatalf("%s: %v", cmd, err)
		}
	}
}
