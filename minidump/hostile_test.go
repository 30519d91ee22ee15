package minidump

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/internal/testtool"
)

// Directory positions of the streams Write lays out (see Write).
const (
	dirThreads = iota
	dirModules
	dirMemory
	dirException
	dirSystemInfo
	dirMiscInfo
	dirThreadNames
	dirCrashpad
)

// dirEntryOff returns the file offset of directory entry i.
func dirEntryOff(i int) int { return headerSize + i*directorySize }

// streamOff returns the RVA of directory entry i.
func streamOff(b []byte, i int) int { return int(le.Uint32(b[dirEntryOff(i)+8:])) }

// threadEntryOff returns the offset of thread i's MINIDUMP_THREAD.
func threadEntryOff(b []byte, i int) int { return streamOff(b, dirThreads) + 4 + i*threadSize }

// moduleEntryOff returns the offset of module i's MINIDUMP_MODULE.
func moduleEntryOff(b []byte, i int) int { return streamOff(b, dirModules) + 4 + i*moduleSize }

// findError returns the first FormatError of d for stream type typ whose
// message holds msg.
func findError(errs []error, typ StreamType, msg string) *FormatError {
	for _, err := range errs {
		var fe *FormatError
		if errors.As(err, &fe) && fe.Stream == typ && strings.Contains(fe.Msg, msg) {
			return fe
		}
	}
	return nil
}

// allocBudget is what parsing n bytes of dump may allocate: the reader
// budget (4 × n) for stream data, plus the Go values built from it.
func allocBudget(n int) uint64 { return uint64(64*n + 4<<20) }

