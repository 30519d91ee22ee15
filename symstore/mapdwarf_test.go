package symstore

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stackimage/stackimage/debuginfo"
	"github.com/stackimage/stackimage/image"
)

// TestMapDWARF checks that the index over a mapped file answers exactly as
// the index over sections read into memory, at every address where an
// answer may change and the addresses beside it, for every fixture dSYM
// (arm64, x86_64 and armv7).
func TestMapDWARF(t *testing.T) {
	old := minMappedDWARF
	minMappedDWARF = 0
	t.Cleanup(func() { minMappedDWARF = old })
	dsyms, err := filepath.Glob(filepath.Join("..", "fixtures", "bin", "*.dSYM", "Contents", "Resources", "DWARF", "*"))
	if err != nil || len(dsyms) == 0 {
		t.Fatalf("no fixture dSYMs: %v", err)
	}
	for _, path := range dsyms {
		t.Run(filepath.Base(path), func(t *testing.T) {
			f, err := image.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			im := f.Images[0]
			secs, m := mapDWARF(im)
			if m == nil {
				t.Fatalf("mapDWARF(%s) mapped nothing", path)
			}
			defer m.Close()
			mapped, err := debuginfo.New(secs)
			if err != nil {
				t.Fatal(err)
			}
			readSecs, err := im.DWARFSectionsNamed(debuginfo.SectionNames...)
			if err != nil {
				t.Fatal(err)
			}
			read, err := debuginfo.New(readSecs)
			if err != nil {
				t.Fatal(err)
			}
			bounds := read.Boundaries()
			if len(bounds) == 0 {
				t.Fatal("no DWARF boundaries")
			}
			for _, b := range bounds {
				for _, a := range []uint64{b - 1, b, b + 1} {
					want, wantOK := read.Lookup(a)
					got, gotOK := mapped.Lookup(a)
					if gotOK != wantOK || !cmp.Equal(got, want) {
						t.Fatalf("mapped Lookup(%#x) = %v, %v; read sections give %v, %v", a, got, gotOK, want, wantOK)
					}
				}
			}
			if diff := cmp.Diff(read.Warnings(), mapped.Warnings()); diff != "" {
				t.Errorf("warnings (-read +mapped):\n%s", diff)
			}
		})
	}
}

// TestMapDWARFRefuses checks that mapDWARF maps nothing, so that the
// sections are read, when the file at the image's name is not the image
// it was read from, or when the DWARF is smaller than the threshold.
func TestMapDWARFRefuses(t *testing.T) {
	old := minMappedDWARF
	minMappedDWARF = 0
	t.Cleanup(func() { minMappedDWARF = old })
	dir := filepath.Join("..", "fixtures", "bin")
	open := func(t *testing.T, path string) *image.Image {
		f, err := image.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return f.Images[0]
	}
	dsym := filepath.Join(dir, "chain-arm64-O1.dSYM", "Contents", "Resources", "DWARF", "chain-arm64-O1")
	other := filepath.Join(dir, "chain-x86_64-O1.dSYM", "Contents", "Resources", "DWARF", "chain-x86_64-O1")
	sameArch := filepath.Join(dir, "chain-arm64-O2.dSYM", "Contents", "Resources", "DWARF", "chain-arm64-O2")

	renamed := func(path string) func(*image.Image) {
		return func(im *image.Image) { im.Name = path }
	}
	for _, tc := range []struct {
		name   string
		change func(*image.Image)
	}{
		{"another architecture at the name", renamed(other)},
		{"another UUID at the name", renamed(sameArch)},
		{"no file at the name", renamed(filepath.Join(t.TempDir(), "missing"))},
		{"a directory at the name", renamed(dir)},
		{"no name", renamed("")},
		{"below the threshold", func(*image.Image) { minMappedDWARF = 1 << 40 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() { minMappedDWARF = 0 }()
			im := open(t, dsym)
			tc.change(im)
			if secs, m := mapDWARF(im); m != nil || secs != nil {
				m.Close()
				t.Errorf("mapDWARF mapped %s for image %s", im.Name, dsym)
			}
		})
	}

	t.Run("fat file", func(t *testing.T) {
		// A fat file's slices do not start at offset 0.
		fat := filepath.Join(t.TempDir(), "fat")
		thin, err := os.ReadFile(dsym)
		if err != nil {
			t.Fatal(err)
		}
		data := make([]byte, 0x4000, 0x4000+len(thin))
		copy(data, []byte{0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 1,
			0x01, 0, 0, 0x0c, 0, 0, 0, 0, 0, 0, 0x40, 0, byte(len(thin) >> 24), byte(len(thin) >> 16), byte(len(thin) >> 8), byte(len(thin)), 0, 0, 0, 14})
		data = append(data, thin...)
		if err := os.WriteFile(fat, data, 0o644); err != nil {
			t.Fatal(err)
		}
		im := open(t, fat)
		if secs, m := mapDWARF(im); m != nil || secs != nil {
			m.Close()
			t.Errorf("mapDWARF mapped a fat file's slice")
		}
	})
}

// FuzzSameThinImage: the header check of a mapped file reads arbitrary
// bytes (whatever is at the image's name) without panicking, and accepts
// only bytes naming the image's UUID.
func FuzzSameThinImage(f *testing.F) {
	path := filepath.Join("..", "fixtures", "bin", "chain-arm64-O1.dSYM", "Contents", "Resources", "DWARF", "chain-arm64-O1")
	data, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	file, err := image.Open(path)
	if err != nil {
		f.Fatal(err)
	}
	defer file.Close()
	im := file.Images[0]
	f.Add(data[:min(len(data), 4096)])
	armv7, err := os.ReadFile(filepath.Join("..", "fixtures", "bin", "chain-armv7-O1"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(armv7[:min(len(armv7), 4096)])
	f.Add([]byte{0xcf, 0xfa, 0xed, 0xfe})
	f.Fuzz(func(t *testing.T, b []byte) {
		if sameThinImage(b, im) && !bytes.Contains(b, im.UUID[:]) {
			t.Errorf("sameThinImage accepted bytes without the image's UUID")
		}
	})
}
