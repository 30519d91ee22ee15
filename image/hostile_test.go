package image

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/stackimage/stackimage/internal/hostile"
)

// Offsets in the file synthMachO builds.
const (
	synthSymtabCmd  = 32 + 72      // LC_SYMTAB follows the header and LC_SEGMENT_64
	synthFStartsCmd = 32 + 72 + 24 // LC_FUNCTION_STARTS
	synthTrieCmd    = synthFStartsCmd + 16
	synthSymoff     = 0x100
	synthStroff     = 0x120
	synthFStarts    = 0x130
	synthTrie       = 0x140
	synthSize       = 0x160
)

// synthTrieBytes is an export trie with one symbol, _main at 0x100: the
// root (no terminal, one edge "_main" to offset 9) and the node at 9
// (terminal: flags 0, address ULEB128 0x100; no children).
var synthTrieBytes = []byte{0x00, 0x01, '_', 'm', 'a', 'i', 'n', 0x00, 0x09, 0x03, 0x00, 0x80, 0x02, 0x00}

// synthMachO builds a small valid arm64 MH_EXECUTE: __TEXT maps the whole
// file; LC_SYMTAB with two symbols; LC_FUNCTION_STARTS with starts at
// +0x100 and +0x110; LC_DYLD_EXPORTS_TRIE exporting _main at +0x100.
func synthMachO() []byte {
	b := make([]byte, synthSize)
	le := binary.LittleEndian
	le.PutUint32(b[0:], mhMagic64)
	le.PutUint32(b[4:], 0x0100000c) // CPU_TYPE_ARM64
	le.PutUint32(b[12:], 2)         // MH_EXECUTE
	le.PutUint32(b[16:], 4)         // ncmds
	le.PutUint32(b[20:], 72+24+16+16)
	c := b[32:]
	le.PutUint32(c[0:], lcSegment64)
	le.PutUint32(c[4:], 72)
	copy(c[8:], "__TEXT")
	le.PutUint64(c[24:], 0x100000000) // vmaddr
	le.PutUint64(c[32:], 0x1000)      // vmsize
	le.PutUint64(c[48:], synthSize)   // filesize
	le.PutUint32(c[56:], 5)
	le.PutUint32(c[60:], 5)
	c = b[synthSymtabCmd:]
	le.PutUint32(c[0:], lcSymtab)
	le.PutUint32(c[4:], 24)
	le.PutUint32(c[8:], synthSymoff)
	le.PutUint32(c[12:], 2)
	le.PutUint32(c[16:], synthStroff)
	le.PutUint32(c[20:], 16)
	c = b[synthFStartsCmd:]
	le.PutUint32(c[0:], lcFunctionStarts)
	le.PutUint32(c[4:], 16)
	le.PutUint32(c[8:], synthFStarts)
	le.PutUint32(c[12:], 8)
	c = b[synthTrieCmd:]
	le.PutUint32(c[0:], lcDyldExportsTrie)
	le.PutUint32(c[4:], 16)
	le.PutUint32(c[8:], synthTrie)
	le.PutUint32(c[12:], uint32(len(synthTrieBytes)))
	// nlist_64: n_strx, n_type N_SECT|N_EXT, n_sect 1, n_desc, n_value.
	for i, sym := range []struct{ strx, value uint32 }{{1, 0x100}, {7, 0x110}} {
		e := b[synthSymoff+16*i:]
		le.PutUint32(e[0:], sym.strx)
		e[4], e[5] = 0x0f, 1
		le.PutUint64(e[8:], 0x100000000+uint64(sym.value))
	}
	copy(b[synthStroff:], "\x00_main\x00_f\x00")
	copy(b[synthFStarts:], []byte{0x80, 0x02, 0x10, 0x00})
	copy(b[synthTrie:], synthTrieBytes)
	return b
}

func TestSynthValid(t *testing.T) {
	f, err := NewFile(bytes.NewReader(synthMachO()), "synth")
	if err != nil {
		t.Fatal(err)
	}
	im := f.Images[0]
	raw, ok, err := im.Symtab()
	if err != nil || !ok || raw.NSyms != 2 || len(raw.Syms) != 32 || string(raw.Strings) != "\x00_main\x00_f\x00\x00\x00\x00\x00\x00\x00" {
		t.Errorf("Symtab() = %+v, %v, %v", raw, ok, err)
	}
	fs, err := im.FunctionStarts()
	if diff := cmp.Diff([]uint64{0x100000100, 0x100000110}, fs); diff != "" || err != nil {
		t.Errorf("FunctionStarts() err %v (-want +got):\n%s", err, diff)
	}
	ex, err := im.Exports()
	if diff := cmp.Diff([]Export{{"_main", 0x100000100}}, ex); diff != "" || err != nil {
		t.Errorf("Exports() err %v (-want +got):\n%s", err, diff)
	}
}

