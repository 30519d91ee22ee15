package minidump

import (
	"bytes"
	"errors"
	"io"
	"sync/atomic"
	"testing"

	"github.com/stackimage/stackimage/archregs"
)

func seq(n int, start byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = start + byte(i)
	}
	return b
}

func TestReadMemory(t *testing.T) {
	for _, mem64 := range []bool{false, true} {
		in := &WriterInput{Arch: archregs.ARM64, Platform: PlatformIOS, Memory64: mem64, Memory: []WriterMemory{
			{Addr: 0x2000, Data: []byte{0xa0, 0xa1, 0xa2, 0xa3}},
			{Addr: 0x1000, Data: seq(16, 0)},
			{Addr: 0x1010, Data: seq(16, 0x10)},
			{Addr: 0xffff_ffff_ffff_fff0, Data: seq(16, 0xf0)},
		}}
		d := parseBytes(t, writeDump(t, in))
		tests := []struct {
			name    string
			addr    uint64
			size    int
			want    []byte
			wantErr bool
		}{
			{"inside", 0x1004, 4, []byte{4, 5, 6, 7}, false},
			{"across adjacent regions", 0x100c, 8, seq(8, 0x0c), false},
			{"both regions whole", 0x1000, 32, seq(32, 0), false},
			{"last byte", 0x2003, 1, []byte{0xa3}, false},
			{"nothing", 0x5000, 0, []byte{}, false},
			{"short at the end of a run", 0x101c, 8, seq(4, 0x1c), true},
			{"in the gap", 0x1800, 8, []byte{}, true},
			{"before the first", 0xfff, 2, []byte{}, true},
			{"top of the address space", 0xffff_ffff_ffff_fffe, 2, []byte{0xfe, 0xff}, false},
			{"wrapping", 0xffff_ffff_ffff_fffe, 4, []byte{0xfe, 0xff}, true},
		}
		for _, tt := range tests {
			name := tt.name
			if mem64 {
				name += "/memory64"
			}
			t.Run(name, func(t *testing.T) {
				p := make([]byte, tt.size)
				n, err := d.Memory.ReadMemory(p, tt.addr)
				if !bytes.Equal(p[:n], tt.want) {
					t.Errorf("ReadMemory(%d bytes at %#x) = %x, want %x", tt.size, tt.addr, p[:n], tt.want)
				}
				if (err != nil) != tt.wantErr || (err != nil && !errors.Is(err, ErrNotCaptured)) {
					t.Errorf("ReadMemory(%d bytes at %#x) error = %v, want error %v (ErrNotCaptured)", tt.size, tt.addr, err, tt.wantErr)
				}
			})
		}
	}
}

// zeroTail is an io.ReaderAt over a dump whose bytes after prefix are all
// zero, up to size: a large Memory64 dump without storing its memory.
type zeroTail struct {
	prefix []byte
	size   int64
	read   atomic.Int64 // bytes handed out
}

