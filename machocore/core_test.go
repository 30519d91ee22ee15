package machocore

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/uuid"
)

// testArches are the architectures Write supports, with a stack address
// and image addresses that fit each.
var testArches = []struct {
	arch  *archregs.Arch
	stack uint64
	image uint64
}{
	{archregs.ARM64, 0x16fdff000, 0x100000000},
	{archregs.ARMV7, 0x2fd00000, 0x4000},
	{archregs.X86_64, 0x7ff7bfeff000, 0x100000000},
	{archregs.I386, 0xbff00000, 0x1000},
}

// testRegisters returns registers of arch with every register known and
// distinct, SP pointing into the stack region at stack.
func testRegisters(t testing.TB, arch *archregs.Arch, seed, stack uint64) *archregs.Registers {
	t.Helper()
	r := archregs.NewRegisters(arch)
	for i, name := range arch.RegNames {
		v := seed*0x1000 + uint64(i)*0x11
		if arch.PtrSize == 4 {
			v &= 0xffffffff
		}
		if err := r.Set(name, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Set(arch.SP, stack+0x100); err != nil {
		t.Fatal(err)
	}
	return r
}

// testInput is a core of arch with two threads, a stack region, a region
// with a zero-filled tail and two images named in the notes.
func testInput(t testing.TB, arch *archregs.Arch, stack, imageAddr uint64) *WriteInput {
	t.Helper()
	stackData := make([]byte, 0x40)
	for i := range stackData {
		stackData[i] = byte(i * 7)
	}
	return &WriteInput{
		Arch: arch,
		Threads: []WriteThread{
			{Registers: testRegisters(t, arch, 1, stack), Exception: &ExceptionState{FaultAddress: 0xdead, Syndrome: 0x92000006, Exception: 1}},
			{Registers: testRegisters(t, arch, 2, stack)},
		},
		Regions: []WriteRegion{
			{Addr: stack, Size: 0x1000, Data: stackData, Prot: vmProtRead | vmProtWrite},
			{Addr: imageAddr, Size: 0x3000, Data: []byte("not a mach header, then zeros"), Prot: 5, MaxProt: 7},
		},
		Images: []Image{
			{Name: "/usr/lib/dyld", UUID: uuid.UUID{1, 2, 3}, LoadAddress: imageAddr + 0x1000,
				Segments: []ImageSegment{{"__TEXT", imageAddr + 0x1000}, {"__DATA", imageAddr + 0x2000}}},
			{Name: "/bin/app", UUID: uuid.UUID{9, 8, 7}, LoadAddress: imageAddr},
		},
	}
}

func writeCore(t testing.TB, in *WriteInput) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, in); err != nil {
		t.Fatalf("Write: %v", err)
	}
	return b.Bytes()
}