func TestHostileInput(t *testing.T) {
	le := binary.LittleEndian
	type call int
	const (
		callOpen call = iota
		callSymtab
		callFunctionStarts
		callExports
	)
	tests := []struct {
		name    string
		patch   func(b []byte) []byte
		call    call
		wantOff int64  // FormatError.Off
		wantMsg string // in the error text
	}{
		{"absurd nsyms", func(b []byte) []byte { le.PutUint32(b[synthSymtabCmd+12:], 0xffffffff); return b },
			callSymtab, synthSymtabCmd + 12, "nsyms 4294967295"},
		{"absurd strsize", func(b []byte) []byte { le.PutUint32(b[synthSymtabCmd+20:], 0x7fffffff); return b },
			callSymtab, synthSymtabCmd + 20, "strsize 2147483647"},
		{"symoff past the end", func(b []byte) []byte { le.PutUint32(b[synthSymtabCmd+8:], synthSize); return b },
			callSymtab, synthSymtabCmd + 12, "extends past the end"},
		{"absurd ncmds", func(b []byte) []byte { le.PutUint32(b[16:], 0xffffffff); return b },
			callOpen, 16, "ncmds 4294967295"},
		{"absurd sizeofcmds", func(b []byte) []byte { le.PutUint32(b[20:], 0xfffffff0); return b },
			callOpen, 20, "sizeofcmds too large"},
		{"sizeofcmds past the end", func(b []byte) []byte { le.PutUint32(b[20:], 0x1000); return b },
			callOpen, 20, "load commands range"},
		{"zero cmdsize", func(b []byte) []byte { le.PutUint32(b[synthSymtabCmd+4:], 0); return b },
			callOpen, synthSymtabCmd + 4, "bad cmdsize"},
		{"cmdsize past sizeofcmds", func(b []byte) []byte { le.PutUint32(b[synthTrieCmd+4:], 17); return b },
			callOpen, synthTrieCmd + 4, "bad cmdsize"},
		{"short LC_SYMTAB", func(b []byte) []byte {
			// Shrink LC_SYMTAB to 16 bytes and pad with an 8-byte no-op command.
			le.PutUint32(b[synthSymtabCmd+4:], 16)
			le.PutUint32(b[synthSymtabCmd+16:], 0x7fff)
			le.PutUint32(b[synthSymtabCmd+20:], 8)
			le.PutUint32(b[16:], 5)
			return b
		}, callOpen, synthSymtabCmd + 4, "LC_SYMTAB cmdsize 16"},
		{"bad magic", func(b []byte) []byte { b[0] = 0; return b }, callOpen, 0, "bad magic"},
		{"export trie cycle", func(b []byte) []byte { b[synthTrie+8] = 0; return b },
			callExports, synthTrie, "node reached twice"},
		{"export trie child past the end", func(b []byte) []byte { b[synthTrie+8] = 0x7f; return b },
			callExports, synthTrie + 0x7f, "node offset past the end"},
		{"export trie unterminated label", func(b []byte) []byte {
			le.PutUint32(b[synthTrieCmd+12:], 6)
			return b
		}, callExports, synthTrie, "unterminated edge label"},
		{"export trie past the end of the file", func(b []byte) []byte { le.PutUint32(b[synthTrieCmd+8:], 0xfffffff0); return b },
			callExports, synthTrieCmd + 8, "LC_DYLD_EXPORTS_TRIE"},
		{"function starts overflow", func(b []byte) []byte {
			copy(b[synthFStarts:], bytes.Repeat([]byte{0xff}, 8))
			le.PutUint32(b[synthFStartsCmd+12:], 8)
			return b
		}, callFunctionStarts, synthFStarts, "truncated LEB128 number"},
		{"function starts wrap around", func(b []byte) []byte {
			copy(b[synthFStarts:], []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
			copy(b[0x150:], []byte{0xff, 0x01})
			le.PutUint32(b[synthFStartsCmd+8:], 0x148)
			le.PutUint32(b[synthFStartsCmd+12:], 10)
			copy(b[0x148:], []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
			return b
		}, callFunctionStarts, 0x148, "address overflows"},
		{"fat: absurd nfat_arch", func([]byte) []byte {
			return []byte{0xca, 0xfe, 0xba, 0xbe, 0x7f, 0xff, 0xff, 0xff}
		}, callOpen, 4, "nfat_arch too large"},
		{"fat: slice past the end", func(b []byte) []byte {
			fat := make([]byte, 28)
			binary.BigEndian.PutUint32(fat[0:], fatMagic)
			binary.BigEndian.PutUint32(fat[4:], 1)
			binary.BigEndian.PutUint32(fat[8:], 0x0100000c)
			binary.BigEndian.PutUint32(fat[16:], 28)
			binary.BigEndian.PutUint32(fat[20:], 0x7fffffff)
			return append(fat, b...)
		}, callOpen, 16, "fat slice 0"},
		{"fat: no slices", func([]byte) []byte { return []byte{0xca, 0xfe, 0xba, 0xbe, 0, 0, 0, 0} },
			callOpen, 4, "no slices"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := tt.patch(synthMachO())
			f, err := NewFile(bytes.NewReader(data), "synth")
			if err == nil {
				im := f.Images[0]
				switch tt.call {
				case callSymtab:
					_, _, err = im.Symtab()
				case callFunctionStarts:
					_, err = im.FunctionStarts()
				case callExports:
					_, err = im.Exports()
				}
			}
			if err == nil {
				t.Fatalf("got no error, want one with %q", tt.wantMsg)
			}
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error %q is not a *FormatError", err)
			}
			if fe.Off != tt.wantOff || !strings.Contains(err.Error(), tt.wantMsg) {
				t.Errorf("error = %q at offset %#x, want %q at offset %#x", err, fe.Off, tt.wantMsg, tt.wantOff)
			}
		})
	}
}

