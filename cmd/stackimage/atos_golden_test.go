package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stackimage/stackimage/image"
)

// TestAtosMatchesLLVMSymbolizer runs "stackimage atos" over the addresses
// of symtab's golden files: every defined text symbol of the corpus's
// executables and dylibs, at its address and a few bytes inside, with
// llvm-symbolizer's answer for each. The command must give the same name,
// C's leading underscore aside. Where llvm-symbolizer answers a stripped
// image with its header symbol or with "??", the command must answer
// neither with a header symbol nor with nothing made up: symtab's golden
// test checks those addresses against the dSYMs.
func TestAtosMatchesLLVMSymbolizer(t *testing.T) {
	corpus, err := filepath.Abs(filepath.Join("..", "..", "..", "shared", "corpus"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(corpus); err != nil {
		t.Skipf("real-world corpus not found at %s (only CI and developers have it)", corpus)
	}
	goldens, err := filepath.Glob(filepath.Join("..", "..", "symtab", "testdata", "golden", "*.golden*"))
	if err != nil || len(goldens) == 0 {
		t.Fatalf("no golden files found: %v", err)
	}
	checked := 0
	for _, path := range goldens {
		g := readGolden(t, path)
		if len(g.probes) == 0 {
			continue // an image without text symbols: nothing to ask
		}
		bin := filepath.Join(corpus, filepath.FromSlash(g.obj))
		if g.obj == "go-darwin-arm64" {
			// symtab's tests build cmd/go for darwin into the user's cache;
			// its golden applies only to the build with the same UUID.
			if bin = cachedGoDarwin(g.uuid); bin == "" {
				t.Logf("no darwin cmd/go with UUID %s cached: symtab's TestGoldenGoBinary checks it", g.uuid)
				continue
			}
		}
		if _, err := os.Stat(bin); err != nil {
			t.Errorf("%s: the corpus has no %s", filepath.Base(path), g.obj)
			continue
		}
		t.Run(filepath.Base(path), func(t *testing.T) {
			var in, out, stderr bytes.Buffer
			for _, p := range g.probes {
				in.WriteString(p.addr + "\n")
			}
			args := []string{"atos", "--no-demangle", "-o", bin, "-arch", g.arch}
			if status := run(args, &in, &out, &stderr); status != 0 {
				t.Fatalf("atos %s: status %d: %s", g.obj, status, stderr.String())
			}
			answers := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			if len(answers) != len(g.probes) {
				t.Fatalf("atos gave %d answers for %d addresses", len(answers), len(g.probes))
			}
			for i, p := range g.probes {
				got := atosSymbol(answers[i])
				want := strings.TrimPrefix(p.name, "_")
				switch {
				case p.name == "??" || strings.HasPrefix(p.name, "_mh_") || strings.HasPrefix(p.name, "__mh_"):
					if strings.Contains(got, "mh_") && strings.HasSuffix(got, "_header") {
						t.Errorf("atos %s = %q: a header symbol is never an answer", p.addr, answers[i])
					}
				case got != want && got != p.name:
					t.Errorf("atos %s = %q, want %s (llvm-symbolizer)", p.addr, answers[i], want)
				}
				checked++
			}
		})
	}
	t.Logf("%d addresses checked against llvm-symbolizer's answers", checked)
}

type golden struct {
	obj, arch, uuid string
	probes          []struct{ addr, name string }
}

// readGolden reads a golden file: "# llvm-symbolizer --obj=PATH ...",
// "# arch ARCH uuid UUID", then "ADDRESS NAME" lines.
func readGolden(t *testing.T, path string) golden {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		if r, err = gzip.NewReader(f); err != nil {
			t.Fatal(err)
		}
	}
	var g golden
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		switch {
		case strings.HasPrefix(line, "# llvm-symbolizer"):
			for _, f := range fields {
				if obj, ok := strings.CutPrefix(f, "--obj="); ok {
					g.obj = obj
				}
			}
		case strings.HasPrefix(line, "# arch") && len(fields) >= 5:
			g.arch, g.uuid = fields[2], fields[4]
		case len(fields) == 2:
			g.probes = append(g.probes, struct{ addr, name string }{fields[0], fields[1]})
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if g.obj == "" || g.arch == "" {
		t.Fatalf("%s: not a golden file (obj %q, arch %q)", path, g.obj, g.arch)
	}
	return g
}

// atosSymbol takes the symbol out of an atos answer, "main (in App) + 16".
func atosSymbol(answer string) string {
	if i := strings.Index(answer, " (in "); i >= 0 {
		return answer[:i]
	}
	return answer
}

// cachedGoDarwin returns the darwin build of cmd/go that symtab's tests
// cached, when its UUID is uuid; "" otherwise.
func cachedGoDarwin(uuid string) string {
	cache, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	matches, _ := filepath.Glob(filepath.Join(cache, "stackimage-symtab", "go-darwin-arm64-*"))
	for _, m := range matches {
		f, err := image.Open(m)
		if err != nil {
			continue
		}
		ok := len(f.Images) == 1 && f.Images[0].UUID.String() == uuid
		f.Close()
		if ok {
			return m
		}
	}
	return ""
}
