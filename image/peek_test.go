package image

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/stackimage/stackimage/uuid"
)

func TestSniff(t *testing.T) {
	for _, tt := range []struct {
		head []byte
		want Kind
	}{
		{[]byte{0xcf, 0xfa, 0xed, 0xfe}, KindThin},
		{[]byte{0xce, 0xfa, 0xed, 0xfe, 7}, KindThin},
		{[]byte{0xfe, 0xed, 0xfa, 0xcf}, KindThin},
		{[]byte{0xfe, 0xed, 0xfa, 0xce}, KindThin},
		{[]byte{0xca, 0xfe, 0xba, 0xbe}, KindFat},
		{[]byte{0xca, 0xfe, 0xba, 0xbf}, KindFat},
		{[]byte{0xbe, 0xba, 0xfe, 0xca}, KindUnknown}, // fat headers are big-endian only
		{[]byte("MDMP"), KindUnknown},
		{[]byte{0xcf, 0xfa, 0xed}, KindUnknown},
		{nil, KindUnknown},
	} {
		if got := Sniff(tt.head); got != tt.want {
			t.Errorf("Sniff(% x) = %v, want %v", tt.head, got, tt.want)
		}
	}
	if HeaderSize([]byte{0xcf, 0xfa, 0xed, 0xfe}) != 32 || HeaderSize([]byte{0xfe, 0xed, 0xfa, 0xce}) != 28 || HeaderSize([]byte{0xca, 0xfe, 0xba, 0xbe}) != 0 {
		t.Error("HeaderSize: wrong size for MH_MAGIC_64, MH_MAGIC or FAT_MAGIC")
	}
}

func TestParseHeader(t *testing.T) {
	file := loadCommandsFile(0, rawCommand(lcUUID, make([]byte, 16)))
	want := &Header{ByteOrder: binary.LittleEndian, Is64: true, CPUType: 0x0100000c, Type: TypeCore, NCmds: 1, SizeOfCmds: 24, Size: 32}
	for _, n := range []int{28, 32, len(file)} {
		h, err := ParseHeader(file[:n])
		if err != nil {
			t.Fatalf("ParseHeader(%d bytes): %v", n, err)
		}
		if diff := cmp.Diff(want, h); diff != "" {
			t.Errorf("ParseHeader(%d bytes) (-want +got):\n%s", n, diff)
		}
	}
	if h, err := ReadHeader(bytes.NewReader(file)); err != nil || h.Size != 32 || h.Type != TypeCore {
		t.Errorf("ReadHeader = %+v, %v", h, err)
	}
	if got := want.Append(nil); !bytes.Equal(got, file[:32]) {
		t.Errorf("Append = % x, want % x", got, file[:32])
	}
	var fe *FormatError
	if _, err := ParseHeader(file[:27]); !errors.As(err, &fe) {
		t.Errorf("ParseHeader(27 bytes) error = %v, want a *FormatError", err)
	}
	if _, err := ParseHeader([]byte(strings.Repeat("x", 32))); !errors.As(err, &fe) || !strings.Contains(err.Error(), "bad magic") {
		t.Errorf("ParseHeader(text) error = %v, want bad magic", err)
	}
	if _, err := ReadHeader(bytes.NewReader(file[:30])); err == nil {
		t.Error("ReadHeader of a 64-bit header cut at 30 bytes: no error")
	}
}

func TestPeek(t *testing.T) {
	u := uuid.UUID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}
	file := loadCommandsFile(0, segment64("__TEXT", 0x1000, 0x1000, 0, 0, 5, 5), rawCommand(lcUUID, u[:]))
	h, got, err := Peek(bytes.NewReader(file), int64(len(file)))
	if err != nil || got != u || h.CPUType != 0x0100000c {
		t.Fatalf("Peek = %+v, %s, %v; want UUID %s", h, got, err, u)
	}
	// No LC_UUID: zero, no error.
	file = loadCommandsFile(0, segment64("__TEXT", 0x1000, 0x1000, 0, 0, 5, 5))
	if _, got, err := Peek(bytes.NewReader(file), int64(len(file))); err != nil || !got.IsZero() {
		t.Errorf("Peek without LC_UUID = %s, %v", got, err)
	}
	// A short LC_UUID is an error naming it.
	file = loadCommandsFile(0, rawCommand(lcUUID, u[:8]))
	if _, _, err := Peek(bytes.NewReader(file), int64(len(file))); err == nil || !strings.Contains(err.Error(), "LC_UUID") {
		t.Errorf("Peek with a short LC_UUID: error %v", err)
	}
	// The same UUID as Open reads, on a real file.
	data, err := os.ReadFile("../fixtures/bin/chain-arm64-O1")
	if err != nil {
		t.Fatal(err)
	}
	f, err := NewFile(bytes.NewReader(data), "chain")
	if err != nil {
		t.Fatal(err)
	}
	if _, got, err := Peek(bytes.NewReader(data), int64(len(data))); err != nil || got != f.Images[0].UUID {
		t.Errorf("Peek = %s, %v; Open reads %s", got, err, f.Images[0].UUID)
	}
}