func (z *zeroTail) ReadAt(p []byte, off int64) (int, error) {
	if off >= z.size {
		return 0, io.EOF
	}
	n := 0
	if off < int64(len(z.prefix)) {
		n = copy(p, z.prefix[off:])
	}
	for n < len(p) && off+int64(n) < z.size {
		p[n] = 0
		n++
	}
	z.read.Add(int64(n))
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// firstWrite keeps the bytes of the first Write (Write emits everything
// but the Memory64 data in one call) and counts the rest.
type firstWrite struct {
	first []byte
	total int64
}

func (w *firstWrite) Write(p []byte) (int, error) {
	if w.first == nil {
		w.first = bytes.Clone(p)
	}
	w.total += int64(len(p))
	return len(p), nil
}

// largeDump returns a dump with a Memory64 list of 1 GiB in 256 ranges,
// and its size.
func largeDump(tb testing.TB) *zeroTail {
	in := &WriterInput{Arch: archregs.ARM64, Platform: PlatformMacOS, Memory64: true,
		Threads: []WriterThread{{ID: 1, Registers: testRegisters(tb, archregs.ARM64, 1), StackAddr: 0x3_0000_0000, Stack: make([]byte, 512<<10)}}}
	for i := 0; i < 256; i++ {
		in.Memory = append(in.Memory, WriterMemory{Addr: 0x1_0000_0000 + uint64(i)<<23, Size: 4 << 20})
	}
	var w firstWrite
	if err := Write(&w, in); err != nil {
		tb.Fatal(err)
	}
	return &zeroTail{prefix: w.first, size: w.total}
}

// TestOpenReadsLittle checks that parsing a dump reads its directory and
// streams, not its memory: a correctness property of the lazy Memory.
func TestOpenReadsLittle(t *testing.T) {
	z := largeDump(t)
	d, err := Parse(z, z.size)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Errors) > 0 {
		t.Fatalf("Errors = %v", d.Errors)
	}
	if got := len(d.Memory.Regions()); got != 257 {
		t.Errorf("%d memory regions, want 257", got)
	}
	if read := z.read.Load(); read > 64<<10 || read*10000 > z.size {
		t.Errorf("Parse read %d bytes of a %d-byte dump, want under 64 KiB", read, z.size)
	}
	before := z.read.Load()
	p := make([]byte, 16)
	if _, err := d.Memory.ReadMemory(p, 0x1_0000_0000+200<<23+12345); err != nil {
		t.Fatalf("ReadMemory: %v", err)
	}
	if got := z.read.Load() - before; got != 16 {
		t.Errorf("ReadMemory of 16 bytes read %d bytes of the dump", got)
	}
}

// TestFileAccessors checks that each File method reads its own streams:
// the module list of the large dump is read without its memory.
func TestFileAccessors(t *testing.T) {
	z := largeDump(t)
	f, err := Open(z, z.size)
	if err != nil {
		t.Fatal(err)
	}
	before := z.read.Load()
	mods, err := f.Modules()
	if err != nil || len(mods) != 0 {
		t.Errorf("Modules() = %d modules, %v; want none, no error", len(mods), err)
	}
	threads, err := f.Threads()
	if err != nil || len(threads) != 1 || threads[0].Registers() == nil {
		t.Fatalf("Threads() = %+v, %v; want one thread with registers", threads, err)
	}
	if pc, _ := threads[0].Registers().PC(); pc != 0x10000002111 {
		t.Errorf("thread pc = %#x, want 0x10000002111", pc)
	}
	mem, err := f.Memory()
	if err != nil || len(mem.Regions()) != 257 {
		t.Errorf("Memory() = %d regions, %v; want 257", len(mem.Regions()), err)
	}
	for name, get := range map[string]func() (any, error){
		"Exception":    func() (any, error) { return f.Exception() },
		"MiscInfo":     func() (any, error) { return f.MiscInfo() },
		"BreakpadInfo": func() (any, error) { return f.BreakpadInfo() },
		"CrashpadInfo": func() (any, error) { return f.CrashpadInfo() },
		"ThreadNames":  func() (any, error) { return f.ThreadNames() },
	} {
		if v, err := get(); err != nil || !isNil(v) {
			t.Errorf("%s() = %v, %v; want nil for a stream the dump lacks", name, v, err)
		}
	}
	if read := z.read.Load() - before; read > 64<<10 {
		t.Errorf("the accessors read %d bytes", read)
	}
}

func isNil(v any) bool {
	switch v := v.(type) {
	case *Exception:
		return v == nil
	case *MiscInfo:
		return v == nil
	case *BreakpadInfo:
		return v == nil
	case *CrashpadInfo:
		return v == nil
	case map[uint32]string:
		return v == nil
	}
	return false
}

// BenchmarkOpenLarge parses a synthetic dump with a 1 GiB Memory64 list
// (memory synthesized as zeros, never stored) and reports the bytes read.
func BenchmarkOpenLarge(b *testing.B) {
	z := largeDump(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Parse(z, z.size); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(z.read.Load())/float64(b.N), "bytes-read/op")
	b.ReportMetric(float64(z.size), "dump-bytes")
}
