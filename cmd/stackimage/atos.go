package main

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/symtab"
)

func runAtos(args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("atos", "atos -o BINARY [-arch ARCH] [-l LOADADDR] [ADDR...]", stderr)
	binary := fs.String("o", "", "the binary (or dSYM DWARF file) to look addresses up in")
	arch := fs.String("arch", "", "the slice of a fat binary: arm64, arm64e, x86_64, armv7, i386")
	loadAddr := fs.String("l", "", "the address the binary was loaded at (hex); addresses are then taken as slid")
	addrs, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if *binary == "" {
		return fmt.Errorf("%w: -o BINARY is required", errUsage)
	}
	im, err := openSlice(*binary, *arch)
	if err != nil {
		return err
	}
	table, err := symtab.New(im)
	if err != nil {
		return fmt.Errorf("%s: %w", *binary, err)
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
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	lookup := func(text string) error {
		addr, err := parseAddress(text)
		if err != nil {
			return fmt.Errorf("%w: %v", errUsage, err)
		}
		fmt.Fprintln(w, atosLine(table, name, addr, slide))
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

// atosLine answers one address as atos does: "main (in App) + 16", or the
// address itself when no symbol covers it.
func atosLine(table *symtab.Table, imageName string, addr, slide uint64) string {
	sym, ok := table.Lookup(addr - slide)
	if !ok {
		return fmt.Sprintf("%#x", addr)
	}
	return fmt.Sprintf("%s (in %s) + %d", sym.Name, imageName, sym.Offset)
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
