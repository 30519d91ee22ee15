package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stackimage/stackimage/image"
)

// copyFile copies src to dst, making dst's directory.
func copyFile(t *testing.T, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

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

// TestBundles checks that atos -o and images take .app and .dSYM bundles:
// the answer is the one for the file inside, named after it.
func TestBundles(t *testing.T) {
	dir := t.TempDir()
	plain := filepath.Join(dir, "plain", "Foo")
	plainHelper := filepath.Join(dir, "plain", "Foo Helper")
	copyFile(t, chainBinary, plain)
	copyFile(t, chainBinary, plainHelper)
	dwarf := filepath.Join(chainDSYM, "Contents", "Resources", "DWARF", "chain-arm64-O1")
	plainDWARF := filepath.Join(dir, "plain", "dwarf", "Foo")
	copyFile(t, dwarf, plainDWARF)

	iosApp := filepath.Join(dir, "ios", "Foo.app")
	copyFile(t, chainBinary, filepath.Join(iosApp, "Foo"))
	writeFile(t, filepath.Join(iosApp, "Info.plist"), []byte("bplist00 binary plists are not read: the bundle name is used"))
	macApp := filepath.Join(dir, "mac", "Foo.app")
	copyFile(t, chainBinary, filepath.Join(macApp, "Contents", "MacOS", "Foo Helper"))
	copyFile(t, chainBinary, filepath.Join(macApp, "Contents", "MacOS", "Other")) // a second executable
	writeFile(t, filepath.Join(macApp, "Contents", "Info.plist"), []byte(infoPlist))
	macNoPlist := filepath.Join(dir, "macnoplist", "Foo.app")
	copyFile(t, chainBinary, filepath.Join(macNoPlist, "Contents", "MacOS", "Foo"))
	appDSYM := filepath.Join(dir, "dsym", "Foo.app.dSYM")
	copyFile(t, dwarf, filepath.Join(appDSYM, "Contents", "Resources", "DWARF", "Foo"))

	tests := []struct {
		name, bundle, plain string
	}{
		{"iOS app", iosApp, plain},
		{"iOS app, trailing slash", iosApp + "/", plain},
		{"macOS app with Info.plist", macApp, plainHelper},
		{"macOS app without Info.plist", macNoPlist, plain},
		{"app dSYM", appDSYM, plainDWARF},
		{"app dSYM, trailing slash", appDSYM + "/", plainDWARF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const addrs = "0x1000002f0 0x100000384"
			status, got, stderr := atosRun(t, addrs, "-o", tt.bundle)
			if status != 0 {
				t.Fatalf("atos -o %s: status %d: %s", tt.bundle, status, stderr)
			}
			_, want, _ := atosRun(t, addrs, "-o", tt.plain)
			if got != want || want == "" {
				t.Errorf("atos -o %s = %q, want %q (as for the file inside)", tt.bundle, got, want)
			}

			var out, errOut strings.Builder
			if status := run([]string{"images", tt.bundle}, strings.NewReader(""), &out, &errOut); status != 0 {
				t.Fatalf("images %s: status %d: %s", tt.bundle, status, errOut.String())
			}
			f, err := image.Open(tt.plain)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if uuid := f.Images[0].UUID.String(); !strings.Contains(out.String(), uuid) {
				t.Errorf("images %s = %q, want the UUID %s of the file inside", tt.bundle, out.String(), uuid)
			}
		})
	}
}

func TestBundleErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "Empty.app")
	if err := os.MkdirAll(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	status, _, stderr := atosRun(t, "", "-o", empty, "0x1000")
	if status != 1 || !strings.Contains(stderr, "Empty.app") {
		t.Errorf("atos -o %s: status %d, stderr %q; want 1 and the bundle named", empty, status, stderr)
	}
}
