// Command bigdsym builds a real-size dSYM for the benchmarks: a generated
// arm64 macOS program of many C++ translation units (templates, deep
// inlining chains), compiled with clang-16 -g -O1 freestanding, linked
// with ld64.lld-16 (which writes the debug map) and linked into a dSYM by
// dsymutil-16. Its DWARF file is over 200 MB.
//
//	go run ./bench/bigdsym [-units 110] [-dir DIR] [-j 2]
//
// The build goes into the user's cache directory
// (os.UserCacheDir()/stackimage-bigdsym/vN-UNITS), never into the
// repository, and is reused when it is there: a finished build leaves a
// stamp file. The sources are generated from a fixed seed, so every build
// is the same program. The path of the dSYM's DWARF file is printed on
// stdout; sizes, counts and timings go to stderr.
package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// version names the generator's output: change it whenever the generated
// sources or the build commands change, so that an old build is not
// reused.
const version = "v1"

// Tools the build needs; make fixture-deps installs them on Debian.
var tools = []string{"clang-16", "ld64.lld-16", "dsymutil-16"}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bigdsym:", err)
		os.Exit(1)
	}
}

func run() error {
	units := flag.Int("units", 110, "translation units to generate")
	dir := flag.String("dir", "", "build directory (default: the user's cache directory)")
	jobs := flag.Int("j", 2, "compilers to run at once")
	flag.Parse()
	if *units < 1 {
		return fmt.Errorf("-units %d: want at least 1", *units)
	}
	for _, t := range tools {
		if _, err := exec.LookPath(t); err != nil {
			return fmt.Errorf("%s not found (make fixture-deps installs it): %w", t, err)
		}
	}
	if *dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			cache = os.TempDir()
		}
		*dir = filepath.Join(cache, "stackimage-bigdsym", fmt.Sprintf("%s-%d", version, *units))
	}
	b := builder{dir: *dir, units: *units, jobs: max(*jobs, 1)}
	dwarfFile, err := b.build()
	if err != nil {
		return err
	}
	fmt.Println(dwarfFile)
	return nil
}

type builder struct {
	dir   string
	units int
	jobs  int
}

func (b *builder) path(name string) string { return filepath.Join(b.dir, name) }

// build generates, compiles, links and runs dsymutil unless a finished
// build is there, and returns the dSYM's DWARF file.
func (b *builder) build() (string, error) {
	bin := b.path("bigdsym")
	dwarfFile := filepath.Join(bin+".dSYM", "Contents", "Resources", "DWARF", "bigdsym")
	stamp := b.path("done")
	if report, err := os.ReadFile(stamp); err == nil {
		fmt.Fprintf(os.Stderr, "bigdsym: reusing %s\n%s", b.dir, report)
		return dwarfFile, nil
	}
	if err := os.MkdirAll(b.dir, 0o755); err != nil {
		return "", err
	}
	start := time.Now()
	if err := b.generate(); err != nil {
		return "", err
	}
	if err := b.compile(); err != nil {
		return "", err
	}
	compiled := time.Since(start)
	objs := []string{"-arch", "arm64", "-platform_version", "macos", "11.0", "11.0", "-e", "_start", "-o", bin}
	for u := 0; u <= b.units; u++ {
		objs = append(objs, b.path(unitName(u)+".o"))
	}
	if err := runTool("ld64.lld-16", objs...); err != nil {
		return "", err
	}
	linked := time.Since(start)
	os.RemoveAll(bin + ".dSYM")
	if err := runTool("dsymutil-16", "--num-threads", fmt.Sprint(b.jobs), bin, "-o", bin+".dSYM"); err != nil {
		return "", err
	}
	total := time.Since(start)
	info, err := os.Stat(dwarfFile)
	if err != nil {
		return "", err
	}
	binInfo, err := os.Stat(bin)
	if err != nil {
		return "", err
	}
	var report bytes.Buffer
	fmt.Fprintf(&report, "binary %s: %d bytes\n", bin, binInfo.Size())
	fmt.Fprintf(&report, "dSYM DWARF file %s: %d bytes (%.1f MB), %d compile units\n", dwarfFile, info.Size(), float64(info.Size())/1e6, b.units+1)
	fmt.Fprintf(&report, "built with -j%d in %s: compile %s, link %s, dsymutil %s\n", b.jobs,
		total.Round(time.Second), compiled.Round(time.Second), (linked - compiled).Round(time.Second), (total - linked).Round(time.Second))
	os.Stderr.Write(report.Bytes())
	return dwarfFile, os.WriteFile(stamp, report.Bytes(), 0o644)
}