func openCore(t testing.TB, data []byte) *Core {
	t.Helper()
	c, err := Open(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return c
}

// coreView is what a round trip must keep, in comparable form.
type coreView struct {
	Arch     string
	Threads  []threadView
	Images   []Image
	Regions  []Region
	Owners   []string
	Bits     int
	PACMask  uint64
	Warnings []string
}

type threadView struct {
	Index, Command      int
	Regs                map[string]uint64
	Exception           *ExceptionState
	StackLow, StackHigh uint64
}

func view(c *Core) coreView {
	v := coreView{Images: c.Images, Regions: c.Regions, Bits: c.AddressingBits, PACMask: c.PACMask}
	if c.Arch != nil {
		v.Arch = c.Arch.Name
	}
	for _, th := range c.Threads {
		tv := threadView{Index: th.Index, Command: th.Command, Exception: th.Exception, StackLow: th.StackLow, StackHigh: th.StackHigh}
		if th.Registers != nil {
			tv.Regs = th.Registers.Values()
		}
		v.Threads = append(v.Threads, tv)
	}
	for _, n := range c.Notes {
		v.Owners = append(v.Owners, n.Owner)
	}
	for _, w := range c.Warnings {
		v.Warnings = append(v.Warnings, w.Error())
	}
	return v
}

func TestRoundTrip(t *testing.T) {
	for _, ta := range testArches {
		for _, loadBinary := range []bool{false, true} {
			name := ta.arch.Name
			if loadBinary {
				name += "/load-binary"
			}
			t.Run(name, func(t *testing.T) {
				in := testInput(t, ta.arch, ta.stack, ta.image)
				in.LoadBinaryNotes = loadBinary
				data := writeCore(t, in)
				c := openCore(t, data)

				want := coreView{Arch: ta.arch.Name}
				for i, th := range in.Threads {
					tv := threadView{Index: i, Command: i, Regs: th.Registers.Values(), StackLow: ta.stack, StackHigh: ta.stack + 0x1000}
					if th.Exception != nil {
						e := *th.Exception
						e.Flavor = ta.arch.Exception.Flavor
						if ta.arch.CPUType == archregs.CPUTypeX86_64 || ta.arch.CPUType == archregs.CPUTypeX86 {
							e.Exception &= 0xffff // trapno is 16 bits
						}
						tv.Exception = &e
					}
					want.Threads = append(want.Threads, tv)
				}
				for _, im := range []Image{in.Images[1], in.Images[0]} { // by load address
					im.Source = ownerAllImageInfos
					if loadBinary {
						im.Source, im.Segments = ownerLoadBinary, nil
					}
					want.Images = append(want.Images, im)
				}
				// The regions follow the threads in address order (the
				// image region is below the stack on every arch), then
				// the notes follow them.
				want.Regions = []Region{
					{Command: 2, Addr: ta.image, Size: 0x3000, FileSize: 29, Present: 29, MaxProt: 7, Prot: 5},
					{Command: 3, Addr: ta.stack, Size: 0x1000, FileSize: 0x40, Present: 0x40, MaxProt: 3, Prot: 3},
				}
				if loadBinary {
					want.Owners = []string{ownerLoadBinary, ownerLoadBinary}
				} else {
					want.Owners = []string{ownerAllImageInfos}
				}
				if ta.arch == archregs.ARM64 {
					want.Owners = append(want.Owners, ownerAddrableBits)
					want.Bits, want.PACMask = 47, 0xffff800000000000
				}
				got := view(c)
				for i := range got.Regions {
					got.Regions[i].FileOffset = 0 // where the writer put the data is its own business
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("read back (-want +got):\n%s", diff)
				}

				// Memory: the stack as written, the image region's data then zeros.
				stack := make([]byte, 0x1000)
				if n, err := c.Memory.ReadMemory(stack, ta.stack); n != len(stack) || err != nil {
					t.Fatalf("ReadMemory(%#x) = %d, %v", ta.stack, n, err)
				}
				if !bytes.Equal(stack, append(in.Regions[0].Data, make([]byte, 0x1000-0x40)...)) {
					t.Errorf("stack memory differs from what was written")
				}
				img := make([]byte, 0x40)
				if n, err := c.Memory.ReadMemory(img, ta.image); n != len(img) || err != nil {
					t.Fatalf("ReadMemory(%#x) = %d, %v", ta.image, n, err)
				}
				wantImg := append([]byte("not a mach header, then zeros"), make([]byte, 0x40-29)...)
				if !bytes.Equal(img, wantImg) {
					t.Errorf("ReadMemory(%#x) = %q, want %q", ta.image, img, wantImg)
				}
			})
		}
	}
}

func TestReadMemory(t *testing.T) {
	in := &WriteInput{Arch: archregs.X86_64, Regions: []WriteRegion{
		{Addr: 0x1000, Data: []byte("abcd")},
		{Addr: 0x1004, Size: 8, Data: []byte("ef")}, // adjacent: "ef" then 6 zeros
		{Addr: 0x3000, Data: []byte("xyz")},
	}}
	c := openCore(t, writeCore(t, in))
	tests := []struct {
		name    string
		addr    uint64
		n       int
		want    string
		wantErr bool
	}{
		{"inside", 0x1001, 2, "bc", false},
		{"across adjacent regions", 0x1002, 5, "cdef\x00", false},
		{"zero tail", 0x1007, 5, "\x00\x00\x00\x00\x00", false},
		{"past the zero tail", 0x100a, 4, "\x00\x00", true},
		{"below every region", 0x10, 1, "", true},
		{"gap", 0x2000, 1, "", true},
		{"last region", 0x3000, 3, "xyz", false},
		{"wraps", ^uint64(0), 2, "", true},
		{"empty read", 0x5000, 0, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := make([]byte, tt.n)
			n, err := c.Memory.ReadMemory(p, tt.addr)
			if string(p[:n]) != tt.want || (err != nil) != tt.wantErr {
				t.Errorf("ReadMemory(%#x, %d) = %q, %v; want %q, error %v", tt.addr, tt.n, p[:n], err, tt.want, tt.wantErr)
			}
			if err != nil && !errors.Is(err, ErrNotCaptured) {
				t.Errorf("ReadMemory(%#x) error %v does not wrap ErrNotCaptured", tt.addr, err)
			}
		})
	}
}

func TestNotCore(t *testing.T) {
	data := writeCore(t, &WriteInput{Arch: archregs.ARM64})
	data[12] = 2 // MH_EXECUTE
	if _, err := Open(bytes.NewReader(data), int64(len(data))); !errors.Is(err, ErrNotCore) {
		t.Errorf("Open(an executable) error = %v, want ErrNotCore", err)
	}
	if _, err := Open(bytes.NewReader([]byte("hello")), 5); err == nil {
		t.Errorf("Open(5 bytes) succeeded")
	}
}

func TestWriteErrors(t *testing.T) {
	tests := []struct {
		name string
		in   *WriteInput
		want string
	}{
		{"no arch", &WriteInput{}, "no architecture"},
		{"overlap", &WriteInput{Arch: archregs.ARM64, Regions: []WriteRegion{{Addr: 0x1000, Size: 0x100}, {Addr: 0x10f0, Data: []byte{1}}}}, "overlaps"},
		{"size below data", &WriteInput{Arch: archregs.ARM64, Regions: []WriteRegion{{Addr: 0x1000, Size: 1, Data: []byte{1, 2}}}}, "smaller than"},
		{"32-bit address", &WriteInput{Arch: archregs.I386, Regions: []WriteRegion{{Addr: 0xfffff000, Size: 0x2000}}}, "address space"},
		{"wrong arch registers", &WriteInput{Arch: archregs.ARM64, Threads: []WriteThread{{Registers: archregs.NewRegisters(archregs.X86_64)}}}, "not arm64's"},
		{"wide register", &WriteInput{Arch: archregs.I386, Threads: []WriteThread{{Registers: func() *archregs.Registers {
			r := archregs.NewRegisters(archregs.I386)
			r.Set("eax", 1<<40)
			return r
		}()}}}, "32 bits"},
		{"addressing bits", &WriteInput{Arch: archregs.ARM64, AddressingBits: 65}, "addressing bits"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Write(&bytes.Buffer{}, tt.in)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Write error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// failingWriter fails after n bytes.
type failingWriter struct{ n int }

func (f *failingWriter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		n := f.n
		f.n = 0
		return n, fmt.Errorf("disk full")
	}
	f.n -= len(p)
	return len(p), nil
}

func TestWriteFails(t *testing.T) {
	in := testInput(t, archregs.ARM64, 0x16fdff000, 0x100000000)
	if err := Write(&failingWriter{n: 100}, in); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Write to a failing writer: error = %v, want disk full", err)
	}
}
