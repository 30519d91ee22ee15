package machocore

import (
	"bytes"
	"fmt"
	"io"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/uuid"
)

// dylinkerImage returns a minimal arm64 dyld as it lies in memory: a mach
// header (MH_DYLINKER), an LC_SEGMENT_64 __TEXT mapping the first 0x4000
// bytes, LC_UUID and LC_ID_DYLINKER, then zeros.
func dylinkerImage(id uuid.UUID, name string) []byte {
	var cmds []byte
	seg := le.AppendUint32(nil, 0x19) // LC_SEGMENT_64
	seg = le.AppendUint32(seg, 72)
	seg = append(seg, append([]byte("__TEXT"), make([]byte, 10)...)...)
	for _, v := range []uint64{0, 0x4000, 0, 0x4000} { // vmaddr, vmsize, fileoff, filesize
		seg = le.AppendUint64(seg, v)
	}
	seg = append(seg, 5, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	cmds = append(cmds, seg...)
	cmds = le.AppendUint32(cmds, 0x1b) // LC_UUID
	cmds = le.AppendUint32(cmds, 24)
	cmds = append(cmds, id[:]...)
	str := append([]byte(name), 0)
	for len(str)%8 != 4 {
		str = append(str, 0)
	}
	cmds = le.AppendUint32(cmds, lcIDDylinker)
	cmds = le.AppendUint32(cmds, uint32(12+len(str)))
	cmds = le.AppendUint32(cmds, 12) // name offset
	cmds = append(cmds, str...)
	b := le.AppendUint32(nil, mhMagic64)
	for _, v := range []uint32{archregs.CPUTypeARM64, 0, 7 /* MH_DYLINKER */, 3, uint32(len(cmds)), 0, 0} {
		b = le.AppendUint32(b, v)
	}
	b = append(b, cmds...)
	return append(b, make([]byte, 0x4000-len(b))...)
}

// TestHeaderScan finds images by their mach headers: one at a region's
// start, one at a page inside a region, and not a stray magic number with
// a file type no process loads.
func TestHeaderScan(t *testing.T) {
	dyld := dylinkerImage(uuid.UUID{0xd1}, "/usr/lib/dyld")
	inner := dylinkerImage(uuid.UUID{0xd2}, "/usr/lib/inner")
	stray := dylinkerImage(uuid.UUID{0xd3}, "/stray")
	le.PutUint32(stray[12:], 1) // MH_OBJECT
	big := append(append(make([]byte, 0x2000), inner...), stray...)
	in := &WriteInput{Arch: archregs.ARM64, Regions: []WriteRegion{
		{Addr: 0x180000000, Data: dyld},
		{Addr: 0x190000000, Data: big},
	}}
	c := openCore(t, writeCore(t, in))
	want := []Image{
		{Name: "/usr/lib/dyld", UUID: uuid.UUID{0xd1}, LoadAddress: 0x180000000, Size: 0x4000, Source: "header scan"},
		{Name: "/usr/lib/inner", UUID: uuid.UUID{0xd2}, LoadAddress: 0x190002000, Size: 0x4000, Source: "header scan"},
	}
	if diff := cmp.Diff(want, c.Images); diff != "" {
		t.Errorf("images (-want +got):\n%s", diff)
	}
	if len(c.Warnings) > 0 {
		t.Errorf("warnings: %v", c.Warnings)
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.ReaderAt
	n atomic.Int64
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n.Add(int64(n))
	return n, err
}

// sparseCore is a core declaring a segment of size bytes, all in the file,
// whose data is not materialized: reads past the load commands return
// zeros. It stands for a multi-gigabyte core on disk.
type sparseCore struct {
	head []byte
	size int64
}

func (s *sparseCore) ReadAt(p []byte, off int64) (int, error) {
	if off >= s.size {
		return 0, io.EOF
	}
	n := 0
	if off < int64(len(s.head)) {
		n = copy(p, s.head[off:])
	}
	for i := n; i < len(p) && off+int64(i) < s.size; i++ {
		p[i] = 0
		n++
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// newSparseCore writes a core whose one thread's stack lies in a 1 GiB
// segment, and returns it without the segment's data. With notes, an "all
// image infos" note names an image, so that Open does not search memory for
// mach headers.
func newSparseCore(t testing.TB, notes bool) *sparseCore {
	const size = 1 << 30
	regs := testRegisters(t, archregs.ARM64, 1, 0x100000000)
	in := &WriteInput{Arch: archregs.ARM64, Threads: []WriteThread{{Registers: regs}}, Regions: []WriteRegion{{Addr: 0x100000000, Size: size, Data: []byte{1}}}}
	if notes {
		in.Images = []Image{{Name: "/bin/app", LoadAddress: 0x100000000}}
	}
	head := writeCore(t, in)
	// Claim the whole segment as file data.
	c := openCore(t, head)
	off := c.Regions[0].FileOffset
	seg := bytes.Index(head, le.AppendUint64(le.AppendUint64(nil, off), 1))
	if seg < 0 {
		t.Fatal("segment command not found")
	}
	le.PutUint64(head[seg+8:], size)
	return &sparseCore{head: head, size: int64(off) + size}
}

// TestOpenReadsLazily opens a core with a 1 GiB segment and checks that
// Open reads the load commands and notes, and, without notes, one probe of
// at most 28 bytes per page it searches for mach headers (a bounded
// number): the memory itself is read on demand.
func TestOpenReadsLazily(t *testing.T) {
	for _, tt := range []struct {
		notes bool
		limit int64
		warn  int
	}{
		{notes: true, limit: 64 << 10},
		{notes: false, limit: 64<<10 + maxScanPages*28, warn: 1}, // "search for mach headers stopped"
	} {
		t.Run(fmt.Sprintf("notes=%v", tt.notes), func(t *testing.T) {
			sc := newSparseCore(t, tt.notes)
			cr := &countingReader{r: sc}
			c, err := Open(cr, sc.size)
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Warnings) != tt.warn || c.Regions[0].Present != 1<<30 {
				t.Fatalf("warnings %v, regions %+v; want %d warnings and the whole segment present", c.Warnings, c.Regions, tt.warn)
			}
			if n := cr.n.Load(); n > tt.limit {
				t.Errorf("Open read %d bytes of a %d-byte core, want at most %d", n, sc.size, tt.limit)
			}
			if lo, hi := c.Threads[0].StackLow, c.Threads[0].StackHigh; lo != 0x100000000 || hi != 0x100000000+1<<30 {
				t.Errorf("stack bounds [%#x, %#x), want the 1 GiB segment", lo, hi)
			}
		})
	}
}

// BenchmarkOpenSparse measures Open on a core declaring a 1 GiB segment,
// with an image note and without (searching memory for mach headers).
func BenchmarkOpenSparse(b *testing.B) {
	for _, notes := range []bool{true, false} {
		b.Run(fmt.Sprintf("notes=%v", notes), func(b *testing.B) {
			sc := newSparseCore(b, notes)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Open(sc, sc.size); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
