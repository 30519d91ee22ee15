package image

import (
	"bytes"
	"encoding/binary"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// loadCommandsFile lays out a little-endian 64-bit mach header with the
// given ncmds (0: the number of commands) and the commands.
func loadCommandsFile(ncmds uint32, cmds ...[]byte) []byte {
	le := binary.LittleEndian
	var body []byte
	for _, c := range cmds {
		body = append(body, c...)
	}
	if ncmds == 0 {
		ncmds = uint32(len(cmds))
	}
	b := le.AppendUint32(nil, mhMagic64)
	for _, v := range []uint32{0x0100000c, 0, 4, ncmds, uint32(len(body)), 0, 0} {
		b = le.AppendUint32(b, v)
	}
	return append(b, body...)
}

func rawCommand(cmd uint32, payload []byte) []byte {
	b := binary.LittleEndian.AppendUint32(nil, cmd)
	b = binary.LittleEndian.AppendUint32(b, uint32(8+len(payload)))
	return append(b, payload...)
}

func segment64(name string, addr, size, off, filesize uint64, maxprot, prot uint32) []byte {
	le := binary.LittleEndian
	var n [16]byte
	copy(n[:], name)
	p := n[:]
	for _, v := range []uint64{addr, size, off, filesize} {
		p = le.AppendUint64(p, v)
	}
	for _, v := range []uint32{maxprot, prot, 0, 0} {
		p = le.AppendUint32(p, v)
	}
	return rawCommand(lcSegment64, p)
}

func TestReadLoadCommands(t *testing.T) {
	seg := segment64("__TEXT", 0x1000, 0x2000, 0, 0x1800, 7, 5)
	note := rawCommand(0x31, make([]byte, 32))
	data := loadCommandsFile(0, seg, note)
	h, cmds, err := ReadLoadCommands(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if !h.Is64 || h.CPUType != 0x0100000c || h.Type != 4 || h.NCmds != 2 || h.Size != 32 {
		t.Errorf("header = %+v", h)
	}
	want := []LoadCommand{{0, 32, lcSegment64, seg}, {1, 32 + 72, 0x31, note}}
	if diff := cmp.Diff(want, cmds); diff != "" {
		t.Errorf("commands (-want +got):\n%s", diff)
	}
	s, err := cmds[0].Segment(h.ByteOrder)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Segment{Name: "__TEXT", Addr: 0x1000, Size: 0x2000, FileSize: 0x1800, MaxProt: 7, Prot: 5}); s != want {
		t.Errorf("Segment() = %+v, want %+v", s, want)
	}
	if _, err := cmds[1].Segment(h.ByteOrder); err == nil {
		t.Errorf("Segment() of an LC_NOTE succeeded")
	}
}

func TestReadLoadCommandsBad(t *testing.T) {
	seg := segment64("__TEXT", 0x1000, 0x2000, 0, 0x1800, 7, 5)
	tests := []struct {
		name string
		data []byte
		size int64 // -1: unknown; 0: len(data)
		kept int
		want string
	}{
		{"bad magic", []byte("not a mach-o file at all, no"), 0, 0, "bad magic"},
		{"truncated header", loadCommandsFile(0, seg)[:30], 0, 0, "cannot read mach header"},
		{"ncmds beyond sizeofcmds", loadCommandsFile(1000, seg), 0, 1, "load command 1 runs past sizeofcmds at offset 0x68"},
		{"cmdsize zero", loadCommandsFile(0, seg, make([]byte, 8)), 0, 1, "load command 1 (0x0) has bad cmdsize '0' at offset 0x6c"},
		{"cmdsize past the commands", loadCommandsFile(0, seg, []byte{1, 0, 0, 0, 0xff, 0, 0, 0}), 0, 1, "load command 1 (0x1) has bad cmdsize '255'"},
		{"sizeofcmds past the file", loadCommandsFile(0, seg, seg)[:32+72+40], 0, 1, "load command 1 (0x19) at offset 0x68 is cut short: sizeofcmds runs past the end of the data (0x90 bytes)"},
		{"unknown size", loadCommandsFile(0, seg, seg)[:32+72+40], -1, 0, "cannot read load commands"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			size := tt.size
			if size == 0 {
				size = int64(len(tt.data))
			}
			_, cmds, err := ReadLoadCommands(bytes.NewReader(tt.data), size)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("ReadLoadCommands error = %v, want one holding %q", err, tt.want)
			}
			var fe *FormatError
			if !errors.As(err, &fe) {
				t.Errorf("error %v is not a *FormatError", err)
			}
			if len(cmds) != tt.kept {
				t.Errorf("%d commands kept, want %d", len(cmds), tt.kept)
			}
		})
	}
}

func TestSegmentCommand32(t *testing.T) {
	le := binary.LittleEndian
	var n [16]byte
	copy(n[:], "__DATA")
	p := n[:]
	for _, v := range []uint32{0x4000, 0x1000, 0x800, 0x100, 3, 3, 0, 0} {
		p = le.AppendUint32(p, v)
	}
	c := LoadCommand{Index: 2, Offset: 0x40, Cmd: lcSegment, Data: rawCommand(lcSegment, p)}
	s, err := c.Segment(le)
	if err != nil {
		t.Fatal(err)
	}
	if want := (Segment{Name: "__DATA", Addr: 0x4000, Size: 0x1000, Offset: 0x800, FileSize: 0x100, MaxProt: 3, Prot: 3}); s != want {
		t.Errorf("Segment() = %+v, want %+v", s, want)
	}
	c.Data = c.Data[:40]
	if _, err := c.Segment(le); err == nil || !strings.Contains(err.Error(), "LC_SEGMENT (load command 2) cmdsize 40 is smaller than 56 at offset 0x44") {
		t.Errorf("short LC_SEGMENT: error %v", err)
	}
}