func TestHostile(t *testing.T) {
	base := writeDump(t, testInput(t, archregs.X86_64, false))
	put32 := func(b []byte, off int, v uint32) { le.PutUint32(b[off:], v) }
	tests := []struct {
		name    string
		input   func() *WriterInput // nil: the base dump
		mutate  func(b []byte) []byte
		stream  StreamType // the stream the error names; StreamUnused for the header
		index   int        // its directory index; -1 for the header
		msg     string
		offset  int // the error's byte offset; -1 to skip the check
		threads int // threads still read
		modules int // modules still read
		check   func(t *testing.T, d *Dump)
	}{
		{name: "stream runs past the end", stream: StreamModuleList, index: dirModules,
			mutate: func(b []byte) []byte { put32(b, dirEntryOff(dirModules)+4, 0xffff0000); return b },
			msg:    "past the end of the file", offset: -1, threads: 2, modules: 0},
		{name: "stream outside the file", stream: StreamThreadList, index: dirThreads,
			mutate: func(b []byte) []byte { put32(b, dirEntryOff(dirThreads)+8, uint32(len(b)+100)); return b },
			msg:    "past the end of the file", offset: -1, threads: 0, modules: 3},
		{name: "overlapping streams", stream: StreamThreadNames, index: dirThreadNames,
			mutate: func(b []byte) []byte {
				put32(b, dirEntryOff(dirThreadNames)+8, uint32(streamOff(b, dirThreads)))
				return b
			},
			msg: "overlaps stream 0 (ThreadList)", offset: -1, threads: 2, modules: 3},
		{name: "stream nested in an earlier one", stream: StreamSystemInfo, index: dirSystemInfo,
			mutate: func(b []byte) []byte {
				// The module list grows to cover the memory list, exception
				// and system info; the system info is compared with it,
				// not with the exception just before it.
				put32(b, dirEntryOff(dirModules)+4, uint32(streamOff(b, dirSystemInfo)+systemInfoSize-streamOff(b, dirModules)))
				return b
			},
			msg: "overlaps stream 1 (ModuleList)", offset: -1, threads: 2, modules: 3},
		{name: "thread count overflows", stream: StreamThreadList, index: dirThreads,
			mutate: func(b []byte) []byte { put32(b, streamOff(b, dirThreads), 0xffffffff); return b },
			msg:    "count 4294967295 × 48 bytes does not fit", offset: -1, threads: 2, modules: 3},
		{name: "module count overflows", stream: StreamModuleList, index: dirModules,
			mutate: func(b []byte) []byte { put32(b, streamOff(b, dirModules), 0x7fffffff); return b },
			msg:    "count 2147483647 × 108 bytes", offset: -1, threads: 2, modules: 3},
		{name: "directory count overflows", stream: StreamUnused, index: -1,
			mutate: func(b []byte) []byte { put32(b, 8, 0xffffffff); return b },
			msg:    "directory of 4294967295 entries", offset: headerSize, threads: 2, modules: 3},
		{name: "context smaller than its flags", stream: StreamThreadList, index: dirThreads,
			mutate: func(b []byte) []byte { put32(b, threadEntryOff(b, 0)+40, 100); return b },
			msg:    "AMD64 context flags 0x100007 need 1232 bytes, the context has 100", offset: -1, threads: 2, modules: 3,
			check: func(t *testing.T, d *Dump) {
				if d.Threads[0].Context != nil || d.Threads[1].Context == nil {
					t.Errorf("contexts = %v, %v; want only the second thread's", d.Threads[0].Context, d.Threads[1].Context)
				}
			}},
		{name: "context flags name no layout", stream: StreamThreadList, index: dirThreads,
			mutate: func(b []byte) []byte {
				put32(b, int(le.Uint32(b[threadEntryOff(b, 1)+44:]))+48, 0x4)
				return b
			},
			msg: "has no flags naming a amd64 layout", offset: -1, threads: 2, modules: 3},
		{name: "absurd context size", stream: StreamThreadList, index: dirThreads,
			mutate: func(b []byte) []byte { put32(b, threadEntryOff(b, 0)+40, 0xfffffff0); return b },
			msg:    "context of 4294967280 bytes is larger than", offset: -1, threads: 2, modules: 3},
		{name: "absurd string length", stream: StreamModuleList, index: dirModules,
			mutate: func(b []byte) []byte { put32(b, int(le.Uint32(b[moduleEntryOff(b, 0)+20:])), 0x7ffffff0); return b },
			msg:    "string length 2147483632 is larger than", offset: -1, threads: 2, modules: 3,
			check: func(t *testing.T, d *Dump) {
				if d.Modules[0].Path != "" || d.Modules[1].Name != "libsystem_c.dylib" || d.Modules[0].DebugID == "" {
					t.Errorf("modules = %q (%s), %q; want the first without a name but with its debug id, the second whole",
						d.Modules[0].Path, d.Modules[0].DebugID, d.Modules[1].Name)
				}
			}},
		{name: "string past the end", stream: StreamModuleList, index: dirModules,
			mutate: func(b []byte) []byte { put32(b, moduleEntryOff(b, 1)+20, uint32(len(b)-2)); return b },
			msg:    "past the end of the file", offset: -1, threads: 2, modules: 3},
		{name: "short CodeView record", stream: StreamModuleList, index: dirModules,
			mutate: func(b []byte) []byte { put32(b, moduleEntryOff(b, 0)+76, 10); return b },
			msg:    "RSDS CodeView record of 10 bytes", offset: -1, threads: 2, modules: 3},
		{name: "memory range past the end", stream: StreamMemoryList, index: dirMemory,
			mutate: func(b []byte) []byte {
				put32(b, streamOff(b, dirMemory)+4+2*memoryDescSize+12, uint32(len(b)+1))
				return b
			},
			msg: "past the end of the file; dropped", offset: -1, threads: 2, modules: 3,
			check: func(t *testing.T, d *Dump) {
				if _, err := d.Memory.ReadMemory(make([]byte, 4), 0x6000_0000); !errors.Is(err, ErrNotCaptured) {
					t.Errorf("ReadMemory(dropped range) error = %v, want ErrNotCaptured", err)
				}
			}},
		{name: "too many exception parameters", stream: StreamException, index: dirException,
			mutate: func(b []byte) []byte { put32(b, streamOff(b, dirException)+32, 1000); return b },
			msg:    "NumberParameters 1000", offset: -1, threads: 2, modules: 3},
		{name: "Crashpad dictionary count overflows", stream: StreamCrashpadInfo, index: dirCrashpad,
			mutate: func(b []byte) []byte {
				put32(b, int(le.Uint32(b[streamOff(b, dirCrashpad)+40:])), 0xffffffff)
				return b
			},
			msg: "string dictionary count 4294967295", offset: -1, threads: 2, modules: 3},
		{name: "Memory64 ranges overlap", stream: StreamMemory64List, index: 7, // no memory list
			input: func() *WriterInput {
				in := testInput(t, archregs.X86_64, true)
				in.Memory = append(in.Memory, WriterMemory{Addr: 0x7000_0010, Data: []byte("overlap")})
				return in
			},
			msg: "memory range [0x70000010, 0x70000017) overlaps [0x70000000, 0x70000100); dropped", offset: -1, threads: 2, modules: 3,
			check: func(t *testing.T, d *Dump) {
				p := make([]byte, 4)
				if _, err := d.Memory.ReadMemory(p, 0x7000_0010); err != nil || !bytes.Equal(p, []byte{0xa1, 0xb2, 0xc3, 0xd4}) {
					t.Errorf("ReadMemory(0x70000010) = %x, %v; want the stack's a1b2c3d4", p, err)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := base
			if tt.input != nil {
				b = writeDump(t, tt.input())
			}
			if tt.mutate != nil {
				b = tt.mutate(bytes.Clone(b))
			}
			var d *Dump
			if n := testtool.HeapAllocated(func() { d = parseBytes(t, b) }, allocBudget(len(b))); n > allocBudget(len(b)) {
				t.Errorf("Parse allocated %d bytes for a %d-byte dump, budget %d", n, len(b), allocBudget(len(b)))
			}
			fe := findError(d.Errors, tt.stream, tt.msg)
			if fe == nil {
				t.Fatalf("no error for stream %s holding %q; errors:\n%v", tt.stream, tt.msg, errors.Join(d.Errors...))
			}
			if fe.Index != tt.index {
				t.Errorf("error %q names stream %d, want %d", fe, fe.Index, tt.index)
			}
			if tt.offset >= 0 && fe.Off != int64(tt.offset) {
				t.Errorf("error %q is at byte %#x, want %#x", fe, fe.Off, tt.offset)
			}
			if fe.Off < 0 || fe.Off > int64(len(b))+0xffffffff {
				t.Errorf("error %q has offset %#x", fe, fe.Off)
			}
			want := fmt.Sprintf("at byte %#x", fe.Off)
			if !strings.Contains(fe.Error(), want) || (tt.index >= 0 && !strings.Contains(fe.Error(), tt.stream.String())) {
				t.Errorf("Error() = %q, want the stream name and %q", fe.Error(), want)
			}
			if len(d.Threads) != tt.threads || len(d.Modules) != tt.modules {
				t.Errorf("read %d threads and %d modules, want %d and %d", len(d.Threads), len(d.Modules), tt.threads, tt.modules)
			}
			if tt.check != nil {
				tt.check(t, d)
			}
		})
	}
}

// TestHostileReferences builds a dump whose entries all point at one large
// blob: the reader's budget must stop the allocations from multiplying.
func TestHostileReferences(t *testing.T) {
	const modules = 2000
	in := &WriterInput{Arch: archregs.ARM64, Platform: PlatformIOS}
	long := strings.Repeat("x", 200_000)
	for i := 0; i < modules; i++ {
		in.Modules = append(in.Modules, WriterModule{Base: uint64(i) << 20, Size: 0x1000, Path: "m"})
	}
	in.Modules[0].Path = long
	b := writeDump(t, in)
	nameRVA := le.Uint32(b[moduleEntryOff(b, 0)+20:])
	for i := 1; i < modules; i++ {
		le.PutUint32(b[moduleEntryOff(b, i)+20:], nameRVA)
	}
	var d *Dump
	if n := testtool.HeapAllocated(func() { d = parseBytes(t, b) }, allocBudget(len(b))); n > allocBudget(len(b)) {
		t.Errorf("Parse allocated %d bytes for a %d-byte dump, budget %d", n, len(b), allocBudget(len(b)))
	}
	if fe := findError(d.Errors, StreamModuleList, "more data than 4 times its size"); fe == nil {
		t.Errorf("no budget error; errors: %v", errors.Join(d.Errors...))
	}
	if len(d.Modules) != modules {
		t.Errorf("read %d modules, want %d", len(d.Modules), modules)
	}
}

// TestTruncated parses every prefix of a dump: none may panic, and each
// must keep what lies before the cut.
func TestTruncated(t *testing.T) {
	b := writeDump(t, testInput(t, archregs.ARM64, false))
	for n := 0; n <= len(b); n++ {
		d, err := Parse(bytes.NewReader(b[:n]), int64(n))
		if n < headerSize {
			if err == nil {
				t.Fatalf("Parse of %d bytes: no error", n)
			}
			continue
		}
		if err != nil {
			t.Fatalf("Parse of %d bytes: %v", n, err)
		}
		if n < len(b) && len(d.Errors) == 0 {
			t.Fatalf("Parse of %d of %d bytes: no errors", n, len(b))
		}
	}
}

func TestOpenErrors(t *testing.T) {
	good := writeDump(t, testInput(t, archregs.ARMV7, false))
	tests := []struct {
		name string
		b    []byte
		want string
	}{
		{"empty", nil, "minidump: at byte 0x0: reading header"},
		{"not a minidump", bytes.Repeat([]byte("ELF!"), 10), "signature 0x21464c45 is not MDMP"},
		{"wrong version", func() []byte { b := bytes.Clone(good); le.PutUint32(b[4:], 1); return b }(), "version 0x1 is not MINIDUMP_VERSION"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Open(bytes.NewReader(tt.b), int64(len(tt.b)))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Open() error = %v, want %q", err, tt.want)
			}
		})
	}
}
