package symtab

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stackimage/stackimage/image"
)

// The golden files hold llvm-symbolizer's answers for every defined text
// symbol of the corpus's executables and dylibs and of a darwin build of
// cmd/go: at the symbol's address and a few bytes inside it. Refresh them
// with
//
//	go test ./symtab/ -run TestGolden -update
//
// which needs llvm-symbolizer (LLVM_SYMBOLIZER names another one; the
// committed files were made with LLVM 14's).
var update = flag.Bool("update", false, "rewrite testdata/golden from llvm-symbolizer's answers")

const goldenDir = "testdata/golden"

// probe is one address and llvm-symbolizer's answer for it ("??" for none).
type probe struct {
	addr uint64
	name string
}

// goldenKey names an image's golden file: its corpus path, its
// architecture and its UUID, so that a changed file never meets an old
// answer.
func goldenKey(rel string, im *image.Image) string {
	clean := regexp.MustCompile(`[^A-Za-z0-9._-]+`).ReplaceAllString(rel, "_")
	return fmt.Sprintf("%s.%s.%s.golden", clean, im.ArchName(), im.UUID)
}

// probes returns the addresses to check in an image: every distinct
// address of a defined symbol of __TEXT,__text, and one a few bytes inside
// it (up to 4, less when the next symbol or the section's end is nearer).
// They are read from the nlist entries directly, not through Table, so
// that a bug in Table cannot hide a symbol from the test.
func probes(t *testing.T, im *image.Image) []uint64 {
	text, ok := findSection(im, "__TEXT", "__text")
	if !ok {
		return nil
	}
	raw, ok, err := im.Symtab()
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		return nil
	}
	size := nlistSize
	if raw.Is64 {
		size = nlist64Size
	}
	var addrs []uint64
	for i := 0; i < raw.NSyms; i++ {
		b := raw.Syms[i*size:]
		typ, sect := b[4], b[5]
		value := uint64(raw.ByteOrder.Uint32(b[8:]))
		if raw.Is64 {
			value = raw.ByteOrder.Uint64(b[8:])
		}
		if typ&nStab == 0 && typ&nType == nSect && int(sect) == text.Index {
			addrs = append(addrs, value)
		}
	}
	slices.Sort(addrs)
	addrs = slices.Compact(addrs)
	var out []uint64
	for i, a := range addrs {
		out = append(out, a)
		next := text.Addr + text.Size
		if i+1 < len(addrs) {
			next = addrs[i+1]
		}
		if a >= next || next-a < 2 {
			continue
		}
		out = append(out, a+min(4, next-a-1))
	}
	return out
}

// goldenImage is one image the test covers.
type goldenImage struct {
	rel  string // path in the corpus, or the Go binary's name
	path string
	im   *image.Image
}