// exercise opens data and calls every accessor; it must not panic.
func exercise(data []byte) error {
	// The cheap readers first: their errors are not the file's (Peek
	// refuses a fat file, ReadFatArchs ignores a thin one).
	Sniff(data)
	ParseHeader(data)
	Peek(bytes.NewReader(data), int64(len(data)))
	Peek(bytes.NewReader(data), -1)
	ReadFatArchs(bytes.NewReader(data), int64(len(data)))
	f, err := NewFile(bytes.NewReader(data), "input")
	if err != nil {
		return err
	}
	var errs []error
	for _, im := range f.Images {
		_, _, err := im.Symtab()
		errs = append(errs, err)
		_, err = im.FunctionStarts()
		errs = append(errs, err)
		_, err = im.Exports()
		errs = append(errs, err)
		_, err = im.DWARFSections()
		errs = append(errs, err)
		for _, s := range im.Segments {
			_, err = im.ReadSegment(s)
			errs = append(errs, err)
		}
		h := im.Header()
		for _, c := range im.LoadCommands() {
			c.UUID()
			c.DyldInfo(h.ByteOrder)
			c.EntryPoint(h.ByteOrder)
			c.Segment(h.ByteOrder)
		}
		im.TextSegment()
		im.SectionFor(0x100000000)
		NewList([]*Loaded{{LoadAddress: 0x104000000, Image: im}}).Lookup(0x104000100)
	}
	return errors.Join(errs...)
}

// TestTruncatedAtEveryByte opens every prefix of real small files (of larger
// ones, every prefix ending in the headers or the tables at the end and a
// sample in between): each must give an error or a valid result, never a
// panic; the whole file must open cleanly.
func TestTruncatedAtEveryByte(t *testing.T) {
	files := map[string][]byte{"synthetic": synthMachO()}
	for _, p := range []string{
		"object-testfiles/macho/static-x86",
		"object-testfiles/macho/base-aarch64.o",
		"object-testfiles/macho/libexports.dylib",
		"go-debug-macho/fat-gcc-386-amd64-darwin-exec",
		"pprof/internal/binutils/testdata/lib_mac_64.dSYM/Contents/Resources/DWARF/lib_mac_64",
	} {
		dir, ok := findCorpus()
		if !ok {
			t.Log("corpus absent: truncating the synthetic file only")
			break
		}
		data, err := os.ReadFile(filepath.Join(dir, p))
		if err != nil {
			t.Fatal(err)
		}
		files[p] = data
	}
	for name, data := range files {
		t.Run(name, func(t *testing.T) {
			if err := exercise(data); err != nil {
				t.Fatalf("the whole file: %v", err)
			}
			for n := 0; n < len(data); n++ {
				// Larger files: every byte of the headers and of the
				// __LINKEDIT tables at the end, a sample in between.
				if len(data) > 10000 && n > 4096 && n < len(data)-2048 && n%97 != 0 {
					continue
				}
				err := exercise(data[:n])
				if n < machHeaderSize && err == nil {
					t.Fatalf("%d bytes (less than a mach header) gave no error", n)
				}
			}
		})
	}
}

// TestLargeReadAllocatesOnce checks that a table larger than
// directReadLimit in a reader of known size is read into one allocation
// of its size: growing it chunk by chunk allocated more than four times
// as much (35.8 MB for this 8 MB table).
func TestLargeReadAllocatesOnce(t *testing.T) {
	const strsize = 8 << 20
	b := synthMachO()
	binary.LittleEndian.PutUint32(b[synthSymtabCmd+20:], strsize)
	b = append(b, make([]byte, synthStroff+strsize-len(b))...)
	f, err := NewFile(bytes.NewReader(b), "big")
	if err != nil {
		t.Fatal(err)
	}
	var raw RawSymtab
	allocated := hostile.Allocated(func() {
		raw, _, err = f.Images[0].Symtab()
	})
	if err != nil || len(raw.Strings) != strsize {
		t.Fatalf("Symtab() = %d-byte string table, %v; want %d bytes", len(raw.Strings), err, strsize)
	}
	if allocated > strsize*5/4 {
		t.Errorf("reading a %d-byte string table allocated %d bytes; want about its size", strsize, allocated)
	}
}
