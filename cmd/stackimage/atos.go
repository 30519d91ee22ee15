package main

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/symbolize"
)

func runAtos(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("atos", "atos -o BINARY [-arch ARCH] [-l LOADADDR] [ADDR...]", stderr)
	binary := fs.String("o", "", "the binary (or dSYM DWARF file) to look addresses up in")
	arch := fs.String("arch", "", "the slice of a fat binary: arm64, arm64e, x86_64, armv7, i386")
	loadAddr := fs.String("l", "", "the address the binary was loaded at (hex); addresses are then taken as slid")
	inlines := fs.Bool("i", false, "print the functions inlined at each address too, innermost first")
	noDemangle := fs.Bool("no-demangle", false, "print C++ and Rust names as the binary spells them")
	addrs, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if *binary == "" {
		return fmt.Errorf("%w: -o BINARY is required", errUsage)
	}
	im, err := openSlice(dsymBundleFile(*binary), *arch)
	if err != nil {
		return err
	}
	entry, err := symbolize.NewEntry(im)
	if err != nil {
		return err
	}
	var slide uint64
	if *loadAddr != "" {
		load, err := parseAddress(*loadAddr)
		if err != nil {
			return fmt.Errorf("%w: -l: %v", errUsage, err)
		}
		slide = im.Slide(load)
	}
	name := filepath.Base(*binary)
	if strings.HasSuffix(strings.TrimSuffix(*binary, "/"), ".dSYM") {
		name = strings.TrimSuffix(filepath.Base(strings.TrimSuffix(*binary, "/")), ".dSYM")
		name = strings.TrimSuffix(name, filepath.Ext(name)) // App.app.dSYM -> App
	}
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	lookup := func(text string) error {
		addr, err := parseAddress(text)
		if err != nil {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
		for _, line := range atosLines(entry, name, addr, slide, *inlines, *noDemangle) {
			fmt.Fprintln(w, line)
		}
		return nil
	}
	if len(addrs) > 0 {
		for _, a := range addrs {
			if err := lookup(a); err != nil {
				return err
			}
		}
		return nil
	}
	// Like atos, read whitespace-separated addresses from stdin and answer
	// each as it comes, so that a pipe can be used interactively.
	sc := bufio.NewScanner(stdin)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	sc.Split(bufio.ScanWords)
	for sc.Scan() {
		if err := lookup(sc.Text()); err != nil {
			return err
		}
		if err := w.Flush(); err != nil {
			return err
		}
	}
	return sc.Err()
}

// atosLines answers one address as atos does: "main (in App) + 16", or
// "main (in App) (main.c:28)" with debug info, or the address itself when
// nothing covers it. With inlines, the inlined functions come first, each
// on its own line.
func atosLines(entry *symbolize.Entry, imageName string, addr, slide uint64, inlines, noDemangle bool) []string {
	f := symbolize.Frame{Address: addr, LookupAddress: addr}
	frames := entry.Resolve(f, addr-slide, noDemangle)
	if !inlines {
		frames = frames[len(frames)-1:]
	}
	var lines []string
	for _, f := range frames {
		switch {
		case f.Symbol == "":
			lines = append(lines, fmt.Sprintf("%#x", addr))
		case f.SourceLocation() != "":
			lines = append(lines, fmt.Sprintf("%s (in %s) (%s)", f.Symbol, imageName, f.SourceLocation()))
		case f.HasOffset:
			lines = append(lines, fmt.Sprintf("%s (in %s) + %d", f.Symbol, imageName, f.SymbolOffset))
		default:
			lines = append(lines, fmt.Sprintf("%s (in %s)", f.Symbol, imageName))
		}
	}
	return lines
}

// dsymBundleFile turns a path to a .dSYM bundle into the DWARF file inside
// it, so that "-o App.dSYM" works as it does with atos.
func dsymBundleFile(path string) string {
	if !strings.HasSuffix(strings.TrimSuffix(path, "/"), ".dSYM") {
		return path
	}
	matches, _ := filepath.Glob(filepath.Join(path, "Contents", "Resources", "DWARF", "*"))
	if len(matches) == 1 {
		return matches[0]
	}
	return path
}

// openSlice opens a Mach-O file and picks the slice: the only one of a thin
// file, or the named one of a fat file.
func openSlice(path, arch string) (*image.Image, error) {
	f, err := image.Open(path)
	if err != nil {
		return nil, err
	}
	if arch != "" {
		return f.ByArch(arch)
	}
	if len(f.Images) == 1 {
		return f.Images[0], nil
	}
	var names []string
	for _, im := range f.Images {
		names = append(names, archName(im))
	}
	return nil, fmt.Errorf("%w: %s is a fat file with slices %s: choose one with -arch",
		errUsage, path, strings.Join(names, ", "))
}

func archName(im *image.Image) string {
	if im.Arch != nil {
		return im.Arch.Name
	}
	return fmt.Sprintf("cputype %d subtype %d", im.CPUType, im.CPUSubtype)
}

// parseAddress reads an address in hex, with or without 0x, as atos does.
func parseAddress(s string) (uint64, error) {
	t := strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	v, err := strconv.ParseUint(t, 16, 64)
	if err != nil {
		return 0, fmt.Errorf("bad address %q: want hex such as 0x100003f60", s)
	}
	return v, nil
}
