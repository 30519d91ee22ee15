package image

import (
	"bytes"
	"encoding/binary"
	"log"
	"testing"
)

// TestUnknownLoadCommandIsQuiet: go-macho logs load commands it does not
// know; opening such a file must not write to the user's stderr.
func TestUnknownLoadCommandIsQuiet(t *testing.T) {
	data := synthMachO()
	le := binary.LittleEndian
	// Put an unknown 8-byte command after the four real ones; the space
	// after the commands up to the symbol table is free.
	end := 32 + le.Uint32(data[20:])
	le.PutUint32(data[end:], 0x7ffe)
	le.PutUint32(data[end+4:], 8)
	le.PutUint32(data[16:], 5)
	le.PutUint32(data[20:], le.Uint32(data[20:])+8)

	var logged bytes.Buffer
	defer log.SetOutput(log.Writer())
	log.SetOutput(&logged)
	f, err := NewFile(bytes.NewReader(data), "synth")
	if err != nil {
		t.Fatal(err)
	}
	if ex, err := f.Images[0].Exports(); err != nil || len(ex) != 1 {
		t.Errorf("Exports() = %v, %v, want _main", ex, err)
	}
	if logged.Len() != 0 {
		t.Errorf("opening a file with an unknown load command logged %q", logged.String())
	}
}

// BenchmarkOpenGo opens a 2 MB Go executable with 2168 symbols and reads its
// symbol table: the allocations must not grow with one string per symbol.
func BenchmarkOpenGo(b *testing.B) {
	path := corpusFile(b, "object-testfiles/macho/go-aarch64")
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		f, err := Open(path)
		if err != nil {
			b.Fatal(err)
		}
		if _, _, err := f.Images[0].Symtab(); err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}
