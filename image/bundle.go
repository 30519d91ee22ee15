package image

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// maxInfoPlist bounds the Info.plist read for CFBundleExecutable: real
// ones are a few kilobytes.
const maxInfoPlist = 1 << 20

// BundleFile turns a path to a bundle into the Mach-O file inside it, as
// atos and Apple's tools take bundles; any other path is returned as is.
// Open calls it, so that a bundle can be opened like the file inside.
//
//   - Foo.dSYM, Foo.app.dSYM: the one file in Contents/Resources/DWARF.
//   - Foo.app (macOS): Contents/MacOS/ with the name Contents/Info.plist's
//     CFBundleExecutable gives, else the bundle's name.
//   - Foo.app (iOS, flat): the executable at the top, named the same way
//     from Info.plist, else after the bundle.
//   - Foo.framework: Versions/Current/ (macOS) or the top (iOS), the
//     executable named by Resources/Info.plist or Info.plist, else after
//     the bundle.
//
// A bundle without the file is an error that names the places tried.
func BundleFile(path string) (string, error) {
	clean := filepath.Clean(path)
	info, err := os.Stat(clean)
	if err != nil || !info.IsDir() {
		return path, nil // not a bundle: opening it says what is wrong
	}
	base := filepath.Base(clean)
	switch {
	case strings.HasSuffix(base, ".dSYM"):
		dir := filepath.Join(clean, "Contents", "Resources", "DWARF")
		entries, err := os.ReadDir(dir)
		if err != nil {
			return "", fmt.Errorf("%s: a dSYM bundle without %s: %w", path, filepath.Join("Contents", "Resources", "DWARF"), err)
		}
		var files []string
		for _, e := range entries {
			if !e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
				files = append(files, e.Name())
			}
		}
		if len(files) == 0 {
			return "", fmt.Errorf("%s: no DWARF file in the dSYM bundle", path)
		}
		// Several files: the one named after the bundle, as dsymutil names it.
		want := strings.TrimSuffix(strings.TrimSuffix(base, ".dSYM"), filepath.Ext(strings.TrimSuffix(base, ".dSYM")))
		for _, f := range files {
			if f == want {
				return filepath.Join(dir, f), nil
			}
		}
		if len(files) > 1 {
			return "", fmt.Errorf("%s: %d files in the dSYM bundle's DWARF folder (%s): name one", path, len(files), strings.Join(files, ", "))
		}
		return filepath.Join(dir, files[0]), nil
	case strings.HasSuffix(base, ".app"), strings.HasSuffix(base, ".framework"):
		ext := filepath.Ext(base)
		name := strings.TrimSuffix(base, ext)
		layouts := []struct{ plist, exeDir string }{
			{filepath.Join(clean, "Contents", "Info.plist"), filepath.Join(clean, "Contents", "MacOS")},
			{filepath.Join(clean, "Info.plist"), clean},
		}
		if ext == ".framework" {
			current := filepath.Join(clean, "Versions", "Current")
			layouts = []struct{ plist, exeDir string }{
				{filepath.Join(current, "Resources", "Info.plist"), current},
				{filepath.Join(clean, "Resources", "Info.plist"), clean},
				{filepath.Join(clean, "Info.plist"), clean},
			}
		}
		var tried []string
		for _, layout := range layouts {
			exe := name
			if data, err := readBounded(layout.plist, maxInfoPlist); err == nil {
				if s, ok := plistString(data, "CFBundleExecutable"); ok && s != "" && !strings.ContainsAny(s, `/\`) {
					exe = s
				}
			}
			candidate := filepath.Join(layout.exeDir, exe)
			if st, err := os.Stat(candidate); err == nil && st.Mode().IsRegular() {
				return candidate, nil
			}
			tried = append(tried, candidate)
		}
		return "", fmt.Errorf("%s: no executable in the %s bundle (tried %s)", path, strings.TrimPrefix(ext, "."), strings.Join(tried, ", "))
	}
	return path, nil
}

// readBounded reads a file of at most max bytes.
func readBounded(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, max)
	}
	return data, nil
}

// plistString returns the string value of key in an XML property list's
// top-level dictionary. Binary property lists and other value types are
// not read: ok is false, and the caller falls back on the bundle's name.
func plistString(data []byte, key string) (string, bool) {
	if !bytes.Contains(data[:min(len(data), 64)], []byte("<?xml")) && !bytes.Contains(data[:min(len(data), 256)], []byte("<plist")) {
		return "", false
	}
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = false
	depth := 0       // dict nesting: the top-level dictionary is depth 1
	lastKey := ""    // the key just read at depth 1
	inKey := false   // inside a <key> of the top-level dict
	inValue := false // inside the <string> following the wanted key
	var text strings.Builder
	for {
		tok, err := d.Token()
		if err != nil {
			return "", false // the end, or not well-formed
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch {
			case t.Name.Local == "dict":
				depth++
			case depth == 1 && t.Name.Local == "key":
				inKey, lastKey = true, ""
				text.Reset()
			case depth == 1 && lastKey == key:
				if t.Name.Local != "string" {
					return "", false
				}
				inValue = true
				text.Reset()
			}
		case xml.EndElement:
			switch {
			case t.Name.Local == "dict":
				depth--
				if depth == 0 {
					return "", false
				}
			case inKey && t.Name.Local == "key":
				inKey, lastKey = false, text.String()
			case inValue && t.Name.Local == "string":
				return text.String(), true
			case depth == 1 && !inKey:
				lastKey = "" // a value that was not the wanted key's
			}
		case xml.CharData:
			if inKey || inValue {
				if text.Len()+len(t) > maxInfoPlist {
					return "", false
				}
				text.Write(t)
			}
		}
	}
}
