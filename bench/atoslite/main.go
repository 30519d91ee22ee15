// Command atoslite is the smallest atos: open a Mach-O, index its symbols,
// answer addresses from stdin (or arguments) in atos's format. It is our
// side of the llvm-symbolizer comparison (bench/compare) while the full
// `stackimage atos` is not the thing being measured, and a reference for
// what the lookup path alone costs.
//
//	atoslite -o BINARY [-arch ARCH] [ADDR...]
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/stackimage/stackimage/image"
	"github.com/stackimage/stackimage/symtab"
)

func main() {
	if err := run(os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "atoslite:", err)
		os.Exit(1)
	}
}

func run(args []string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet("atoslite", flag.ContinueOnError)
	bin := fs.String("o", "", "the Mach-O file")
	arch := fs.String("arch", "", "the slice of a fat file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *bin == "" {
		return fmt.Errorf("-o BINARY is required")
	}
	f, err := image.Open(*bin)
	if err != nil {
		return err
	}
	defer f.Close()
	im := f.Images[0]
	if *arch != "" {
		if im, err = f.ByArch(*arch); err != nil {
			return err
		}
	}
	table, err := symtab.New(im)
	if err != nil {
		return err
	}
	in := " (in " + filepath.Base(*bin) + ") + "
	w := bufio.NewWriterSize(stdout, 64<<10)
	var line []byte
	// answer writes one line without fmt: at 100k lines, formatting was
	// the largest cost after the process start.
	answer := func(text []byte) error {
		addr, ok := parseHex(text)
		if !ok {
			return fmt.Errorf("bad address %q", text)
		}
		line = line[:0]
		if sym, ok := table.Lookup(addr); ok {
			line = append(line, sym.Name...)
			line = append(line, in...)
			line = strconv.AppendUint(line, sym.Offset, 10)
		} else {
			line = append(line, "0x"...)
			line = strconv.AppendUint(line, addr, 16)
		}
		line = append(line, '\n')
		_, err := w.Write(line)
		return err
	}
	for _, a := range fs.Args() {
		if err := answer([]byte(a)); err != nil {
			return err
		}
	}
	if fs.NArg() == 0 {
		// Flush only when about to wait for more input: answers come
		// back at once on an interactive pipe, and a batch costs a
		// write per 64 KiB, not one per line.
		sc := bufio.NewScanner(flushingReader{stdin, w})
		sc.Split(bufio.ScanWords)
		for sc.Scan() {
			if err := answer(sc.Bytes()); err != nil {
				return err
			}
		}
		if err := sc.Err(); err != nil {
			return err
		}
	}
	return w.Flush()
}

// parseHex reads a hex address with or without 0x.
func parseHex(b []byte) (uint64, bool) {
	if len(b) > 2 && b[0] == '0' && (b[1] == 'x' || b[1] == 'X') {
		b = b[2:]
	}
	if len(b) == 0 || len(b) > 16 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		v = v<<4 | uint64(c)
	}
	return v, true
}

// flushingReader flushes w before every read of r, that is whenever the
// reader's buffer is exhausted and the next read may block.
type flushingReader struct {
	r io.Reader
	w *bufio.Writer
}

func (f flushingReader) Read(p []byte) (int, error) {
	if err := f.w.Flush(); err != nil {
		return 0, err
	}
	return f.r.Read(p)
}