func runTool(name string, args ...string) error {
	cmd := exec.Command(name, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out.Bytes())
	}
	return nil
}

// compileFlags builds freestanding arm64 macOS objects with debug info and
// the unwind tables Apple's toolchains always emit.
var compileFlags = []string{"-g", "-O1", "-target", "arm64-apple-macos11",
	"-ffreestanding", "-nostdlib", "-fno-exceptions", "-fno-rtti", "-fno-builtin",
	"-fno-stack-protector", "-fasynchronous-unwind-tables", "-c"}

// compile compiles every unit whose object is missing or older than its
// source, b.jobs at a time.
func (b *builder) compile() error {
	todo := make(chan int)
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	for range b.jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for u := range todo {
				src, obj := b.path(unitName(u)+".cpp"), b.path(unitName(u)+".o")
				if fresh(obj, src) {
					continue
				}
				tmp := obj + ".tmp"
				args := append(append([]string{}, compileFlags...), "-I", b.dir, src, "-o", tmp)
				err := runTool("clang-16", args...)
				if err == nil {
					err = os.Rename(tmp, obj)
				}
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			}
		}()
	}
	for u := 0; u <= b.units; u++ {
		todo <- u
	}
	close(todo)
	wg.Wait()
	return errors.Join(errs...)
}

// fresh reports whether obj exists and is not older than src.
func fresh(obj, src string) bool {
	o, err := os.Stat(obj)
	if err != nil {
		return false
	}
	s, err := os.Stat(src)
	return err == nil && !o.ModTime().Before(s.ModTime())
}

// unitName names unit u's files; unit 0 holds the entry point.
func unitName(u int) string {
	if u == 0 {
		return "main"
	}
	return fmt.Sprintf("unit%03d", u)
}

// writeIfChanged leaves an unchanged file alone, so that its object is not
// compiled again.
func writeIfChanged(path string, data []byte) error {
	if old, err := os.ReadFile(path); err == nil && bytes.Equal(old, data) {
		return nil
	}
	return os.WriteFile(path, data, 0o644)
}

// generate writes the shared header, one source per unit and main.cpp.
func (b *builder) generate() error {
	if err := writeIfChanged(b.path("chain.h"), []byte(header)); err != nil {
		return err
	}
	var main bytes.Buffer
	main.WriteString("// Generated by bench/bigdsym: the entry point calls every unit.\n")
	for u := 1; u <= b.units; u++ {
		fmt.Fprintf(&main, "extern \"C\" unsigned long unit%03d_entry(unsigned long x, void *out);\n", u)
	}
	main.WriteString("extern \"C\" unsigned long start(unsigned long x, void *out) {\n")
	for u := 1; u <= b.units; u++ {
		fmt.Fprintf(&main, "  x = unit%03d_entry(x, out);\n", u)
	}
	main.WriteString("  return x;\n}\n")
	if err := writeIfChanged(b.path("main.cpp"), main.Bytes()); err != nil {
		return err
	}
	for u := 1; u <= b.units; u++ {
		if err := writeIfChanged(b.path(unitName(u)+".cpp"), unitSource(u)); err != nil {
			return err
		}
	}
	return nil
}

