// Package symstore is the symbol-file store: it finds the symbol files of
// an image by its UUID and answers address lookups from them.
//
// A Symbols indexes directories and files (Mach-O binaries, dSYM bundles,
// .app and .framework bundles, zip archives, Breakpad .sym files and
// symbol stores, symindex files, BCSymbolMaps) and any Source added with
// AddSource (an object store, a symbol server, memory). Lookup returns the
// Entry of a UUID, loading its files once and sharing the entry among
// callers; a UUID without files is remembered as such (ErrNoSymbols).
//
// An Entry answers from its files: symbol tables (Symbol), DWARF (Source,
// Debug), a Breakpad .sym file, or a symindex file, and names a frame with
// all of them (Resolve). It also holds what a stack walker needs of the
// files: their unwind tables (UnwindRow) and code bytes (Code), read once
// and cached with the entry.
//
// Package symbolize builds on it: a symbolize.Symbolizer walks the threads
// of a dump and names their frames from a Symbols.
//
//	syms := symstore.NewSymbols()
//	defer syms.Close()
//	if err := syms.AddDir(ctx, "dSYMs"); err != nil {
//		return err
//	}
//	frames, err := syms.Resolve(id, archregs.ARM64, 0x100003f3c)
package symstore
