package symbolize

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/image"
)

// codeProcess loads the arm64 chain fixture at a slide, as a dump would
// list it, and returns the process and the file's bytes.
func codeProcess(t *testing.T, slide uint64) (*Process, []byte) {
	t.Helper()
	path := filepath.Join("..", "fixtures", "bin", "chain-arm64-O0")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f, err := image.NewFile(bytes.NewReader(data), path)
	if err != nil {
		t.Fatal(err)
	}
	im := f.Images[0]
	text, ok := im.TextSegment()
	if !ok {
		t.Fatalf("%s has no __TEXT", path)
	}
	z := &Symbolizer{}
	p, err := z.NewProcess(archregs.ARM64, []*image.Loaded{{Name: path, LoadAddress: text.Addr + slide, Image: im}})
	if err != nil {
		t.Fatal(err)
	}
	return p, data
}

func TestProcessReadMemory(t *testing.T) {
	const slide = 0xc000
	p, data := codeProcess(t, slide)
	// The fixture's __TEXT is at vmaddr 0x100000000, file offset 0, 16 KiB
	// (llvm-objdump --macho --private-headers); __LINKEDIT follows it.
	const text, textSize = 0x100000000, 0x4000
	tests := []struct {
		name string
		addr uint64 // unslid
		size int
	}{
		{"one instruction", text + 0x478, 4},
		{"across a page boundary", text + 0x1000 - 6, 12},
		{"a whole page and more", text + 0x10, 5000},
		{"last bytes of the segment", text + textSize - 4, 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := make([]byte, tt.size)
			n, err := p.ReadMemory(got, tt.addr+slide)
			if err != nil || n != tt.size {
				t.Fatalf("ReadMemory(%#x, %d bytes) = %d, %v; want all of them", tt.addr+slide, tt.size, n, err)
			}
			off := tt.addr - text
			if want := data[off : off+uint64(tt.size)]; !bytes.Equal(got, want) {
				t.Errorf("ReadMemory(%#x) = % x, want the file's % x", tt.addr+slide, got[:min(16, len(got))], want[:min(16, len(want))])
			}
		})
	}
}

func TestProcessReadMemoryErrors(t *testing.T) {
	const slide = 0xc000
	p, _ := codeProcess(t, slide)
	const text, textSize = 0x100000000, 0x4000
	tests := []struct {
		name  string
		addr  uint64 // slid
		size  int
		wantN int
		want  string
	}{
		{"in no image", 0x1000, 4, 0, "in no known image"},
		{"not executable (__LINKEDIT)", text + textSize + 8 + slide, 4, 0, "not in an executable segment"},
		{"running off the end of __TEXT", text + textSize - 2 + slide, 4, 2, "not in an executable segment"},
		{"wrapping around", ^uint64(0) - 1, 4, 0, "in no known image"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := p.ReadMemory(make([]byte, tt.size), tt.addr)
			if n != tt.wantN || err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("ReadMemory(%#x) = %d, %v; want %d and an error containing %q", tt.addr, n, err, tt.wantN, tt.want)
			}
		})
	}
}