// header is included inside each unit's own namespace, so that every
// unit's instantiations are distinct types and functions (dsymutil would
// otherwise keep one copy of each type across units), while their inlined
// code is attributed to this one file, as a real library header's is.
const header = `// Generated by bench/bigdsym. Included inside a per-unit namespace.
template <typename T, int K> struct Acc {
  T first, second;
  int key;
  __attribute__((always_inline)) T sum() const { return first + second; }
};
template <typename T, int K> static inline __attribute__((always_inline)) T step0(T x) {
  Acc<T, K> acc{x, (T)K, K};
  T r = acc.sum();
  return r;
}
template <typename T, int K> static inline __attribute__((always_inline)) T step1(T x) {
  T y = step0<T, K>(x);
  return y ^ (T)K;
}
template <typename T, int K> static inline __attribute__((always_inline)) T step2(T x) {
  T y = step1<T, K>(x);
  return y + 1;
}
template <typename T, int K> static inline __attribute__((always_inline)) T step3(T x) {
  T y = step2<T, K>(x);
  return y * 3;
}
template <typename T, int K> static inline __attribute__((always_inline)) T step4(T x) {
  T y = step3<T, K>(x);
  return y - (T)(K >> 1);
}
template <typename T, int K> static inline __attribute__((always_inline)) T step5(T x) {
  T y = step4<T, K>(x);
  return y | 4;
}
// work is one out-of-line function per instantiation, with inlined
// chains of several depths in it.
template <typename T, int K> __attribute__((noinline)) T work(T x, T *out) {
  T y = step5<T, K>(x);
  out[0] = y;
  T z = step2<T, K>(x + y);
  out[1] = z;
  return step0<T, K>(z);
}
template <typename T, int K> __attribute__((noinline)) T shallow(T x, T *out) {
  T y = step1<T, K>(x);
  out[0] = y;
  return y;
}
`

// fieldWords name record fields, as a real program's would.
var fieldWords = []string{"count", "offset", "size", "flags", "owner", "next", "capacity", "generation", "hash", "state"}

// unitSource generates unit u: its own namespace holding many record types
// with a global of each (type descriptions are most of a real C++ dSYM),
// the header's templates instantiated at distinct arguments, and local
// helpers inlined from the unit's own file.
func unitSource(u int) []byte {
	rng := rand.New(rand.NewPCG(2026, uint64(u)))
	var s bytes.Buffer
	ns := fmt.Sprintf("bigdsym::module%03d", u)
	fmt.Fprintf(&s, "// Generated by bench/bigdsym (unit %d, fixed seed).\n", u)
	fmt.Fprintf(&s, "namespace %s {\n#include \"chain.h\"\n\n", ns)
	records := 3000 + rng.IntN(1000)
	for r := 0; r < records; r++ {
		fmt.Fprintf(&s, "struct Record%d {\n  unsigned long id;\n  unsigned count;\n", r)
		for f := 0; f < 15+rng.IntN(25); f++ {
			fmt.Fprintf(&s, "  unsigned long %s_%d;\n", fieldWords[rng.IntN(len(fieldWords))], f)
		}
		if r > 0 {
			fmt.Fprintf(&s, "  Record%d *parent;\n", r-1)
		}
		fmt.Fprintf(&s, "};\nRecord%d record%d;\n", r, r)
	}
	visits := 20
	for r := 0; r < visits; r++ {
		fmt.Fprintf(&s, "static inline __attribute__((always_inline)) unsigned long weigh%d(const Record%d *r) {\n  return r->id * %d + r->count;\n}\n", r, r, r+3)
		fmt.Fprintf(&s, "__attribute__((noinline)) unsigned long visit%d(const Record%d *r, unsigned long x) {\n  unsigned long w = weigh%d(r);\n  return work<unsigned long, %d>(x + w, (unsigned long *)&r->id);\n}\n", r, r, r, 1000+r)
	}
	s.WriteString("} // namespace\n\n")
	fmt.Fprintf(&s, "extern \"C\" unsigned long unit%03d_entry(unsigned long x, void *out) {\n", u)
	types := []string{"unsigned", "unsigned long", "unsigned long long"}
	n := 60 + rng.IntN(40)
	for k := 1; k <= n; k++ {
		t := types[rng.IntN(len(types))]
		fn := "work"
		if rng.IntN(4) == 0 {
			fn = "shallow"
		}
		fmt.Fprintf(&s, "  x += %s::%s<%s, %d>((%s)x, (%s *)out);\n", ns, fn, t, k, t, t)
	}
	for r := 0; r < visits; r++ {
		fmt.Fprintf(&s, "  x = %s::visit%d(&%s::record%d, x);\n", ns, r, ns, r)
	}
	s.WriteString("  return x;\n}\n")
	return s.Bytes()
}