func TestImageLoadCommands(t *testing.T) {
	f, err := Open("../fixtures/bin/chain-arm64-O1")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	im := f.Images[0]
	h := im.Header()
	if h.Type != TypeExecute || !h.Is64 || h.CPUType != im.CPUType {
		t.Errorf("Header() = %+v", h)
	}
	cmds := im.LoadCommands()
	if len(cmds) != int(h.NCmds) {
		t.Fatalf("%d load commands, header says %d", len(cmds), h.NCmds)
	}
	var sawMain, sawUUID bool
	for _, c := range cmds {
		switch c.Cmd {
		case LoadCmdMain:
			off, _, err := c.EntryPoint(h.ByteOrder)
			sawMain = err == nil && off > 0
		case LoadCmdUUID:
			u, err := c.UUID()
			sawUUID = err == nil && u == im.UUID
		case LoadCmdDyldInfo, LoadCmdDyldInfoOnly:
			if _, err := c.DyldInfo(h.ByteOrder); err != nil {
				t.Error(err)
			}
		}
	}
	if !sawMain || !sawUUID {
		t.Errorf("LC_MAIN decoded %v, LC_UUID matches %v; want both", sawMain, sawUUID)
	}
	// Decoding a command as another is an error naming both.
	if _, err := cmds[0].UUID(); cmds[0].Cmd != LoadCmdUUID && (err == nil || !strings.Contains(err.Error(), "not LC_UUID")) {
		t.Errorf("UUID() of %v: error %v", cmds[0].Cmd, err)
	}
	// The slices are the caller's.
	cmds[0].Data[0] ^= 0xff
	if again := im.LoadCommands(); again[0].Cmd != cmds[0].Cmd || again[0].Data[0] == cmds[0].Data[0] {
		t.Error("LoadCommands hands out the image's own bytes")
	}
}

func TestReadFatArchs(t *testing.T) {
	be := binary.BigEndian
	b := be.AppendUint32(nil, fatMagic)
	b = be.AppendUint32(b, 2)
	for _, e := range [][5]uint32{{0x0100000c, 0, 0x1000, 0x100, 14}, {0x01000007, 3, 0x9000, 0x100, 14}} {
		for _, v := range e {
			b = be.AppendUint32(b, v)
		}
	}
	b = append(b, make([]byte, 0x2000-len(b))...)
	arches, bad, err := ReadFatArchs(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	want := []FatArch{{Index: 0, CPUType: 0x0100000c, Offset: 0x1000, Size: 0x100}}
	if diff := cmp.Diff(want, arches); diff != "" || len(bad) != 1 {
		t.Errorf("ReadFatArchs (-want +got):\n%s\nbad: %v (want the slice past the end)", diff, bad)
	}
	if arches[0].ArchName() != "arm64" {
		t.Errorf("ArchName() = %q", arches[0].ArchName())
	}
	if arches, bad, err := ReadFatArchs(bytes.NewReader([]byte("MDMP....")), 8); arches != nil || bad != nil || err != nil {
		t.Errorf("ReadFatArchs of a minidump = %v, %v, %v; want nothing", arches, bad, err)
	}
}

func TestEnumStrings(t *testing.T) {
	for _, tt := range []struct {
		v    interface{ String() string }
		want string
	}{
		{TypeExecute, "MH_EXECUTE"},
		{TypeDSYM, "MH_DSYM"},
		{TypeCore, "MH_CORE"},
		{FileType(99), "FileType(99)"},
		{LoadCmdUUID, "LC_UUID"},
		{LoadCmdSegment64, "LC_SEGMENT_64"},
		{LoadCmdDyldInfoOnly, "LC_DYLD_INFO_ONLY"},
		{LoadCmd(0x7777), "LoadCmd(0x7777)"},
		{KindFat, "fat Mach-O"},
		{KindUnknown, "not Mach-O"},
	} {
		if got := tt.v.String(); got != tt.want {
			t.Errorf("%#v.String() = %q, want %q", tt.v, got, tt.want)
		}
	}
}