// corpusImages returns the corpus's executables and dylibs, each slice of
// each file.
func corpusImages(t *testing.T) []goldenImage {
	dir := corpusDir(t)
	var out []goldenImage
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !d.Type().IsRegular() {
			return err
		}
		f, err := image.Open(path)
		if err != nil {
			return nil // not Mach-O, or not one the image package opens
		}
		rel, _ := filepath.Rel(dir, path)
		for _, im := range f.Images {
			if im.Type == image.TypeExecute || im.Type == image.TypeDylib {
				out = append(out, goldenImage{filepath.ToSlash(rel), path, im})
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestGoldenCorpus(t *testing.T) {
	images := corpusImages(t)
	if len(images) == 0 {
		t.Fatal("the corpus holds no executable or dylib the image package opens")
	}
	for _, g := range images {
		t.Run(goldenKey(g.rel, g.im), func(t *testing.T) {
			checkGolden(t, g, false)
		})
	}
}

func TestGoldenGoBinary(t *testing.T) {
	path := goDarwinBinary(t)
	f, err := image.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	checkGolden(t, goldenImage{"go-darwin-arm64", path, f.Images[0]}, true)
}

// checkGolden compares our answers for the image's probes with the golden
// ones. When the golden file is missing and live is set (the Go binary,
// whose UUID changes with the toolchain), llvm-symbolizer answers instead.
func checkGolden(t *testing.T, g goldenImage, live bool) {
	key := goldenKey(g.rel, g.im)
	addrs := probes(t, g.im)
	if len(addrs) == 0 {
		t.Logf("%s: no text symbols", key)
	}
	var want []probe
	var err error
	switch {
	case *update:
		if want, err = symbolize(g, addrs); err != nil {
			t.Fatal(err)
		}
		if err := writeGolden(key, g, want); err != nil {
			t.Fatal(err)
		}
	default:
		want, err = readGolden(key)
		if errors.Is(err, fs.ErrNotExist) && live {
			t.Logf("no golden file %s for this toolchain's build: asking llvm-symbolizer", key)
			if want, err = symbolize(g, addrs); err != nil {
				t.Fatalf("%v\n(refresh the golden files with: go test ./symtab/ -run TestGolden -update)", err)
			}
		} else if err != nil {
			t.Fatalf("%v\n(refresh the golden files with: go test ./symtab/ -run TestGolden -update)", err)
		}
	}
	if got := len(want); got != len(addrs) {
		t.Fatalf("golden file %s has %d answers, the image has %d probe addresses; refresh it with -update", key, got, len(addrs))
	}
	tab, err := New(g.im)
	if err != nil {
		t.Fatal(err)
	}
	rejected := llvmRejects[g.rel]
	exceptions := map[string]int{}
	for i, p := range want {
		if p.addr != addrs[i] {
			t.Fatalf("golden file %s answer %d is for %#x, the image's probe is %#x; refresh it with -update", key, i, p.addr, addrs[i])
		}
		got, err := tab.Lookup(p.addr)
		ok := err == nil
		name := "??"
		if ok {
			name = got.Name
		}
		if name == p.name {
			continue
		}
		if rejected != "" {
			// llvm-symbolizer answered nothing: check that the probe's
			// own symbol, at most 4 bytes below it, answers.
			if !ok || got.Source != SourceSymtab || p.addr-got.Addr > 4 {
				t.Errorf("Lookup(%#x) = %q at %#x (%v), %v; want the text symbol at most 4 bytes below", p.addr, got.Name, got.Addr, got.Source, ok)
			}
			exceptions["llvm-symbolizer rejects the file: "+rejected]++
			continue
		}
		if why := exception(tab, g.im, p, got, ok); why != "" {
			exceptions[why]++
			continue
		}
		t.Errorf("Lookup(%#x) = %q (%v), want %q (llvm-symbolizer)", p.addr, name, got.Source, p.name)
	}
	for why, n := range exceptions {
		t.Logf("%d answers differ from llvm-symbolizer's on purpose: %s", n, why)
	}
}

// llvmRejects lists the corpus files llvm-symbolizer refuses to read, and
// why; their golden answers are all "??".
var llvmRejects = map[string]string{
	"go-debug-macho/gcc-amd64-darwin-exec-with-bad-dysym": "its LC_DYSYMTAB's undefined symbols run past the symbol table, " +
		"and LLVM checks that table before anything else; we never need LC_DYSYMTAB",
}

// exception returns why our answer may differ from llvm-symbolizer's for
// this probe, or "" when it may not.
func exception(tab *Table, im *image.Image, p probe, got Symbol, ok bool) string {
	// llvm-symbolizer answers the mach header's symbol for addresses
	// of a stripped image: it marks the start of __TEXT, not code.
	if isMachHeader("_"+p.name) || isMachHeader(p.name) {
		if ok && isMachHeader(got.RawName) {
			return ""
		}
		return "llvm-symbolizer answers the mach header's symbol, which is no function"
	}
	// llvm-symbolizer sizes a symbol up to the next one in its section,
	// so a symbol at the section's very end (Go's runtime.etext) answers
	// for it; the address is in no section's range, and not code.
	if sec, found := im.SectionFor(p.addr); !found || sec.Name != "__text" {
		if !ok {
			return "the address is past the end of __text"
		}
	}
	// A function start between llvm-symbolizer's symbol and the address
	// means a function the symbol table does not name.
	if ok && got.Source != SourceSymtab {
		return "a function start lies between the nearest symbol and the address"
	}
	return ""
}

// symbolize asks llvm-symbolizer for the probes' names.
func symbolize(g goldenImage, addrs []uint64) ([]probe, error) {
	tool := os.Getenv("LLVM_SYMBOLIZER")
	if tool == "" {
		tool = "llvm-symbolizer"
	}
	obj := g.path
	if f, err := image.Open(g.path); err == nil {
		if f.Fat {
			obj += ":" + g.im.ArchName()
		}
		f.Close()
	}
	var in bytes.Buffer
	for _, a := range addrs {
		fmt.Fprintf(&in, "%#x\n", a)
	}
	cmd := exec.Command(tool, "--obj="+obj, "--functions=linkage", "--no-inlines", "--no-demangle")
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("running %s on %s: %v", tool, obj, err)
	}
	names, err := parseSymbolizer(out)
	if err != nil {
		return nil, fmt.Errorf("%s on %s: %v", tool, obj, err)
	}
	if len(names) != len(addrs) {
		return nil, fmt.Errorf("%s on %s answered %d addresses of %d", tool, obj, len(names), len(addrs))
	}
	ps := make([]probe, len(addrs))
	for i, a := range addrs {
		ps[i] = probe{a, names[i]}
	}
	return ps, nil
}

// parseSymbolizer reads llvm-symbolizer's answers: per address, the
// function's name, its file:line:column, and an empty line.
func parseSymbolizer(out []byte) ([]string, error) {
	var names []string
	blocks := strings.Split(strings.TrimRight(string(out), "\n"), "\n\n")
	if len(blocks) == 1 && blocks[0] == "" {
		return nil, nil
	}
	for i, b := range blocks {
		lines := strings.Split(b, "\n")
		if len(lines) != 2 {
			return nil, fmt.Errorf("answer %d has %d lines, want 2: %q", i, len(lines), b)
		}
		names = append(names, lines[0])
	}
	return names, nil
}

func goldenPath(key string) string { return filepath.Join(goldenDir, key) }

// writeGolden writes the answers, gzipped when they are large (the Go
// binary's).
func writeGolden(key string, g goldenImage, ps []probe) error {
	var b bytes.Buffer
	fmt.Fprintf(&b, "# llvm-symbolizer --obj=%s --functions=linkage --no-inlines --no-demangle\n", g.rel)
	fmt.Fprintf(&b, "# arch %s uuid %s\n", g.im.ArchName(), g.im.UUID)
	for _, p := range ps {
		fmt.Fprintf(&b, "%#x %s\n", p.addr, p.name)
	}
	if err := os.MkdirAll(goldenDir, 0o755); err != nil {
		return err
	}
	os.Remove(goldenPath(key))
	os.Remove(goldenPath(key) + ".gz")
	if b.Len() < 64<<10 {
		return os.WriteFile(goldenPath(key), b.Bytes(), 0o644)
	}
	var z bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
	zw.Write(b.Bytes())
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(goldenPath(key)+".gz", z.Bytes(), 0o644)
}

// readGolden reads a golden file, plain or gzipped.
func readGolden(key string) ([]probe, error) {
	var r io.Reader
	f, err := os.Open(goldenPath(key))
	if errors.Is(err, fs.ErrNotExist) {
		f, err = os.Open(goldenPath(key) + ".gz")
		if err != nil {
			return nil, err
		}
		defer f.Close()
		if r, err = gzip.NewReader(f); err != nil {
			return nil, fmt.Errorf("%s.gz: %v", key, err)
		}
	} else if err != nil {
		return nil, err
	} else {
		defer f.Close()
		r = f
	}
	var ps []probe
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		addr, name, ok := strings.Cut(line, " ")
		a, err := strconv.ParseUint(strings.TrimPrefix(addr, "0x"), 16, 64)
		if !ok || err != nil {
			return nil, fmt.Errorf("%s:%d: want \"0xADDR NAME\", got %q", key, n, line)
		}
		ps = append(ps, probe{a, name})
	}
	return ps, sc.Err()
}

// TestStrippedAgainstDSYM checks the function-start fallback on a stripped
// binary of the corpus against the symbols of its own dSYM: every address
// of every function is answered by a function start that is, in the dSYM, a
// text symbol's address, and never by the mach header.
func TestStrippedAgainstDSYM(t *testing.T) {
	dir := corpusDir(t)
	bin := filepath.Join(dir, "macsymbolicator/MacSymbolicatorTests/Binaries/CrashingTest")
	dsym := filepath.Join(dir, "macsymbolicator/MacSymbolicatorTests/Resources/dSYMs/CrashingTest.dSYM/Contents/Resources/DWARF/CrashingTest")
	bf, err := image.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer bf.Close()
	df, err := image.Open(dsym)
	if err != nil {
		t.Fatal(err)
	}
	defer df.Close()
	for _, im := range bf.Images {
		t.Run(im.ArchName(), func(t *testing.T) {
			dim, err := df.ByUUID(im.UUID)
			if err != nil {
				t.Fatal(err)
			}
			real, err := NewFromParts(mustSymtab(t, dim), dim.Sections, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			tab, err := New(im)
			if err != nil {
				t.Fatal(err)
			}
			text, ok := findSection(im, "__TEXT", "__text")
			if !ok {
				t.Fatal("no __TEXT,__text")
			}
			checked := 0
			for addr := text.Addr; addr < text.Addr+text.Size; addr += 2 {
				want, werr := real.Lookup(addr)
				got, err := tab.Lookup(addr)
				gok, wok := err == nil, werr == nil
				if !gok || got.Source == SourceSymtab {
					t.Fatalf("Lookup(%#x) = %q (%v), %v; want an answer from function starts or exports", addr, got.Name, got.Source, gok)
				}
				if !wok {
					continue
				}
				checked++
				if got.Addr != want.Addr {
					t.Fatalf("Lookup(%#x) = %q at %#x, want the function at %#x (%s in the dSYM)", addr, got.Name, got.Addr, want.Addr, want.Name)
				}
				if got.Source == SourceFunctionStarts && got.Name != fmt.Sprintf("func_%x", want.Addr) {
					t.Fatalf("Lookup(%#x) = %q, want %q", addr, got.Name, fmt.Sprintf("func_%x", want.Addr))
				}
			}
			if checked == 0 {
				t.Fatal("the dSYM named no address of __text")
			}
		})
	}
}

func mustSymtab(t *testing.T, im *image.Image) image.RawSymtab {
	raw, ok, err := im.Symtab()
	if err != nil || !ok {
		t.Fatalf("%s: no symbol table: %v", im.Name, err)
	}
	return raw
}
