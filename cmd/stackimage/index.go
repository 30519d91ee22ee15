package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/stackimage/stackimage/symindex"
	"github.com/stackimage/stackimage/symstore"
	"github.com/stackimage/stackimage/uuid"
)

// runIndex writes a symindex file for every binary and dSYM found under
// the --symbols directories: STORE/UUID/ARCH.symindex, the UUID in
// Apple's upper-case 8-4-4-4-12 form and ARCH as Apple's tools name it
// (arm64, x86_64, armv7s, ...). A binary and its dSYM, which share a UUID,
// make one file. Files are written under a temporary name and renamed, so
// that a reader never maps a file being written.
// indexGCPercent is the collector's GOGC while indexing. A build keeps
// little beyond the file it writes (the DWARF is mapped, units are parsed
// and dropped), so a slower pace costs little memory: at GOGC=300 the big
// dSYM's one-thread build takes 0.94 of the wall time for a peak RSS of
// 285 instead of 280 MiB, cmd/go's 0.95 for 74 instead of 72 MiB
// (docs/symindex.md).
const indexGCPercent = 300

func runIndex(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	setGCPercent(indexGCPercent)
	fs := newFlagSet("index", "index --symbols DIR [--symbols DIR]... --out STORE [--quiet]\n"+
		"       stackimage index --symbols-url URL --uuid UUID [--uuid UUID]... --out STORE", stdout)
	fs.notes = func(w io.Writer) {
		writeKinds(w, "--symbols finds, matched by UUID (Breakpad .sym files are used as they are, not indexed):", symbolFileKinds())
		fmt.Fprint(w, "\nExample:\n  stackimage index --symbols build/ --out store/\n  stackimage symbolicate MyApp.ips --symbols store/\n")
	}
	var dirs stringList
	fs.Var(&dirs, "symbols", "a binary, a dSYM or a directory of them (repeatable)")
	servers := addSymbolServerFlags(fs)
	var ids stringList
	fs.Var(&ids, "uuid", "with --symbols-url: a UUID whose files to fetch and index (repeatable)")
	out := fs.String("out", "", "the directory to write STORE/UUID/ARCH.symindex files into")
	quiet := fs.Bool("quiet", false, "show no progress bar on a terminal")
	rest, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return fmt.Errorf("%w: unexpected argument %q", errUsage, rest[0])
	}
	if len(dirs) == 0 && len(servers.urls) == 0 || *out == "" {
		return fmt.Errorf("%w: --symbols DIR (or --symbols-url URL with --uuid UUID) and --out STORE are required", errUsage)
	}
	if (len(servers.urls) == 0) != (len(ids) == 0) {
		return fmt.Errorf("%w: --symbols-url and --uuid go together: a symbol server cannot be listed", errUsage)
	}
	var fetched []uuid.UUID
	for _, id := range ids {
		u, err := uuid.Parse(id)
		if err != nil {
			return fmt.Errorf("%w: --uuid: %v", errUsage, err)
		}
		fetched = append(fetched, u)
	}
	syms := symstore.NewSymbols()
	defer syms.Close()
	for _, d := range dirs {
		if err := syms.AddDir(ctx, d); err != nil {
			return err
		}
	}
	removeDownloads, err := servers.addTo(syms)
	if err != nil {
		return err
	}
	defer removeDownloads()
	for _, s := range syms.Skipped {
		writeLine(stderr, "stackimage index: skipped %s", s)
	}
	written := 0
	uuids := syms.UUIDs()
	for _, u := range fetched {
		if !slices.Contains(uuids, u) {
			uuids = append(uuids, u)
		}
	}
	bar := newProgress(stderr, *quiet, len(uuids), "indexing")
	defer bar.finish()
	stdout, stderr = bar.writer(stdout), bar.writer(stderr)
	for i, u := range uuids {
		bar.set(i)
		e, err := syms.Lookup(u)
		if err != nil || e == nil {
			writeLine(stderr, "stackimage index: %s: no readable file", u)
			continue
		}
		im := e.Image()
		if im == nil {
			// Only Breakpad .sym files have the UUID: an index is made
			// from a binary or dSYM.
			writeLine(stderr, "stackimage index: warning: skipped %s: %s",
				strings.Join(e.BreakpadFiles(), ", "), "a Breakpad .sym file, not indexed (index reads binaries and dSYMs; give the .sym file to --symbols as it is)")
			e.Release()
			continue
		}
		path := filepath.Join(*out, u.String(), im.ArchName()+symindex.Extension)
		size, err := writeIndexFile(path, e)
		if err != nil {
			writeLine(stderr, "stackimage index: %s: %v", u, err)
			continue
		}
		for _, w := range e.Warnings() {
			writeLine(stderr, "stackimage index: warning: %s", w)
		}
		writeLine(stdout, "%s %s (%d bytes)", u, path, size)
		written++
	}
	if written == 0 {
		return fmt.Errorf("no image with a UUID found under %v", []string(dirs))
	}
	return nil
}

// writeIndexFile writes e's index to path through a temporary file in the
// same directory, and returns its size.
func writeIndexFile(path string, e *symstore.Entry) (int64, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return 0, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".symindex-*")
	if err != nil {
		return 0, err
	}
	defer os.Remove(tmp.Name()) // fails harmlessly once renamed
	if err := e.WriteIndex(tmp); err != nil {
		tmp.Close()
		return 0, err
	}
	st, err := tmp.Stat()
	if err != nil {
		tmp.Close()
		return 0, err
	}
	if err := tmp.Close(); err != nil {
		return 0, err
	}
	// CreateTemp makes the file private; an index is as readable as the
	// symbol files it was made from.
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return 0, err
	}
	return st.Size(), os.Rename(tmp.Name(), path)
}
