package image

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// dwarfSect is one section header of dwarfMachO: name in __DWARF, at off
// (relative to the payload) for size bytes.
type dwarfSect struct {
	name      string
	off, size uint32
}

// dwarfMachO builds an arm64 MH_DSYM whose one segment, __DWARF, holds
// the sections given, all pointing into payload, which follows the load
// commands.
func dwarfMachO(sects []dwarfSect, payload []byte) []byte {
	le := binary.LittleEndian
	cmdSize := 72 + 80*len(sects)
	base := uint32(32 + cmdSize)
	b := make([]byte, 32, int(base)+len(payload))
	le.PutUint32(b[0:], mhMagic64)
	le.PutUint32(b[4:], 0x0100000c) // CPU_TYPE_ARM64
	le.PutUint32(b[12:], 0xa)       // MH_DSYM
	le.PutUint32(b[16:], 1)         // ncmds
	le.PutUint32(b[20:], uint32(cmdSize))
	seg := make([]byte, 72)
	le.PutUint32(seg[0:], lcSegment64)
	le.PutUint32(seg[4:], uint32(cmdSize))
	copy(seg[8:], "__DWARF")
	le.PutUint64(seg[24:], 0x100000000)          // vmaddr
	le.PutUint64(seg[32:], uint64(len(payload))) // vmsize
	le.PutUint64(seg[40:], uint64(base))         // fileoff
	le.PutUint64(seg[48:], uint64(len(payload))) // filesize
	le.PutUint32(seg[64:], uint32(len(sects)))   // nsects
	b = append(b, seg...)
	for _, s := range sects {
		h := make([]byte, 80)
		copy(h[0:16], s.name)
		copy(h[16:32], "__DWARF")
		le.PutUint64(h[32:], 0x100000000+uint64(s.off)) // addr
		le.PutUint64(h[40:], uint64(s.size))
		le.PutUint32(h[48:], base+s.off)
		b = append(b, h...)
	}
	return append(b, payload...)
}

// allocBudget runs f and fails the test when it allocated more than 64
// times the input's size plus 64 MiB in all.
func allocBudget(t *testing.T, inputSize int, f func()) {
	t.Helper()
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	got, limit := after.TotalAlloc-before.TotalAlloc, uint64(64*inputSize+64<<20)
	t.Logf("%d-byte input: %d bytes allocated (limit %d)", inputSize, got, limit)
	if got > limit {
		t.Errorf("%d-byte input allocated %d bytes, want at most %d", inputSize, got, limit)
	}
}

// zlibBomb returns a __zdebug_ section body that expands to n zero bytes.
func zlibBomb(t *testing.T, n int) []byte {
	var buf bytes.Buffer
	buf.WriteString("ZLIB")
	buf.Write(binary.BigEndian.AppendUint64(nil, uint64(n)))
	zw, err := zlib.NewWriterLevel(&buf, zlib.BestCompression)
	if err != nil {
		t.Fatal(err)
	}
	zeros := make([]byte, 1<<20)
	for done := 0; done < n; done += len(zeros) {
		zw.Write(zeros[:min(len(zeros), n-done)])
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestDWARFDecompressionBounded: compressed sections of every DWARF name
// share one stream that expands about 1000 times. Each section's claim is
// within zlib's ratio, but together they would decompress far more than the
// file could hold; the image's decompression budget stops that with an
// error before it is allocated.
func TestDWARFDecompressionBounded(t *testing.T) {
	bomb := zlibBomb(t, 32<<20)
	var sects []dwarfSect
	for _, name := range []string{"info", "abbrev", "line", "str", "ranges", "aranges", "loc", "frame"} {
		sects = append(sects, dwarfSect{"__zdebug_" + name, 0, uint32(len(bomb))})
	}
	// A second copy of the stream is a different extent: a header naming
	// it costs a decompression of its own.
	for _, name := range []string{"str_offs", "addr", "line_str", "rnglists"} {
		sects = append(sects, dwarfSect{"__zdebug_" + name, uint32(len(bomb)), uint32(len(bomb))})
	}
	file := dwarfMachO(sects, append(bomb, bomb...))
	for _, tt := range []struct {
		name string
		read func(im *Image) (map[string][]byte, error)
	}{
		{"all", (*Image).DWARFSections},
		{"named", func(im *Image) (map[string][]byte, error) {
			return im.DWARFSectionsNamed("debug_info", "debug_line", "debug_str_offsets", "debug_addr")
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f, err := NewFile(bytes.NewReader(file), "bomb.dSYM")
			if err != nil {
				t.Fatal(err)
			}
			var secs map[string][]byte
			allocBudget(t, len(file), func() { secs, err = tt.read(f.Images[0]) })
			if err == nil || !strings.Contains(err.Error(), "decompression budget") {
				t.Errorf("DWARFSections = %d sections, %v; want a decompression budget error", len(secs), err)
			}
		})
	}
}

// TestDWARFAliasedSections: thousands of section headers name the same
// bytes. Only the first section of each name is read, extents already read
// are not read again, and the bytes read in all stay within the file's
// size.
func TestDWARFAliasedSections(t *testing.T) {
	const blob, headers = 400 << 10, 2000
	payload := make([]byte, blob+headers)
	tests := []struct {
		name    string
		sect    func(i int) dwarfSect
		wantErr string // "" for success
		wantN   int    // sections returned on success
	}{
		// One name over and over: the first counts.
		{"same name", func(i int) dwarfSect { return dwarfSect{"__debug_info", uint32(i), blob} }, "", 1},
		// Distinct names on the very same bytes: read once.
		{"same extent", func(i int) dwarfSect { return dwarfSect{fmt.Sprintf("__debug_x%05d", i), 0, blob} }, "", headers},
		// Distinct names on overlapping extents: the read budget ends it.
		{"overlapping extents", func(i int) dwarfSect { return dwarfSect{fmt.Sprintf("__debug_x%05d", i), uint32(i), blob} },
			"total more than the file's", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sects := make([]dwarfSect, headers)
			for i := range sects {
				sects[i] = tt.sect(i)
			}
			file := dwarfMachO(sects, payload)
			f, err := NewFile(bytes.NewReader(file), "aliased.dSYM")
			if err != nil {
				t.Fatal(err)
			}
			var secs map[string][]byte
			allocBudget(t, len(file), func() { secs, err = f.Images[0].DWARFSections() })
			switch {
			case tt.wantErr == "" && err != nil:
				t.Errorf("DWARFSections: %v, want success", err)
			case tt.wantErr == "" && len(secs) != tt.wantN:
				t.Errorf("DWARFSections = %d sections, want %d", len(secs), tt.wantN)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Errorf("DWARFSections = %d sections, %v; want an error containing %q", len(secs), err, tt.wantErr)
			}
		})
	}
}
