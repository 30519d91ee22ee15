package archregs

import (
	"encoding/binary"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stackimage/stackimage/internal/testcorpus"
)

func TestByCPU(t *testing.T) {
	tests := []struct {
		name    string
		cpu     uint32
		sub     uint32
		want    *Arch
		wantErr string
	}{
		{"arm64 all", 0x0100000c, 0, ARM64, ""},
		{"arm64 v8", 0x0100000c, 1, ARM64, ""},
		{"arm64e", 0x0100000c, 2, ARM64E, ""},
		{"arm64e ptrauth ABI bit", 0x0100000c, 0x80000002, ARM64E, ""},
		{"armv7", 12, 9, ARMV7, ""},
		{"armv7s", 12, 11, ARMV7, ""},
		{"armv7k", 12, 12, ARMV7, ""},
		{"x86_64 all", 0x01000007, 3, X86_64, ""},
		{"x86_64 lib64 capability", 0x01000007, 0x80000003, X86_64, ""},
		{"x86_64h", 0x01000007, 8, X86_64, ""},
		{"i386", 7, 3, I386, ""},
		{"armv6", 12, 6, nil, "unsupported CPU type 0xc subtype 0x6"},
		{"arm64_32", 0x0200000c, 1, nil, "unsupported CPU type 0x200000c subtype 0x1"},
		{"arm64 unknown subtype", 0x0100000c, 3, nil, "unsupported CPU type 0x100000c subtype 0x3"},
		{"powerpc", 18, 0, nil, "unsupported CPU type 0x12"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ByCPU(tt.cpu, tt.sub)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ByCPU(%#x, %#x) = %v, %v; want error containing %q", tt.cpu, tt.sub, got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("ByCPU(%#x, %#x) = %v, %v; want %v", tt.cpu, tt.sub, got, err, tt.want)
			}
		})
	}
}

// The CPU type constants must agree with the headers' values.
func TestCPUConstants(t *testing.T) {
	for _, a := range All {
		got, err := ByCPU(a.CPUType, a.CPUSubtype)
		if err != nil || got != a {
			t.Errorf("ByCPU(%s.CPUType, %s.CPUSubtype) = %v, %v; want %v", a, a, got, err, a)
		}
	}
}

// corpusDir returns ../shared/corpus beside the repository, skipping the
// test when it is absent: a user's clone does not have it, CI does.
func corpusDir(tb testing.TB) string {
	tb.Helper()
	return testcorpus.Dir(tb)
}

// Real Apple-built thin Mach-O files: their header's cputype and cpusubtype
// must name the architecture the corpus manifest lists.
func TestByCPUCorpus(t *testing.T) {
	corpus := corpusDir(t)
	tests := []struct {
		path string
		want *Arch
	}{
		{"object-testfiles/macho/go-aarch64", ARM64},
		{"object-testfiles/macho/fixup-chains-arm64e.dylib", ARM64E},
		{"object-testfiles/macho/fixup-chains-armv7k.dylib", ARMV7},
		{"object-testfiles/macho/reloc-arm.o", ARMV7},
		{"object-testfiles/macho/go-x86_64", X86_64},
		{"object-testfiles/macho/static-x86", I386},
		{"go-debug-macho/gcc-386-darwin-exec", I386},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			f, err := os.Open(filepath.Join(corpus, tt.path))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var hdr [3]uint32 // magic, cputype, cpusubtype
			if err := binary.Read(io.LimitReader(f, 12), binary.LittleEndian, &hdr); err != nil {
				t.Fatal(err)
			}
			if hdr[0] != 0xfeedface && hdr[0] != 0xfeedfacf {
				t.Fatalf("magic %#x: not a thin little-endian Mach-O", hdr[0])
			}
			got, err := ByCPU(hdr[1], hdr[2])
			if err != nil || got != tt.want {
				t.Errorf("ByCPU(%#x, %#x) = %v, %v; want %v", hdr[1], hdr[2], got, err, tt.want)
			}
		})
	}
}

func TestByName(t *testing.T) {
	for _, a := range All {
		if got, err := ByName(strings.ToUpper(a.Name)); err != nil || got != a {
			t.Errorf("ByName(%q) = %v, %v; want %v", strings.ToUpper(a.Name), got, err, a)
		}
	}
	if got, err := ByName("ppc"); err == nil {
		t.Errorf("ByName(%q) = %v, nil; want error", "ppc", got)
	}
}
