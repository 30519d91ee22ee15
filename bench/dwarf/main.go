// Command dwarf compares debuginfo with llvm-symbolizer on the same
// addresses of one Mach-O DWARF file: the whole job each way (open the
// file, index or parse the DWARF, answer N lookups with inline chains),
// the answers checked for equality, and the wall times and their ratio.
//
//	go run ./bench/dwarf -obj crash.dSYM/Contents/Resources/DWARF/crash -n 100000
//
// The DWARF sections are read with the standard library's debug/macho, so
// the driver does not depend on the image package.
package main

import (
	"bufio"
	"bytes"
	"debug/macho"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path"
	"strings"
	"time"

	"github.com/stackimage/stackimage/debuginfo"
)

func main() {
	obj := flag.String("obj", "", "Mach-O file with DWARF (a dSYM's DWARF file or an executable)")
	arch := flag.String("arch", "", "slice of a fat file: x86_64 or arm64")
	n := flag.Int("n", 100_000, "addresses to look up")
	sym := flag.String("symbolizer", "llvm-symbolizer", "llvm-symbolizer binary")
	flag.Parse()
	if *obj == "" {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(*obj, *arch, *n, *sym); err != nil {
		fmt.Fprintln(os.Stderr, "dwarf:", err)
		os.Exit(1)
	}
}

// answer is one address's frames as text, one "name file:line:col" each.
type answer []string

func run(obj, arch string, n int, sym string) error {
	// Sample addresses once, from an index built outside the timings.
	ix, err := index(obj, arch)
	if err != nil {
		return err
	}
	lo, hi, ok := ix.Bounds()
	if !ok {
		return fmt.Errorf("%s: no line tables", obj)
	}
	r := rand.New(rand.NewPCG(1, 2))
	addrs := make([]uint64, n)
	for i := range addrs {
		addrs[i] = lo + r.Uint64N(hi-lo)
	}
	st := ix.Stats()
	fmt.Printf("%s: %d line rows, %d functions; %d addresses in [%#x, %#x)\n", obj, st.Rows, st.Functions, n, lo, hi)

	t0 := time.Now()
	ours, err := symbolizeOurs(obj, arch, addrs)
	if err != nil {
		return err
	}
	dOurs := time.Since(t0)

	t0 = time.Now()
	theirs, err := symbolizeLLVM(sym, obj, arch, addrs)
	if err != nil {
		return err
	}
	dLLVM := time.Since(t0)

	diffs := 0
	for i := range addrs {
		// llvm-symbolizer falls back to the symbol table where the DWARF
		// has no function (a name with no file or line); debuginfo answers
		// from DWARF only, and symbolize asks symtab. Compare DWARF
		// answers only.
		ours[i], theirs[i] = dwarfOnly(ours[i]), dwarfOnly(theirs[i])
		if strings.Join(ours[i], "|") != strings.Join(theirs[i], "|") {
			if diffs < 5 {
				fmt.Printf("differ at %#x:\n  ours: %q\n  llvm: %q\n", addrs[i], ours[i], theirs[i])
			}
			diffs++
		}
	}
	fmt.Printf("debuginfo:       %v (index + %d lookups)\n", dOurs.Round(time.Millisecond), n)
	fmt.Printf("llvm-symbolizer: %v (whole process)\n", dLLVM.Round(time.Millisecond))
	fmt.Printf("ratio: %.1fx; answers differ at %d of %d addresses\n", float64(dLLVM)/float64(dOurs), diffs, n)
	return nil
}

// dwarfOnly turns an answer with one frame and no source position into
// the no-answer marker.
func dwarfOnly(a answer) answer {
	if len(a) == 1 && strings.HasSuffix(a[0], " :0:0") {
		return answer{"?? :0:0"}
	}
	return a
}

func index(obj, arch string) (*debuginfo.Index, error) {
	secs, err := sections(obj, arch)
	if err != nil {
		return nil, err
	}
	return debuginfo.New(secs)
}

// symbolizeOurs does the whole job in process: read, index, look up, format.
func symbolizeOurs(obj, arch string, addrs []uint64) ([]answer, error) {
	ix, err := index(obj, arch)
	if err != nil {
		return nil, err
	}
	out := make([]answer, len(addrs))
	for i, a := range addrs {
		frames, ok := ix.Lookup(a)
		if !ok {
			out[i] = answer{"?? :0:0"}
			continue
		}
		for _, f := range frames {
			name := f.LinkageName
			if name == "" {
				name = f.Function
			}
			if name == "" {
				name = "??"
			}
			out[i] = append(out[i], fmt.Sprintf("%s %s:%d:%d", name, f.File, f.Line, f.Column))
		}
	}
	return out, nil
}

// symbolizeLLVM runs llvm-symbolizer over the addresses.
func symbolizeLLVM(sym, obj, arch string, addrs []uint64) ([]answer, error) {
	args := []string{"--obj=" + obj, "--inlines", "--functions=linkage", "--no-demangle", "--output-style=JSON"}
	if arch != "" {
		args = append(args, "--default-arch="+arch)
	}
	var in bytes.Buffer
	for _, a := range addrs {
		fmt.Fprintf(&in, "%#x\n", a)
	}
	cmd := exec.Command(sym, args...)
	cmd.Stdin = &in
	cmd.Stderr = os.Stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	var out []answer
	sc := bufio.NewScanner(stdout)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var j struct {
			Symbol []struct {
				FunctionName, FileName string
				Line, Column           int
			}
		}
		if err := json.Unmarshal(sc.Bytes(), &j); err != nil {
			return nil, fmt.Errorf("llvm-symbolizer output %q: %w", sc.Text(), err)
		}
		var ans answer
		for _, s := range j.Symbol {
			name, file := s.FunctionName, s.FileName
			if name == "" {
				name = "??"
			}
			if file != "" {
				file = path.Clean(file) // debug/dwarf cleans joined paths
			}
			ans = append(ans, fmt.Sprintf("%s %s:%d:%d", name, file, s.Line, s.Column))
		}
		if len(ans) == 1 && ans[0] == "?? :0:0" {
			ans = answer{"?? :0:0"}
		}
		out = append(out, ans)
	}
	if err := cmd.Wait(); err != nil {
		return nil, fmt.Errorf("llvm-symbolizer: %w", err)
	}
	if len(out) != len(addrs) {
		return nil, fmt.Errorf("llvm-symbolizer answered %d of %d addresses", len(out), len(addrs))
	}
	return out, nil
}

// sections reads the __DWARF sections keyed as debuginfo.New expects.
func sections(obj, arch string) (map[string][]byte, error) {
	var f *macho.File
	if ff, err := macho.OpenFat(obj); err == nil {
		defer ff.Close()
		want := map[string]macho.Cpu{"x86_64": macho.CpuAmd64, "arm64": macho.CpuArm64}[arch]
		for _, a := range ff.Arches {
			if a.Cpu == want {
				f = a.File
			}
		}
		if f == nil {
			return nil, fmt.Errorf("%s: fat file without a %q slice (use -arch)", obj, arch)
		}
	} else {
		f, err = macho.Open(obj)
		if err != nil {
			return nil, err
		}
		defer f.Close()
	}
	secs := make(map[string][]byte)
	for _, s := range f.Sections {
		if s.Seg != "__DWARF" {
			continue
		}
		b, err := s.Data()
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", obj, s.Name, err)
		}
		secs[strings.TrimPrefix(s.Name, "__")] = b
	}
	return secs, nil
}
