package main

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/stackimage/stackimage/image"
)

func runImages(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("images", "images FILE|BUNDLE...", stdout)
	fs.notes = func(w io.Writer) {
		writeKinds(w, "FILE may be:", [][2]string{
			{"Mach-O binary, dylib, dSYM DWARF file or core, thin or fat", "MyApp.app/MyApp"},
			{".app, .framework or .dSYM bundle (its executable or DWARF file)", "MyApp.app.dSYM"},
		})
		fmt.Fprint(w, "\nExample:\n  stackimage images MyApp.app MyApp.app.dSYM\n")
	}
	files, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("%w: want at least one file", errUsage)
	}
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	// Every file is reported: one that cannot be read is named with its
	// error on stderr, and the rest are listed all the same.
	failed := 0
	listed := 0
	for _, path := range files {
		f, path, err := openImages(path)
		if err != nil {
			failed++
			w.Flush()
			writeLine(stderr, "stackimage images: %v", err)
			continue
		}
		if listed > 0 {
			fmt.Fprintln(w)
		}
		listed++
		kind := "thin"
		if f.Fat {
			kind = fmt.Sprintf("fat, %d slices", len(f.Images))
		}
		writeLine(w, "%s (%s)", path, kind)
		for _, im := range f.Images {
			writeImage(w, im)
		}
		for _, err := range f.SliceErrors {
			writeLine(stderr, "stackimage images: warning: %v", err)
		}
		f.Close()
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d files could not be read", failed, len(files))
	}
	return nil
}

// openImages opens a Mach-O file, or the one inside a bundle (.app,
// .dSYM), and returns the path it opened.
func openImages(path string) (*image.File, string, error) {
	path, err := image.BundleFile(path)
	if err != nil {
		return nil, "", err
	}
	f, err := image.Open(path)
	return f, path, err
}

func writeImage(w io.Writer, im *image.Image) {
	uuid := "(no UUID)"
	if !im.UUID.IsZero() {
		uuid = im.UUID.String()
	}
	// "EXECUTE" for MH_EXECUTE; "FileType(13)" for a type without a name.
	writeLine(w, "  %-7s %-8s %s", archName(im), strings.TrimPrefix(im.Type.String(), "MH_"), uuid)
	for _, s := range im.Segments {
		name := s.Name
		if name == "" {
			name = "(unnamed)"
		}
		// Segment names are 16 bytes of the file's choosing.
		writeLine(w, "    %-16s vm 0x%016x-0x%016x  file %#x+%#x", name, s.Addr, s.Addr+s.Size, s.Offset, s.FileSize)
	}
}

func archName(im *image.Image) string {
	if im.Arch != nil {
		return im.Arch.Name
	}
	return fmt.Sprintf("cputype %d subtype %d", im.CPUType, im.CPUSubtype)
}
