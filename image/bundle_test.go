package image

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// infoPlist is a macOS app's Info.plist naming its executable.
const infoPlist = `<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>CFBundleIdentifier</key>
	<string>com.example.Foo</string>
	<key>CFBundleExecutable</key>
	<string>Foo Helper</string>
</dict>
</plist>
`

func TestPlistString(t *testing.T) {
	tests := []struct {
		name, plist, key, want string
		ok                     bool
	}{
		{"found", infoPlist, "CFBundleExecutable", "Foo Helper", true},
		{"first key", infoPlist, "CFBundleIdentifier", "com.example.Foo", true},
		{"missing", infoPlist, "CFBundleName", "", false},
		{"entities", `<plist><dict><key>CFBundleExecutable</key><string>A &amp; B</string></dict></plist>`, "CFBundleExecutable", "A & B", true},
		{"nested dict is not the top", `<plist><dict><key>X</key><dict><key>CFBundleExecutable</key><string>inner</string></dict></dict></plist>`, "CFBundleExecutable", "", false},
		{"value not a string", `<plist><dict><key>CFBundleExecutable</key><integer>1</integer></dict></plist>`, "CFBundleExecutable", "", false},
		{"binary plist", "bplist00\x00\x01", "CFBundleExecutable", "", false},
		{"garbage", "<<<", "CFBundleExecutable", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := plistString([]byte(tt.plist), tt.key)
			if got != tt.want || ok != tt.ok {
				t.Errorf("plistString(%q) = %q, %v, want %q, %v", tt.key, got, ok, tt.want, tt.ok)
			}
		})
	}
}

// TestOpenBundles: Open takes a bundle as the file inside it, as atos -o
// and Symbols.AddDir do: an app, a dSYM and a framework, macOS and iOS
// layouts.
func TestOpenBundles(t *testing.T) {
	bin, err := os.ReadFile(filepath.Join("..", "fixtures", "bin", "chain-arm64-O1"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	put := func(path string, data []byte) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	put(filepath.Join(dir, "Foo.app", "Contents", "MacOS", "Foo Helper"), bin)
	put(filepath.Join(dir, "Foo.app", "Contents", "Info.plist"), []byte(infoPlist))
	put(filepath.Join(dir, "Foo.app.dSYM", "Contents", "Resources", "DWARF", "Foo"), bin)
	put(filepath.Join(dir, "Mac.framework", "Versions", "A", "Mac"), bin)
	if err := os.Symlink("A", filepath.Join(dir, "Mac.framework", "Versions", "Current")); err != nil {
		t.Fatal(err)
	}
	put(filepath.Join(dir, "Flat.framework", "Flat"), bin)
	for _, bundle := range []string{"Foo.app", "Foo.app.dSYM", "Mac.framework", "Flat.framework"} {
		t.Run(bundle, func(t *testing.T) {
			f, err := Open(filepath.Join(dir, bundle))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if got := f.Images[0].UUID.String(); got != "4C4C444C-5555-3144-A117-3E15AF6B6CFF" {
				t.Errorf("Open(%s) has UUID %s, want the fixture's", bundle, got)
			}
		})
	}
	if _, err := Open(filepath.Join(dir, "Empty.framework")); err == nil {
		t.Errorf("Open of a missing framework did not fail")
	}
	if err := os.MkdirAll(filepath.Join(dir, "Empty.framework"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(filepath.Join(dir, "Empty.framework")); err == nil || !strings.Contains(err.Error(), "no executable in the framework bundle") {
		t.Errorf("Open(Empty.framework) = %v, want the places tried", err)
	}
}
