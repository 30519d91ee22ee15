package image

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/stackimage/stackimage/uuid"
)

// testMemory is a captured address space: regions of bytes at addresses.
type testMemory struct {
	regions []memRegion // sorted by addr, disjoint
}

type memRegion struct {
	addr uint64
	data []byte
}

func (m *testMemory) add(addr uint64, data []byte) {
	m.regions = append(m.regions, memRegion{addr, data})
	sort.Slice(m.regions, func(i, j int) bool { return m.regions[i].addr < m.regions[j].addr })
}

func (m *testMemory) ReadMemory(p []byte, addr uint64) (int, error) {
	done := 0
	for done < len(p) {
		a := addr + uint64(done)
		i := sort.Search(len(m.regions), func(i int) bool { return m.regions[i].addr+uint64(len(m.regions[i].data)) > a })
		if i == len(m.regions) || m.regions[i].addr > a {
			return done, fmt.Errorf("address %#x not captured", a)
		}
		done += copy(p[done:], m.regions[i].data[a-m.regions[i].addr:])
	}
	return done, nil
}

// loadInto maps the image's segments into memory at loadAddress the way
// dyld would: vmsize bytes, file data first, zeros after. It leaves out the
// segments named in skip.
func loadInto(t *testing.T, mem *testMemory, im *Image, loadAddress uint64, skip ...string) {
	t.Helper()
	slide := im.Slide(loadAddress)
	for _, s := range im.Segments {
		if s.Size == 0 || s.Name == "__PAGEZERO" || contains(skip, s.Name) {
			continue
		}
		data, err := im.ReadSegment(s)
		if err != nil {
			t.Fatalf("ReadSegment(%s): %v", s.Name, err)
		}
		buf := make([]byte, s.Size)
		copy(buf, data)
		mem.add(s.Addr+slide, buf)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// imageFacts gathers everything FromMemory must reproduce.
type imageFacts struct {
	Name           string
	UUID           uuid.UUID
	CPUType        uint32
	CPUSubtype     uint32
	Type           FileType
	Segments       []Segment
	Sections       []Section
	Symtab         RawSymtab
	FunctionStarts []uint64
	Exports        []Export
}

func factsOf(t *testing.T, im *Image) imageFacts {
	t.Helper()
	raw, _, err := im.Symtab()
	if err != nil {
		t.Fatalf("%s: Symtab: %v", im.Name, err)
	}
	fs, err := im.FunctionStarts()
	if err != nil {
		t.Fatalf("%s: FunctionStarts: %v", im.Name, err)
	}
	ex, err := im.Exports()
	if err != nil {
		t.Fatalf("%s: Exports: %v", im.Name, err)
	}
	return imageFacts{im.Name, im.UUID, im.CPUType, im.CPUSubtype, im.Type, im.Segments, im.Sections, raw, fs, ex}
}

func TestFromMemoryMatchesFile(t *testing.T) {
	tests := []struct {
		name        string
		path        string
		arch        string
		loadAddress uint64
	}{
		{"dylib with exports trie", "object-testfiles/macho/libexports.dylib", "arm64", 0x1049c8000},
		{"arm64e dylib", "object-testfiles/macho/fixup-chains-arm64e.dylib", "arm64e", 0x1bc340000},
		{"x86_64 executable, dyld info", "object-testfiles/macho/base-x86_64", "x86_64", 0x10f2a1000},
		{"executable loaded below its vmaddr", "object-testfiles/macho/base-x86_64", "x86_64", 0x4000},
		{"fat slice", "macsymbolicator/MacSymbolicatorTests/Binaries/CrashingTest", "arm64", 0x102f34000},
		{"i386 executable", "go-debug-macho/gcc-386-darwin-exec", "i386", 0x8f000},
		{"Go executable", "object-testfiles/macho/go-aarch64", "arm64", 0x100e10000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Open(corpusFile(t, tt.path))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			im, err := f.ByArch(tt.arch)
			if err != nil {
				t.Fatal(err)
			}
			mem := &testMemory{}
			loadInto(t, mem, im, tt.loadAddress)
			got, err := FromMemory(mem, tt.loadAddress, im.Name)
			if err != nil {
				t.Fatalf("FromMemory(%#x): %v", tt.loadAddress, err)
			}
			want := factsOf(t, im)
			if want.Symtab.NSyms == 0 {
				t.Fatalf("%s has no symbols: the comparison would prove nothing", tt.path)
			}
			opts := cmpopts.IgnoreFields(RawSymtab{}, "ByteOrder")
			if diff := cmp.Diff(want, factsOf(t, got), opts); diff != "" {
				t.Errorf("FromMemory differs from the file (-file +memory):\n%s", diff)
			}
			if got.Arch != im.Arch {
				t.Errorf("Arch = %v, want %v", got.Arch, im.Arch)
			}
		})
	}
}

func TestFromMemoryName(t *testing.T) {
	f, err := Open(corpusFile(t, "object-testfiles/macho/libexports.dylib"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mem := &testMemory{}
	loadInto(t, mem, f.Images[0], 0x200000000)
	im, err := FromMemory(mem, 0x200000000, "")
	if err != nil {
		t.Fatal(err)
	}
	// With no name given, the LC_ID_DYLIB name (from llvm-objdump).
	if want := "libexports.dylib"; im.Name != want {
		t.Errorf("Name = %q, want %q", im.Name, want)
	}
}

func TestFromMemoryMissing(t *testing.T) {
	f, err := Open(corpusFile(t, "object-testfiles/macho/libexports.dylib"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	const load = 0x300000000
	t.Run("no header", func(t *testing.T) {
		_, err := FromMemory(&testMemory{}, load, "lib")
		if err == nil || !strings.Contains(err.Error(), "cannot read mach header") {
			t.Errorf("FromMemory over empty memory: error = %v, want one about the mach header", err)
		}
	})
	t.Run("no __LINKEDIT", func(t *testing.T) {
		mem := &testMemory{}
		loadInto(t, mem, f.Images[0], load, "__LINKEDIT")
		im, err := FromMemory(mem, load, "lib")
		if err != nil {
			t.Fatalf("FromMemory: %v (the header and load commands are present)", err)
		}
		if len(im.Segments) != 3 {
			t.Errorf("len(Segments) = %d, want 3", len(im.Segments))
		}
		if _, _, err := im.Symtab(); err == nil || !strings.Contains(err.Error(), "LC_SYMTAB") {
			t.Errorf("Symtab() error = %v, want one naming LC_SYMTAB", err)
		}
		if _, err := im.Exports(); err == nil || !strings.Contains(err.Error(), "LC_DYLD_EXPORTS_TRIE") {
			t.Errorf("Exports() error = %v, want one naming LC_DYLD_EXPORTS_TRIE", err)
		}
	})
}
