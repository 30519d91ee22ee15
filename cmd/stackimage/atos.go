package main

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/stackimage/stackimage/atos"
	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/uuid"
)

func runAtos(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("atos", "atos -o BINARY [-arch ARCH] [-l LOADADDR] [ADDR...]\n"+
		"       stackimage atos --uuid UUID [--name NAME] --symbols-url URL [-l LOADADDR] [ADDR...]", stdout)
	fs.notes = func(w io.Writer) {
		var kinds [][2]string
		for _, k := range atos.Kinds {
			kinds = append(kinds, [2]string{k.Name, k.Example})
		}
		writeKinds(w, "BINARY may be:", kinds)
		fmt.Fprint(w, "\nAddresses come from the command line, else from stdin, separated by spaces.\n\nExample:\n"+
			"  stackimage atos -o MyApp.app.dSYM -arch arm64 -l 0x104a00000 0x104a03f6c\n")
	}
	var opts atos.Options
	binary := fs.String("o", "", "the binary, dSYM DWARF file, or .app or .dSYM bundle to look addresses up in")
	fs.StringVar(&opts.Arch, "arch", "", "the slice of a fat binary: arm64, arm64e, x86_64, armv7, i386")
	loadAddr := fs.String("l", "", "the address the binary was loaded at (hex); addresses are then taken as slid")
	fs.BoolVar(&opts.Inlines, "i", false, "print the functions inlined at each address too, innermost first")
	fs.BoolVar(&opts.NoDemangle, "no-demangle", false, "print C++ and Rust names as the binary spells them")
	fs.BoolVar(&opts.FullPath, "fullPath", false, "print source files with their full path, as atos -fullPath does")
	fs.BoolVar(&opts.NoDebugInfo, "no-debug-info", false, "answer from the symbol table alone, without reading DWARF (faster on big binaries)")
	id := fs.String("uuid", "", "with --symbols-url instead of -o: the UUID of the binary to fetch")
	name := fs.String("name", "", "with --uuid: the image's file name, which a breakpad-layout server's paths need, and its name in answers (default: the UUID)")
	servers := addSymbolServerFlags(fs)
	addrs, err := fs.parse(args)
	if err != nil {
		return err
	}
	if (*binary == "") == (*id == "") || *id != "" && len(servers.urls) == 0 {
		return fmt.Errorf("%w: -o BINARY is required (or --uuid UUID with --symbols-url URL)", errUsage)
	}
	if *loadAddr != "" {
		if opts.LoadAddress, err = atos.ParseAddress(*loadAddr); err != nil {
			return fmt.Errorf("%w: -l: %v", errUsage, err)
		}
		opts.HasLoadAddress = true
	}
	var a *atos.Answerer
	if *id != "" {
		var done func()
		a, done, err = fetchAnswerer(ctx, *id, *name, servers, opts)
		if done != nil {
			defer done()
		}
	} else {
		a, err = atos.Open(ctx, *binary, opts)
	}
	if errors.Is(err, atos.ErrNeedArch) {
		return fmt.Errorf("%w: %v with -arch", errUsage, err)
	}
	if err != nil {
		return err
	}
	defer a.Close()
	// What of the file could not be used is said on stderr once the
	// answers are out, as atos warns.
	defer func() {
		for _, w := range a.Warnings() {
			writeLine(stderr, "stackimage atos: warning: %s", w)
		}
	}()
	// Like llvm-symbolizer (16), a token that is not an address is echoed
	// and the exit status stays 0.
	if len(addrs) > 0 {
		return a.AnswerTokens(ctx, stdout, addrs)
	}
	// Like atos, read addresses from stdin.
	return a.Answer(ctx, stdout, stdin)
}

// fetchAnswerer answers for the binary with the UUID that the symbol
// servers have, naming it name (the UUID when ""); done closes what it
// opened and removes the downloads.
func fetchAnswerer(ctx context.Context, id, name string, servers *symbolServers, opts atos.Options) (*atos.Answerer, func(), error) {
	u, err := uuid.Parse(id)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: --uuid: %v", errUsage, err)
	}
	syms := symstore.NewSymbols()
	removeDownloads, err := servers.addTo(syms)
	if err != nil {
		syms.Close()
		return nil, nil, err
	}
	done := func() { syms.Close(); removeDownloads() }
	// The name finds the file on a server whose paths hold it (the
	// breakpad layout's).
	e, err := syms.LookupImage(ctx, u, name)
	if err != nil {
		return nil, done, err
	}
	e.NoDebugInfo = opts.NoDebugInfo
	if name == "" {
		name = u.String()
	}
	return atos.New(e, e.Image(), name, opts), done, nil
}
