package machocore

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stackimage/stackimage/archregs"
	"github.com/stackimage/stackimage/uuid"
)

var le = binary.LittleEndian

// The tests write hostile files byte by byte, with <mach-o/loader.h>'s
// numbers, rather than through image's writer.
const (
	mhMagic64    = 0xfeedfacf // MH_MAGIC_64
	mhCore       = 4          // MH_CORE
	lcThread     = 0x4        // LC_THREAD
	lcIDDylinker = 0xf        // LC_ID_DYLINKER
	lcSegment64  = 0x19       // LC_SEGMENT_64
	lcNote       = 0x31       // LC_NOTE
)

// rawCore lays out a 64-bit little-endian arm64 MH_CORE by hand: the
// header (ncmds and sizeofcmds as given when nonzero, else computed), the
// commands, then tail at file offset rawTail(cmds).
func rawCore(cmds [][]byte, tail []byte, ncmds, sizeofcmds uint32) []byte {
	var body []byte
	for _, c := range cmds {
		body = append(body, c...)
	}
	if ncmds == 0 {
		ncmds = uint32(len(cmds))
	}
	if sizeofcmds == 0 {
		sizeofcmds = uint32(len(body))
	}
	b := le.AppendUint32(nil, mhMagic64)
	for _, v := range []uint32{archregs.CPUTypeARM64, 0, mhCore, ncmds, sizeofcmds, 0, 0} {
		b = le.AppendUint32(b, v)
	}
	return append(append(b, body...), tail...)
}

// rawTail returns the file offset at which rawCore puts the tail.
func rawTail(cmds [][]byte) uint64 {
	n := uint64(32)
	for _, c := range cmds {
		n += uint64(len(c))
	}
	return n
}

func segCmd(addr, size, off, filesize uint64) []byte {
	b := le.AppendUint32(nil, lcSegment64)
	b = le.AppendUint32(b, 72)
	b = append(b, make([]byte, 16)...)
	for _, v := range []uint64{addr, size, off, filesize} {
		b = le.AppendUint64(b, v)
	}
	return append(b, make([]byte, 16)...) // maxprot, initprot, nsects, flags
}

func noteCmd(owner string, off, size uint64) []byte {
	var name [16]byte
	copy(name[:], owner)
	b := le.AppendUint32(nil, lcNote)
	b = le.AppendUint32(b, noteCmdSize)
	b = append(b, name[:]...)
	b = le.AppendUint64(b, off)
	return le.AppendUint64(b, size)
}

// threadCmd builds an LC_THREAD from {flavor, count, data} states; count
// is taken as given, so that it can lie.
func threadCmd(states ...any) []byte {
	var body []byte
	for i := 0; i < len(states); i += 3 {
		body = le.AppendUint32(body, states[i].(uint32))
		body = le.AppendUint32(body, states[i+1].(uint32))
		body = append(body, states[i+2].([]byte)...)
	}
	b := le.AppendUint32(nil, lcThread)
	b = le.AppendUint32(b, uint32(8+len(body)))
	return append(b, body...)
}

func arm64State(t *testing.T) []byte {
	r := testRegisters(t, archregs.ARM64, 1, 0x10000)
	b, err := r.Encode(archregs.FlavorARMThreadState64)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// shorten cuts a load command to n bytes, cmdsize included.
func shorten(cmd []byte, n int) []byte {
	cmd = cmd[:n]
	le.PutUint32(cmd[4:], uint32(n))
	return cmd
}

// warningsOf returns each warning as "command: message".
func warningsOf(c *Core) []string {
	var out []string
	for _, w := range c.Warnings {
		var e *Error
		if !errors.As(w, &e) {
			out = append(out, "not *Error: "+w.Error())
			continue
		}
		out = append(out, e.Error())
	}
	return out
}

func TestHostile(t *testing.T) {
	state := arm64State(t)
	type check func(t *testing.T, c *Core)
	tests := []struct {
		name string
		data func() []byte
		// warn are substrings the warnings must hold, one each, in order.
		warn  []string
		check check
	}{{
		name: "segment data past the end of the file",
		data: func() []byte {
			cmds := [][]byte{segCmd(0x1000, 0x100, 0, 0x100)}
			cmds[0] = segCmd(0x1000, 0x100, rawTail(cmds), 0x100)
			return rawCore(cmds, []byte("only sixteen b.."), 0, 0)
		},
		warn: []string{"load command 0 at offset 0x20: segment at 0x1000: file data [0x68, 0x168) runs past the end of the file (0x78 bytes); keeping the first 0x10 bytes"},
		check: func(t *testing.T, c *Core) {
			p := make([]byte, 20)
			n, err := c.Memory.ReadMemory(p, 0x1000)
			if n != 16 || string(p[:n]) != "only sixteen b.." || !errors.Is(err, ErrNotCaptured) {
				t.Errorf("ReadMemory = %d %q, %v; want the 16 bytes present, then ErrNotCaptured", n, p[:n], err)
			}
		},
	}, {
		name: "segment data wholly outside the file",
		data: func() []byte {
			return rawCore([][]byte{segCmd(0x1000, 0x100, 1<<40, 0x100), segCmd(0x2000, 0x10, 0, 0x10)}, nil, 0, 0)
		},
		warn: []string{"load command 0 at offset 0x20: segment at 0x1000: file data [0x10000000000, +0x100) is not in the file"},
		check: func(t *testing.T, c *Core) {
			if len(c.Regions) != 2 || c.Regions[0].Present != 0 || c.Regions[1].Present != 0x10 {
				t.Errorf("regions = %+v, want both kept, the first with nothing present", c.Regions)
			}
			p := make([]byte, 4)
			if n, err := c.Memory.ReadMemory(p, 0x2000); n != 4 || err != nil {
				t.Errorf("ReadMemory(0x2000) = %d, %v; the good segment must stay readable", n, err)
			}
		},
	}, {
		name: "segment wrapping the address space",
		data: func() []byte { return rawCore([][]byte{segCmd(^uint64(0)-0xff, 0x1000, 0, 0)}, nil, 0, 0) },
		warn: []string{"load command 0 at offset 0x20: segment [0xffffffffffffff00, +0x1000) runs past the top of the address space; clipped"},
	}, {
		name: "overlapping segments",
		data: func() []byte {
			return rawCore([][]byte{segCmd(0x1000, 0x100, 0, 0), segCmd(0x1080, 0x100, 0, 0)}, nil, 0, 0)
		},
		warn: []string{"load command 1 at offset 0x68: segment [0x1080, 0x1180) overlaps the one before it, which ends at 0x1100; not read"},
	}, {
		name: "absurd ncmds",
		data: func() []byte { return rawCore([][]byte{segCmd(0x1000, 0x10, 0, 0x10)}, nil, 0xffffffff, 0) },
		warn: []string{"at offset 0x10: load commands: load command 1 runs past sizeofcmds at offset 0x68"},
		check: func(t *testing.T, c *Core) {
			if len(c.Regions) != 1 {
				t.Errorf("%d regions, want the one before the count ran out", len(c.Regions))
			}
		},
	}, {
		name: "absurd sizeofcmds",
		data: func() []byte { return rawCore([][]byte{segCmd(0x1000, 0x10, 0, 0x10)}, nil, 2, 0xfffffff0) },
		warn: []string{"load command 1 at offset 0x68 is not in the data: sizeofcmds runs past the end of the data (0x68 bytes)"},
		check: func(t *testing.T, c *Core) {
			if len(c.Regions) != 1 {
				t.Errorf("%d regions, want the one present", len(c.Regions))
			}
		},
	}, {
		name: "cmdsize below 8",
		data: func() []byte {
			return rawCore([][]byte{segCmd(0x1000, 0x10, 0, 0x10), {0x19, 0, 0, 0, 4, 0, 0, 0}}, nil, 0, 0)
		},
		warn: []string{"load command 1 (0x19) has bad cmdsize '4' at offset 0x6c"},
	}, {
		name: "segment command too short",
		data: func() []byte { return rawCore([][]byte{shorten(segCmd(0x1000, 0x10, 0, 0x10), 64)}, nil, 0, 0) },
		warn: []string{"load command 0 at offset 0x20: segment not read: LC_SEGMENT_64 (load command 0) cmdsize 64 is smaller than 72"},
	}, {
		name: "thread count beyond the command",
		data: func() []byte {
			return rawCore([][]byte{threadCmd(archregs.FlavorARMThreadState64, uint32(68), state, uint32(7), uint32(1000), []byte{1, 2, 3, 4})}, nil, 0, 0)
		},
		warn: []string{"load command 0 at offset 0x20: thread 0: flavor 7 count 1000 (4000 bytes) at offset 0x140 runs past the command (4 bytes left)"},
		check: func(t *testing.T, c *Core) {
			if len(c.Threads) != 1 || c.Threads[0].Registers == nil {
				t.Errorf("threads = %+v, want the general state before the bad count kept", c.Threads)
			}
		},
	}, {
		name: "thread with a bad general state",
		data: func() []byte {
			return rawCore([][]byte{threadCmd(archregs.FlavorARMThreadState64, uint32(2), []byte("12345678"))}, nil, 0, 0)
		},
		warn: []string{"thread 0: state at offset 0x28: archregs: arm64 ARM_THREAD_STATE64 (flavor 6): 8 bytes of data, want 272", "thread 0: no general register state"},
	}, {
		name: "exception state of the wrong count",
		data: func() []byte {
			return rawCore([][]byte{threadCmd(archregs.FlavorARMThreadState64, uint32(68), state, uint32(7), uint32(2), []byte("12345678"))}, nil, 0, 0)
		},
		warn: []string{"thread 0: ARM_EXCEPTION_STATE64 at offset 0x140 has count 2, want 4"},
	}, {
		name: "note outside the file",
		data: func() []byte { return rawCore([][]byte{noteCmd(ownerAllImageInfos, 1<<62, 1<<62)}, nil, 0, 0) },
		warn: []string{`load command 0 at offset 0x20: "all image infos" note payload [0x4000000000000000, +0x4000000000000000) is not inside the file`},
	}, {
		name: "note command too short",
		data: func() []byte { return rawCore([][]byte{shorten(noteCmd(ownerAddrableBits, 0, 0), 32)}, nil, 0, 0) },
		warn: []string{"load command 0 at offset 0x20: LC_NOTE cmdsize 32 is smaller than 40"},
	}, {
		name: "image count times entry size overflowing",
		data: func() []byte {
			cmds := [][]byte{noteCmd(ownerAllImageInfos, 0, 24)}
			at := rawTail(cmds)
			cmds[0] = noteCmd(ownerAllImageInfos, at, 24)
			hdr := le.AppendUint32(nil, 1)
			hdr = le.AppendUint32(hdr, 0xffffffff) // imgcount
			hdr = le.AppendUint64(hdr, at+24)      // entries_fileoff
			hdr = le.AppendUint32(hdr, 0xfffffff0) // entry_size
			hdr = le.AppendUint32(hdr, 0)
			return rawCore(cmds, append(hdr, make([]byte, 100)...), 0, 0)
		},
		warn: []string{"load command 0 at offset 0x20: \"all image infos\" note at 0x48: 4294967295 entries of 4294967280 bytes at 0x60 do not fit in the file (0xc4 bytes) or the limit of 65536; reading 0"},
	}, {
		name: "image entries past the end",
		data: func() []byte {
			cmds := [][]byte{noteCmd(ownerAllImageInfos, 0, 24)}
			at := rawTail(cmds)
			cmds[0] = noteCmd(ownerAllImageInfos, at, 24)
			p := allImageInfosPayload([]Image{{Name: "/a", LoadAddress: 0x1000}, {Name: "/b", LoadAddress: 0x2000}}, at)
			p = p[:24+48+10] // the second entry cut
			return rawCore(cmds, p, 0, 0)
		},
		warn: []string{"\"all image infos\" note at 0x48: 2 entries of 48 bytes at 0x60 do not fit in the file (0x9a bytes) or the limit of 65536; reading 1",
			"entry 0: path: string offset 0xc0 is not inside the file (0x9a bytes)"},
		check: func(t *testing.T, c *Core) {
			if len(c.Images) != 1 || c.Images[0].LoadAddress != 0x1000 {
				t.Errorf("images = %+v, want the first entry kept", c.Images)
			}
		},
	}, {
		name: "image segment count absurd",
		data: func() []byte {
			cmds := [][]byte{noteCmd(ownerAllImageInfos, 0, 0)}
			at := rawTail(cmds)
			p := allImageInfosPayload([]Image{{LoadAddress: 0x1000, Segments: []ImageSegment{{"__TEXT", 0x1000}}}}, at)
			le.PutUint32(p[24+40:], 0xffffffff) // segment_count
			cmds[0] = noteCmd(ownerAllImageInfos, at, uint64(len(p)))
			return rawCore(cmds, p, 0, 0)
		},
		warn: []string{"entry 0: 4294967295 segments at 0x90 do not fit in the file or the limit of 256; reading 1"},
	}, {
		name: "unknown CPU",
		data: func() []byte {
			b := rawCore([][]byte{threadCmd(uint32(1), uint32(1), []byte{0, 0, 0, 0})}, nil, 0, 0)
			le.PutUint32(b[4:], 18) // CPU_TYPE_POWERPC
			return b
		},
		warn: []string{"at offset 0x4: threads are not decoded: archregs: unsupported CPU type 0x12"},
		check: func(t *testing.T, c *Core) {
			if c.Arch != nil || len(c.Threads) != 1 || len(c.Threads[0].States) != 1 {
				t.Errorf("arch %v, threads %+v; want no arch and the thread's state listed", c.Arch, c.Threads)
			}
		},
	}, {
		name: "big-endian header",
		data: func() []byte {
			b := rawCore([][]byte{threadCmd(archregs.FlavorARMThreadState64, uint32(68), state)}, nil, 0, 0)
			for i := 0; i < 32; i += 4 {
				binary.BigEndian.PutUint32(b[i:], le.Uint32(b[i:]))
			}
			return b
		},
		// The command itself is read big-endian too: its size is wrong.
		warn: []string{"at offset 0x10: load commands: load command 0 (0x4000000) has bad cmdsize", "at offset 0x0: big-endian header for little-endian arm64: threads are not decoded"},
	}, {
		name: "addrable bits out of range",
		data: func() []byte {
			cmds := [][]byte{noteCmd(ownerAddrableBits, 0, 16)}
			cmds[0] = noteCmd(ownerAddrableBits, rawTail(cmds), 16)
			return rawCore(cmds, []byte{3, 0, 0, 0, 65, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 0, 0)
		},
		warn: []string{"\"addrable bits\" note at 0x48: 65 (high 0) addressing bits is not a number of bits"},
	}, {
		name: "load binary too short",
		data: func() []byte {
			cmds := [][]byte{noteCmd(ownerLoadBinary, 0, 8)}
			cmds[0] = noteCmd(ownerLoadBinary, rawTail(cmds), 8)
			return rawCore(cmds, make([]byte, 8), 0, 0)
		},
		warn: []string{"\"load binary\" note at 0x48: payload of 8 bytes is shorter than 36"},
	}, {
		name: "image path without an end",
		data: func() []byte {
			cmds := [][]byte{noteCmd(ownerAllImageInfos, 0, 0)}
			at := rawTail(cmds)
			p := allImageInfosPayload([]Image{{Name: "x", LoadAddress: 0x1000}}, at)
			p = append(p[:len(p)-2], bytes.Repeat([]byte{'a'}, maxPath+10)...)
			cmds[0] = noteCmd(ownerAllImageInfos, at, 72)
			return rawCore(cmds, p, 0, 0)
		},
		warn: []string{"entry 0: path: string at 0x90 is longer than 4096 bytes"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := tt.data()
			c, err := Open(bytes.NewReader(data), int64(len(data)))
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			got := warningsOf(c)
			if len(got) != len(tt.warn) {
				t.Fatalf("warnings:\n%s\nwant %d holding %q", strings.Join(got, "\n"), len(tt.warn), tt.warn)
			}
			for i, w := range tt.warn {
				if !strings.Contains(got[i], w) {
					t.Errorf("warning %d = %q, want it to hold %q", i, got[i], w)
				}
			}
			if tt.check != nil {
				tt.check(t, c)
			}
		})
	}
}

// TestNotes reads the notes Write does not write: "main bin spec" in
// xnu's version 1 and lldb's version 2, and "addrable bits" version 4.
func TestNotes(t *testing.T) {
	id := uuid.UUID{0xaa, 0xbb, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}
	mainV1 := le.AppendUint32(nil, 1)
	mainV1 = le.AppendUint32(mainV1, 2)          // type: user process
	mainV1 = le.AppendUint64(mainV1, 0x10000000) // address
	mainV1 = append(mainV1, id[:]...)
	mainV1 = append(mainV1, 14, 0, 0, 0, 0, 0, 0, 0) // log2_pagesize, unused
	mainV2 := le.AppendUint32(nil, 2)
	mainV2 = le.AppendUint32(mainV2, 1)          // type: kernel
	mainV2 = le.AppendUint64(mainV2, 0x20000000) // address
	mainV2 = le.AppendUint64(mainV2, 0x4000)     // slide
	mainV2 = append(mainV2, id[:]...)
	mainV2 = append(mainV2, make([]byte, 8)...)
	bitsV4 := []byte{4, 0, 0, 0, 39, 0, 0, 0, 55, 0, 0, 0, 0, 0, 0, 0}

	var cmds [][]byte
	var tail []byte
	payloads := []struct {
		owner string
		data  []byte
	}{{ownerMainBinSpec, mainV1}, {ownerMainBinSpec, mainV2}, {ownerAddrableBits, bitsV4}}
	for range payloads {
		cmds = append(cmds, noteCmd("", 0, 0))
	}
	base := rawTail(cmds)
	for i, p := range payloads {
		cmds[i] = noteCmd(p.owner, base+uint64(len(tail)), uint64(len(p.data)))
		tail = append(tail, p.data...)
	}
	data := rawCore(cmds, tail, 0, 0)
	c := openCore(t, data)
	if len(c.Warnings) > 0 {
		t.Errorf("warnings: %v", c.Warnings)
	}
	want := []Image{
		{UUID: id, LoadAddress: 0x10000000, Source: ownerMainBinSpec},
		{UUID: id, LoadAddress: 0x20000000, Source: ownerMainBinSpec},
	}
	if diff := cmp.Diff(want, c.Images); diff != "" {
		t.Errorf("images (-want +got):\n%s", diff)
	}
	if c.AddressingBits != 39 || c.HighAddressingBits != 55 || c.PACMask != 0xffffff8000000000 {
		t.Errorf("addressing bits %d, high %d, PAC mask %#x; want 39, 55, 0xffffff8000000000", c.AddressingBits, c.HighAddressingBits, c.PACMask)
	}
}

func TestTruncatedHeader(t *testing.T) {
	data := writeCore(t, &WriteInput{Arch: archregs.X86_64})
	for _, n := range []int{0, 4, 20, 31} {
		if _, err := Open(bytes.NewReader(data[:n]), int64(n)); err == nil {
			t.Errorf("Open(first %d bytes) succeeded", n)
		}
	}
}

// TestThreadStates reads LC_THREAD commands as other writers lay them out:
// a floating-point state before the general one (skipped, listed), the
// unified flavors, and the exception state's fault address.
func TestThreadStates(t *testing.T) {
	x86 := testRegisters(t, archregs.X86_64, 1, 0x7000)
	unified, err := x86.Encode(archregs.FlavorX86ThreadState)
	if err != nil {
		t.Fatal(err)
	}
	exc := le.AppendUint16(nil, 14)            // trapno: page fault
	exc = le.AppendUint16(exc, 0)              // cpu
	exc = le.AppendUint32(exc, 4)              // err
	exc = le.AppendUint64(exc, 0xdeadbeef0000) // faultvaddr
	arm := testRegisters(t, archregs.ARM64, 2, 0x7000)
	armUnified, err := arm.Encode(archregs.FlavorARMUnifiedThreadState)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		cpu    uint32
		cmd    []byte
		regs   *archregs.Registers
		states []State
		exc    *ExceptionState
	}{{
		name: "x86_64 float, unified, exception",
		cpu:  archregs.CPUTypeX86_64,
		cmd:  threadCmd(uint32(5), uint32(131), make([]byte, 524), uint32(7), uint32(44), unified, uint32(6), uint32(4), exc),
		regs: x86,
		states: []State{
			{Flavor: 5, Count: 131, Offset: 0x30, Kind: "skipped"},
			{Flavor: 7, Count: 44, Offset: 0x30 + 524 + 8, Kind: "general"},
			{Flavor: 6, Count: 4, Offset: 0x30 + 524 + 8 + 176 + 8, Kind: "exception"},
		},
		exc: &ExceptionState{Flavor: 6, FaultAddress: 0xdeadbeef0000, Syndrome: 4, Exception: 14},
	}, {
		name:   "arm64 unified, then a terminator",
		cpu:    archregs.CPUTypeARM64,
		cmd:    threadCmd(uint32(1), uint32(70), armUnified, uint32(0), uint32(0), []byte{}),
		regs:   arm,
		states: []State{{Flavor: 1, Count: 70, Offset: 0x30, Kind: "general"}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := rawCore([][]byte{tt.cmd}, nil, 0, 0)
			le.PutUint32(data[4:], tt.cpu)
			c := openCore(t, data)
			if len(c.Warnings) > 0 {
				t.Errorf("warnings: %v", c.Warnings)
			}
			if len(c.Threads) != 1 || c.Threads[0].Registers == nil {
				t.Fatalf("threads = %+v", c.Threads)
			}
			th := c.Threads[0]
			if diff := cmp.Diff(tt.regs.Values(), th.Registers.Values()); diff != "" {
				t.Errorf("registers (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.states, th.States); diff != "" {
				t.Errorf("states (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.exc, th.Exception); diff != "" {
				t.Errorf("exception (-want +got):\n%s", diff)
			}
		})
	}
}
